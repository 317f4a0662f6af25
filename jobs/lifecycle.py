"""One run lifecycle for every run kind: launch, pause, resume, cancel, progress and the runs page's listing.

Written once over the run-kind registry (``jobs.kinds``), so a protocol's run kind is a declaration: its models, how
its driver works (``execute``), how it closes (``finish``) and how its progress reads. Every change of state is a
conditional update (one writer wins; a form posted twice changes nothing twice), and a driver is enqueued only after
the transaction commits. A broker that cannot be reached does not stop a launch: the failure is written to the run's
log, and a worker's watchdog launches the run once the broker is back (``jobs.execution.enqueue``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from arena.errors import AppError
from arena.models import JudgeRun

from . import execution
from .call_cache import CACHE_PARAMETER
from .kinds import RunKindSpec, run_kind_of, run_kinds
from .models import TaskStatus

Status = JudgeRun.Status
ACTIVE = JudgeRun.ACTIVE_STATUSES


class RunError(AppError):
    """A run cannot be created or changed as asked; the message says why and what to do."""


class AlreadyLaunched(RunError):
    """What this launch asked for was made already (its form posted twice, re-posted from a stale page, or posted
    twice at once); ``run`` is what was made (a run, a selection ...), and nothing new was made."""

    def __init__(self, run: Any, message: str | None = None) -> None:  # noqa: ANN401
        self.run = run
        super().__init__(message or f"run {run.pk} was launched from this form already; nothing new was made")


def endpoint_url_required(url: str | None, *, what: str = "the endpoint URL") -> str:
    """The endpoint's base URL, stripped; raises :class:`RunError` saying what is wrong with it (empty, not http(s), no
    host, a user name or password in it, a bad port) before any run is made, so that a typo never makes a run that fails
    at its first call. ``what`` names the option in the message (``--base-url``, ``--tokenize-url``)."""
    from arena.launch import endpoint_url_problem

    problem = endpoint_url_problem(url or "")
    if problem:
        raise RunError(problem.replace("the endpoint URL", what, 1))
    return (url or "").strip()


def api_key_required(variable: str | None) -> None:
    """Refuse to create a run whose API-key variable is named but not set here (the key is read from the environment
    by name, never stored); :class:`RunError` says which variable and what to do."""
    from .providers import PermanentError, api_key_from_env

    try:
        api_key_from_env(variable)
    except PermanentError as exc:
        raise RunError(str(exc)) from None


def asked_by_runs(
    *,
    task_model: Any,  # noqa: ANN401
    subject_field: str,
    subject_ids: Iterable[int],
    participant_ids: Iterable[int],
) -> dict[tuple[int, int], int]:
    """(subject id, participant id) of each elicitation task still to do in a run that has not ended, with that
    run's id: what a new run must not ask again (its form posted twice, its command repeated). Read it after
    :meth:`arena.models.Benchmark.lock`, so that two launches at once see each other's tasks."""
    rows = task_model.objects.filter(
        **{f"{subject_field}_id__in": list(subject_ids)},
        participant_id__in=list(participant_ids),
        status__in=[TaskStatus.PENDING, TaskStatus.CLAIMED],
        run__status__in=ACTIVE,
    ).values_list(f"{subject_field}_id", "participant_id", "run_id")
    return {(subject, participant): run for subject, participant, run in rows}


def nothing_to_ask(done: str, busy: Iterable[int], noun: str) -> RunError:
    """The refusal of a run that would ask nothing: each chosen pair is answered (``done`` says so) or is being
    asked by the runs ``busy`` (named, so that a form posted twice points at the run it made)."""
    runs = sorted(set(busy))
    where = f", or is being asked by {noun} {', '.join(map(str, runs))} (resume that run if it stopped)" if runs else ""
    return RunError(f"nothing to ask: {done}{where}")


def _name(spec: RunKindSpec, run: Any) -> str:  # noqa: ANN401
    return f"{spec.noun} {run.pk}"


def run_launch(*, run: Any, drivers: int = 1, event: str = "launched") -> None:  # noqa: ANN401
    """Mark a pending or paused run running and enqueue its driver(s) once the transaction commits.

    If the broker cannot be reached the run still starts: the failure is recorded on the run and a worker's
    watchdog launches it when the broker is back.
    """
    spec = run_kind_of(run)
    drivers = max(1, drivers)
    with transaction.atomic():
        updated = spec.run_model.objects.filter(pk=run.pk, status__in=[Status.PENDING, Status.PAUSED]).update(
            status=Status.RUNNING, finished_at=None
        )
        if not updated:
            status = spec.run_model.objects.get(pk=run.pk).status
            raise RunError(f"{_name(spec, run)} is {status}; only a pending or paused run starts")
        execution.run_event_add(kind=spec.kind, run_id=run.pk, code=event, message=f"{event} with {drivers} driver(s)")
        for _ in range(drivers):
            transaction.on_commit(lambda: execution.driver_enqueue(spec.kind, run.pk))
    run.refresh_from_db()


def run_pause(*, run: Any) -> None:  # noqa: ANN401
    """Stop claiming new work; answers already in flight are still stored."""
    spec = run_kind_of(run)
    if not spec.run_model.objects.filter(pk=run.pk, status=Status.RUNNING).update(status=Status.PAUSED):
        raise RunError(f"{_name(spec, run)} is not running")
    run.refresh_from_db()


def run_cancel(*, run: Any) -> None:  # noqa: ANN401
    """End the run for good: tasks not started are skipped; calls already sent still finish and are billed."""
    spec = run_kind_of(run)
    if not spec.run_model.objects.filter(pk=run.pk, status__in=ACTIVE).update(
        status=Status.CANCELLED, finished_at=timezone.now()
    ):
        raise RunError(f"{_name(spec, run)} has already ended")
    spec.task_model_of(run.pk).objects.filter(run_id=run.pk, status=TaskStatus.PENDING).update(
        status=TaskStatus.SKIPPED, last_error="cancelled"
    )
    run.refresh_from_db()


def run_resume(*, run: Any, drivers: int = 1, call_cache: bool = True) -> int:  # noqa: ANN401
    """Resume a run: claims of dead drivers and failed tasks (and, for a kind that resumes cancelled runs, skipped
    tasks) become pending, and the run is launched again; only missing work is done, a stored answer is never asked
    for again. A resumed run reads the call cache (``jobs.call_cache``) unless ``call_cache`` is False: what this or
    another run was already answered for the same request is not asked again.

    A judge run (``resumes_cancelled=False``) resumes from any state but cancelled or completed, a running one too
    (its dead drivers' claims are taken back at once), and the count returned is the tasks left to do. Other kinds
    resume from paused, failed or cancelled, and the count is the tasks reopened.
    """
    spec = run_kind_of(run)
    with transaction.atomic():
        run = spec.run_model.objects.select_for_update().get(pk=run.pk)
        _resume_check(spec, run)
        task_model = spec.task_model_of(run.pk)
        reopened = execution.tasks_reclaim(kind=spec.kind, task_model=task_model, run_id=run.pk)
        if spec.resumes_cancelled:
            reopened += task_model.objects.filter(run_id=run.pk, status=TaskStatus.SKIPPED).update(
                status=TaskStatus.PENDING, last_error=""
            )
            count = reopened
        else:
            count = task_model.objects.filter(run_id=run.pk, status__in=[TaskStatus.PENDING, TaskStatus.CLAIMED]).count()
        changes: dict[str, Any] = {"status": Status.PAUSED}
        if isinstance(getattr(run, "parameters", None), dict):
            changes["parameters"] = {**run.parameters, CACHE_PARAMETER: call_cache}
        spec.run_model.objects.filter(pk=run.pk).update(**changes)
        run.refresh_from_db()
        run_launch(run=run, drivers=drivers, event="resumed")
    return count


def _resume_check(spec: RunKindSpec, run: Any) -> None:  # noqa: ANN401
    if not spec.resumes_cancelled:
        if run.status == Status.CANCELLED:
            raise RunError("a cancelled run cannot be resumed; launch a new run")
        if run.status == Status.COMPLETED:
            raise RunError(f"{_name(spec, run)} is completed; there is nothing to resume")
        return
    if run.status not in (Status.PAUSED, Status.FAILED, Status.CANCELLED):
        why = " (a worker's watchdog takes over a run whose driver died)" if run.status == Status.RUNNING else ""
        raise RunError(f"{_name(spec, run)} is {run.status}{why}; only a paused, failed or cancelled run resumes")


def run_progress_of(run: Any) -> Any:  # noqa: ANN401
    """The run's progress (``jobs.selectors.Progress``), whatever its kind."""
    return run_kind_of(run).progress(run)


def runs_listed(limit: int = 20) -> list[tuple[str, Any, Any]]:
    """The newest runs of every kind listed on the runs page's second table (every kind but judge runs, which have a
    table of their own), as (title, run, progress), newest first."""
    rows = []
    for spec in run_kinds.values():
        if spec.listed is None:
            continue
        for run in spec.run_model.objects.select_related("benchmark").order_by("-created_at", "-id")[:limit]:
            rows.append((spec.listed(run), run, spec.progress(run)))
    rows.sort(key=lambda row: row[1].created_at, reverse=True)
    return rows[:limit]
