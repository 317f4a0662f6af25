"""HypoArena's versioned judge prompts and their blind rendering (PROTOCOL.md §2).

Two templates, registered in ``jobs.prompts.PROMPTS`` when the app is ready (``HypoArenaConfig.ready``):

- ``hypoarena-arena-v1`` (kind ``arena``): the case's context and two submissions' hypothesis–evidence pairs, labelled
  only A and B; the judge answers ``{"verdict": "A>>B" | "A>B" | "A=B" | "B>A" | "B>>A", "reason": ...}``;
- ``hypoarena-rubric-v1`` (kind ``rubric``): the context and one submission; the judge scores g, ℓ, j per pair and
  b, d, u for the set on 1–5 (d only when K > 1).

What a judge never sees: the case's ``reference_conclusion`` (held out: it is what the hypotheses are about), any
participant's name or alias (each hypothesis and evidence text is redacted with the benchmark's alias matcher, as
Lit2Test proposals are, ``arena.blindness``), the match's public or internal id, and which side is the source-derived
Reference. The gate (``jobs.services.blindness_problem``) checks every rendered prompt once more before it is sent.

A template's text never changes once released: a new wording is a new version. The wording avoids "reference" and
"prefer" on purpose: the gate looks for every participant's name, squashed, anywhere in the prompt, and a participant
called "Reference" (or "Ref") would otherwise trip it on the template's own text.
"""

from __future__ import annotations

from typing import Any

from arena.aliases import Matcher
from jobs.prompts import PromptTemplate, RenderedTask, prompt_register

from .models import Case, Submission

ARENA_V1 = "hypoarena-arena-v1"
RUBRIC_V1 = "hypoarena-rubric-v1"
ARENA_KIND, RUBRIC_KIND = "arena", "rubric"

ARENA_SYSTEM_V1 = """You are an expert analyst judging HypoArena, a prospective hypothesis-discovery benchmark.
A case describes a situation whose conclusion is hidden from everyone, you included. Each submission answers the case with
one or more hypothesis-evidence pairs: a hypothesis about what explains the case, and the evidence from the case that
supports it.

Compare submission A with submission B as a whole, on:
1. Contextual grounding: the hypotheses rest on the facts of the case, not on generic knowledge.
2. Inferential insight: they go beyond restating the case to a non-obvious, testable explanation.
3. Evidential justification: the cited evidence really supports each hypothesis.
4. Breadth and distinctness: a set covers the plausible explanations without repeating one idea.
5. Analytical utility: the set helps decide what to check next.
Judge substance, not length or style. The order in which the submissions appear carries no information.

Give one of five verdicts: "A>>B" (A is much better), "A>B" (A is better), "A=B" (neither is better), "B>A" (B is better),
"B>>A" (B is much better).
Answer with one JSON object and nothing else:
{"verdict": "A>>B" | "A>B" | "A=B" | "B>A" | "B>>A", "reason": "<one or two sentences>"}"""

RUBRIC_SYSTEM_V1 = """You are an expert analyst scoring a submission to HypoArena, a prospective hypothesis-discovery benchmark.
A case describes a situation whose conclusion is hidden from everyone, you included. The submission answers the case with
K hypothesis-evidence pairs. Score on a 1-5 scale (1 = very poor, 3 = adequate, 5 = excellent), whole numbers only.

For each pair, in the order given:
- g, contextual grounding: the hypothesis rests on the facts of the case;
- l, inferential insight: it goes beyond restating the case to a non-obvious, testable explanation;
- j, evidential justification: the cited evidence really supports it.
For the set as a whole:
- b, hypothesis-space breadth: the pairs cover the plausible explanations;
- d, directional distinctness: the pairs point in different directions (null when K = 1: not applicable);
- u, analytical utility: the set helps decide what to check next.

Answer with one JSON object and nothing else, with exactly one entry in "pairs" per pair of the submission:
{"pairs": [{"g": 1-5, "l": 1-5, "j": 1-5}, ...], "b": 1-5, "d": 1-5 or null, "u": 1-5, "reason": "<one or two sentences>"}"""

TEMPLATES: tuple[PromptTemplate, ...] = (
    PromptTemplate(ARENA_V1, ARENA_KIND, ARENA_SYSTEM_V1),
    PromptTemplate(RUBRIC_V1, RUBRIC_KIND, RUBRIC_SYSTEM_V1),
)
DEFAULT_ARENA = {ARENA_KIND: ARENA_V1}
DEFAULT_RUBRIC = {RUBRIC_KIND: RUBRIC_V1}


def prompts_register() -> None:
    """Register the templates with the engine (a second template of one version raises)."""
    for template in TEMPLATES:
        prompt_register(template)


def render_case(case: Case) -> str:
    """The case block: domain and context, never the reference conclusion."""
    return f"=== CASE ===\nDomain: {case.domain.name}\n{case.context}"


def blind_pairs(submission: Submission, matcher: Matcher | None) -> list[dict[str, str]]:
    """The submission's pairs with every model alias of the benchmark redacted (``matcher``), field by field."""
    out = []
    for pair in submission.pairs:
        texts = {key: str(pair.get(key, "")) for key in ("hypothesis", "evidence")}
        if matcher is not None:
            texts = {key: matcher.redact(text)[0] for key, text in texts.items()}
        out.append(texts)
    return out


def render_submission(label: str, pairs: list[dict[str, Any]]) -> str:
    """A submission as the judge sees it. The first line is the header: the orientation gate compares what follows."""
    header = f"=== SUBMISSION {label} ===" if label else "=== SUBMISSION ==="
    body = "\n\n".join(
        f"Pair {i}\nHypothesis: {p['hypothesis']}\nEvidence: {p['evidence']}" for i, p in enumerate(pairs, start=1)
    )
    return f"{header}\n{body}"


def render_arena_task(
    *, case: Case, shown_a: Submission, shown_b: Submission, template: PromptTemplate, matcher: Matcher | None
) -> RenderedTask:
    """The blind prompt of one ordered arena task: ``shown_a`` labelled A, ``shown_b`` labelled B."""
    block_a = render_submission("A", blind_pairs(shown_a, matcher))
    block_b = render_submission("B", blind_pairs(shown_b, matcher))
    user = f"{render_case(case)}\n\n{block_a}\n\n{block_b}\n=== END ===\n\nWhich submission is the better set of hypotheses for this case? Answer in JSON."
    return RenderedTask(system=template.system, user=user, block_a=block_a, block_b=block_b)


def render_rubric_task(*, case: Case, submission: Submission, template: PromptTemplate, matcher: Matcher | None) -> RenderedTask:
    """The blind prompt of one rubric task; ``block_b`` is empty (one submission is scored alone)."""
    block = render_submission("", blind_pairs(submission, matcher))
    k = len(submission.pairs)
    user = (
        f"{render_case(case)}\n\n{block}\n=== END ===\n\nThis submission has K = {k} pair{'s' if k != 1 else ''}. "
        "Score it. Answer in JSON."
    )
    return RenderedTask(system=template.system, user=user, block_a=block, block_b="")
