"""Reconstruction's versioned prompts (PROTOCOL.md §3) and their rendering. Registered in ``jobs.prompts.PROMPTS`` when
the app is ready.

- ``reconstruction-proposer-v1`` (kind ``reconstruction-proposer``): the seed's *frozen* bibliography (anonymous ids,
  titles and abstracts, exactly the stored shown text) and the ask for exactly five hypotheses citing those ids. A
  proposer never sees the seed's title, abstract or date, a DOI, a URL or a reference's original id: the frozen text
  has none (the leakage audit scrubbed it), and nothing else goes into the prompt.
- ``reconstruction-match-v1`` (kind ``match``): a match judge sees the seed's title and abstract (held out from
  everyone else) and one hypothesis's title and summary, never who proposed it; answers Match or No-match.
- ``reconstruction-swiss-v1`` (kind ``swiss``): a Swiss-selection judge sees the frozen bibliography and two
  candidate hypotheses labelled A and B, never the seed (selection must not see the answer) nor who proposed them;
  answers which is the more promising research idea given that literature, A, B or TIE.

A template's text never changes once released: a new wording is a new version.
"""

from __future__ import annotations

from arena.aliases import Matcher
from jobs.prompts import PromptTemplate, RenderedTask, prompt_register

from .models import Hypothesis, SeedPaper

PROPOSER_V1 = "reconstruction-proposer-v1"
MATCH_V1 = "reconstruction-match-v1"
SWISS_V1 = "reconstruction-swiss-v1"
PROPOSER_KIND, MATCH_KIND, SWISS_KIND = "reconstruction-proposer", "match", "swiss"
HYPOTHESES = 5

PROPOSER_SYSTEM_V1 = """You are a research scientist. You are given the bibliography of a paper that has not been written yet:
the works it will build on, each under an anonymous id (R1, R2, ...) with its title and abstract.
Propose what the paper's central research idea could be: exactly five distinct hypotheses, each with a short title, a
summary of the idea (what is claimed and how it would be shown), and the ids of the references it builds on.
Answer with one JSON object and nothing else:
{"hypotheses": [{"title": "...", "summary": "...", "cites": ["R3", "R7"]}, ... five entries ...]}"""

MATCH_SYSTEM_V1 = """You are an expert reviewer. You are given a published paper's title and abstract, and one research hypothesis
proposed without knowledge of the paper. Decide whether the hypothesis captures the paper's central research idea: the
same core claim or contribution, even if worded differently or less detailed. A hypothesis on the same topic with a
different core idea is not a match.
Answer with one JSON object and nothing else:
{"label": "match" | "no_match", "reason": "<one or two sentences>"}"""

SWISS_SYSTEM_V1 = """You are an expert research reviewer. You are given a bibliography (works under anonymous ids with titles and
abstracts) and two candidate research hypotheses, A and B, that build on it. Decide which is the more promising research
idea for a paper building on this literature: specific, novel given the works listed, well grounded in them and
feasible. Judge substance, not length or style. The order in which the candidates appear carries no information.
Answer with one JSON object and nothing else:
{"winner": "A" | "B" | "TIE", "reason": "<one or two sentences>"}"""

TEMPLATES: tuple[PromptTemplate, ...] = (
    PromptTemplate(PROPOSER_V1, PROPOSER_KIND, PROPOSER_SYSTEM_V1),
    PromptTemplate(MATCH_V1, MATCH_KIND, MATCH_SYSTEM_V1),
    PromptTemplate(SWISS_V1, SWISS_KIND, SWISS_SYSTEM_V1),
)
DEFAULT_MATCH = {MATCH_KIND: MATCH_V1}
DEFAULT_SWISS = {SWISS_KIND: SWISS_V1}


def prompts_register() -> None:
    """Register the templates with the engine (a second template of one version raises)."""
    for template in TEMPLATES:
        prompt_register(template)


def render_proposer_task(*, bibliography: str, template: PromptTemplate) -> list[dict[str, str]]:
    """The proposer's messages: the frozen bibliography text as stored, nothing else about the seed."""
    user = f"=== BIBLIOGRAPHY ===\n{bibliography}\n=== END ===\n\nPropose exactly {HYPOTHESES} hypotheses as JSON."
    return [{"role": "system", "content": template.system}, {"role": "user", "content": user}]


def _hypothesis_block(label: str, hypothesis: Hypothesis, matcher: Matcher | None) -> str:
    title, summary = hypothesis.title, hypothesis.summary
    if matcher is not None:
        title, summary = matcher.redact(title)[0], matcher.redact(summary)[0]
    header = f"=== HYPOTHESIS {label} ===" if label else "=== HYPOTHESIS ==="
    return f"{header}\nTitle: {title}\nSummary: {summary}"


def render_match_task(
    *, seed: SeedPaper, hypothesis: Hypothesis, template: PromptTemplate, matcher: Matcher | None
) -> RenderedTask:
    """One hypothesis against the held-out seed; ``block_b`` is empty."""
    block = _hypothesis_block("", hypothesis, matcher)
    user = (
        f"=== PUBLISHED PAPER ===\nTitle: {seed.title}\nAbstract: {seed.abstract}\n\n{block}\n=== END ===\n\n"
        "Does the hypothesis capture the paper's central research idea? Answer in JSON."
    )
    return RenderedTask(system=template.system, user=user, block_a=block, block_b="")


def render_swiss_task(
    *, bibliography: str, shown_a: Hypothesis, shown_b: Hypothesis, template: PromptTemplate, matcher: Matcher | None
) -> RenderedTask:
    """One ordered Swiss match: ``shown_a`` labelled A, ``shown_b`` labelled B, under the frozen bibliography."""
    block_a, block_b = _hypothesis_block("A", shown_a, matcher), _hypothesis_block("B", shown_b, matcher)
    user = (
        f"=== BIBLIOGRAPHY ===\n{bibliography}\n\n{block_a}\n\n{block_b}\n=== END ===\n\n"
        "Which hypothesis is the more promising research idea? Answer in JSON."
    )
    return RenderedTask(system=template.system, user=user, block_a=block_a, block_b=block_b)
