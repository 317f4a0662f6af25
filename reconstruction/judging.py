"""Reconstruction judge runs on the shared run engine (``jobs.subjects`` task kinds), PROTOCOL.md §3.

**Match runs** (``reconstruction_judge BENCH --model J --judge-family F``; kind ``reconstruction_match``): one task per
valid hypothesis the judge has not labelled yet, asked once (order ``single``). A judge never scores a hypothesis of
its own model family: such a hypothesis gets no task but a *recused* :class:`~reconstruction.models.MatchLabel` (no
label: missing, not No-match) under the run's label. The judge sees the seed's title and abstract and the
hypothesis's title and summary, never who proposed it. An answer is kept as a :class:`MatchJudgment` (invalid ones
too); an accepted one's label also becomes a ``MatchLabel`` (source = the run's label) in the same transaction, so
the report reads run labels and imported labels alike. With several judges the label of a hypothesis is the
majority of its non-recused judges (``arena.stats.reconstruction.hypothesis_labels``).

**Swiss runs** (kind ``reconstruction_swiss``, made by ``reconstruction.swiss``): one run per judge and round of a
selection; a task per match of that round that the judge did not propose either side of (by family), in both orders.
The judge sees the frozen bibliography and two hypotheses labelled A and B, never the seed. Votes go to
:class:`SwissVote`; when a round's runs have all completed the next round is paired (``after``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import reverse

from arena.blindness import benchmark_matcher
from arena.models import Benchmark, JudgeRun
from arena.protocols import protocol_phrase
from jobs.gates import blindness_problem, orientation_gate
from jobs.lifecycle import RunError
from jobs.parsing import ParseError, json_object, text_key
from jobs.prompts import PromptTemplate
from jobs.selection import Selection
from jobs.services import JudgeResult
from jobs.subjects import JudgeSpec, JudgeSubjects

from .models import (
    MATCH_KIND,
    PROTOCOL,
    SWISS_KIND,
    Hypothesis,
    MatchJudgeTask,
    MatchJudgment,
    MatchLabel,
    SwissJudgeTask,
    SwissMatch,
    SwissVote,
)
from .prompts import DEFAULT_MATCH, DEFAULT_SWISS, render_match_task, render_swiss_task

SINGLE = "single"
# ``--pairs`` of a match run selects hypotheses: all, domain:NAME, system:NAME or sample:N (an empty group selects none).
HYPOTHESES = Selection(
    groups={"domain": lambda h: h.seed.domain, "system": lambda h: h.participant.name},
    flag="--pairs",
    run=" for a Reconstruction match run",
    empty="",
)
LABELS = {"match": MatchLabel.Label.MATCH, "no_match": MatchLabel.Label.NO_MATCH}
WINNERS = ("A", "B", "TIE")


def _require(benchmark: Benchmark) -> None:
    if benchmark.protocol != PROTOCOL:
        raise RunError(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark: it has no Reconstruction hypotheses to judge"
        )


def _judge_family(request_or_run: Any) -> str:  # noqa: ANN401
    options = getattr(request_or_run, "options", None)
    if options is None:
        options = (request_or_run.parameters or {}).get("options") or {}
    family = str(options.get("judge_family") or "").strip()
    if not family:
        raise RunError(
            "a Reconstruction judge run needs the judge's model family (--judge-family): a judge recuses on its own family's hypotheses"
        )
    return family


# --------------------------------------------------------------------------- match


def _match_plan(
    benchmark: Benchmark, request: Any, template: PromptTemplate
) -> tuple[Callable[[JudgeRun], list[MatchJudgeTask]], int]:  # noqa: ANN401
    _require(benchmark)
    family = _judge_family(request)
    hypotheses = list(
        Hypothesis.objects.filter(seed__benchmark=benchmark, valid=True).select_related("seed", "participant").order_by("id")
    )
    if not hypotheses:
        raise RunError(
            f"{benchmark} has no valid hypotheses to judge; run proposers (reconstruction_propose) or import them first"
        )
    chosen = HYPOTHESES.choose(hypotheses, request.select, request.seed)
    done = set(
        MatchLabel.objects.filter(hypothesis__in=[h.pk for h in chosen], judge=request.judge_model).values_list(
            "hypothesis_id", flat=True
        )
    )
    todo = [h for h in chosen if h.pk not in done]
    judged = [h for h in todo if h.family != family]
    recused = [h for h in todo if h.family == family]
    if not judged and not recused:
        raise RunError(f"{request.judge_model} has labelled every chosen hypothesis already; nothing to judge")

    def make(run: JudgeRun) -> list[MatchJudgeTask]:
        # Recused judgments are recorded at once (missing, not No-match), so the report can count them.
        MatchLabel.objects.bulk_create(
            [
                MatchLabel(
                    run=run,
                    source=run.label,
                    hypothesis=h,
                    judge=run.judge_model,
                    judge_family=family,
                    recused=True,
                    reason="recused: the judge is of the proposer's model family",
                )
                for h in recused
            ]
        )
        return [MatchJudgeTask(run=run, hypothesis=h, order=SINGLE) for h in judged]

    return make, 0


def _match_specs(run: JudgeRun, ids: list[int], template: PromptTemplate, aliases: Any, names: list[str]) -> list[JudgeSpec]:  # noqa: ANN401
    tasks = list(MatchJudgeTask.objects.filter(id__in=ids).only("id", "hypothesis_id", "order"))
    found = {h.pk: h for h in Hypothesis.objects.filter(pk__in={t.hypothesis_id for t in tasks}).select_related("seed")}
    family = _judge_family(run)
    specs = []
    for t in tasks:
        h = found[t.hypothesis_id]
        rendered = render_match_task(seed=h.seed, hypothesis=h, template=template, matcher=aliases.matcher)
        problem = blindness_problem(rendered, f"reconstruction-hypothesis-{h.pk}", names, aliases)
        specs.append(
            JudgeSpec(t.pk, h.pk, t.order, rendered, problem, {"judge": run.judge_model, "family": family, "source": run.label})
        )
    return specs


def parse_match_answer(text: str) -> tuple[str, str]:
    """``{"label": "match" | "no_match", "reason": text}`` (case and a hyphen tolerated: "No-match")."""
    obj = json_object(text)
    raw = obj.get("label")
    if not isinstance(raw, str) or raw.strip().lower().replace("-", "_").replace(" ", "_") not in LABELS:
        raise ParseError(f'"label" must be "match" or "no_match", got {raw!r}')
    return LABELS[raw.strip().lower().replace("-", "_").replace(" ", "_")], text_key(obj, "reason")


def _match_parse(text: str, template: PromptTemplate, spec: JudgeSpec) -> tuple[str, str]:
    return parse_match_answer(text)


def _record(result: JudgeResult) -> dict[str, Any]:
    return {
        "status": result.status,
        "raw_response": result.raw,
        "errors": result.errors or [],
        "attempt": result.attempt,
        "latency_seconds": result.latency,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "metadata": {"rejected_attempts": result.transcripts} if result.transcripts else {},
    }


def _match_judgment(run_id: int, spec: JudgeSpec, result: JudgeResult) -> list[MatchJudgment | MatchLabel]:
    answer = result.answer if result.status == "accepted" else None
    rows: list[MatchJudgment | MatchLabel] = [
        MatchJudgment(
            run_id=run_id,
            hypothesis_id=spec.subject_id,
            order=spec.order,
            label=answer[0] if answer else None,
            reason=answer[1] if answer else "",
            **_record(result),
        )
    ]
    if answer is not None:
        m = spec.meaning
        rows.append(
            MatchLabel(
                run_id=run_id,
                source=m["source"],
                hypothesis_id=spec.subject_id,
                judge=m["judge"],
                judge_family=m["family"],
                label=answer[0],
                reason=answer[1],
            )
        )
    return rows


def _match_recorded(source: JudgeRun) -> dict[tuple[int, str], dict[str, Any]]:
    return {
        (j.hypothesis_id, j.order): {"label": j.label, "reason": j.reason or f"replayed from run {source.pk}"}
        for j in MatchJudgment.objects.filter(run=source, status="accepted")
    }


def _match_describe(judgment: MatchJudgment) -> tuple[str, str]:
    h = judgment.hypothesis
    return (
        f"seed {h.seed.external_id}, slot {h.slot} ({h.participant.name}): {judgment.label or 'invalid'}",
        reverse("reconstruction:seed", args=[h.seed.benchmark_id, h.seed_id]),
    )


# --------------------------------------------------------------------------- swiss


def _swiss_matches(ids: set[int] | None = None, *, selection: int | None = None, round_no: int | None = None) -> list[SwissMatch]:
    found = SwissMatch.objects.select_related("a", "b", "tournament__seed_paper__freeze").filter(b__isnull=False)
    found = found.filter(pk__in=ids) if ids is not None else found.filter(tournament__selection_id=selection, round=round_no)
    return list(found.order_by("id"))


def _shown(match: SwissMatch, order: str) -> tuple[Hypothesis, Hypothesis]:
    return (match.a, match.b) if order == "original" else (match.b, match.a)


def swiss_eligible(matches: list[SwissMatch], family: str) -> list[SwissMatch]:
    """The matches a judge of ``family`` may judge: it proposed neither candidate."""
    return [m for m in matches if family not in (m.a.family, m.b.family)]


def _distinct_when_shown(match: SwissMatch, benchmark: Benchmark, template: PromptTemplate) -> bool:
    """Whether the match passes the orientation gate. Two candidates that read the same once redacted (two proposers
    gave the same hypothesis) cannot be told apart by a judge: such a match is not judged, and neither side gets a
    vote (the bracket page shows it unjudged)."""
    matcher = benchmark_matcher(benchmark_id=benchmark.pk)
    bibliography = match.tournament.seed_paper.freeze.shown_text
    original, reverse_ = (
        render_swiss_task(bibliography=bibliography, shown_a=a, shown_b=b, template=template, matcher=matcher)
        for a, b in (_shown(match, o) for o in ("original", "reverse"))
    )
    return orientation_gate(original, reverse_)


def swiss_judgeable(matches: list[SwissMatch], family: str, benchmark: Benchmark, template: PromptTemplate) -> list[SwissMatch]:
    """The matches a judge of ``family`` gets: it proposed neither side, and the two sides differ when shown."""
    return [m for m in swiss_eligible(matches, family) if _distinct_when_shown(m, benchmark, template)]


def _swiss_plan(
    benchmark: Benchmark, request: Any, template: PromptTemplate
) -> tuple[Callable[[JudgeRun], list[SwissJudgeTask]], int]:  # noqa: ANN401
    _require(benchmark)
    family = _judge_family(request)
    try:
        selection, round_no = int(request.options["selection"]), int(request.options["round"])
    except (KeyError, TypeError, ValueError):
        raise RunError(
            "a Swiss run is made by its selection (reconstruction_swiss), round by round; it cannot be launched alone"
        ) from None
    matches = swiss_judgeable(_swiss_matches(selection=selection, round_no=round_no), family, benchmark, template)

    def make(run: JudgeRun) -> list[SwissJudgeTask]:
        return [SwissJudgeTask(run=run, match=m, order=o) for m in matches for o in request.orders]

    return make, 0


def _swiss_specs(run: JudgeRun, ids: list[int], template: PromptTemplate, aliases: Any, names: list[str]) -> list[JudgeSpec]:  # noqa: ANN401
    tasks = list(SwissJudgeTask.objects.filter(id__in=ids).only("id", "match_id", "order"))
    matches = {m.pk: m for m in _swiss_matches({t.match_id for t in tasks})}
    specs = []
    for t in tasks:
        m = matches[t.match_id]
        a, b = _shown(m, t.order)
        rendered = render_swiss_task(
            bibliography=m.tournament.seed_paper.freeze.shown_text,
            shown_a=a,
            shown_b=b,
            template=template,
            matcher=aliases.matcher,
        )
        problem = blindness_problem(rendered, f"reconstruction-swiss-match-{m.pk}", names, aliases)
        specs.append(JudgeSpec(t.pk, m.pk, t.order, rendered, problem, {"judge": run.judge_model}))
    return specs


def parse_swiss_answer(text: str) -> tuple[str, str]:
    """``{"winner": "A" | "B" | "TIE", "reason": text}``."""
    obj = json_object(text)
    raw = obj.get("winner")
    if not isinstance(raw, str) or raw.strip().upper() not in WINNERS:
        raise ParseError(f'"winner" must be "A", "B" or "TIE", got {raw!r}')
    return raw.strip().upper(), text_key(obj, "reason")


def _swiss_parse(text: str, template: PromptTemplate, spec: JudgeSpec) -> tuple[str, str]:
    return parse_swiss_answer(text)


def swiss_winner(verdict: str, order: str) -> str:
    """The match's side (a, b or tie) a verdict about the shown A and B names in ``order``."""
    if verdict == "TIE":
        return "tie"
    return {"original": {"A": "a", "B": "b"}, "reverse": {"A": "b", "B": "a"}}[order][verdict]


def _swiss_judgment(run_id: int, spec: JudgeSpec, result: JudgeResult) -> SwissVote:
    answer = result.answer if result.status == "accepted" else None
    return SwissVote(
        run_id=run_id,
        match_id=spec.subject_id,
        judge=spec.meaning["judge"],
        verdict=answer[0] if answer else None,
        winner=swiss_winner(answer[0], spec.order) if answer else "",
        reason=answer[1] if answer else "",
        order=spec.order,
        **_record(result),
    )


def _swiss_recorded(source: JudgeRun) -> dict[tuple[int, str], dict[str, Any]]:
    return {
        (v.match_id, v.order): {"winner": v.verdict, "reason": v.reason or f"replayed from run {source.pk}"}
        for v in SwissVote.objects.filter(run=source, status="accepted")
    }


def _swiss_after(run: JudgeRun) -> None:
    from .swiss import selection_advance

    selection_advance(selection_id=int(run.parameters["options"]["selection"]))


def _swiss_describe(vote: SwissVote) -> tuple[str, str]:
    t = vote.match.tournament
    return (
        f"seed {t.seed_paper.external_id}, slot {t.slot}, round {vote.match.round}: {vote.winner or 'invalid'}",
        reverse("reconstruction:bracket", args=[t.selection.benchmark_id, t.selection_id]),
    )


MATCH = JudgeSubjects(
    name=MATCH_KIND,
    label="Reconstruction match labels",
    protocol=PROTOCOL,
    task_model=MatchJudgeTask,
    judgment_model=MatchJudgment,
    subject_field="hypothesis",
    plan=_match_plan,
    specs=_match_specs,
    judgment=_match_judgment,
    recorded=_match_recorded,
    default_prompts=DEFAULT_MATCH,
    parse=_match_parse,
    describe=_match_describe,
    ordered=False,
)


def _sides(run: JudgeRun) -> Any:  # noqa: ANN401
    """The run's verdicts for the judge-reliability panel (numpy loads when it is computed, not with the app)."""
    from .reliability import judged_sides

    return judged_sides(run)


SWISS = JudgeSubjects(
    name=SWISS_KIND,
    label="Reconstruction Swiss matches",
    protocol=PROTOCOL,
    task_model=SwissJudgeTask,
    judgment_model=SwissVote,
    subject_field="match",
    plan=_swiss_plan,
    specs=_swiss_specs,
    judgment=_swiss_judgment,
    recorded=_swiss_recorded,
    default_prompts=DEFAULT_SWISS,
    parse=_swiss_parse,
    describe=_swiss_describe,
    after=_swiss_after,
    after_title="move the Swiss selection on (pair and launch its next round, or choose its champions)",
    sides=_sides,
)
