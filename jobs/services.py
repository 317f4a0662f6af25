"""Judge runs: create, launch, execute, pause, resume, cancel, whatever a run judges.

What a run judges is its *task kind* (``jobs.subjects``), registered by a protocol app; this module knows nothing
about what the subjects are. Preconditions are checked before any call is made (the judge is not a participant, a
canonical run is the version's canonical judge, the kind's own plan with its orientation gate); the blindness gate
checks every prompt before it is sent (``jobs.gates``). Execution is idempotent: tasks are claimed by conditional
updates and each kind's judgment model makes a second accepted verdict for a task impossible, so a task delivered
twice or a worker killed mid-run never produces a second verdict, and resuming does only what is missing.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from arena.models import Benchmark, JudgeRun
from arena.protocols import protocol_phrase, selection_options, selection_routes, task_kind_for

from . import adaptive, drift, execution, lifecycle
from .call_cache import Answered, CallCache
from .driving import (
    MAX_PARSE_ATTEMPTS,
    chat_provider,
    drive,
    driver_start_failed,
    endpoint_limiter,
    rows_store,
    run_finish,
    run_lease,
    running_run,
    tasks_owned,
)
from .engine import BeforeCall, call_with_backoff
from .gates import AliasCheck, fold
from .kinds import RunKindSpec, Step, run_kind_register
from .lifecycle import AlreadyLaunched, RunError, api_key_required, endpoint_url_required
from .models import RunKind, TaskStatus
from .parsing import ParseError, parse_judge_answer
from .prompts import PROMPTS
from .providers import PermanentError
from .selectors import run_progress
from .subjects import JudgeSpec, JudgeSubjects, subjects_named, subjects_of

log = logging.getLogger(__name__)
ORDERS = ("original", "reverse")
#: The largest sample number a run may draw: the call cache stores it (``CallCacheEntry.sample``) in a positive
#: integer column, 2**31 - 1 on PostgreSQL. A larger one was accepted, every call paid for, and then every answer
#: refused by the database ("integer out of range"); the launch form and ``run_judge --sample`` stop at it too.
SAMPLE_MAX = 2_147_483_647

__all__ = [
    "MAX_PARSE_ATTEMPTS",
    "ORDERS",
    "SAMPLE_MAX",
    "JudgeResult",
    "AlreadyLaunched",
    "JudgeRunRequest",
    "RunError",
    "judge_run_cancel",
    "judge_run_create",
    "judge_run_execute",
    "judge_run_launch",
    "judge_run_pause",
    "judge_run_resume",
    "judgment_fields",
]


@dataclass(frozen=True)
class JudgeRunRequest:
    benchmark: Benchmark
    judge_model: str
    base_url: str = ""
    provider: str = JudgeRun.Provider.OPENAI_COMPATIBLE
    replay_of: JudgeRun | None = None
    api_key_env: str | None = None
    run_type: str = "holistic"
    prompt_version: str | None = None
    select: str = "all"  # which subjects, in the protocol's selection grammar (ProtocolSpec.selection_help)
    task_kind: str | None = None  # explicit task kind (jobs.subjects); None: from the protocol, run type and selection
    orders: tuple[str, ...] = ORDERS
    concurrency: int = 8
    rate_per_second: float | None = None
    temperature: float | None = 0.0
    max_tokens: int | None = 1024
    timeout: float = 120.0
    lease_seconds: float | None = None  # settings.LIT2TEST_LEASE_SECONDS when None
    canonical: bool = False
    seed: int = 0
    price_per_1k_prompt: float | None = None
    price_per_1k_completion: float | None = None
    label: str | None = None
    launch_key: str = ""  # the launch form's key: the same form posted twice makes one run (JudgeRun.launch_key)
    # answer a task from the call cache when the same request was answered and accepted before (``jobs.call_cache``)
    call_cache: bool = False
    sample: int = 0  # which sample of each request the run draws: another number never reuses this one's answers
    # the sentinel set this run re-checks (``jobs.sentinels``): its tasks are the sentinels only, and it is never refused
    # as a drifted configuration (a check is how one is found, or found to be back)
    sentinels: int | None = None
    # what a task kind reads beyond these (stored as parameters["options"])
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    # judge in rounds and stop when the target holds (``jobs.adaptive.adaptive_parameters``); None: judge every subject
    adaptive: dict[str, Any] | None = None

    @property
    def subjects(self) -> str:
        """What the run judges: an explicit task kind, else the one the benchmark's protocol makes of the run type and
        selection (``arena.protocols.task_kind_for``); a run type the protocol does not have names the kind of the
        first protocol that has it, whose own check then refuses the benchmark with what to do instead."""
        if self.task_kind:
            return self.task_kind
        found = task_kind_for(protocol=self.benchmark.protocol, run_type=self.run_type, selection=self.select)
        if found is None:
            from arena.protocols import benchmark_protocols

            for spec in benchmark_protocols():
                found = task_kind_for(protocol=spec.name, run_type=self.run_type, selection=self.select)
                if found is not None:
                    break
        return found or self.run_type


def _refuse_early(request: JudgeRunRequest, kind: JudgeSubjects | None) -> None:
    """What is wrong with the request before its kind plans anything: a kind asked of another protocol's benchmark,
    a judge that is a participant, a canonical run the kind or the benchmark cannot have."""
    benchmark = request.benchmark
    if kind is not None and kind.foreign_refusal and benchmark.protocol != kind.protocol:
        raise RunError(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark: {kind.foreign_refusal.format(subjects=kind.name)}"
        )
    participants = list(benchmark.participants.values_list("name", flat=True))
    judge = request.judge_model.strip()
    if not judge:
        raise RunError("a judge model is required")
    # Compared as the gate reads names in any script: "通义千问" and "文心一言" differ (both squash to "").
    if fold(judge) in {fold(p) for p in participants} - {""}:
        raise RunError(f"{judge!r} is a participant of {benchmark}; a judge may never judge its own work")
    if request.canonical and not (kind is not None and kind.canonical):
        canonical = [k.label for k in _canonical_kinds()] or ["nothing"]
        raise RunError(
            f"a {request.subjects} run is never canonical: canonical runs judge the leaderboard's {' or '.join(canonical)}"
        )
    if request.canonical and benchmark.canonical_judge and benchmark.canonical_judge != judge:
        raise RunError(
            f"{benchmark} has canonical judge {benchmark.canonical_judge!r}; replacing it needs a new benchmark version "
            f"(create version {benchmark.next_version()} and rerun everything), or launch this run as non-canonical"
        )
    if kind is None:
        raise RunError(f"this installation cannot judge {request.subjects}: the app that provides them is not installed")


def _canonical_kinds() -> list[JudgeSubjects]:
    from .subjects import subjects_all

    return [k for k in subjects_all() if k.canonical]


def _refuse_replay(request: JudgeRunRequest, kind: JudgeSubjects) -> None:
    replay = request.replay_of
    if replay is None or replay.subjects == request.subjects:
        return
    routed = {r.task_kind: r for r in selection_routes(kind.protocol)}
    if replay.subjects in routed and kind.name not in routed:
        route = routed[replay.subjects]
        source = subjects_named(replay.subjects)
        option = next(iter(selection_options()), "--select")
        raise RunError(
            f"run {replay.pk} judged {source.label if source else replay.subjects}; replay it with {option} {route.prefix}"
        )
    raise RunError(f"run {replay.pk} judged {replay.subjects}, not {request.subjects}: a replay needs a run of the same kind")


def _template(request: JudgeRunRequest, kind: JudgeSubjects) -> Any:  # noqa: ANN401
    defaults = kind.default_prompts
    if not request.prompt_version and request.run_type not in defaults:
        raise RunError(f"a {request.subjects} run is one of {', '.join(sorted(defaults))}, not {request.run_type!r}")
    prompt_version = request.prompt_version or defaults[request.run_type]
    template = PROMPTS.get(prompt_version)
    if template is None or template.kind != request.run_type:
        raise RunError(f"no {request.run_type} prompt template {prompt_version!r}")
    return template


def _refuse_adaptive(request: JudgeRunRequest, kind: JudgeSubjects, orders: tuple[str, ...]) -> None:
    assert request.adaptive is not None
    refusal = adaptive.adaptive_refusal(
        kind,
        orders,
        sentinels=request.sentinels is not None,
        prices=request.price_per_1k_prompt is not None and request.price_per_1k_completion is not None,
        cost=request.adaptive.get("budget_cost") is not None,
    )
    if refusal:
        raise RunError(f"this run cannot be adaptive: {refusal}")


def _refuse_sample(request: JudgeRunRequest) -> None:
    """Before any call: a sample number the call cache cannot store would make every answer of the run unstorable."""
    if not 0 <= request.sample <= SAMPLE_MAX:
        raise RunError(
            f"sample must be a whole number from 0 to {SAMPLE_MAX} (the call cache stores it as such), not "
            f"{request.sample}: choose one in that range"
        )


def _endpoint_check(request: JudgeRunRequest) -> None:
    if request.provider == JudgeRun.Provider.OPENAI_COMPATIBLE:
        endpoint_url_required(request.base_url, what="the judge's base URL (--base-url)")
        api_key_required(request.api_key_env)
    elif request.replay_of is None:
        raise RunError("a recorded run needs the run it replays")


def _parameters(request: JudgeRunRequest, kind: JudgeSubjects, orders: tuple[str, ...], skipped: int) -> dict[str, Any]:
    return {
        "base_url": request.base_url,
        "api_key_env": request.api_key_env or "",
        kind.selection_key: request.select,
        "orders": list(orders),
        "concurrency": request.concurrency,
        "rate_per_second": request.rate_per_second,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "timeout": request.timeout,
        "lease_seconds": request.lease_seconds or execution.lease_seconds(),
        "seed": request.seed,
        "price_per_1k_prompt": request.price_per_1k_prompt,
        "price_per_1k_completion": request.price_per_1k_completion,
        "replay_of": request.replay_of.pk if request.replay_of else None,
        "skipped": skipped,
        "call_cache": request.call_cache,
        "sample": request.sample,
        drift.SENTINEL_PARAMETER: request.sentinels,
        "options": request.options,
        **({adaptive.PARAMETER: dict(request.adaptive)} if request.adaptive else {}),
    }


def judge_run_create(*, request: JudgeRunRequest, launched_by: Any = None) -> tuple[JudgeRun, int]:  # noqa: ANN401
    """Create a run and its tasks; return it with the number of subjects its kind skipped (a pair without text, say).

    Refuses a judge that is a participant, a canonical run of another judge than the version's or of a kind that is
    never canonical, a replay of another kind, whatever the kind's plan refuses (its orientation gate among them), and
    a judge configuration that drifted on the benchmark's sentinels when the benchmark refuses those (``jobs.drift``).
    """
    if request.launch_key and (made := JudgeRun.objects.filter(launch_key=request.launch_key).first()) is not None:
        raise AlreadyLaunched(made)
    kind = subjects_named(request.subjects)
    _refuse_early(request, kind)
    assert kind is not None
    template = _template(request, kind)
    _refuse_sample(request)
    _endpoint_check(request)
    orders = tuple(o for o in ORDERS if o in request.orders)
    if not orders:
        raise RunError("choose at least one order")
    _refuse_replay(request, kind)
    if request.sentinels is None:  # a check is how a drifted configuration is found, or found to be back
        drift.refuse_drifted(request.benchmark, drift.request_configuration(request, template.version))
    make_tasks, skipped = kind.plan(request.benchmark, dataclasses.replace(request, orders=orders), template)
    if request.sentinels is not None:  # a sentinel check judges the sentinel subjects only
        make_tasks = drift.sentinel_tasks(make_tasks, subject_field=kind.subject_field, set_id=request.sentinels)
        skipped = 0
    if request.adaptive:  # round 0's tasks only; the rest of the selection is the pool later rounds choose from
        _refuse_adaptive(request, kind, orders)
        make_tasks = adaptive.planned(make_tasks, kind, orders)
    try:
        run = _judge_run_insert(request, kind, template, orders, skipped, make_tasks, launched_by)
    except IntegrityError:
        # The same form posted at once: the first insert won; the others find its run (PostgreSQL made them wait for it).
        made = JudgeRun.objects.filter(launch_key=request.launch_key).first() if request.launch_key else None
        if made is not None:
            raise AlreadyLaunched(made) from None
        # A label its judge already has on the benchmark (a run before, or one made at the same moment).
        judge = request.judge_model.strip()
        labelled = JudgeRun.objects.filter(benchmark=request.benchmark, judge_model=judge, label=request.label).first()
        if not request.label or labelled is None:
            raise
        raise RunError(
            f"run {labelled.pk} of {request.benchmark} is labelled {request.label!r} for judge {judge!r} already; nothing "
            "new was made: give this run another label (--label)"
        ) from None
    return run, skipped


def _judge_run_insert(
    request: JudgeRunRequest,
    kind: JudgeSubjects,
    template: Any,
    orders: tuple[str, ...],
    skipped: int,
    make_tasks: Any,  # noqa: ANN401
    launched_by: Any,  # noqa: ANN401
) -> JudgeRun:
    benchmark, judge = request.benchmark, request.judge_model.strip()
    with transaction.atomic():
        run = JudgeRun.objects.create(
            benchmark=benchmark,
            label=request.label or f"{request.run_type}-{timezone.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}",
            run_type=request.run_type,
            judge_model=judge,
            provider=request.provider,
            prompt_version=template.version,
            parameters=_parameters(request, kind, orders, skipped),
            is_canonical=request.canonical,
            subjects=request.subjects,
            launched_by=launched_by,
            launch_key=request.launch_key,
        )
        if request.canonical and not benchmark.canonical_judge:
            benchmark.canonical_judge = judge
            benchmark.save(update_fields=["canonical_judge"])
        kind.task_model.objects.bulk_create(make_tasks(run), batch_size=2000)
    return run


def judge_run_launch(*, run: JudgeRun, drivers: int = 1, event: str = "launched") -> None:
    """Mark the run running and enqueue its driver(s) once the transaction commits (``jobs.lifecycle.run_launch``)."""
    lifecycle.run_launch(run=run, drivers=drivers, event=event)


def judge_run_pause(*, run: JudgeRun) -> None:
    """Stop claiming new work; answers already in flight are still stored."""
    lifecycle.run_pause(run=run)


def judge_run_cancel(*, run: JudgeRun) -> None:
    lifecycle.run_cancel(run=run)


def judge_run_resume(*, run: JudgeRun, drivers: int = 1, call_cache: bool = True) -> int:
    """Resume a paused, failed or interrupted run: only missing work is done, and (unless ``call_cache`` is False) what
    the call cache has is not asked again. Returns the tasks to do."""
    return lifecycle.run_resume(run=run, drivers=drivers, call_cache=call_cache)


# --------------------------------------------------------------------------- execution


@dataclass
class JudgeResult:
    """What the driver got for one task: accepted (with the parsed ``answer``), invalid after every attempt, or
    failed (no usable answer: the endpoint gave up, or the task could not be sent)."""

    status: str  # accepted | invalid | failed
    answer: Any = None
    raw: str = ""
    errors: list[str] | None = None
    attempt: int = 1
    calls: int = 0
    latency: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    transcripts: list[dict[str, Any]] | None = None
    answered: bool = False  # an answer came back (and was paid for), whether or not it parsed
    # taken from the call cache (``jobs.call_cache.Cached``) instead of a call: no call, no tokens, no cost
    cached: Any = None


def judgment_fields(result: JudgeResult) -> dict[str, Any]:
    """What a kind that keeps the two-sided answer (``jobs.parsing.JudgeAnswer``) stores of it, whatever it compared:
    the verdict as the judge gave it (A, B or TIE), its reasons, the raw answer, rejected attempts, a structured run's
    scores, calls and tokens (no NUL anywhere: the provider and the parser take them out, ``jobs.parsing.storable``)."""
    return _judgment_fields(result)


def _judgment_fields(result: JudgeResult) -> dict[str, Any]:
    answer = result.answer
    metadata: dict[str, Any] = {"rejected_attempts": result.transcripts} if result.transcripts else {}
    if answer and answer.scores:
        metadata["scores"] = answer.scores
    return {
        "status": result.status,
        "verdict": answer.verdict if answer else None,
        "confidence": answer.confidence if answer else "",
        "main_reason": answer.main_reason if answer else "",
        "weakness_a": answer.weakness_a if answer else "",
        "weakness_b": answer.weakness_b if answer else "",
        "raw_response": result.raw,
        "errors": result.errors or [],
        "attempt": result.attempt,
        "latency_seconds": result.latency,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "metadata": metadata,
    }


def judge_run_execute(*, run_id: int) -> str:
    """Run a judge run's tasks until done, paused or cancelled. Safe to call twice at once.

    A run whose driver cannot start (the worker lacks the API key, say) ends FAILED with the reason.
    """
    run, status = running_run(JudgeRun, run_id)
    if run is None:
        return status
    try:
        provider = chat_provider(run, run.judge_model)
    except (PermanentError, JudgeRun.DoesNotExist) as exc:
        return driver_start_failed(RunKind.JUDGE, run.pk, exc)
    driver = _JudgeDriver(run, provider)
    drive(
        run=run,
        kind=RunKind.JUDGE,
        task_model=driver.kind.task_model,
        token=driver.token,
        claim=driver.claim,
        work=driver.work,
        store=driver.store,
        task_id=lambda spec: spec.task_id,
        providers=[provider],
        limiter=driver.limiter,
        on_error=lambda exc: JudgeResult(status="failed", errors=[f"internal error: {type(exc).__name__}: {exc}"]),
    )
    return judge_run_finish(run.pk)


class _JudgeDriver:
    """One driver's claim, work and store for a judge run (``jobs.driving.drive``)."""

    def __init__(self, run: JudgeRun, provider: Any) -> None:  # noqa: ANN401
        self.run, self.provider = run, provider
        self.token = uuid.uuid4().hex
        self.template = PROMPTS[run.prompt_version]
        self.names = list(run.benchmark.participants.values_list("name", flat=True))
        self.limiter = endpoint_limiter(run)
        self.lease = run_lease(run)
        self.aliases = AliasCheck(run.benchmark_id)
        self.kind = subjects_of(run)
        self.cache = CallCache(kind=RunKind.JUDGE, run=run, template_version=run.prompt_version)

    def claim(self, n: int, held: frozenset[int]) -> list[JudgeSpec]:
        ids = execution.tasks_claim(
            kind=RunKind.JUDGE,
            task_model=self.kind.task_model,
            run_id=self.run.pk,
            token=self.token,
            lease=self.lease,
            n=n,
            held=held,
        )
        if not ids:
            return []
        self.aliases.refresh()
        specs = self.kind.specs(self.run, ids, self.template, self.aliases, self.names)
        self.cache.claimed(
            (s.task_id, self.provider, s.rendered.messages(), s.order) for s in specs if s.rendered and not s.problem
        )
        return specs

    def parse(self, text: str, spec: JudgeSpec) -> Any:  # noqa: ANN401
        if self.kind.parse is not None:
            return self.kind.parse(text, self.template, spec)
        return parse_judge_answer(text, dimensions=self.template.dimensions)

    async def work(self, spec: JudgeSpec, before_call: BeforeCall) -> JudgeResult:
        if spec.problem:
            return JudgeResult(status="failed", errors=[spec.problem])
        assert spec.rendered is not None
        cached = self.cache.take(spec.task_id)
        if cached is not None:
            try:  # the kind reads it as a fresh answer; one it no longer accepts is a miss
                return JudgeResult(status="accepted", answer=self.parse(cached.text, spec), raw=cached.text, cached=cached)
            except ParseError:
                pass
        result = JudgeResult(status="invalid", errors=[], transcripts=[])
        for attempt in range(1, MAX_PARSE_ATTEMPTS + 1):
            outcome = await call_with_backoff(
                self.provider, self.limiter, spec.rendered.messages(), (spec.subject_id, spec.order), before_call
            )
            result.calls += outcome.calls
            if outcome.completion is None:
                result.status, result.errors = "failed", [*(result.errors or []), outcome.error or "no answer"]
                return result
            c = outcome.completion
            result.answered = True
            result.attempt, result.raw, result.latency = attempt, c.text, c.latency_seconds
            result.prompt_tokens += c.prompt_tokens or 0
            result.completion_tokens += c.completion_tokens or 0
            try:
                result.answer = self.parse(c.text, spec)
            except ParseError as exc:
                assert result.errors is not None and result.transcripts is not None
                result.errors.append(f"attempt {attempt}: {exc}")
                result.transcripts.append({"attempt": attempt, "raw": c.text, "error": str(exc)})
                continue
            result.status = "accepted"
            return result
        return result

    def store(self, batch: list[tuple[JudgeSpec, JudgeResult]]) -> None:
        task_model = self.kind.task_model
        with transaction.atomic():
            owned, finished = tasks_owned(task_model, self.token, [spec.task_id for spec, _ in batch])
            judgments: list[Any] = []
            updates: dict[int, tuple[str, str]] = {}
            answered, hits = _cache_records(batch)  # an answer discarded below was accepted and paid for: it is kept too
            for spec, result in batch:
                if spec.task_id not in owned:
                    hits.pop(spec.task_id, None)
                    if spec.task_id not in finished and result.answered:
                        execution.answer_discard(
                            task_model=task_model,
                            task_id=spec.task_id,
                            prompt_tokens=result.prompt_tokens,
                            completion_tokens=result.completion_tokens,
                        )
                    continue
                if result.status == "failed":
                    updates[spec.task_id] = (TaskStatus.FAILED, "; ".join(result.errors or []))
                    continue
                made = self.kind.judgment(self.run.pk, spec, result)
                made = made if isinstance(made, list) else [made]
                if result.cached is not None:  # the verdict says where its answer came from (the run page shows it)
                    made[0].metadata = {**(made[0].metadata or {}), "cached_from": result.cached.source()}
                judgments.extend(made)
                error = "" if result.status == "accepted" else "; ".join(result.errors or [])
                updates[spec.task_id] = (TaskStatus.DONE, error)
            rows_store(self.kind.judgment_model, judgments)
            self.cache.record(answered=answered, hits=hits.items())
            self.cache.forget(spec.task_id for spec, _ in batch)
            groups: dict[tuple[str, str], list[int]] = {}
            for task_id, key in updates.items():
                groups.setdefault(key, []).append(task_id)
            for (status, error), ids in groups.items():
                task_model.objects.filter(id__in=ids).update(status=status, last_error=error, updated_at=timezone.now())


def _cache_records(batch: list[tuple[JudgeSpec, JudgeResult]]) -> tuple[list[Answered], dict[int, Any]]:
    """Of a stored batch, the accepted answers that came from calls (to keep in the call cache) and the tasks answered
    from it (hits, by task id)."""
    answered = [
        Answered(spec.task_id, result.raw, result.prompt_tokens, result.completion_tokens, result.latency)
        for spec, result in batch
        if result.status == "accepted" and result.cached is None and result.answered
    ]
    hits = {spec.task_id: result.cached for spec, result in batch if result.status == "accepted" and result.cached is not None}
    return answered, hits


def _judge_task_model(run_id: int) -> type[Any]:
    return subjects_of(JudgeRun.objects.only("id", "subjects").get(pk=run_id)).task_model


def _judge_step(run: JudgeRun) -> Step | None:
    """A judge run's follow-up is its task kind's ``after`` (a Swiss round moves its selection on) and, for a sentinel
    check, scoring it against the frozen verdicts (``jobs.drift``), carried out as the engine's durable step
    (``jobs.steps``)."""
    kind = subjects_named(run.subjects)
    steps = [(kind.after_title, kind.after)] if kind is not None and kind.after is not None else []
    if drift.check_of(run) is not None:  # a sentinel check is scored once its verdicts are in
        steps.append((drift.STEP_TITLE, drift.check_record))
    rounds = adaptive.PARAMETER in (run.parameters or {})
    if not steps and not rounds:
        return None

    def carry_out(ended: JudgeRun) -> None:
        if rounds and adaptive.round_step(ended):
            return  # another round: the run goes on, and what follows it waits for its end
        for _, step in steps:
            step(ended)

    titles = ([adaptive.STEP_TITLE] if rounds else []) + [title for title, _ in steps]
    return Step(title="; then ".join(titles), carry_out=carry_out)


def judge_run_finish(run_id: int) -> str:
    """Close a judge run when nothing is left (and its task kind's ``after`` is done: ``jobs.steps``)."""
    return run_finish(RunKind.JUDGE, run_id)


def _judge_enqueue(run_id: int) -> None:
    from .tasks import judge_run_execute_task

    execution.enqueue(lambda: judge_run_execute_task.delay(run_id), kind=RunKind.JUDGE, run_id=run_id)


run_kind_register(
    RunKindSpec(
        kind=RunKind.JUDGE,
        run_model=JudgeRun,
        task_model_of=_judge_task_model,
        execute=lambda run_id: judge_run_execute(run_id=run_id),
        finish=judge_run_finish,
        progress=lambda run: run_progress(run=run),
        title="judge",
        noun="run",
        enqueue=_judge_enqueue,
        resumes_cancelled=False,
        step=_judge_step,
    )
)
