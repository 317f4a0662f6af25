"""Elicitation runs on the shared engine: each task asks one participant's model for one structured answer about one
subject (a HypoArena case, a Reconstruction seed paper ...), checks it against a schema, asks again on a malformed
answer, and stores what passed. A protocol plugs in an :class:`ElicitKind`; this module owns the rest.

The engine's driver (``jobs.driving.drive``) claims, leases, heartbeats, limits and counts calls as for judge runs;
launch, pause, resume, cancel, progress and the runs page are the engine's one lifecycle (``jobs.lifecycle``).
Per task: at most ``jobs.driving.MAX_PARSE_ATTEMPTS`` answers (two retries), each kept with its problems in the
task's ``attempts``; what still fails is *invalid* (the task is done, ``last_error`` starts ``invalid:``, nothing
stored, unless the kind keeps invalid answers: ``keep_invalid``); an endpoint that gives up leaves the task *failed*
(a resume retries it). When the run's tasks are done, the kind's ``after`` runs on the subjects that got an answer as the engine's durable
step (``jobs.steps``; HypoArena pairs the new submissions into matches, Lit2Test pairs the new proposals).

Run models extend ``jobs.models.EngineRun`` with a ``benchmark`` (``parameters`` holds ``base_url``, ``api_key_env``,
``model_names``, ``concurrency``, ``timeout`` ...); task models are ``jobs.models.ClaimableTask`` with
``participant``, ``attempts``, ``prompt_tokens`` and ``completion_tokens``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, models, transaction

from arena.registry import Registry

from . import execution, lifecycle
from .call_cache import Answered, CallCache
from .driving import (
    MAX_PARSE_ATTEMPTS,
    chat_provider,
    drive,
    driver_start_failed,
    endpoint_limiter,
    run_finish,
    run_lease,
    running_run,
    tasks_owned,
)
from .engine import BeforeCall, call_with_backoff
from .kinds import RunKindSpec, Step, run_kind_register
from .lifecycle import RunError
from .providers import PermanentError, Provider, api_key_from_env
from .selectors import Progress, engine_progress

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
    # (run, task, answer text, prepared) -> (parsed value, problems); no problems = valid. It runs in the driver's event
    # loop: no database access (what it needs from the database, ``prepare`` read it when the task was claimed)
    check: Callable[[Any, Any, str, Any], tuple[Any, Problems]]
    # (task, valid value) -> store it (inside the task's transaction); an IntegrityError means it exists already
    store: Callable[[Any, Any], None]
    # (run, ids of the subjects whose task is done) -> work that must follow the run once its tasks are done: the
    # engine's durable step (``jobs.steps``: exactly once, retried, the run ends with it); idempotent. None: nothing
    after: Callable[[Any, set[int]], None] | None = None
    after_title: str = "the step that follows the run"  # what ``after`` does, for the run's page and log
    subject_field: str = "case"  # the task's foreign key to its subject, for ``after``
    # (run, task) -> what ``check`` needs from the database, read when the task is claimed; None: nothing
    prepare: Callable[[Any, Any], Any] | None = None
    prefetch: tuple[str, ...] = ()  # prefetch_related of a claimed task, for ``messages``
    # a malformed answer is asked again with its problems listed (False: the same messages again)
    retry_with_problems: bool = True
    # an answer still malformed after every attempt is stored too (``store`` gets it, and decides how to mark it)
    keep_invalid: bool = False


ELICIT_KINDS: Registry[ElicitKind] = Registry("elicitation kind")


def elicit_progress(*, kind: ElicitKind, run: Any) -> Progress:  # noqa: ANN401
    """The run's counts in the engine's terms: a done task has stored answers or, when its answer stayed malformed,
    an invalid record (``last_error`` starts with ``invalid:``) and nothing stored."""
    tasks_qs = kind.task_model.objects.filter(run=run)
    invalid = tasks_qs.filter(status="done", last_error__startswith="invalid:").count()
    return engine_progress(kind=kind.run_kind, run=run, tasks_qs=tasks_qs, invalid=invalid)


def elicit_launch(*, kind: ElicitKind, run: Any, event: str = "launched") -> None:  # noqa: ANN401
    """Mark a pending or paused run running and enqueue its driver once the transaction commits."""
    lifecycle.run_launch(run=run, event=event)


def elicit_resume(*, kind: ElicitKind, run: Any, call_cache: bool = True) -> int:  # noqa: ANN401
    """Failed tasks and abandoned claims of a paused, failed or cancelled run become pending again, and it is
    launched; returns how many tasks were reopened. Stored answers are never asked for again, nor (unless
    ``call_cache`` is False) what the call cache has."""
    return lifecycle.run_resume(run=run, call_cache=call_cache)


def _store(kind: ElicitKind, token: str, task_id: int, result: dict[str, Any], cache: CallCache) -> None:
    model = kind.task_model
    with transaction.atomic():
        owned, finished = tasks_owned(model, token, [task_id])
        accepted = "failed" not in result and not result["problems"]
        cached = result.get("cached")
        if accepted and cached is None and result.get("attempts"):  # kept even when discarded below: it was paid for
            last = result["attempts"][-1]
            cache.record(answered=[Answered(task_id, last["raw"], result.get("in"), result.get("out"), None)])
        if task_id not in owned:
            if task_id not in finished and result.get("attempts"):
                execution.answer_discard(
                    task_model=model, task_id=task_id, prompt_tokens=result.get("in", 0), completion_tokens=result.get("out", 0)
                )
            return
        if accepted and cached is not None:
            cache.record(hits=[(task_id, cached)])
        task = model.objects.select_related(*kind.related).get(pk=task_id)
        task.attempts = result["attempts"]
        task.prompt_tokens, task.completion_tokens = result.get("in", 0), result.get("out", 0)
        task.status, task.last_error = "done", ""
        if "failed" in result:
            task.status, task.last_error = "failed", result["failed"] or "no answer"
        elif result["problems"] and not kind.keep_invalid:
            # Invalid after every attempt: recorded on the task, with each raw answer; nothing is stored.
            task.last_error = "invalid: " + "; ".join(f"{p['field']}: {p['message']}" for p in result["problems"])
        else:
            try:
                with transaction.atomic():
                    kind.store(task, result["value"])
            except IntegrityError:
                pass  # stored already (imported meanwhile, or a store repeated after a lost acknowledgement)
        task.save(update_fields=["attempts", "prompt_tokens", "completion_tokens", "status", "last_error", "updated_at"])


def _elicit_step(kind: ElicitKind, run: Any) -> Step | None:  # noqa: ANN401
    """``after`` on the subjects that got an answer, as the engine's durable step (``jobs.steps``)."""
    if kind.after is None:
        return None
    after = kind.after

    def carry_out(run: Any) -> None:  # noqa: ANN401
        done = set(kind.task_model.objects.filter(run=run, status="done").values_list(f"{kind.subject_field}_id", flat=True))
        after(run, done)

    return Step(title=kind.after_title, carry_out=carry_out)


def elicit_execute(*, run_kind: str, run_id: int) -> str:
    """Elicit the run's open tasks until done, paused or cancelled; then close the run and run ``after``."""
    kind = ELICIT_KINDS[run_kind]
    run, status = running_run(kind.run_model, run_id)
    if run is None:
        return status
    token = uuid.uuid4().hex
    model_names: dict[str, str] = run.parameters.get("model_names") or {}
    try:
        api_key_from_env(run.parameters.get("api_key_env") or None)
    except PermanentError as exc:
        return driver_start_failed(run_kind, run.pk, exc)
    providers: dict[str, Provider] = {}
    limiter = endpoint_limiter(run)
    cache = CallCache(kind=run_kind, run=run, template_version=getattr(run, "prompt_version", ""))

    def provider_for(name: str) -> Provider:
        if name not in providers:
            providers[name] = chat_provider(run, model_names.get(name, name))
        return providers[name]

    Spec = tuple[int, str, Any, list[dict[str, str]], Any]  # task id, participant, task, messages, what check needs

    def claim(n: int, held: frozenset[int]) -> list[Spec]:
        ids = execution.tasks_claim(
            kind=run_kind, task_model=kind.task_model, run_id=run.pk, token=token, lease=run_lease(run), n=n, held=held
        )
        tasks = (
            kind.task_model.objects.filter(id__in=ids)
            .select_related("participant", *kind.related)
            .prefetch_related(*kind.prefetch)
            .order_by("id")
        )
        specs = [
            (t.pk, t.participant.name, t, kind.messages(run, t), kind.prepare(run, t) if kind.prepare else None) for t in tasks
        ]
        cache.claimed((task_id, provider_for(name), messages, "") for task_id, name, _, messages, _ in specs)
        return specs

    async def work(spec: Spec, before_call: BeforeCall) -> dict[str, Any]:
        task_id, name, task, messages, prepared = spec
        provider = provider_for(name)
        cached = cache.take(task_id)
        if cached is not None:
            value, problems = kind.check(run, task, cached.text, prepared)
            if not problems:  # an answer the kind no longer accepts is a miss: the endpoint is asked
                attempt = {"attempt": 1, "raw": cached.text, "problems": [], "cached_from": cached.source()}
                return {"value": value, "problems": [], "attempts": [attempt], "calls": 0, "in": 0, "out": 0, "cached": cached}
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
            value, problems = kind.check(run, task, c.text, prepared)
            attempts.append({"attempt": attempt, "raw": c.text, "problems": problems})
            if not problems:
                break
            if not kind.retry_with_problems:
                continue
            # The next answer is asked with the problems of this one, so the model can fix them.
            messages = [*messages, {"role": "assistant", "content": c.text}, {"role": "user", "content": _retry_prompt(problems)}]
        return {"value": value, "problems": problems, "attempts": attempts, "calls": calls, "in": tokens_in, "out": tokens_out}

    def store(batch: list[tuple[Spec, dict[str, Any]]]) -> None:
        for spec, result in batch:
            _store(kind, token, spec[0], result, cache)
        cache.forget(spec[0] for spec, _ in batch)

    drive(
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
    return run_finish(kind.run_kind, run.pk)


def _retry_prompt(problems: Problems) -> str:
    listed = "\n".join(f"- {p['field']}: {p['message']}" for p in problems)
    return (
        f"Your answer could not be used:\n{listed}\nAnswer again with one JSON object in the format asked for, and nothing else."
    )


def elicit_kind_register(kind: ElicitKind) -> None:
    """Register a protocol's elicitation runs with this driver and with the engine's lifecycle (launch, watchdog,
    finish, progress, the runs page). Registering the same kind again changes nothing; another kind of one name raises."""
    if ELICIT_KINDS.get(kind.run_kind) is kind:
        return
    ELICIT_KINDS.register(kind.run_kind, kind)
    run_kind_register(
        RunKindSpec(
            kind=kind.run_kind,
            run_model=kind.run_model,
            task_model_of=lambda run_id: kind.task_model,
            execute=lambda run_id: elicit_execute(run_kind=kind.run_kind, run_id=run_id),
            finish=lambda run_id: run_finish(kind.run_kind, run_id),
            progress=lambda run: elicit_progress(kind=kind, run=run),
            title=kind.title,
            noun=f"{kind.title} run",
            listed=lambda run: kind.title,
            step=lambda run: _elicit_step(kind, run),
        )
    )


def elicit_parameters(
    *,
    base_url: str,
    api_key_env: str | None,
    temperature: float,
    max_tokens: int,
    concurrency: int,
    timeout: float,
    lease_seconds: float | None,
    model_names: dict[str, str] | None,
    **extra: Any,  # noqa: ANN401
) -> dict[str, Any]:
    """An elicitation run's ``parameters``: the endpoint and its limits as the engine reads them, and what the kind
    reads itself (``extra``)."""
    return {
        "base_url": base_url,
        "api_key_env": api_key_env or "",
        "temperature": temperature,
        "max_tokens": max_tokens,
        "concurrency": concurrency,
        "timeout": timeout,
        "lease_seconds": lease_seconds or execution.lease_seconds(),
        "model_names": model_names or {},
        **extra,
    }


def elicit_problem(field: str, code: str, message: str) -> dict[str, str]:
    return {"field": field, "code": code, "message": message}


__all__ = [
    "ELICIT_KINDS",
    "ElicitKind",
    "Problems",
    "RunError",
    "elicit_execute",
    "elicit_kind_register",
    "elicit_launch",
    "elicit_parameters",
    "elicit_problem",
    "elicit_progress",
    "elicit_resume",
]
