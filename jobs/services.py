"""Judge and generation runs: create, launch, execute, pause, resume, cancel.

Preconditions are checked before any call is made (judge not a participant, canonical
judge of the version, orientation gate, blindness gate). Execution is idempotent: tasks
are claimed by conditional updates and an accepted judgment is unique per
(run, pair, order) in the database, so a task delivered twice or a worker killed mid-run
never produces a second verdict, and resuming does only what is missing.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from arena import blindness
from arena.models import Benchmark, CanonicalPair, Context, JudgeRun, OrderedJudgment, Proposal
from arena.release import orientation_flipped
from arena.schemas import SIX_FIELD

from . import execution
from .engine import BeforeCall, DatabaseUnavailable, Driver, DriverHooks, call_with_backoff, release_connection, run_blocking
from .execution import RunKindSpec, run_event_add, run_fail, run_kind_register
from .limits import DEFAULT_SLOT_TTL, EndpointLimiter
from .models import GenerationRun, GenerationTask, JudgeTask, RunEvent, RunKind, TaskStatus
from .parsing import ParseError, parse_judge_answer, parse_proposal_answer
from .prompts import DEFAULT_PROMPT, PROMPTS, PromptTemplate, RenderedTask, render_generation_task, render_judge_task
from .providers import ApiKeyMissing, OpenAICompatibleProvider, PermanentError, Provider, RecordedProvider, api_key_from_env
from .subjects import SUBJECTS, JudgeSpec, JudgeSubjects, subjects_of, subjects_register

#: A database wait shorter than this is logged, not written to the run's log as an outage.
OUTAGE_EVENT_SECONDS = 1.0
log = logging.getLogger(__name__)
MAX_PARSE_ATTEMPTS = 3  # the first answer plus at most two retries on a malformed one
ORDERS = ("original", "reverse")


class RunError(Exception):
    """A run cannot be created or changed as asked; the message says why and what to do."""


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
    pairs: str = "all"  # all | batch:NAME | sample:N | controls | controls:KIND,KIND (or what the task kind reads)
    task_kind: str | None = None  # explicit task kind (jobs.subjects); None: from ``pairs`` (controls or pairs)
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
    options: dict[str, Any] = dataclasses.field(
        default_factory=dict
    )  # what a task kind reads beyond these (stored as parameters["options"])

    @property
    def subjects(self) -> str:
        """What the run judges: an explicit task kind, else the canonical pairs, or (``--pairs controls``) the diagnostic
        control pairs."""
        if self.task_kind:
            return self.task_kind
        return JudgeRun.Subjects.CONTROLS if self.pairs.partition(":")[0] == "controls" else JudgeRun.Subjects.PAIRS


def _select_pairs(benchmark: Benchmark, spec: str, seed: int) -> list[CanonicalPair]:
    pairs = list(benchmark.pairs.select_related("context__batch").order_by("id"))
    kind, _, value = spec.partition(":")
    if kind == "all" and not value:
        return pairs
    if kind == "batch" and value:
        chosen = [p for p in pairs if p.context.batch and p.context.batch.name == value]
        if not chosen:
            raise RunError(f"no pairs in batch {value!r}")
        return chosen
    if kind == "sample" and value.isdigit() and int(value) > 0:
        judgeable = _with_text(pairs)
        return sorted(random.Random(seed).sample(judgeable, min(int(value), len(judgeable))), key=lambda p: p.pk)
    raise RunError(f"pairs must be 'all', 'batch:NAME' or 'sample:N', got {spec!r}")


def _proposal_map(pairs: list[CanonicalPair]) -> dict[tuple[int, int], Proposal]:
    context_ids = {p.context_id for p in pairs}
    return {
        (p.context_id, p.participant_id): p
        for p in Proposal.objects.filter(context_id__in=context_ids).select_related("participant")
    }


def _with_text(pairs: list[CanonicalPair]) -> list[CanonicalPair]:
    proposals = _proposal_map(pairs)
    return [
        p
        for p in pairs
        if p.context.has_text
        and (p.context_id, p.participant_a_id) in proposals
        and (p.context_id, p.participant_b_id) in proposals
    ]


# Every ASCII byte but digits and lower-case letters (what ``_squash`` deletes after lower-casing).
_NOT_ALNUM = bytes(b for b in range(128) if not (48 <= b <= 57 or 97 <= b <= 122))


def _squash(text: str) -> str:
    """Lower case with everything but letters and digits dropped: 'GPT-5.2', 'gpt_5.2' and 'GPT 5.2' meet.

    Same as ``re.sub(r"[^0-9a-z]+", "", text.lower())`` (non-ASCII characters go too), in C: the gate squashes
    every prompt, and the regular expression was a tenth of a driver's CPU."""
    return text.lower().encode("ascii", "ignore").translate(None, _NOT_ALNUM).decode("ascii")


def blindness_problem(
    rendered: RenderedTask, internal_key: str, names: list[str], hits: Callable[[str], list[Any]]
) -> str | None:
    """The second line of defence after redaction (arena/blindness.py): a prompt that still names a
    participant (in any spelling), the internal pair id, or any alias of the benchmark's participants and
    judges inside a proposal is refused. (Contexts may cite models: the literature names them for both sides.)"""
    text = _squash(rendered.system + "\n" + rendered.user)
    for name in names:
        if _squash(name) and _squash(name) in text:
            return "blindness gate: the prompt contains a participant's name"
    if _squash(internal_key) in text:
        return "blindness gate: the prompt contains the internal id of what is judged"
    leaks = [(i, hit) for i, block in enumerate((rendered.block_a, rendered.block_b)) for hit in hits(block)]
    if leaks:
        index, hit = leaks[0]
        return (
            f"blindness gate: proposal {'AB'[index]} still names {', '.join(hit.aliases)!r} (an alias of "
            f"{', '.join(hit.owners)}) after redaction; re-scan the benchmark's blindness page, then resume"
        )
    return None


class AliasCheck:
    """The gate's alias check for one driver: the benchmark's matcher is read once per claimed batch (an alias
    edit applies from the next batch on), and a proposal block shown in several tasks is checked once per matcher."""

    MEMORY = 10_000  # blocks remembered at most: bounded memory on huge benchmarks

    def __init__(self, benchmark_id: int) -> None:
        self.benchmark_id = benchmark_id
        self.matcher: Any = None
        self.seen: dict[str, list[Any]] = {}

    def refresh(self) -> None:
        matcher = blindness.benchmark_matcher(benchmark_id=self.benchmark_id)
        if matcher is not self.matcher:
            self.matcher, self.seen = matcher, {}

    def __call__(self, block: str) -> list[Any]:
        if block not in self.seen:
            if len(self.seen) > self.MEMORY:
                self.seen.clear()
            self.seen[block] = self.matcher.hits(block)
        return self.seen[block]


def orientation_gate(original: RenderedTask, reverse: RenderedTask) -> bool:
    """The reverse task must show exactly the original's B as A and its A as B."""

    def body(block: str) -> str:
        return block.split("\n", 1)[1]

    return (
        body(reverse.block_a) == body(original.block_b)
        and body(reverse.block_b) == body(original.block_a)
        and body(original.block_a) != body(original.block_b)
    )


def judge_run_create(*, request: JudgeRunRequest, launched_by: Any = None) -> tuple[JudgeRun, int]:
    """Create a run and its ordered tasks; return it with the number of pairs skipped for lack of text.

    Refuses a judge that is a participant, a canonical run of another judge than the
    version's, and any reverse task that fails the orientation gate.
    """
    benchmark = request.benchmark
    if benchmark.protocol != Benchmark.Protocol.LIT2TEST and request.subjects in (
        JudgeRun.Subjects.PAIRS,
        JudgeRun.Subjects.CONTROLS,
    ):
        raise RunError(
            f"{benchmark} is a {benchmark.get_protocol_display()} benchmark: it has no Lit2Test {request.subjects} to judge; open its own pages from the dashboard"
        )
    participants = list(benchmark.participants.values_list("name", flat=True))
    judge = request.judge_model.strip()
    if not judge:
        raise RunError("a judge model is required")
    if _squash(judge) in {_squash(p) for p in participants}:
        raise RunError(f"{judge!r} is a participant of {benchmark}; a judge may never judge its own proposals")
    if request.canonical and request.subjects != JudgeRun.Subjects.PAIRS:
        raise RunError(f"a {request.subjects} run is never canonical: canonical runs judge the leaderboard's pairs")
    if request.canonical and benchmark.canonical_judge and benchmark.canonical_judge != judge:
        raise RunError(
            f"{benchmark} has canonical judge {benchmark.canonical_judge!r}; replacing it needs a new benchmark version "
            f"(create version {_next_version(benchmark)} and rerun everything), or launch this run as non-canonical"
        )
    kind = SUBJECTS.get(request.subjects)
    if kind is None:
        raise RunError(f"this installation cannot judge {request.subjects}: the app that provides them is not installed")
    defaults = kind.default_prompts or DEFAULT_PROMPT
    if not request.prompt_version and request.run_type not in defaults:
        raise RunError(f"a {request.subjects} run is one of {', '.join(sorted(defaults))}, not {request.run_type!r}")
    prompt_version = request.prompt_version or defaults[request.run_type]
    template = PROMPTS.get(prompt_version)
    if template is None or template.kind != request.run_type:
        raise RunError(f"no {request.run_type} prompt template {prompt_version!r}")
    if request.provider == JudgeRun.Provider.OPENAI_COMPATIBLE:
        if not request.base_url:
            raise RunError("an OpenAI-compatible run needs a base URL")
        try:
            api_key_from_env(request.api_key_env)
        except PermanentError as exc:
            raise RunError(str(exc)) from None
    elif request.replay_of is None:
        raise RunError("a recorded run needs the run it replays")
    orders = tuple(o for o in ORDERS if o in request.orders)
    if not orders:
        raise RunError("choose at least one order")
    if request.subjects != JudgeRun.Subjects.PAIRS:
        if request.replay_of is not None and request.replay_of.subjects != request.subjects:
            raise RunError(
                f"run {request.replay_of.pk} judged {request.replay_of.subjects}, not {request.subjects}: a replay needs a run of the same kind"
            )
    elif request.replay_of is not None and request.replay_of.subjects != JudgeRun.Subjects.PAIRS:
        raise RunError(f"run {request.replay_of.pk} judged diagnostic controls; replay it with --pairs controls")
    make_tasks, skipped = kind.plan(benchmark, dataclasses.replace(request, orders=orders), template)

    parameters = {
        "base_url": request.base_url,
        "api_key_env": request.api_key_env or "",
        "pairs": request.pairs,
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
        "skipped_without_text": skipped,
        "options": request.options,
    }
    with transaction.atomic():
        run = JudgeRun.objects.create(
            benchmark=benchmark,
            label=request.label or f"{request.run_type}-{timezone.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}",
            run_type=request.run_type,
            judge_model=judge,
            provider=request.provider,
            prompt_version=prompt_version,
            parameters=parameters,
            is_canonical=request.canonical,
            subjects=request.subjects,
            launched_by=launched_by,
        )
        if request.canonical and not benchmark.canonical_judge:
            benchmark.canonical_judge = judge
            benchmark.save(update_fields=["canonical_judge"])
        kind.task_model.objects.bulk_create(make_tasks(run), batch_size=2000)
    return run, skipped


def _pairs_plan(
    benchmark: Benchmark, request: JudgeRunRequest, template: PromptTemplate
) -> tuple[Callable[[JudgeRun], list[JudgeTask]], int]:
    """The canonical pairs a run judges (those with text), each through the orientation gate in both orders."""
    selected = _select_pairs(benchmark, request.pairs, request.seed)
    judgeable = _with_text(selected)
    proposals = _proposal_map(judgeable)
    by_participant = {
        pair.pk: {pid: proposals[(pair.context_id, pid)] for pid in (pair.participant_a_id, pair.participant_b_id)}
        for pair in judgeable
    }
    contexts = {c.pk: c for c in Context.objects.filter(pk__in={p.context_id for p in judgeable}).prefetch_related("papers")}
    for pair in judgeable:
        pair.context = contexts[pair.context_id]
        original = render_judge_task(pair=pair, order="original", template=template, proposals=by_participant[pair.pk])
        reverse = render_judge_task(pair=pair, order="reverse", template=template, proposals=by_participant[pair.pk])
        if not orientation_gate(original, reverse):
            raise RunError(
                f"orientation gate: the reverse task of pair {pair.public_id} does not swap A and B; nothing was launched"
            )

    def make(run: JudgeRun) -> list[JudgeTask]:
        return [JudgeTask(run=run, pair=pair, order=order) for pair in judgeable for order in request.orders]

    return make, len(selected) - len(judgeable)


def _next_version(benchmark: Benchmark) -> str:
    return str(int(benchmark.version) + 1) if benchmark.version.isdigit() else f"{benchmark.version}.1"


def benchmark_new_version(*, benchmark: Benchmark, version: str | None = None, canonical_judge: str = "") -> Benchmark:
    """A new version carrying the same contexts, papers, participants, proposals and pairs, with no runs."""
    version = version or _next_version(benchmark)
    if Benchmark.objects.filter(name=benchmark.name, version=version).exists():
        raise RunError(f"{benchmark.name} v{version} already exists")
    with transaction.atomic():
        new = Benchmark.objects.create(
            name=benchmark.name,
            version=version,
            description=benchmark.description,
            canonical_judge=canonical_judge,
            verdict_rule=benchmark.verdict_rule,
            proposal_schema=benchmark.proposal_schema,
            orientation_seed=benchmark.orientation_seed,
        )
        batches = {b.pk: new.batches.create(name=b.name) for b in benchmark.batches.all()}
        people = {p.pk: new.participants.create(name=p.name, provider=p.provider) for p in benchmark.participants.all()}
        contexts = {}
        for c in benchmark.contexts.prefetch_related("papers"):
            old_pk = c.pk
            papers = list(c.papers.all())
            c.pk = None
            c.benchmark = new
            c.batch = batches.get(c.batch_id) if c.batch_id else None
            c.save()
            contexts[old_pk] = c
            for paper in papers:
                paper.pk, paper.context = None, c
                paper.save()
        for p in Proposal.objects.filter(context__benchmark=benchmark):
            p.pk, p.context, p.participant = None, contexts[p.context_id], people[p.participant_id]
            p.save()
        CanonicalPair.objects.bulk_create(
            [
                CanonicalPair(
                    benchmark=new,
                    context=contexts[p.context_id],
                    participant_a=people[p.participant_a_id],
                    participant_b=people[p.participant_b_id],
                    internal_key=p.internal_key,
                )
                for p in benchmark.pairs.all()
            ]
        )
    return new


def _judge_driver_enqueue(run_id: int) -> None:
    from .tasks import judge_run_execute_task

    execution.enqueue(lambda: judge_run_execute_task.delay(run_id), kind=RunKind.JUDGE, run_id=run_id)


def judge_run_launch(*, run: JudgeRun, drivers: int = 1, event: str = "launched") -> None:
    """Mark the run running and enqueue its driver(s) once the transaction commits.

    If the broker cannot be reached the run still starts: the failure is recorded on the run and a
    worker's watchdog launches it when the broker is back.
    """
    with transaction.atomic():
        updated = JudgeRun.objects.filter(pk=run.pk, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.PAUSED]).update(
            status=JudgeRun.Status.RUNNING, finished_at=None
        )
        if not updated:
            raise RunError(f"run {run.pk} is {JudgeRun.objects.get(pk=run.pk).status}; only pending or paused runs start")
        run_event_add(kind=RunKind.JUDGE, run_id=run.pk, code=event, message=f"{event} with {max(1, drivers)} driver(s)")
        for _ in range(max(1, drivers)):
            transaction.on_commit(lambda: _judge_driver_enqueue(run.pk))
    run.refresh_from_db()


def judge_run_pause(*, run: JudgeRun) -> None:
    """Stop claiming new work; answers already in flight are still stored."""
    if not JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).update(status=JudgeRun.Status.PAUSED):
        raise RunError(f"run {run.pk} is not running")
    run.refresh_from_db()


def judge_run_cancel(*, run: JudgeRun) -> None:
    if not JudgeRun.objects.filter(pk=run.pk, status__in=JudgeRun.ACTIVE_STATUSES).update(
        status=JudgeRun.Status.CANCELLED, finished_at=timezone.now()
    ):
        raise RunError(f"run {run.pk} has already ended")
    subjects_of(run).task_model.objects.filter(run=run, status=TaskStatus.PENDING).update(
        status=TaskStatus.SKIPPED, last_error="cancelled"
    )
    run.refresh_from_db()


def judge_run_resume(*, run: JudgeRun, drivers: int = 1) -> int:
    """Resume a paused, failed or interrupted run: only missing work is done. Returns the tasks to do."""
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().get(pk=run.pk)
        if run.status == JudgeRun.Status.CANCELLED:
            raise RunError("a cancelled run cannot be resumed; launch a new run")
        if run.status == JudgeRun.Status.COMPLETED:
            raise RunError(f"run {run.pk} is completed; there is nothing to resume")
        # Claims of drivers that died (lease run out, or no heartbeat) are taken back at once;
        # failed tasks get another chance.
        task_model = subjects_of(run).task_model
        execution.tasks_reclaim(kind=RunKind.JUDGE, task_model=task_model, run_id=run.pk)
        todo = task_model.objects.filter(run=run, status__in=[TaskStatus.PENDING, TaskStatus.CLAIMED]).count()
        JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.PAUSED)
    run.refresh_from_db()
    judge_run_launch(run=run, drivers=drivers, event="resumed")
    return todo


# --------------------------------------------------------------------------- execution


@dataclass
class _JudgeResult:
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


def _provider_for(run: JudgeRun | GenerationRun, model: str) -> Provider:
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


def _limiter_for(run: JudgeRun | GenerationRun) -> EndpointLimiter | None:
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


def _running(model: type[JudgeRun] | type[GenerationRun], run_id: int) -> tuple[Any, str]:
    """The run if it is running, else None with its status ("gone" when deleted): a task re-reads its row."""
    run = model.objects.select_related("benchmark").filter(pk=run_id).first()
    if run is None:
        return None, "gone"
    return (run, run.status) if run.status == JudgeRun.Status.RUNNING else (None, run.status)


def _start_problem(kind: str, run_id: int, exc: Exception) -> str:
    """Fail a run whose driver cannot start (missing API key, unknown replay, ...), saying why and what to do."""
    reason = f"the driver could not start on worker {execution.worker_identity()}: {exc}"
    if isinstance(exc, ApiKeyMissing):
        reason += (
            ". Workers read the API key from their own environment: set the variable where `celery -A lit2test_web worker` "
            "runs (not only where the run was launched), restart the worker, and resume the run"
        )
    run_fail(kind=kind, run_id=run_id, reason=reason, code="driver_failed")
    return JudgeRun.Status.FAILED


def judge_run_execute(*, run_id: int) -> str:
    """Run a judge run's tasks until done, paused or cancelled. Safe to call twice at once.

    A run whose driver cannot start (the worker lacks the API key, say) ends FAILED with the reason.
    """
    run, status = _running(JudgeRun, run_id)
    if run is None:
        return status
    token = uuid.uuid4().hex
    template = PROMPTS[run.prompt_version]
    structured = template.kind == "structured"
    names = list(run.benchmark.participants.values_list("name", flat=True))
    try:
        provider = _provider_for(run, run.judge_model)
    except (PermanentError, JudgeRun.DoesNotExist) as exc:
        return _start_problem(RunKind.JUDGE, run.pk, exc)
    limiter = _limiter_for(run)
    lease = _lease(run)
    aliases = AliasCheck(run.benchmark_id)
    kind = subjects_of(run)
    task_model = kind.task_model
    parse = kind.parse

    def claim(n: int, held: frozenset[int]) -> list[JudgeSpec]:
        ids = execution.tasks_claim(
            kind=RunKind.JUDGE, task_model=task_model, run_id=run.pk, token=token, lease=lease, n=n, held=held
        )
        if not ids:
            return []
        aliases.refresh()
        return kind.specs(run, ids, template, aliases, names)

    async def work(spec: JudgeSpec, before_call: BeforeCall) -> _JudgeResult:
        if spec.problem:
            return _JudgeResult(status="failed", errors=[spec.problem])
        assert spec.rendered is not None
        result = _JudgeResult(status="invalid", errors=[], transcripts=[])
        for attempt in range(1, MAX_PARSE_ATTEMPTS + 1):
            outcome = await call_with_backoff(
                provider, limiter, spec.rendered.messages(), (spec.subject_id, spec.order), before_call
            )
            result.calls += outcome.calls
            if outcome.completion is None:
                result.status, result.errors = "failed", [*result.errors, outcome.error or "no answer"]
                return result
            c = outcome.completion
            result.answered = True
            result.attempt, result.raw, result.latency = attempt, c.text, c.latency_seconds
            result.prompt_tokens += c.prompt_tokens or 0
            result.completion_tokens += c.completion_tokens or 0
            try:
                result.answer = (
                    parse(c.text, template, spec) if parse is not None else parse_judge_answer(c.text, structured=structured)
                )
            except ParseError as exc:
                result.errors.append(f"attempt {attempt}: {exc}")
                result.transcripts.append({"attempt": attempt, "raw": c.text, "error": str(exc)})
                continue
            result.status = "accepted"
            return result
        return result

    def store(batch: list[tuple[JudgeSpec, _JudgeResult]]) -> None:
        with transaction.atomic():
            owned, finished = _owned(task_model, token, [spec.task_id for spec, _ in batch])
            judgments, updates = [], {}
            for spec, result in batch:
                if spec.task_id not in owned:
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
                made = kind.judgment(run.pk, spec, result)
                judgments.extend(made if isinstance(made, list) else [made])
                error = "" if result.status == "accepted" else "; ".join(result.errors or [])
                updates[spec.task_id] = (TaskStatus.DONE, error)
            _create_judgments(kind.judgment_model, judgments)
            groups: dict[tuple[str, str], list[int]] = {}
            for task_id, key in updates.items():
                groups.setdefault(key, []).append(task_id)
            for (status, error), ids in groups.items():
                task_model.objects.filter(id__in=ids).update(status=status, last_error=error, updated_at=timezone.now())

    _drive(
        run=run,
        kind=RunKind.JUDGE,
        task_model=task_model,
        token=token,
        claim=claim,
        work=work,
        store=store,
        task_id=lambda spec: spec.task_id,
        providers=[provider],
        limiter=limiter,
        on_error=lambda exc: _JudgeResult(status="failed", errors=[f"internal error: {type(exc).__name__}: {exc}"]),
    )
    return _judge_finish(run.pk)


def _lease(run: JudgeRun | GenerationRun) -> float:
    return float(run.parameters.get("lease_seconds") or execution.lease_seconds())


def _owned(task_model: type[Any], token: str, ids: list[int]) -> tuple[set[int], set[int]]:
    """Of these tasks, (the ones this driver still holds, the ones it already finished).

    Locks the held ones for the caller's transaction. A task whose lease ran out may belong to another
    driver now: its answer is not stored. A task this driver already finished is a store repeated after
    a lost commit acknowledgement: it is skipped quietly.
    """
    rows = list(task_model.objects.select_for_update().filter(id__in=ids, claimed_by=token).values_list("id", "status"))
    return {i for i, st in rows if st == TaskStatus.CLAIMED}, {i for i, st in rows if st in (TaskStatus.DONE, TaskStatus.FAILED)}


def _drive(
    *,
    run: JudgeRun | GenerationRun,
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
    lease = _lease(run)

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


def judgment_fields(result: _JudgeResult) -> dict[str, Any]:
    """What every judging task kind stores of a parsed answer, whatever its subject: the verdict as the judge gave
    it (A, B or TIE), its reasons, the raw answer, rejected attempts, a structured run's scores, calls and tokens."""
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


def _pairs_judgment(run_id: int, spec: JudgeSpec, result: _JudgeResult) -> OrderedJudgment:
    fields = judgment_fields(result)
    verdict = fields["verdict"]
    shown_a, shown_b = spec.meaning["shown_a_id"], spec.meaning["shown_b_id"]
    return OrderedJudgment(
        run_id=run_id,
        pair_id=spec.subject_id,
        order=spec.order,
        shown_a_id=shown_a,
        is_tie=verdict == "TIE",
        winner_id={"A": shown_a, "B": shown_b}.get(verdict or ""),
        **fields,
    )


def _pairs_specs(
    run: JudgeRun, ids: list[int], template: PromptTemplate, aliases: AliasCheck, names: list[str]
) -> list[JudgeSpec]:
    tasks = list(
        JudgeTask.objects.filter(id__in=ids).select_related("pair__context", "pair__participant_a", "pair__participant_b")
    )
    pairs = [t.pair for t in tasks]
    proposals = _proposal_map(pairs)
    contexts = {c.pk: c for c in Context.objects.filter(pk__in={p.context_id for p in pairs}).prefetch_related("papers")}
    specs = []
    for t in tasks:
        pair = t.pair
        pair.context = contexts[pair.context_id]
        try:
            by_participant = {pid: proposals[(pair.context_id, pid)] for pid in (pair.participant_a_id, pair.participant_b_id)}
        except KeyError:
            specs.append(JudgeSpec(t.pk, pair.pk, t.order, None, "a proposal of this pair has no text"))
            continue
        rendered = render_judge_task(
            pair=pair, order=t.order, template=template, proposals=by_participant, matcher=aliases.matcher
        )
        shown_a, shown_b = (
            (pair.participant_a_id, pair.participant_b_id)
            if t.order == "original"
            else (pair.participant_b_id, pair.participant_a_id)
        )
        specs.append(
            JudgeSpec(
                t.pk,
                pair.pk,
                t.order,
                rendered,
                blindness_problem(rendered, pair.internal_key, names, aliases),
                {"shown_a_id": shown_a, "shown_b_id": shown_b},
            )
        )
    return specs


def _pairs_recorded(source: JudgeRun) -> dict[tuple[int, str], dict[str, Any]]:
    """The verdicts a stored run gave its pairs, as the judge's A/B answers of each ordered task."""
    answers = {}
    for j in OrderedJudgment.objects.filter(run=source, status="accepted").select_related("pair"):
        shown_a_id = j.pair.participant_a_id if j.order == "original" else j.pair.participant_b_id
        winner = "tie" if j.is_tie else ("A" if j.winner_id == shown_a_id else "B")
        answers[(j.pair_id, j.order)] = {
            "winner": winner,
            "confidence": j.confidence or "medium",
            "main_reason": j.main_reason or f"replayed from run {source.pk}",
            "weakness_a": j.weakness_a,
            "weakness_b": j.weakness_b,
        }
    return answers


def _create_judgments(model: type[Any], judgments: list[Any]) -> None:
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


def _finish(kind: str, run_id: int) -> str:
    """Close the run when no task is left to do; another driver may still hold claims.

    A run closed as failed says on its page how many tasks failed, the latest reason, and what to do.
    """
    run_model, task_model = execution.KINDS[kind].run_model, execution.KINDS[kind].task_model_of(run_id)
    with transaction.atomic():
        run = run_model.objects.select_for_update().get(pk=run_id)
        if run.status != JudgeRun.Status.RUNNING:
            return run.status
        open_tasks = task_model.objects.filter(run_id=run_id, status__in=[TaskStatus.PENDING, TaskStatus.CLAIMED]).exists()
        if open_tasks:
            return run.status
        failed = task_model.objects.filter(run_id=run_id, status=TaskStatus.FAILED)
        n_failed = failed.count()
        run.status = JudgeRun.Status.FAILED if n_failed else JudgeRun.Status.COMPLETED
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "finished_at"])
        if n_failed:
            latest = failed.order_by("-updated_at").values_list("last_error", flat=True).first() or "no reason recorded"
            run_event_add(
                kind=kind,
                run_id=run_id,
                code="tasks_failed",
                level=RunEvent.Level.ERROR,
                message=f"{n_failed} task(s) failed (latest: {latest}); fix the cause and resume the run to retry only them",
            )
        else:
            run_event_add(kind=kind, run_id=run_id, code="completed", message="every task is done")
        return run.status


# --------------------------------------------------------------------------- generation


def generation_run_create(
    *,
    benchmark: Benchmark,
    base_url: str,
    participants: list[str] | None = None,
    contexts: str = "all",
    api_key_env: str | None = None,
    temperature: float = 1.0,
    max_tokens: int = 1600,
    concurrency: int = 8,
    timeout: float = 300.0,
    model_names: dict[str, str] | None = None,
    prompt_version: str = "generation-v1",
    launched_by: Any = None,
    lease_seconds: float | None = None,
) -> GenerationRun:
    """A run that asks each participant for a proposal on each context that has text and no proposal from it yet."""
    if prompt_version not in PROMPTS or PROMPTS[prompt_version].kind != "generation":
        raise RunError(f"no generation prompt template {prompt_version!r}")
    if not base_url:
        raise RunError("a generation run needs a base URL")
    try:
        api_key_from_env(api_key_env)
    except PermanentError as exc:
        raise RunError(str(exc)) from None
    people = list(benchmark.participants.all())
    if participants:
        unknown = sorted(set(participants) - {p.name for p in people})
        if unknown:
            raise RunError(f"not participants of {benchmark}: {', '.join(unknown)}")
        people = [p for p in people if p.name in participants]
    if not people:
        raise RunError(f"{benchmark} has no participants to generate for")
    chosen = benchmark.contexts.filter(has_text=True)
    if contexts.startswith("batch:"):
        chosen = chosen.filter(batch__name=contexts.removeprefix("batch:"))
    elif contexts != "all":
        raise RunError(f"contexts must be 'all' or 'batch:NAME', got {contexts!r}")
    existing = set(Proposal.objects.filter(context__benchmark=benchmark).values_list("context_id", "participant_id"))
    with transaction.atomic():
        run = GenerationRun.objects.create(
            benchmark=benchmark,
            prompt_version=prompt_version,
            launched_by=launched_by,
            parameters={
                "base_url": base_url,
                "api_key_env": api_key_env or "",
                "temperature": temperature,
                "max_tokens": max_tokens,
                "concurrency": concurrency,
                "timeout": timeout,
                "lease_seconds": lease_seconds or execution.lease_seconds(),
                "model_names": model_names or {},
                "contexts": contexts,
            },
        )
        GenerationTask.objects.bulk_create(
            [GenerationTask(run=run, context=c, participant=p) for c in chosen for p in people if (c.pk, p.pk) not in existing]
        )
    return run


def _generation_driver_enqueue(run_id: int) -> None:
    from .tasks import generation_run_execute_task

    execution.enqueue(lambda: generation_run_execute_task.delay(run_id), kind=RunKind.GENERATION, run_id=run_id)


def generation_run_launch(*, run: GenerationRun, event: str = "launched") -> None:
    with transaction.atomic():
        if not GenerationRun.objects.filter(pk=run.pk, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.PAUSED]).update(
            status=JudgeRun.Status.RUNNING, finished_at=None
        ):
            raise RunError(f"generation run {run.pk} cannot start from {run.status}")
        run_event_add(kind=RunKind.GENERATION, run_id=run.pk, code=event, message=f"{event} with 1 driver(s)")
        transaction.on_commit(lambda: _generation_driver_enqueue(run.pk))
    run.refresh_from_db()


def pairs_create_for_contexts(*, benchmark: Benchmark, context_ids: set[int]) -> int:
    """Canonical pairs for every two valid proposals of each context that are not paired yet."""
    created = []
    existing = set(benchmark.pairs.filter(context_id__in=context_ids).values_list("internal_key", flat=True))
    proposals = Proposal.objects.filter(context_id__in=context_ids, validation_status="valid").select_related(
        "participant", "context"
    )
    by_context: dict[int, list[Proposal]] = {}
    for p in proposals:
        by_context.setdefault(p.context_id, []).append(p)
    for context_id, items in by_context.items():
        items.sort(key=lambda p: p.participant.name)
        for i, first in enumerate(items):
            for second in items[i + 1 :]:
                left, right = first.participant.name.replace(" ", "_"), second.participant.name.replace(" ", "_")
                key = f"{first.context.external_id}__{left}__vs__{right}"
                if key in existing:
                    continue
                a, b = first.participant, second.participant
                if orientation_flipped(benchmark.orientation_seed, key):
                    a, b = b, a
                created.append(
                    CanonicalPair(benchmark=benchmark, context_id=context_id, participant_a=a, participant_b=b, internal_key=key)
                )
    CanonicalPair.objects.bulk_create(created)
    return len(created)


def _store_generation(run: GenerationRun, token: str, task_id: int, result: dict[str, Any]) -> None:
    with transaction.atomic():
        owned, finished = _owned(GenerationTask, token, [task_id])
        if task_id not in owned:
            if task_id not in finished and result.get("attempts"):
                execution.answer_discard(
                    task_model=GenerationTask,
                    task_id=task_id,
                    prompt_tokens=result.get("in", 0),
                    completion_tokens=result.get("out", 0),
                )
            return
        task = GenerationTask.objects.get(pk=task_id)
        task.attempts = result["attempts"]
        task.prompt_tokens, task.completion_tokens = result.get("in", 0), result.get("out", 0)
        if "failed" in result:
            task.status, task.last_error = TaskStatus.FAILED, result["failed"] or "no answer"
        else:
            content = {k: v for k, v in result["content"].items() if k in SIX_FIELD.fields}
            try:
                with transaction.atomic():
                    Proposal.objects.create(
                        context_id=task.context_id,
                        participant_id=task.participant_id,
                        schema=SIX_FIELD.name,
                        content=content,
                        validation_status="invalid" if result["problems"] else "valid",
                        validation_errors=result["problems"],
                        **blindness.proposal_blind_fields(
                            benchmark_id=run.benchmark_id, participant_id=task.participant_id, content=content
                        ),
                        release_metadata={
                            "generation_run": run.pk,
                            "temperature": run.parameters.get("temperature"),
                            "max_tokens": run.parameters.get("max_tokens"),
                            "attempts": len(result["attempts"]),
                        },
                    )
            except IntegrityError:
                pass  # a proposal for this context and participant exists already
            task.status = TaskStatus.DONE
        task.save(update_fields=["attempts", "prompt_tokens", "completion_tokens", "status", "last_error", "updated_at"])


def _generation_finish(run_id: int) -> str:
    """Close the run when nothing is left, then pair the proposals it elicited."""
    status = _finish(RunKind.GENERATION, run_id)
    if status in (JudgeRun.Status.COMPLETED, JudgeRun.Status.FAILED):
        run = GenerationRun.objects.select_related("benchmark").get(pk=run_id)
        context_ids = set(GenerationTask.objects.filter(run=run, status=TaskStatus.DONE).values_list("context_id", flat=True))
        pairs_create_for_contexts(benchmark=run.benchmark, context_ids=context_ids)
    return status


def generation_run_execute(*, run_id: int) -> str:
    """Elicit the run's missing proposals until done, paused or cancelled; then pair the new ones."""
    run, status = _running(GenerationRun, run_id)
    if run is None:
        return status
    token = uuid.uuid4().hex
    template = PROMPTS[run.prompt_version]
    model_names: dict[str, str] = run.parameters.get("model_names") or {}
    lease = _lease(run)
    try:
        api_key_from_env(run.parameters.get("api_key_env") or None)  # the providers are made per model, on first use
    except PermanentError as exc:
        return _start_problem(RunKind.GENERATION, run.pk, exc)
    providers: dict[str, Provider] = {}
    limiter = _limiter_for(run)

    def claim(n: int, held: frozenset[int]) -> list[tuple[int, str, list[dict[str, str]]]]:
        ids = execution.tasks_claim(
            kind=RunKind.GENERATION, task_model=GenerationTask, run_id=run.pk, token=token, lease=lease, n=n, held=held
        )
        tasks = GenerationTask.objects.filter(id__in=ids).select_related("participant", "context")
        contexts = {c.pk: c for c in Context.objects.filter(pk__in={t.context_id for t in tasks}).prefetch_related("papers")}
        return [
            (t.pk, t.participant.name, render_generation_task(context=contexts[t.context_id], template=template)) for t in tasks
        ]

    async def work(spec: tuple[int, str, list[dict[str, str]]], before_call: BeforeCall) -> dict[str, Any]:
        _, name, messages = spec
        provider = providers.setdefault(name, _provider_for(run, model_names.get(name, name)))
        attempts: list[dict[str, Any]] = []
        calls = tokens_in = tokens_out = 0
        for attempt in range(1, MAX_PARSE_ATTEMPTS + 1):
            outcome = await call_with_backoff(provider, limiter, messages, None, before_call)
            calls += outcome.calls
            if outcome.completion is None:
                return {"failed": outcome.error, "attempts": attempts, "calls": calls, "in": tokens_in, "out": tokens_out}
            c = outcome.completion
            tokens_in += c.prompt_tokens or 0
            tokens_out += c.completion_tokens or 0
            try:
                content, problems = parse_proposal_answer(c.text)
            except ParseError as exc:
                content, problems = {}, [{"field": "*", "code": "not_json", "message": str(exc)}]
            attempts.append({"attempt": attempt, "raw": c.text, "problems": problems})
            if not problems:
                break
        return {
            "content": content,
            "problems": problems,
            "attempts": attempts,
            "calls": calls,
            "in": tokens_in,
            "out": tokens_out,
        }

    def store(batch: list[tuple[tuple[int, str, list[dict[str, str]]], dict[str, Any]]]) -> None:
        for spec, result in batch:
            _store_generation(run, token, spec[0], result)

    _drive(
        run=run,
        kind=RunKind.GENERATION,
        task_model=GenerationTask,
        token=token,
        claim=claim,
        work=work,
        store=store,
        task_id=lambda spec: spec[0],
        providers=providers.values(),
        limiter=limiter,
        on_error=lambda exc: {"failed": f"internal error: {type(exc).__name__}: {exc}", "attempts": [], "calls": 0},
    )
    return _generation_finish(run.pk)


def _judge_task_model(run_id: int) -> type[Any]:
    return subjects_of(JudgeRun.objects.only("id", "subjects").get(pk=run_id)).task_model


def _judge_finish(run_id: int) -> str:
    """Close a judge run when nothing is left; a run that completed or failed then gets its task kind's ``after`` (a
    Swiss round pairs the next one, or waits for a failed run's resume). ``after`` is idempotent: a finish repeated by
    the watchdog does no harm."""
    status = _finish(RunKind.JUDGE, run_id)
    if status in (JudgeRun.Status.COMPLETED, JudgeRun.Status.FAILED):
        run = JudgeRun.objects.get(pk=run_id)
        kind = SUBJECTS.get(run.subjects)
        if kind is not None and kind.after is not None:
            try:
                kind.after(run)
            except Exception as exc:  # noqa: BLE001 - the run itself is done; what follows it says why it did not happen
                log.exception("the step after judge run %s failed", run_id)
                run_event_add(
                    kind=RunKind.JUDGE,
                    run_id=run_id,
                    code="after_failed",
                    level=RunEvent.Level.ERROR,
                    message=f"the run is {status}, but the step that follows it failed ({type(exc).__name__}: {exc}); "
                    "fix the cause and move it on by hand (e.g. reconstruction_swiss BENCHMARK --advance SELECTION)",
                )
    return status


run_kind_register(
    RunKindSpec(
        kind=RunKind.JUDGE,
        run_model=JudgeRun,
        task_model_of=_judge_task_model,
        launch=_judge_driver_enqueue,
        finish=_judge_finish,
    )
)
run_kind_register(
    RunKindSpec(
        kind=RunKind.GENERATION,
        run_model=GenerationRun,
        task_model_of=lambda run_id: GenerationTask,
        launch=_generation_driver_enqueue,
        finish=_generation_finish,
    )
)
subjects_register(
    JudgeSubjects(
        name=JudgeRun.Subjects.PAIRS,
        task_model=JudgeTask,
        judgment_model=OrderedJudgment,
        subject_field="pair",
        plan=_pairs_plan,
        specs=_pairs_specs,
        judgment=_pairs_judgment,
        recorded=_pairs_recorded,
    )
)
