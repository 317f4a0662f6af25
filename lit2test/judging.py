"""Judging Lit2Test's canonical pairs on the shared run engine: the ``pairs`` task kind (``jobs.subjects``).

A run (``run_judge BENCH --model J --base-url URL``, or the dashboard's launch form) gets one task per canonical pair
with text and order. In the original order the pair's ``participant_a`` (drawn from the benchmark's orientation seed
when the pair was made) is A; the reverse order swaps them. Before any task is made every pair passes the orientation
gate (``jobs.gates.orientation_sort``: a pair whose two proposals read the same once redacted is skipped, counted and
named in the run's log, like a pair without text); before each call its prompt passes the blindness gate (no
participant name, not the pair's internal key, no alias left after redaction). The verdict is stored as an :class:`~arena.models.OrderedJudgment`, the leaderboard's
input; a run of this kind may be its benchmark's canonical judge.

Selection (``--pairs``): ``all``, ``batch:NAME`` or ``sample:N`` (drawn from the pairs with text).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.models import PAIRS, Benchmark, CanonicalPair, Context, JudgeRun, OrderedJudgment, Proposal
from arena.prompting import ProposalBlocks, render_context
from jobs.gates import AliasCheck, blindness_problem, orientation_sort, skipped_log
from jobs.prompts import PromptTemplate, RenderedTask
from jobs.selection import Selection
from jobs.services import JudgeResult, judgment_fields
from jobs.subjects import JudgeSpec, JudgeSubjects

from .models import PROTOCOL, JudgeTask
from .prompts import JUDGE_PROMPTS, render_judge_task

SELECTION = Selection(
    groups={"batch": lambda pair: pair.context.batch.name if pair.context.batch else ""},
    flag="pairs",
    empty="no pairs in batch {value!r}",
)


def proposal_map(pairs: list[CanonicalPair]) -> dict[tuple[int, int], Proposal]:
    """The proposals of these pairs' contexts, by (context id, participant id)."""
    context_ids = {p.context_id for p in pairs}
    return {
        (p.context_id, p.participant_id): p
        for p in Proposal.objects.filter(context_id__in=context_ids).select_related("participant")
    }


def pairs_with_text(pairs: list[CanonicalPair]) -> list[CanonicalPair]:
    """The pairs whose context has text and whose two proposals exist."""
    proposals = proposal_map(pairs)
    return [
        p
        for p in pairs
        if p.context.has_text
        and (p.context_id, p.participant_a_id) in proposals
        and (p.context_id, p.participant_b_id) in proposals
    ]


def pairs_select(benchmark: Benchmark, spec: str, seed: int) -> list[CanonicalPair]:
    """The benchmark's pairs that ``spec`` selects (a sample draws from the pairs with text)."""
    pairs = list(benchmark.pairs.select_related("context__batch").order_by("id"))
    return SELECTION.choose(pairs, spec, seed, sample_from=pairs_with_text)


def _plan(benchmark: Benchmark, request: Any, template: PromptTemplate) -> tuple[Callable[[JudgeRun], list[JudgeTask]], int]:  # noqa: ANN401
    """The canonical pairs a run judges (those with text), each through the orientation gate in both orders: a pair
    whose two proposals read the same once redacted is skipped, like a pair without text."""
    selected = pairs_select(benchmark, request.select, request.seed)
    with_text = pairs_with_text(selected)
    proposals = proposal_map(with_text)
    by_participant = {
        pair.pk: {pid: proposals[(pair.context_id, pid)] for pid in (pair.participant_a_id, pair.participant_b_id)}
        for pair in with_text
    }
    contexts = {c.pk: c for c in Context.objects.filter(pk__in={p.context_id for p in with_text}).prefetch_related("papers")}
    for pair in with_text:
        pair.context = contexts[pair.context_id]

    def render(pair: CanonicalPair) -> tuple[RenderedTask, RenderedTask]:
        return tuple(  # type: ignore[return-value]
            render_judge_task(pair=pair, order=o, template=template, proposals=by_participant[pair.pk])
            for o in ("original", "reverse")
        )

    judgeable, same = orientation_sort(
        with_text,
        render,
        lambda pair: f"pair {pair.public_id}",
        what="chosen pairs with text",
        fix="Choose other pairs (--pairs batch:NAME or sample:N).",
    )

    def make(run: JudgeRun) -> list[JudgeTask]:
        skipped_log(run, [f"pair {p.public_id}" for p in same], "their two proposals read the same once model names are redacted")
        return [JudgeTask(run=run, pair=pair, order=order) for pair in judgeable for order in request.orders]

    return make, len(selected) - len(judgeable)


def _judgment(run_id: int, spec: JudgeSpec, result: JudgeResult) -> OrderedJudgment:
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


#: The proposal blocks judge drivers rendered, remembered across claims (``arena.prompting.ProposalBlocks``).
BLOCKS = ProposalBlocks()


def _claimed_proposals(pairs: list[CanonicalPair]) -> dict[tuple[int, int], Proposal]:
    """The proposals of these pairs' contexts as a prompt needs them, by (context id, participant id): what the blind
    rendering reads and the owner's name, not the redaction records nor the owner's aliases and metadata."""
    fields = ("id", "context_id", "participant_id", "content", "blind_content", "blind_digest", "participant__name")
    rows = Proposal.objects.filter(context_id__in={p.context_id for p in pairs}).select_related("participant").only(*fields)
    return {(p.context_id, p.participant_id): p for p in rows}


def _specs(run: JudgeRun, ids: list[int], template: PromptTemplate, aliases: AliasCheck, names: list[str]) -> list[JudgeSpec]:
    # The pair alone: its context is read once per claim below, its participants are known by id.
    tasks = list(JudgeTask.objects.filter(id__in=ids).select_related("pair"))
    pairs = [t.pair for t in tasks]
    proposals = _claimed_proposals(pairs)
    contexts = {c.pk: c for c in Context.objects.filter(pk__in={p.context_id for p in pairs}).prefetch_related("papers")}
    context_texts = {pk: render_context(c, context_format=template.layout) for pk, c in contexts.items()}
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
            pair=pair,
            order=t.order,
            template=template,
            proposals=by_participant,
            matcher=aliases.matcher,
            context_text=context_texts[pair.context_id],
            blocks=BLOCKS,
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


def _recorded(source: JudgeRun) -> dict[tuple[int, str], dict[str, Any]]:
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


def _sides(run: JudgeRun) -> Any:  # noqa: ANN401
    from .reliability import judged_sides  # numpy loads when the panel is computed, not with the app

    return judged_sides(run)


def _unit_sides(pair_ids: list[int]) -> dict[int, tuple[int, int, int]]:
    """Each pair's context and its two participants (``participant_a`` first, as ``_sides`` keys them)."""
    rows = CanonicalPair.objects.filter(pk__in=pair_ids).values_list("id", "context_id", "participant_a_id", "participant_b_id")
    return {pk: (context, a, b) for pk, context, a, b in rows}


def pairs_kind(page: Callable[..., Any] | None = None) -> JudgeSubjects:
    """The ``pairs`` task kind; ``page`` is the run page that lists its verdicts (``lit2test.views.pairs_run_page``)."""
    return JudgeSubjects(
        name=PAIRS,
        label="canonical pairs",
        protocol=PROTOCOL,
        task_model=JudgeTask,
        judgment_model=OrderedJudgment,
        subject_field="pair",
        plan=_plan,
        specs=_specs,
        judgment=_judgment,
        recorded=_recorded,
        default_prompts=JUDGE_PROMPTS,
        canonical=True,
        foreign_refusal="it has no Lit2Test {subjects} to judge; open its own pages from the dashboard",
        selection_key="pairs",
        skipped_note="pairs skipped: their proposals have no text, or read the same once model names are redacted",
        page=page,
        sides=_sides,
        unit_sides=_unit_sides,
    )
