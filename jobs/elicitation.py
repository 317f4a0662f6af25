"""Elicitation runs on the shared engine: each task asks one participant's model for one structured answer about one
subject (a HypoArena case, a Reconstruction seed paper ...), checks it against a schema, asks again on a malformed
answer, and stores what passed. A protocol plugs in an :class:`ElicitKind`; this module owns the rest.

The engine's driver (``jobs.services._drive``) claims, leases, heartbeats, limits and counts calls as for judge runs.
Per task: at most ``jobs.services.MAX_PARSE_ATTEMPTS`` answers (two retries), each kept with its problems in the
task's ``attempts``; what still fails is *invalid* (the task is done, ``last_error`` starts ``invalid:``, nothing
stored); an endpoint that gives up leaves the task *failed* (a resume retries it). When the run closes, the kind's
``after`` hook runs on the subjects that got an answer (HypoArena pairs the new submissions into matches).

Run models need the fields of ``jobs.GenerationRun`` that the engine's helpers read (``benchmark``, ``provider``,
``parameters`` with ``base_url``, ``api_key_env``, ``model_names``, ``concurrency``, ``timeout`` ..., ``status``,
``finished_at``); task models are ``jobs.models.ClaimableTask`` with ``participant``, ``attempts``,
``prompt_tokens`` and ``completion_tokens``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celery import shared_task
from django.db import IntegrityError, models, transaction
from django.db.models import Sum

from arena.models import JudgeRun

from . import execution
from .engine import BeforeCall, call_with_backoff
from .execution import RunKindSpec, run_event_add, run_kind_register
from .providers import PermanentError, Provider, api_key_from_env
from .selectors import Progress, _health, _task_counts
from .services import (
    MAX_PARSE_ATTEMPTS,
    RunError,
    _drive,
    _finish,
    _lease,
    _limiter_for,
    _owned,
    _provider_for,
    _running,
    _start_problem,
)
from .tasks import _DRIVER

Problems = list[dict[str, str]]


@dataclass(frozen=True)
class ElicitKind:
    run_kind: str  # the engine's run kind (RunEvent.kind, RunDriver.kind)
    title: str  # how pages name these runs, e.g. "HypoArena generation"
    run_model: type[models.Model]
    task_model: type[models.Model]
    related: tuple[str, ...]  # select_related of a claimed task, for ``messages``
    # (run, task) -> the chat messages (blind: what the participant may see, nothing held out)
    messages: Callable[[Any, Any], list[dict[str, str]]]
    # (run, task, answer text, context) -> (parsed value, problems); no problems = valid. It runs in the driver's event
    # loop: no database access (what it needs from the database, ``context`` read it when the task was claimed)
    check: Callable[[Any, Any, str, Any], tuple[Any, Problems]]
    # (task, valid value) -> store it (inside the task's transaction); an IntegrityError means it exists already
    store: Callable[[Any, Any], None]
    # (run, ids of the subjects whose task is done) -> work after the run closed (idempotent); None: nothing
    after: Callable[[Any, set[int]], None] | None = None
    subject_field: str = "case"  # the task's foreign key to its subject, for ``after``
    # (run, task) -> what ``check`` needs from the database, read when the task is claimed; None: nothing
    context: Callable[[Any, Any], Any] | None = None


ELICIT_KINDS: dict[str, ElicitKind] = {}


def elicit_progress(*, kind: ElicitKind, run: Any) -> Progress:  # noqa: ANN401
    """The run's counts in the engine's terms: a done task has stored answers or, when its answer stayed malformed,
    an invalid record (``last_error`` starts with ``invalid:``) and nothing stored."""
    tasks_qs = kind.task_model.objects.filter(run=run)
    tasks = _task_counts(tasks_qs, prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
    invalid = tasks_qs.filter(status="done", last_error__startswith="invalid:").count()
    errors = list(tasks_qs.exclude(last_error="").values_list("last_error", flat=True)[:5])
    return Progress(
        total=tasks["total"],
        done=tasks["done"],
        accepted=tasks["done"] - invalid,
        invalid=invalid,
        failed=tasks["failed"],
        remaining=tasks["remaining"],
        skipped=tasks["skipped"],
        prompt_tokens=tasks["prompt"] or 0,
        completion_tokens=tasks["completion"] or 0,
        cost=None,
        eta_seconds=None,
        recent_errors=errors,
        status=run.status,
        replay=False,
        **_health(kind.run_kind, run, tasks),
    )


def elicit_runs_listed(limit: int = 20) -> list[tuple[ElicitKind, Any, Progress]]:
    """The newest runs of every registered elicitation kind, with their progress, for the runs page."""
    rows = []
    for kind in ELICIT_KINDS.values():
        for run in kind.run_model.objects.select_related("benchmark").order_by("-created_at", "-id")[:limit]:
            rows.append((kind, run, elicit_progress(kind=kind, run=run)))
    rows.sort(key=lambda r: r[1].created_at, reverse=True)
    return rows[:limit]


def elicit_launch(*, kind: ElicitKind, run: Any, event: str = "launched") -> None:  # noqa: ANN401
    """Mark a pending or paused run running and enqueue its driver once the transaction commits."""
    with transaction.atomic():
        if not kind.run_model.objects.filter(pk=run.pk, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.PAUSED]).update(
            status=JudgeRun.Status.RUNNING, finished_at=None
        ):
            raise RunError(f"{kind.title} run {run.pk} cannot start from {kind.run_model.objects.get(pk=run.pk).status}")
        run_event_add(kind=kind.run_kind, run_id=run.pk, code=event, message=f"{event} with 1 driver(s)")
        transaction.on_commit(lambda: _enqueue(kind.run_kind, run.pk))
    run.refresh_from_db()


def elicit_resume(*, kind: ElicitKind, run: Any) -> int:  # noqa: ANN401
    """Failed tasks and abandoned claims of a paused, failed or cancelled run become pending again, and it is
    launched; returns how many tasks were reopened. Stored answers are never asked for again."""
    if run.status not in (JudgeRun.Status.PAUSED, JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED):
        raise RunError(f"{kind.title} run {run.pk} is {run.status}; only a paused, failed or cancelled run resumes")
    with transaction.atomic():
        reopened = execution.tasks_reclaim(kind=kind.run_kind, task_model=kind.task_model, run_id=run.pk)
        reopened += kind.task_model.objects.filter(run_id=run.pk, status="skipped").update(status="pending", last_error="")
        kind.run_model.objects.filter(pk=run.pk).update(status=JudgeRun.Status.PAUSED)
        run.refresh_from_db()
        elicit_launch(kind=kind, run=run, event="resumed")
    return reopened


def _enqueue(run_kind: str, run_id: int) -> None:
    execution.enqueue(lambda: elicit_execute_task.delay(run_kind, run_id), kind=run_kind, run_id=run_id)


def _store(kind: ElicitKind, token: str, task_id: int, result: dict[str, Any]) -> None:
    model = kind.task_model
    with transaction.atomic():
        owned, finished = _owned(model, token, [task_id])
        if task_id not in owned:
            if task_id not in finished and result.get("attempts"):
                execution.answer_discard(
                    task_model=model, task_id=task_id, prompt_tokens=result.get("in", 0), completion_tokens=result.get("out", 0)
                )
            return
        task = model.objects.select_related(*kind.related).get(pk=task_id)
        task.attempts = result["attempts"]
        task.prompt_tokens, task.completion_tokens = result.get("in", 0), result.get("out", 0)
        task.status, task.last_error = "done", ""
        if "failed" in result:
            task.status, task.last_error = "failed", result["failed"] or "no answer"
        elif result["problems"]:
            # Invalid after every attempt: recorded on the task, with each raw answer; nothing is stored.
            task.last_error = "invalid: " + "; ".join(f"{p['field']}: {p['message']}" for p in result["problems"])
        else:
            try:
                with transaction.atomic():
                    kind.store(task, result["value"])
            except IntegrityError:
                pass  # stored already (imported meanwhile, or a store repeated after a lost acknowledgement)
        task.save(update_fields=["attempts", "prompt_tokens", "completion_tokens", "status", "last_error", "updated_at"])


def _elicit_finish(kind: ElicitKind, run_id: int) -> str:
    status = _finish(kind.run_kind, run_id)
    if status in (JudgeRun.Status.COMPLETED, JudgeRun.Status.FAILED) and kind.after is not None:
        run = kind.run_model.objects.select_related("benchmark").get(pk=run_id)
        done = set(kind.task_model.objects.filter(run=run, status="done").values_list(f"{kind.subject_field}_id", flat=True))
        kind.after(run, done)
    return status


def elicit_execute(*, run_kind: str, run_id: int) -> str:
    """Elicit the run's open tasks until done, paused or cancelled; then close the run and run ``after``."""
    kind = ELICIT_KINDS[run_kind]
    run, status = _running(kind.run_model, run_id)
    if run is None:
        return status
    token = uuid.uuid4().hex
    model_names: dict[str, str] = run.parameters.get("model_names") or {}
    try:
        api_key_from_env(run.parameters.get("api_key_env") or None)
    except PermanentError as exc:
        return _start_problem(run_kind, run.pk, exc)
    providers: dict[str, Provider] = {}
    limiter = _limiter_for(run)

    Spec = tuple[int, str, Any, list[dict[str, str]], Any]  # task id, participant, task, messages, check's context

    def claim(n: int, held: frozenset[int]) -> list[Spec]:
        ids = execution.tasks_claim(
            kind=run_kind, task_model=kind.task_model, run_id=run.pk, token=token, lease=_lease(run), n=n, held=held
        )
        tasks = kind.task_model.objects.filter(id__in=ids).select_related("participant", *kind.related).order_by("id")
        return [
            (t.pk, t.participant.name, t, kind.messages(run, t), kind.context(run, t) if kind.context else None) for t in tasks
        ]

    async def work(spec: Spec, before_call: BeforeCall) -> dict[str, Any]:
        _, name, task, messages, context = spec
        provider = providers.setdefault(name, _provider_for(run, model_names.get(name, name)))
        attempts: list[dict[str, Any]] = []
        calls = tokens_in = tokens_out = 0
        value: Any = None
        problems: Problems = []
        for attempt in range(1, MAX_PARSE_ATTEMPTS + 1):
            outcome = await call_with_backoff(provider, limiter, messages, None, before_call)
            calls += outcome.calls
            if outcome.completion is None:
                return {"failed": outcome.error, "attempts": attempts, "calls": calls, "in": tokens_in, "out": tokens_out}
            c = outcome.completion
            tokens_in += c.prompt_tokens or 0
            tokens_out += c.completion_tokens or 0
            value, problems = kind.check(run, task, c.text, context)
            attempts.append({"attempt": attempt, "raw": c.text, "problems": problems})
            if not problems:
                break
            # The next answer is asked with the problems of this one, so the model can fix them.
            messages = [*messages, {"role": "assistant", "content": c.text}, {"role": "user", "content": _retry_prompt(problems)}]
        return {"value": value, "problems": problems, "attempts": attempts, "calls": calls, "in": tokens_in, "out": tokens_out}

    def store(batch: list[tuple[Spec, dict[str, Any]]]) -> None:
        for spec, result in batch:
            _store(kind, token, spec[0], result)

    _drive(
        run=run,
        kind=run_kind,
        task_model=kind.task_model,
        token=token,
        claim=claim,
        work=work,
        store=store,
        task_id=lambda spec: spec[0],
        providers=providers.values(),
        limiter=limiter,
        on_error=lambda exc: {"failed": f"internal error: {type(exc).__name__}: {exc}", "attempts": [], "calls": 0},
    )
    return _elicit_finish(kind, run.pk)


def _retry_prompt(problems: Problems) -> str:
    listed = "\n".join(f"- {p['field']}: {p['message']}" for p in problems)
    return (
        f"Your answer could not be used:\n{listed}\nAnswer again with one JSON object in the format asked for, and nothing else."
    )


@shared_task(name="jobs.elicit_execute", **_DRIVER)
def elicit_execute_task(run_kind: str, run_id: int) -> str:
    return elicit_execute(run_kind=run_kind, run_id=run_id)


def elicit_kind_register(kind: ElicitKind) -> None:
    """Register a protocol's elicitation runs with this driver and with the engine (watchdog, finish)."""
    ELICIT_KINDS[kind.run_kind] = kind
    run_kind_register(
        RunKindSpec(
            kind=kind.run_kind,
            run_model=kind.run_model,
            task_model_of=lambda run_id: kind.task_model,
            launch=lambda run_id: _enqueue(kind.run_kind, run_id),
            finish=lambda run_id: _elicit_finish(kind, run_id),
        )
    )


def elicit_problem(field: str, code: str, message: str) -> dict[str, str]:
    return {"field": field, "code": code, "message": message}


__all__ = [
    "ELICIT_KINDS",
    "ElicitKind",
    "RunError",
    "elicit_execute",
    "elicit_kind_register",
    "elicit_launch",
    "elicit_problem",
    "elicit_progress",
    "elicit_resume",
    "elicit_runs_listed",
]
