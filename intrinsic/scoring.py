"""Scoring runs of Intrinsic scoring (PROTOCOL.md §4; issue 14) on the shared engine (run kind ``intrinsic_scoring``).

A run scores candidates for ONE nll/energy :class:`~intrinsic.models.Scorer` (a model read by a criterion; created, or
reused when its name, model and criterion match) against an OpenAI-compatible *completions* endpoint that returns
prompt log-probabilities (vLLM; ``intrinsic.endpoint.CompletionsScorer`` does the request, the span and the
numbers). One task per candidate; the engine's driver (``jobs.driving.drive``) claims, leases, heartbeats,
rate-limits (``rate_per_second``, ``concurrency`` candidates at a time) and counts calls, failed calls and tokens
exactly as for judge runs; the watchdog relaunches a run whose driver died and its open claims are taken over. Every
request is a call in the task's ledger, counted before it is sent: the candidate's ``/tokenize`` requests (the
prefix's once per paper and driver, the prompt's) as much as the completions one. An answer without usable prompt
log-probabilities is asked again like a judge's malformed answer (``jobs.driving.MAX_PARSE_ATTEMPTS`` answers at
most, ``intrinsic.endpoint.score_with_retries``); then the task fails with a reason a person can read, the run ends
failed saying so, and a resume asks again for the failed candidates only.

Never twice: a run gets tasks only for candidates its scorer has no score for, a scorer has at most one active run,
and a score is unique per (scorer, candidate) in the database, so a candidate scored by a driver that died before
acknowledging is skipped when redone. A resume (``scoring_run_resume``) reopens failed and abandoned tasks only.

Refusals before any request: a criterion the endpoint's configured ``--logprobs-mode`` cannot give, an unknown mode,
a missing API key (at creation and again when the driver starts), a blank candidate (at creation; the import refuses
them too). An energy run's driver first probes the endpoint (``PROBE``, checked by the scorer's ``mode_check``): a
server configured as raw logits that answers like log-probabilities fails the run with that reason
(``jobs.driving.driver_start_failed``) before any candidate is scored; the probe's requests belong to no candidate:
the run's log says how many there were, and they are counted in the ledger of the run's first task. An nll run's every answer is checked by the client (a value no log-probability can have fails its task).

A stored score (:class:`~intrinsic.models.CandidateScore`) keeps the mean (primary), the sum, the span's token count,
its run, and ``detail``: the per-token values and how the span was located.

The call cache (``jobs.call_cache``, as judge and elicitation runs use it): every score a run accepts is kept, keyed
by the completions request (URL, model, prompt, every parameter sent) and a version naming the scoring method, the
criterion and the server's mode (and a tokenize URL of the run's own), so a candidate asked the same of the same
endpoint later takes that score: no request (nor its tokenizations), no tokens, counted as cached on the run's page,
and ``detail["cached_from"]`` says which run and task it came from. Reading is the run's ``call_cache`` parameter
(``intrinsic_score --cache``, the launch form's checkbox; on by default for a resume). A cached score is checked as
a fresh answer is before it is stored (``cached_score``); one that fails the check is a miss and the endpoint is
asked. An energy run still probes its endpoint first, even when every candidate then comes from the cache.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from arena.models import Benchmark, JudgeRun
from arena.protocols import protocol_phrase
from jobs import execution, lifecycle
from jobs.call_cache import CACHE_PARAMETER, Answered, Cached, CallCache
from jobs.driving import (
    MAX_PARSE_ATTEMPTS,
    drive,
    driver_start_failed,
    endpoint_limiter,
    run_finish,
    run_lease,
    running_run,
    tasks_owned,
)
from jobs.engine import BeforeCall, run_blocking
from jobs.execution import run_event_add
from jobs.kinds import RunKindSpec
from jobs.lifecycle import AlreadyLaunched, RunError, endpoint_url_required
from jobs.models import TaskStatus
from jobs.providers import PermanentError
from jobs.selection import Selection
from jobs.selectors import Progress, engine_progress

from .endpoint import (
    CRITERIA,
    LOGPROB_TOLERANCE,
    PROBE,
    CompletionsScorer,
    ModeProbe,
    SpanScore,
    build_prompt,
    completions_body,
    score_with_retries,
    scoring_messages,
)
from .models import PROTOCOL, Candidate, CandidateScore, IntrinsicScoringRun, Paper, Scorer, ScoringTask

RUN_KIND = "intrinsic_scoring"
TITLE = "Intrinsic scoring"
ACTIVE = JudgeRun.ACTIVE_STATUSES


def default_scorer_name(model: str, criterion: str) -> str:
    return f"{model}-{criterion}"


def endpoint_description(base_url: str, logprobs_mode: str) -> str:
    """What a run's scorer records as its ``endpoint``: where its numbers come from."""
    return f"{base_url.rstrip('/')} (completions, --logprobs-mode {logprobs_mode})"


def _completions_scorer(p: dict[str, Any]) -> CompletionsScorer:
    """The endpoint client of a run's parameters; PermanentError for a refused configuration or a missing key."""
    return CompletionsScorer(
        base_url=p["base_url"],
        model=p["model"],
        criterion=p["criterion"],
        logprobs_mode=p["logprobs_mode"],
        api_key_env=p.get("api_key_env") or None,
        timeout=float(p.get("timeout") or 120),
        connections=int(p.get("concurrency") or 8),
        tokenize_url=p.get("tokenize_url") or None,
    )


def _configuration_problem(p: dict[str, Any]) -> str | None:
    """Why the endpoint client refuses these parameters (criterion vs mode, unknown mode, API key), without a request."""

    async def check() -> None:
        await _completions_scorer(p).close()

    try:
        run_blocking(check)
    except PermanentError as exc:
        return str(exc)
    return None


def _choose(benchmark: Benchmark, spec: str, seed: int) -> list[int]:
    """The ids of the papers ``spec`` selects: all, discipline:NAME or sample:N."""
    papers = list(Paper.objects.filter(benchmark=benchmark).order_by("id").only("id", "discipline"))
    selection = Selection(
        groups={"discipline": lambda paper: paper.discipline},
        flag="papers",
        empty=f"{benchmark} has no papers in discipline {{value!r}}; its disciplines are {{known}}",
    )
    return [paper.pk for paper in selection.choose(papers, spec, seed)]


def scoring_run_create(
    *,
    benchmark: Benchmark,
    model: str,
    criterion: str,
    logprobs_mode: str,
    base_url: str,
    api_key_env: str | None = None,
    scorer: str | None = None,
    papers: str = "all",
    seed: int = 0,
    concurrency: int = 8,
    rate_per_second: float | None = None,
    timeout: float = 120.0,
    lease_seconds: float | None = None,
    price_per_1k_prompt: float | None = None,
    price_per_1k_completion: float | None = None,
    tokenize_url: str | None = None,
    call_cache: bool = False,
    launched_by: Any = None,  # noqa: ANN401
) -> IntrinsicScoringRun:
    """A pending run with one task per chosen candidate its scorer has not scored yet; with ``call_cache`` it takes
    what the call cache has for a candidate instead of asking the endpoint. Raises :class:`RunError`
    saying what to fix: another protocol's benchmark, a criterion the endpoint's mode cannot give, a missing key, a
    scorer name held by another model or criterion, a scorer with a run still active, a blank candidate, nothing to do."""
    if benchmark.protocol != PROTOCOL:
        raise RunError(f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark: it has no Intrinsic candidates to score")
    model = model.strip()
    if not model:
        raise RunError("a scoring run needs the model's name as the endpoint serves it (--model)")
    if criterion not in CRITERIA:
        raise RunError(f"unknown criterion {criterion!r}: choose one of {', '.join(CRITERIA)}")
    base_url = endpoint_url_required(base_url, what="the completions endpoint's base URL (--base-url)")
    if tokenize_url:
        tokenize_url = endpoint_url_required(tokenize_url, what="the tokenize URL (--tokenize-url)")
    parameters: dict[str, Any] = {
        "base_url": base_url,
        "api_key_env": api_key_env or "",
        "model": model,
        "criterion": criterion,
        "logprobs_mode": logprobs_mode,
        "tokenize_url": tokenize_url or "",
        "papers": papers,
        "seed": seed,
        "concurrency": concurrency,
        "rate_per_second": rate_per_second,
        "timeout": timeout,
        "lease_seconds": lease_seconds or execution.lease_seconds(),
        "price_per_1k_prompt": price_per_1k_prompt,
        "price_per_1k_completion": price_per_1k_completion,
        CACHE_PARAMETER: call_cache,
    }
    problem = _configuration_problem(parameters)
    if problem:
        raise RunError(problem)
    name = (scorer or default_scorer_name(model, criterion)).strip()
    endpoint = endpoint_description(base_url, logprobs_mode)
    try:
        with transaction.atomic():
            # One launch at a time per benchmark: a second one posted at once waits, then sees the first's scorer
            # and its active run, and is refused naming it (instead of scoring every candidate twice).
            benchmark.lock()
            return _scoring_run_insert(
                benchmark=benchmark,
                name=name,
                endpoint=endpoint,
                parameters=parameters,
                papers=papers,
                seed=seed,
                launched_by=launched_by,
            )
    except IntegrityError:
        # The same new scorer launched twice at once (a form posted twice): the first made it and its run.
        made = IntrinsicScoringRun.objects.filter(scorer__benchmark=benchmark, scorer__name=name).order_by("id").first()
        if made is None:
            raise
        raise AlreadyLaunched(
            made, f"Scorer {name!r} was launched at the same moment, by run {made.pk}; nothing new was made"
        ) from None


def _scoring_run_insert(
    *,
    benchmark: Benchmark,
    name: str,
    endpoint: str,
    parameters: dict[str, Any],
    papers: str,
    seed: int,
    launched_by: Any,  # noqa: ANN401
) -> IntrinsicScoringRun:
    """The checks against what is stored, and the scorer, run and tasks (the benchmark's row is locked)."""
    model, criterion = parameters["model"], parameters["criterion"]
    existing = Scorer.objects.filter(benchmark=benchmark, name=name).first()
    if existing is not None:
        if (existing.model, existing.criterion) != (model, criterion):
            raise RunError(
                f"scorer {name!r} of {benchmark} is model {existing.model!r}, criterion {existing.criterion!r}; this run "
                f"scores {model!r} by {criterion!r}: give it another name (--scorer NAME)"
            )
        if existing.endpoint != endpoint:
            raise RunError(
                f"scorer {name!r} took its numbers from {existing.endpoint or '(no endpoint recorded)'}; this run asks "
                f"{endpoint}: a scorer's numbers come from one place, give this run another scorer name (--scorer NAME)"
            )
        active = existing.runs.filter(status__in=ACTIVE).order_by("id").first()
        if active is not None:
            raise RunError(
                f"scorer {name!r} has run {active.pk} {active.status}: resume it (intrinsic_score ... --resume {active.pk}) "
                "or cancel it first, so that no candidate is scored twice"
            )
    paper_ids = _choose(benchmark, papers, seed)
    todo = Candidate.objects.filter(paper_id__in=paper_ids).order_by("paper_id", "position")
    if existing is not None:
        todo = todo.exclude(scores__scorer=existing)
    chosen = list(todo.select_related("paper").only("id", "text", "external_id", "paper__external_id"))
    blank = [c for c in chosen if not c.text.strip()]
    if blank:
        shown = ", ".join(f"{c.paper.external_id}/{c.external_id}" for c in blank[:5])
        raise RunError(
            f"{len(blank)} candidate(s) have no text ({shown}): an empty span has no score; fix their text and launch again"
        )
    if not chosen:
        raise RunError(f"scorer {name!r} has scored every chosen candidate of {benchmark} already; nothing to score")
    target = existing or Scorer.objects.create(
        benchmark=benchmark, name=name, model=model, criterion=criterion, endpoint=endpoint
    )
    run = IntrinsicScoringRun.objects.create(benchmark=benchmark, scorer=target, parameters=parameters, launched_by=launched_by)
    ScoringTask.objects.bulk_create([ScoringTask(run=run, candidate=c) for c in chosen], batch_size=2000)
    return run


def scoring_run_launch(*, run: IntrinsicScoringRun, event: str = "launched") -> None:
    """Mark a pending or paused run running and enqueue its driver once the transaction commits."""
    lifecycle.run_launch(run=run, event=event)


def scoring_run_pause(*, run: IntrinsicScoringRun) -> None:
    """Stop claiming new candidates; requests already sent are still stored."""
    lifecycle.run_pause(run=run)


def scoring_run_cancel(*, run: IntrinsicScoringRun) -> None:
    lifecycle.run_cancel(run=run)


def scoring_run_resume(*, run: IntrinsicScoringRun, call_cache: bool = True) -> int:
    """Reopen the failed, skipped and abandoned tasks of a paused, failed or cancelled run and launch it; returns how
    many tasks were reopened. A scored candidate is never asked for again, nor (unless ``call_cache`` is False) one
    whose request the call cache has a score for."""
    return lifecycle.run_resume(run=run, call_cache=call_cache)


# --------------------------------------------------------------------------- execution


@dataclass(frozen=True)
class _Spec:
    task_id: int
    candidate_id: int
    background: str
    question: str
    text: str


def _probe_problem(run: IntrinsicScoringRun) -> str | None:
    """Probe the endpoint's mode before an energy run (retried like a candidate's request); the refusal, or None.
    The probe's requests belong to no candidate: they are written to the run's log and counted in the ledger of the
    run's first task, so that the run's calls are every request its endpoint received."""

    async def probe() -> tuple[int, ModeProbe | str]:
        scorer = _completions_scorer(run.parameters)
        try:
            outcome = await score_with_retries(scorer, PROBE, attempts=MAX_PARSE_ATTEMPTS)
        finally:
            await scorer.close()
        if outcome.completion is None:
            return outcome.requests, outcome.error or "no answer"
        try:
            return outcome.requests, scorer.mode_check(outcome.completion)  # checks the answer; sends nothing
        except PermanentError as exc:
            return outcome.requests, str(exc)

    requests, checked = run_blocking(probe)
    first = ScoringTask.objects.filter(run=run).order_by("id").values_list("id", flat=True).first()
    if first is not None and requests:
        execution.calls_count(task_model=ScoringTask, counts={first: requests})
    if isinstance(checked, str):
        return f"the mode probe of {run.parameters['base_url']} failed after {requests} request(s): {checked}"
    run_event_add(kind=RUN_KIND, run_id=run.pk, code="probe", message=f"mode probe ({requests} request(s)): {checked.detail}")
    return None


def _detail(score: SpanScore) -> dict[str, Any]:
    return {
        "values": score.values,
        "tokens": score.tokens,
        "span_method": score.span_method,
        "boundary_merged": score.boundary_merged,
        "skipped_chars": score.skipped_chars,
        "logits_proved": score.logits_proved,
    }


# --------------------------------------------------------------------------- the call cache

#: Bump when how a score is read from an answer changes (the span, the values): the scores cached before then miss.
SCORE_VERSION = 1
SPAN_METHODS = ("tokenize", "text_offset")


@dataclass(frozen=True)
class _Request:
    """A candidate's request as the call cache keys it (``CallCache.claimed`` reads ``url`` and ``request_body``): the
    completions body that ``CompletionsScorer.answer`` sends, to the URL it sends it to. It sends nothing itself."""

    url: str
    model: str

    def request_body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        background, question, candidate = (m["content"] for m in messages)  # as ``scoring_messages`` packed them
        return completions_body(self.model, build_prompt(background, question, candidate))


def _cache_version(p: dict[str, Any]) -> str:
    """A run's template version in the call cache's key: what decides a score besides the request (the scoring
    method, the criterion, the server's mode, a tokenize URL of the run's own)."""
    version = f"{PROTOCOL}-v{SCORE_VERSION}-{p['criterion']}-{p['logprobs_mode']}"
    return f"{version} {p['tokenize_url']}" if p.get("tokenize_url") else version


def _cache_text(score: SpanScore) -> str:
    """What the call cache keeps of an accepted score: its summary with the span's values and tokens."""
    return json.dumps({**score.summary(), "values": score.values, "tokens": score.tokens})


def _finite(value: Any) -> bool:  # noqa: ANN401
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float (JSON parses "1e400" as inf, "1" + 400 zeros as an int)
        return False


def _well_formed(data: Any, criterion: str) -> bool:  # noqa: ANN401
    """Whether a cached score holds what a fresh answer's check lets through (see :func:`cached_score`)."""
    if not isinstance(data, dict) or data.get("criterion") != criterion:
        return False
    values, tokens, skipped = data.get("values"), data.get("tokens"), data.get("skipped_chars")
    flags = (data.get("boundary_merged"), data.get("logits_proved"))
    if not (isinstance(values, list) and values and isinstance(tokens, list) and len(tokens) == len(values)):
        return False
    if not (all(_finite(v) for v in values) and all(isinstance(t, str) for t in tokens)):
        return False
    if data.get("span_method") not in SPAN_METHODS or not all(isinstance(f, bool) for f in flags):
        return False
    if not (isinstance(skipped, int) and not isinstance(skipped, bool) and skipped >= 0):
        return False
    # For 'nll', a value no log-probability can have proves raw logits: a fresh answer's check refuses it.
    return not (criterion == "nll" and (flags[1] or min(values) < -LOGPROB_TOLERANCE))


def cached_score(text: str, *, criterion: str) -> SpanScore | None:
    """A score the call cache gave (``_cache_text``), checked as a fresh answer is; None when it fails the check (a
    miss: the endpoint is asked). It must be of the run's criterion, with one finite value per span token, a known
    span method and well-formed flags; for 'nll' no value may be one no log-probability can have. The mean, sum and
    count are computed again from the values."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not _well_formed(data, criterion):
        return None
    floats = [float(v) for v in data["values"]]
    score = SpanScore(
        text="",
        latency_seconds=0.0,
        prompt_tokens=0,
        completion_tokens=0,
        criterion=criterion,
        values=floats,
        tokens=data["tokens"],
        mean=math.fsum(floats) / len(floats),
        total=math.fsum(floats),
        n_tokens=len(floats),
        span_method=data["span_method"],
        boundary_merged=data["boundary_merged"],
        skipped_chars=data["skipped_chars"],
        logits_proved=data["logits_proved"],
    )
    score.text = json.dumps(score.summary())
    return score


def _answered(spec: _Spec, result: dict[str, Any]) -> list[Answered]:
    """A score that came from the endpoint, to keep in the call cache (none for a failure or a cache hit)."""
    score = result.get("score")
    if score is None or result.get("cached") is not None:
        return []
    return [Answered(spec.task_id, _cache_text(score), score.prompt_tokens, score.completion_tokens, score.latency_seconds)]


def _store(run: IntrinsicScoringRun, token: str, batch: list[tuple[_Spec, dict[str, Any]]], cache: CallCache) -> None:
    """Store a batch of results in one transaction: scores for the tasks this driver still holds, failures as failed
    tasks; an answer for a task that passed to another driver is counted as discarded, not stored. A task's tokens
    are added up over its answers, malformed ones and those of an earlier try before a resume included (all paid for).
    Every score the endpoint gave goes to the call cache (a discarded one too: it was paid for), and a score the
    cache gave is recorded as its hit."""
    now = timezone.now()
    with transaction.atomic():
        owned, finished = tasks_owned(ScoringTask, token, [spec.task_id for spec, _ in batch])
        scores: list[CandidateScore] = []
        done: dict[int, SpanScore] = {}
        failed: dict[int, str] = {}
        paid: dict[int, tuple[int, int]] = {}
        answered: list[Answered] = []
        hits: list[tuple[int, Cached]] = []
        for spec, result in batch:
            score = result.get("score")
            tokens = (result.get("prompt_tokens") or 0, result.get("completion_tokens") or 0)
            answered += _answered(spec, result)
            if spec.task_id not in owned:
                if spec.task_id not in finished and any(tokens):
                    execution.answer_discard(
                        task_model=ScoringTask, task_id=spec.task_id, prompt_tokens=tokens[0], completion_tokens=tokens[1]
                    )
                continue
            paid[spec.task_id] = tokens
            if score is None:
                failed[spec.task_id] = result.get("failed") or "no answer"
                continue
            done[spec.task_id] = score
            detail = _detail(score)
            if result.get("cached") is not None:  # the score says where it came from
                hits.append((spec.task_id, result["cached"]))
                detail["cached_from"] = result["cached"].source()
            scores.append(
                CandidateScore(
                    scorer_id=run.scorer_id,
                    candidate_id=spec.candidate_id,
                    source=f"run {run.pk}",
                    run=run,
                    mean=score.mean,
                    total=score.total,
                    tokens=score.n_tokens,
                    detail=detail,
                )
            )
        try:
            with transaction.atomic():
                CandidateScore.objects.bulk_create(scores)
        except IntegrityError:
            for row in scores:  # scored already (a store repeated after a lost acknowledgement): the first stays
                try:
                    with transaction.atomic():
                        row.save()
                except IntegrityError:
                    pass
        tasks = list(ScoringTask.objects.filter(id__in=[*done, *failed]))
        for task in tasks:
            if task.pk in done:
                task.status, task.last_error = TaskStatus.DONE, ""
            else:
                task.status, task.last_error = TaskStatus.FAILED, failed[task.pk]
            task.prompt_tokens += paid[task.pk][0]
            task.completion_tokens += paid[task.pk][1]
            task.updated_at = now
        ScoringTask.objects.bulk_update(tasks, ["status", "last_error", "prompt_tokens", "completion_tokens", "updated_at"])
        cache.record(answered=answered, hits=hits)
    cache.forget(spec.task_id for spec, _ in batch)


def scoring_run_execute(*, run_id: int) -> str:
    """Score the run's open candidates until done, paused or cancelled; then close the run. Safe to call twice at once.

    A driver that cannot start (refused configuration, missing key, a probe that contradicts the configured mode)
    fails the run with the reason, before any candidate is scored."""
    run, status = running_run(IntrinsicScoringRun, run_id)
    if run is None:
        return status
    try:
        scorer = _completions_scorer(run.parameters)
    except PermanentError as exc:
        return driver_start_failed(RUN_KIND, run.pk, exc)
    if run.parameters["criterion"] == "energy":
        problem = _probe_problem(run)
        if problem is not None:
            run_blocking(scorer.close)
            return driver_start_failed(RUN_KIND, run.pk, PermanentError(problem))
    token = uuid.uuid4().hex
    limiter = endpoint_limiter(run)
    lease = run_lease(run)
    criterion = run.parameters["criterion"]
    cache = CallCache(kind=RUN_KIND, run=run, template_version=_cache_version(run.parameters))
    keyed = _Request(url=scorer.url, model=scorer.model)

    def claim(n: int, held: frozenset[int]) -> list[_Spec]:
        ids = execution.tasks_claim(
            kind=RUN_KIND, task_model=ScoringTask, run_id=run.pk, token=token, lease=lease, n=n, held=held
        )
        # In id order: a paper's candidates were made together, so a batch shares one tokenization of the prefix.
        tasks = ScoringTask.objects.filter(id__in=ids).select_related("candidate__paper").order_by("id")
        specs = [
            _Spec(t.pk, t.candidate_id, t.candidate.paper.background, t.candidate.paper.question, t.candidate.text) for t in tasks
        ]
        cache.claimed((s.task_id, keyed, scoring_messages(s.background, s.question, s.text), "") for s in specs if s.text.strip())
        return specs

    async def work(spec: _Spec, before_call: BeforeCall) -> dict[str, Any]:
        if not spec.text.strip():  # refused at creation; a text blanked since is refused here, before any request
            return {"failed": "the candidate hypothesis is empty: an empty span has no score; fix its text and resume"}
        cached = cache.take(spec.task_id)
        if cached is not None:
            score = cached_score(cached.text, criterion=criterion)
            if score is not None:  # a score that fails the check is a miss: the endpoint is asked
                return {"score": score, "prompt_tokens": 0, "completion_tokens": 0, "cached": cached}
        # Every request is counted by before_call as it is sent (tokenize too); a malformed answer is asked again.
        outcome = await score_with_retries(
            scorer,
            (spec.background, spec.question, spec.text),
            attempts=MAX_PARSE_ATTEMPTS,
            limiter=limiter,
            before_call=before_call,
        )
        paid = {"prompt_tokens": outcome.prompt_tokens, "completion_tokens": outcome.completion_tokens}
        if outcome.completion is None:
            return {"failed": outcome.error or "no answer", **paid}
        return {"score": outcome.completion, **paid}

    drive(
        run=run,
        kind=RUN_KIND,
        task_model=ScoringTask,
        token=token,
        claim=claim,
        work=work,  # type: ignore[arg-type]
        store=lambda batch: _store(run, token, batch, cache),
        task_id=lambda spec: spec.task_id,
        providers=[scorer],
        limiter=limiter,
        on_error=lambda exc: {"failed": f"internal error: {type(exc).__name__}: {exc}"},
    )
    return run_finish(RUN_KIND, run.pk)


# --------------------------------------------------------------------------- progress


def scoring_progress(*, run: IntrinsicScoringRun) -> Progress:
    """The run's counts in the engine's terms (done = a score stored), with calls, tokens and, when priced, the cost
    (answers discarded after a takeover were paid for too)."""
    return engine_progress(kind=RUN_KIND, run=run, tasks_qs=ScoringTask.objects.filter(run=run))


def scoring_runs_listed(limit: int = 20) -> list[tuple[str, IntrinsicScoringRun, Progress]]:
    """The newest scoring runs with their progress."""
    runs = IntrinsicScoringRun.objects.select_related("benchmark", "scorer").order_by("-created_at", "-id")[:limit]
    return [(_title(run), run, scoring_progress(run=run)) for run in runs]


def _title(run: IntrinsicScoringRun) -> str:
    return f"{TITLE} ({run.scorer.criterion}: {run.scorer.name})"


SCORING = RunKindSpec(
    kind=RUN_KIND,
    run_model=IntrinsicScoringRun,
    task_model_of=lambda run_id: ScoringTask,
    execute=lambda run_id: scoring_run_execute(run_id=run_id),
    finish=lambda run_id: run_finish(RUN_KIND, run_id),
    progress=lambda run: scoring_progress(run=run),
    title=TITLE,
    noun=gettext_noop("scoring run"),  # a msgid: the run pages translate it (jobs.views), commands print it as is
    listed=_title,
)

__all__ = [
    "RUN_KIND",
    "SCORING",
    "cached_score",
    "default_scorer_name",
    "endpoint_description",
    "scoring_progress",
    "scoring_run_cancel",
    "scoring_run_create",
    "scoring_run_execute",
    "scoring_run_launch",
    "scoring_run_pause",
    "scoring_run_resume",
    "scoring_runs_listed",
]
