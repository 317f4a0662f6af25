"""HypoArena judge runs on the shared run engine: the ``hypoarena`` (arena) and ``hypoarena_rubric`` task kinds
(``jobs.subjects``). The engine claims, leases, limits, retries (transient HTTP errors; up to three answers on a
malformed one) and counts calls exactly as for Lit2Test's pairs; this module says which tasks a run gets, what the
judge is asked, how its answer is parsed and where it goes.

**Arena runs** (``run_judge BENCH --model J --base-url URL``; ``--pairs domain:NAME`` or ``sample:N`` to judge
fewer matches): one task per match and order. In the ``original`` order the match's ``first`` submission is A, in
the ``reverse`` order its ``second`` is; the match's seeded orientation fixed which is first when it was made. The
judge answers one of five levels about the A and B it saw; the :class:`~hypoarena.models.ArenaVerdict` stores that
answer as given (the statistics read it with the order). Before any task is made every match passes the orientation
gate (the reverse prompt shows exactly the original's B as A and its A as B; ``jobs.gates.orientation_sort``): a match
whose two submissions read the same once redacted cannot be judged blind, so it is skipped (counted on the run, named
in its log) and the rest of the run goes ahead; a run of such matches only is refused. Before each call the prompt
passes the blindness gate (no participant name, no match id, no alias left after redaction).

**Rubric runs** (``--run-type rubric``): one task per submission; the judge scores g, ℓ, j per pair and b, d, u per
set. Each answer is kept (:class:`~hypoarena.models.RubricJudgment`, invalid ones too); an accepted one's scores also
become a :class:`~hypoarena.models.RubricScore`, in the same transaction.

Both kinds refuse a benchmark of another protocol, and the engine refuses a judge that is a participant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.blindness import benchmark_matcher
from arena.models import Benchmark, JudgeRun
from arena.protocols import protocol_phrase
from jobs.gates import blindness_problem, orientation_sort, skipped_log
from jobs.lifecycle import RunError
from jobs.prompts import PromptTemplate, RenderedTask
from jobs.selection import Selection
from jobs.services import JudgeResult
from jobs.subjects import JudgeSpec, JudgeSubjects

from .models import (
    ARENA_KIND,
    ORDERS,
    PROTOCOL,
    RUBRIC_KIND,
    RUBRIC_ORDER,
    ArenaJudgeTask,
    ArenaVerdict,
    Case,
    Match,
    RubricJudgeTask,
    RubricJudgment,
    RubricScore,
    Submission,
)
from .parsing import ArenaAnswer, RubricAnswer, parse_arena_answer, parse_rubric_answer
from .prompts import DEFAULT_ARENA, DEFAULT_RUBRIC, render_arena_task, render_rubric_task

# ``--pairs`` of an arena run selects matches, of a rubric run submissions: all, domain:NAME or sample:N.
MATCHES = Selection(
    groups={"domain": lambda match: match.case.domain.name},
    flag="--pairs",
    run=" for a HypoArena run",
    empty="no matches in domain {value!r}; the domains are {known}",
)
SUBMISSIONS = Selection(
    groups={"domain": lambda submission: submission.case.domain.name},
    flag="--pairs",
    run=" for a HypoArena run",
    empty="no submissions in domain {value!r}; the domains are {known}",
)


def _require_hypoarena(benchmark: Benchmark, what: str) -> None:
    if benchmark.protocol != PROTOCOL:
        raise RunError(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark: it has no HypoArena {what} to judge; judge its "
            "pairs with run_judge's default task kind"
        )


# Why the plan skips a match, on the run's page, the launch message and in its log.
SAME_NOTE = "their two submissions read the same once model names are redacted, so no judge could tell them apart"


def _shown(match: Match, order: str) -> tuple[Submission, Submission]:
    """(A, B) of an order: ``first`` is A in the original order, ``second`` in the reverse."""
    return (match.first, match.second) if order == "original" else (match.second, match.first)


def _matches(ids: set[int] | None = None, *, benchmark: Benchmark | None = None) -> list[Match]:
    found = Match.objects.select_related("case__domain", "first", "second")
    found = found.filter(pk__in=ids) if ids is not None else found.filter(case__benchmark=benchmark)
    return list(found.order_by("id"))


# --------------------------------------------------------------------------- arena


def _arena_plan(
    benchmark: Benchmark, request: Any, template: PromptTemplate
) -> tuple[Callable[[JudgeRun], list[ArenaJudgeTask]], int]:  # noqa: ANN401
    """Every chosen match in the requested orders, each through the orientation gate: a match whose two submissions
    read the same once redacted is skipped (``jobs.gates.orientation_sort``)."""
    _require_hypoarena(benchmark, "matches")
    matches = _matches(benchmark=benchmark)
    if not matches:
        raise RunError(f"{benchmark} has no matches to judge; import cases and submissions with import_hypoarena first")
    chosen = MATCHES.choose(matches, request.select, request.seed)
    matcher = benchmark_matcher(benchmark_id=benchmark.pk)

    def render(match: Match) -> tuple[RenderedTask, RenderedTask]:
        original, reverse = (
            render_arena_task(case=match.case, shown_a=a, shown_b=b, template=template, matcher=matcher)
            for a, b in (_shown(match, o) for o in ORDERS)
        )
        return original, reverse

    judged, same = orientation_sort(
        chosen,
        render,
        _match_name,
        what="chosen matches",
        fix="Choose other matches (--pairs domain:NAME or sample:N), or correct the submissions and import them again.",
    )

    def make(run: JudgeRun) -> list[ArenaJudgeTask]:
        skipped_log(run, [_match_name(m) for m in same], SAME_NOTE)
        return [ArenaJudgeTask(run=run, match=m, order=o) for m in judged for o in request.orders]

    return make, len(same)


def _match_name(match: Match) -> str:
    return f"match {match.public_id} (case {match.case.external_id})"


def _arena_specs(run: JudgeRun, ids: list[int], template: PromptTemplate, aliases: Any, names: list[str]) -> list[JudgeSpec]:  # noqa: ANN401
    tasks = list(ArenaJudgeTask.objects.filter(id__in=ids).only("id", "match_id", "order"))
    matches = {m.pk: m for m in _matches({t.match_id for t in tasks})}
    specs = []
    for t in tasks:
        match = matches[t.match_id]
        a, b = _shown(match, t.order)
        rendered = render_arena_task(case=match.case, shown_a=a, shown_b=b, template=template, matcher=aliases.matcher)
        problem = blindness_problem(rendered, match.public_id, names, aliases)
        specs.append(JudgeSpec(t.pk, match.pk, t.order, rendered, problem, {"shown_a_id": a.pk, "shown_b_id": b.pk}))
    return specs


def _arena_parse(text: str, template: PromptTemplate, spec: JudgeSpec) -> ArenaAnswer:
    return parse_arena_answer(text)


def _arena_judgment(run_id: int, spec: JudgeSpec, result: JudgeResult) -> ArenaVerdict:
    answer: ArenaAnswer | None = result.answer if result.status == "accepted" else None
    return ArenaVerdict(
        run_id=run_id,
        match_id=spec.subject_id,
        order=spec.order,
        status=result.status,
        verdict=answer.verdict if answer else None,
        reasons=answer.reason if answer else "",
        raw_response=result.raw,
        errors=result.errors or [],
        attempt=result.attempt,
        latency_seconds=result.latency,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        metadata={"rejected_attempts": result.transcripts} if result.transcripts else {},
    )


def _arena_recorded(source: JudgeRun) -> dict[tuple[int, str], dict[str, Any]]:
    """A stored arena run's accepted verdicts as the judge's answers, keyed (match id, order): a replay's answers."""
    return {
        (v.match_id, v.order): {"verdict": v.verdict, "reason": v.reasons or f"replayed from run {source.pk}"}
        for v in ArenaVerdict.objects.filter(run=source, status=ArenaVerdict.Status.ACCEPTED)
    }


# --------------------------------------------------------------------------- rubric


def _submissions(ids: set[int] | None = None, *, benchmark: Benchmark | None = None) -> list[Submission]:
    found = Submission.objects.select_related("case__domain")
    found = found.filter(pk__in=ids) if ids is not None else found.filter(case__benchmark=benchmark)
    return list(found.order_by("id"))


def _rubric_plan(
    benchmark: Benchmark, request: Any, template: PromptTemplate
) -> tuple[Callable[[JudgeRun], list[RubricJudgeTask]], int]:  # noqa: ANN401
    """Every chosen submission, once (a submission is scored alone: ``orders`` do not apply)."""
    _require_hypoarena(benchmark, "submissions")
    submissions = _submissions(benchmark=benchmark)
    if not submissions:
        raise RunError(f"{benchmark} has no submissions to score; import them with import_hypoarena first")
    chosen = SUBMISSIONS.choose(submissions, request.select, request.seed)
    empty = [s for s in chosen if not s.pairs]
    if empty:
        raise RunError(
            f"submission of case {empty[0].case.external_id} has no pairs to score; fix or delete it, then launch again"
        )

    def make(run: JudgeRun) -> list[RubricJudgeTask]:
        return [RubricJudgeTask(run=run, submission=s, order=RUBRIC_ORDER) for s in chosen]

    return make, 0


def _rubric_specs(run: JudgeRun, ids: list[int], template: PromptTemplate, aliases: Any, names: list[str]) -> list[JudgeSpec]:  # noqa: ANN401
    tasks = list(RubricJudgeTask.objects.filter(id__in=ids).only("id", "submission_id", "order"))
    submissions = {s.pk: s for s in _submissions({t.submission_id for t in tasks})}
    specs = []
    for t in tasks:
        submission = submissions[t.submission_id]
        case: Case = submission.case
        rendered = render_rubric_task(case=case, submission=submission, template=template, matcher=aliases.matcher)
        # A submission has no public id of its own; the case id is no secret, the participant's name is checked by the gate.
        problem = blindness_problem(rendered, f"hypoarena-submission-{submission.pk}", names, aliases)
        specs.append(JudgeSpec(t.pk, submission.pk, t.order, rendered, problem, {"k": len(submission.pairs)}))
    return specs


def _rubric_parse(text: str, template: PromptTemplate, spec: JudgeSpec) -> RubricAnswer:
    return parse_rubric_answer(text, k=spec.meaning["k"])


def _rubric_judgment(run_id: int, spec: JudgeSpec, result: JudgeResult) -> list[RubricJudgment | RubricScore]:
    answer: RubricAnswer | None = result.answer if result.status == "accepted" else None
    rows: list[RubricJudgment | RubricScore] = [
        RubricJudgment(
            run_id=run_id,
            submission_id=spec.subject_id,
            order=spec.order,
            status=result.status,
            scores=answer.scores() if answer else None,
            reasons=answer.reason if answer else "",
            raw_response=result.raw,
            errors=result.errors or [],
            attempt=result.attempt,
            latency_seconds=result.latency,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            metadata={"rejected_attempts": result.transcripts} if result.transcripts else {},
        )
    ]
    if answer is not None:
        rows.append(
            RubricScore(
                run_id=run_id,
                submission_id=spec.subject_id,
                grounding=[p["g"] for p in answer.pairs],
                insight=[p["l"] for p in answer.pairs],
                justification=[p["j"] for p in answer.pairs],
                breadth=answer.b,
                distinctness=answer.d,
                utility=answer.u,
                raw_response=result.raw,
                metadata={"reason": answer.reason} if answer.reason else {},
            )
        )
    return rows


def _rubric_recorded(source: JudgeRun) -> dict[tuple[int, str], dict[str, Any]]:
    """A stored rubric run's scores (imported or judged here) as the judge's answers, keyed (submission id, order)."""
    return {
        (r.submission_id, RUBRIC_ORDER): {
            "pairs": [{"g": g, "l": ell, "j": j} for g, ell, j in zip(r.grounding, r.insight, r.justification, strict=True)],
            "b": r.breadth,
            "d": r.distinctness,
            "u": r.utility,
            "reason": (r.metadata or {}).get("reason") or f"replayed from run {source.pk}",
        }
        for r in RubricScore.objects.filter(run=source)
    }


def _sides(run: JudgeRun) -> Any:  # noqa: ANN401
    """The run's verdicts for the judge-reliability panel (numpy loads when it is computed, not with the app)."""
    from .reliability import judged_sides

    return judged_sides(run)


def _unit_sides(match_ids: list[int]) -> dict[int, tuple[int, int, int]]:
    """Each match's case and the participants of its two submissions (``first`` first, as ``_sides`` keys them)."""
    rows = Match.objects.filter(pk__in=match_ids).values_list("id", "case_id", "first__participant_id", "second__participant_id")
    return {pk: (case, a, b) for pk, case, a, b in rows}


ARENA = JudgeSubjects(
    name=ARENA_KIND,
    label="HypoArena matches",
    protocol=PROTOCOL,
    task_model=ArenaJudgeTask,
    judgment_model=ArenaVerdict,
    subject_field="match",
    plan=_arena_plan,
    specs=_arena_specs,
    judgment=_arena_judgment,
    recorded=_arena_recorded,
    default_prompts=DEFAULT_ARENA,
    parse=_arena_parse,
    skipped_note=f"matches skipped: {SAME_NOTE} (the run log names them)",
    sides=_sides,
    unit_sides=_unit_sides,
)
RUBRIC = JudgeSubjects(
    name=RUBRIC_KIND,
    label="HypoArena rubric scores",
    protocol=PROTOCOL,
    task_model=RubricJudgeTask,
    judgment_model=RubricJudgment,
    subject_field="submission",
    plan=_rubric_plan,
    specs=_rubric_specs,
    judgment=_rubric_judgment,
    recorded=_rubric_recorded,
    default_prompts=DEFAULT_RUBRIC,
    parse=_rubric_parse,
    ordered=False,
)
