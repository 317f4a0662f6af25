"""Lit2Test's versioned prompt templates (PROTOCOL.md §1) and the blind rendering of its judge and generation tasks.

The judge sees the context, the papers and two proposals labelled only "A" and "B", each with every alias of the
benchmark's models redacted (``arena.prompting``). A template's text never changes once released: a new wording is a
new version. The v2 judge templates render the context with each paper's source id (``layout`` 2); v1
renders as it always did, so a v1 run's page still shows the prompts its judge received. Registered with the engine
when the app is ready (:func:`prompts_register`); the diagnostic controls judge with the same templates.
"""

from __future__ import annotations

from arena.aliases import Matcher
from arena.models import CanonicalPair, Context, Proposal
from arena.prompting import ProposalBlocks, render_context, render_proposal
from arena.schemas import JUDGE_DIMENSIONS
from jobs.prompts import PromptTemplate, RenderedTask, prompt_register

DIMENSIONS = JUDGE_DIMENSIONS

JUDGE_SYSTEM_V1 = """You are an expert reviewer judging research proposals for the Lit2Test benchmark.
Each proposal answers the same literature neighborhood with one minimal falsifiable next-step test, in six fields:
literature_gap, hypothesis, minimal_test, decisive_metric, supporting_result, falsifying_result.

Judge which proposal is the better next experiment, using this rubric:
1. Grounding: the gap is tied to the supplied papers and their stated limitations, not generic.
2. Hypothesis specificity: a claim with conditions, a mechanism and an expected difference.
3. Minimality and feasibility: the smallest controlled experiment that discriminates the hypothesis, within the resource constraint.
4. Decisive metric: a measurement that adjudicates the mechanism, not a convenient aggregate.
5. Falsifiability: precommitted supporting and falsifying observations that a real outcome could actually produce.
Prefer substance over length or style. The order in which the proposals appear carries no information.
Answer "tie" only when neither is better as a next experiment.

Answer with one JSON object and nothing else:
{"winner": "A" | "B" | "tie", "confidence": "high" | "medium" | "low", "main_reason": "<one or two sentences>", "weakness_a": "<main weakness of A>", "weakness_b": "<main weakness of B>"}"""

STRUCTURED_SYSTEM_V1 = (
    JUDGE_SYSTEM_V1.rsplit("Answer with one JSON object", 1)[0]
    + """STRUCTURED-DIMENSIONS: score both proposals 0-4 on each rubric dimension (0 = absent, 4 = exemplary), then pick.
Answer with one JSON object and nothing else:
{"scores": {"A": {"grounding": 0-4, "hypothesis_specificity": 0-4, "minimality_feasibility": 0-4, "decisive_metric": 0-4, "falsifiability": 0-4}, "B": {...same keys...}},
 "winner": "A" | "B" | "tie", "overall": "A" | "B" | "tie", "confidence": "high" | "medium" | "low", "main_reason": "...", "weakness_a": "...", "weakness_b": "..."}"""
)

GENERATION_SYSTEM_V1 = """You are a careful researcher. Read the literature neighborhood and propose ONE minimal falsifiable next-step test, not a broad research proposal.
Answer with one JSON object with exactly these six string fields and nothing else:
{"literature_gap": "ties the gap to the supplied papers", "hypothesis": "a claim with conditions, mechanism and expected difference",
 "minimal_test": "the smallest controlled experiment that discriminates it", "decisive_metric": "the measurement that adjudicates the mechanism",
 "supporting_result": "the precommitted observation that would support it", "falsifying_result": "the precommitted observation that would refute it"}"""


TEMPLATES = (
    PromptTemplate("judge-holistic-v1", "holistic", JUDGE_SYSTEM_V1),
    PromptTemplate("judge-structured-v1", "structured", STRUCTURED_SYSTEM_V1, dimensions=DIMENSIONS),
    PromptTemplate("judge-holistic-v2", "holistic", JUDGE_SYSTEM_V1, layout=2),
    PromptTemplate("judge-structured-v2", "structured", STRUCTURED_SYSTEM_V1, layout=2, dimensions=DIMENSIONS),
    PromptTemplate("generation-v1", "generation", GENERATION_SYSTEM_V1),
)
#: The template each run type is asked with when a run names none.
DEFAULT_PROMPT = {"holistic": "judge-holistic-v2", "structured": "judge-structured-v2", "generation": "generation-v1"}
JUDGE_PROMPTS = {k: v for k, v in DEFAULT_PROMPT.items() if k != "generation"}


def prompts_register() -> None:
    for template in TEMPLATES:
        prompt_register(template)


def render_judge_task(
    *,
    pair: CanonicalPair,
    order: str,
    template: PromptTemplate,
    proposals: dict[int, Proposal],
    matcher: Matcher | None = None,
    context_text: str | None = None,
    blocks: ProposalBlocks | None = None,
) -> RenderedTask:
    """The blind prompt of one ordered task: original shows participant_a as A, reverse swaps them.

    A driver rendering many tasks passes what it rendered already: ``context_text`` (``render_context`` of the pair's
    context in the template's layout) and ``blocks`` (the proposal blocks it remembers, ``arena.prompting``)."""
    first, second = proposals[pair.participant_a_id], proposals[pair.participant_b_id]
    shown_a, shown_b = (first, second) if order == "original" else (second, first)
    render = blocks.render if blocks is not None else render_proposal
    block_a, block_b = render("A", shown_a, matcher), render("B", shown_b, matcher)
    if context_text is None:
        context_text = render_context(pair.context, context_format=template.layout)
    user = (
        f"{context_text}\n\n{block_a}\n\n{block_b}\n=== END ===\n\nWhich proposal is the better next experiment? Answer in JSON."
    )
    return RenderedTask(system=template.system, user=user, block_a=block_a, block_b=block_b)


def render_generation_task(*, context: Context, template: PromptTemplate) -> list[dict[str, str]]:
    user = f"{render_context(context, context_format=template.layout)}\n=== END ===\n\nWrite your six-field proposal as JSON."
    return [{"role": "system", "content": template.system}, {"role": "user", "content": user}]
