"""Driving a run: the claim / work / store loop every run kind shares, and the pieces a kind's driver is made of.

A kind's ``execute`` (``jobs.kinds.RunKindSpec``) reads its run with :func:`running_run`, makes its provider
(:func:`chat_provider`, or its own) and limiter (:func:`endpoint_limiter`), and hands three functions to
:func:`drive`: ``claim`` (take up to n tasks, ``jobs.execution.tasks_claim``, and make what the work needs from the
database), ``work`` (the calls, in the driver's event loop, with no database access) and ``store`` (the answers, in
a transaction that checks with :func:`tasks_owned` that this driver still holds each task). :func:`drive` registers
the driver, renews its leases, shares the endpoint's slots between the run's live drivers, counts calls before they
are sent, rides out database outages and releases unstarted work when the run is paused or cancelled. When it
returns, the kind closes the run with :func:`run_finish`. A driver that cannot start (a missing API key, say) fails
the run with the reason (:func:`driver_start_failed`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from arena.models import JudgeRun

from . import execution
from .engine import BeforeCall, DatabaseUnavailable, Driver, DriverHooks, release_connection, run_blocking
from .execution import run_event_add, run_fail
from .kinds import run_kinds
from .limits import DEFAULT_SLOT_TTL, EndpointLimiter
from .models import RunEvent, TaskStatus
from .providers import ApiKeyMissing, OpenAICompatibleProvider, Provider, RecordedProvider
from .steps import run_closed_events, step_carry_out, step_record
from .subjects import subjects_of

log = logging.getLogger(__name__)

#: A run of any kind: a JudgeRun, or a model extending jobs.models.EngineRun (``parameters``, ``provider``, ``status``).
RunRow = Any

#: A database wait shorter than this is logged, not written to the run's log as an outage.
OUTAGE_EVENT_SECONDS = 1.0
log = logging.getLogger(__name__)
MAX_PARSE_ATTEMPTS = 3  # the first answer plus at most two retries on a malformed one


def chat_provider(run: RunRow, model: str) -> Provider:
    p = run.parameters
    if run.provider == JudgeRun.Provider.RECORDED:
        source = JudgeRun.objects.get(pk=p["replay_of"])
        return RecordedProvider(answers=subjects_of(source).recorded(source))
    return OpenAICompatibleProvider(
        base_url=p["base_url"],
        model=model,
        api_key_env=p.get("api_key_env") or None,
        temperature=p.get("temperature"),
        max_tokens=p.get("max_tokens"),
        timeout=float(p.get("timeout") or 120),
        connections=int(p.get("concurrency") or 8),
    )


def endpoint_limiter(run: RunRow) -> EndpointLimiter | None:
    p = run.parameters
    if run.provider == JudgeRun.Provider.RECORDED:
        return None
    return EndpointLimiter(
        endpoint=p["base_url"],
        concurrency=int(p.get("concurrency") or 8),
        rate_per_second=p.get("rate_per_second"),
        # Slots are renewed while their call runs, so a killed worker's slots free themselves within one TTL.
        slot_ttl=DEFAULT_SLOT_TTL,
    )


def running_run(model: type[Any], run_id: int) -> tuple[Any, str]:
    """The run if it is running, else None with its status ("gone" when deleted): a task re-reads its row."""
    run = model.objects.select_related("benchmark").filter(pk=run_id).first()
    if run is None:
        return None, "gone"
    return (run, run.status) if run.status == JudgeRun.Status.RUNNING else (None, run.status)


def driver_start_failed(kind: str, run_id: int, exc: Exception) -> str:
    """Fail a run whose driver cannot start (missing API key, unknown replay, ...), saying why and what to do."""
    reason = f"the driver could not start on worker {execution.worker_identity()}: {exc}"
    if isinstance(exc, ApiKeyMissing):
        reason += (
            ". Workers read the API key from their own environment: set the variable where `celery -A lit2test_web worker` "
            "runs (not only where the run was launched), restart the worker, and resume the run"
        )
    run_fail(kind=kind, run_id=run_id, reason=reason, code="driver_failed")
    return JudgeRun.Status.FAILED


def run_lease(run: RunRow) -> float:
    return float(run.parameters.get("lease_seconds") or execution.lease_seconds())


def tasks_owned(task_model: type[Any], token: str, ids: list[int]) -> tuple[set[int], set[int]]:
    """Of these tasks, (the ones this driver still holds, the ones it already finished).

    Locks the held ones for the caller's transaction. A task whose lease ran out may belong to another
    driver now: its answer is not stored. A task this driver already finished is a store repeated after
    a lost commit acknowledgement: it is skipped quietly.
    """
    rows = list(task_model.objects.select_for_update().filter(id__in=ids, claimed_by=token).values_list("id", "status"))
    return {i for i, st in rows if st == TaskStatus.CLAIMED}, {i for i, st in rows if st in (TaskStatus.DONE, TaskStatus.FAILED)}


def drive(
    *,
    run: RunRow,
    kind: str,
    task_model: type[Any],
    token: str,
    claim: Callable[[int, frozenset[int]], list[Any]],
    work: Callable[[Any, BeforeCall], Awaitable[Any]],
    store: Callable[[list[tuple[Any, Any]]], None],
    task_id: Callable[[Any], int],
    providers: Iterable[Provider],
    limiter: EndpointLimiter | None,
    on_error: Callable[[Exception], Any],
) -> None:
    """Run the claim/work/store loop of one driver to its end, then close the providers' clients.

    The driver is registered (and alive for the watchdog) before it claims anything, and marked ended
    however it stops.
    """
    run_model = type(run)
    lease = run_lease(run)

    def release(specs: list[Any]) -> None:
        # Unstarted work goes back to the queue, unless the run was cancelled: then it is skipped too.
        cancelled = run_model.objects.filter(pk=run.pk, status=JudgeRun.Status.CANCELLED).exists()
        task_model.objects.filter(id__in=[task_id(s) for s in specs], claimed_by=token, status=TaskStatus.CLAIMED).update(
            status=TaskStatus.SKIPPED if cancelled else TaskStatus.PENDING,
            claimed_by="",
            lease_until=None,
            last_error="cancelled" if cancelled else "",
        )

    def on_outage(seconds: float, error: str) -> None:
        if seconds < OUTAGE_EVENT_SECONDS:
            # A wait this short is a busy database, not an outage: SQLite's "database is locked" while another writer
            # commits (the demo's worker and web server share one file) filled the run log with "unreachable" lines.
            log.info("%s run %s: waited %.1f s for the database (%s)", kind, run.pk, seconds, error)
            return
        run_event_add(
            kind=kind,
            run_id=run.pk,
            code="database_outage",
            level=RunEvent.Level.WARNING,
            message=f"the database was unreachable for {seconds:.1f} s ({error}); the driver waited and carried on",
        )

    def heartbeat(held: list[int]) -> None:
        execution.driver_heartbeat(task_model=task_model, token=token, lease=lease, held=held)
        if limiter is not None:
            # Each live driver of the run holds at most its share of the endpoint's slots.
            limiter.drivers(execution.drivers_alive(kind=kind, run_id=run.pk))

    def claim_shared(n: int, held: frozenset[int]) -> list[Any]:
        if limiter is not None:  # a driver that joined lately gets its share of the slots from the others' next claim
            limiter.drivers(execution.drivers_alive(kind=kind, run_id=run.pk))
        return claim(n, held)

    hooks = DriverHooks(
        claim=claim_shared,
        work=work,
        store=store,
        release=release,
        task_id=task_id,
        on_error=on_error,
        on_outage=on_outage,
        still_running=lambda: run_model.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).exists(),
        heartbeat=heartbeat,
        count_calls=lambda counts: execution.calls_count(task_model=task_model, counts=counts),
        calls_failed=lambda failures: execution.calls_failed_record(task_model=task_model, failures=failures),
        others_open=lambda held: execution.tasks_open_elsewhere(task_model=task_model, run_id=run.pk, held=held),
    )
    driver = Driver(
        hooks=hooks,
        concurrency=int(run.parameters.get("concurrency") or 8),
        heartbeat_every=min(execution.heartbeat_seconds(), lease / 4),
        db_patience=execution.db_patience_seconds(),
    )

    async def main() -> None:
        try:
            await driver.run()
        finally:
            for provider in list(providers):
                await provider.close()
            if limiter is not None:
                await limiter.close()

    execution.driver_register(kind=kind, run_id=run.pk, token=token)
    if limiter is not None:
        limiter.drivers(execution.drivers_alive(kind=kind, run_id=run.pk))
    release_connection()  # the driver's own threads use the database from here on
    outcome = "finished"
    try:
        run_blocking(main)
    except DatabaseUnavailable as exc:
        outcome = str(exc)
        raise
    except BaseException as exc:
        outcome = f"crashed: {type(exc).__name__}: {exc}"
        raise
    finally:
        try:
            execution.driver_end(token=token, outcome=outcome)
        except Exception:  # noqa: BLE001 - the database may be gone; the row then goes stale, which says the same
            pass


def rows_store(model: type[Any], judgments: list[Any]) -> None:
    """Insert in one statement per model (the kind's judgment ``model`` first: a kind may keep a second row per answer,
    as a HypoArena rubric answer keeps its scores); if the database refuses a second accepted verdict for a task,
    insert one by one so the first verdict stays and the others still land."""
    groups: dict[type[Any], list[Any]] = {}
    for judgment in judgments:
        groups.setdefault(type(judgment), []).append(judgment)
    for rows in sorted(groups.values(), key=lambda rows: type(rows[0]) is not model):
        try:
            with transaction.atomic():
                type(rows[0]).objects.bulk_create(rows)
        except IntegrityError:
            for judgment in rows:
                try:
                    with transaction.atomic():
                        judgment.pk = None
                        judgment.save()
                except IntegrityError:
                    pass  # an accepted verdict already exists for this task: the database kept the first


def run_finish(kind: str, run_id: int) -> str:
    """Close the run when no task is left to do; another driver may still hold claims.

    A run whose kind names a follow-up step (``jobs.kinds.Step``) stays running with the step recorded as pending,
    and ends when the step is done (``jobs.steps``). A run closed as failed says on its page how many tasks failed,
    the latest reason, and what to do.
    """
    spec = run_kinds[kind]
    run_model, task_model = spec.run_model, spec.task_model_of(run_id)
    with transaction.atomic():
        run = run_model.objects.select_for_update().get(pk=run_id)
        if run.status != JudgeRun.Status.RUNNING:
            return run.status
        open_tasks = task_model.objects.filter(run_id=run_id, status__in=[TaskStatus.PENDING, TaskStatus.CLAIMED]).exists()
        if open_tasks:
            return run.status
        n_failed = task_model.objects.filter(run_id=run_id, status=TaskStatus.FAILED).count()
        outcome = JudgeRun.Status.FAILED if n_failed else JudgeRun.Status.COMPLETED
        step = spec.step(run) if spec.step is not None else None
        if step is None:
            run.status = outcome
            run.finished_at = timezone.now()
            run.save(update_fields=["status", "finished_at"])
            run_closed_events(kind=kind, run_id=run_id, task_model=task_model)
            return run.status
        step_record(kind=kind, run_id=run_id, title=step.title, outcome=outcome)
    return step_carry_out(kind, run_id)
