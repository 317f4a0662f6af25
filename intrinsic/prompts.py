"""Intrinsic scoring's listwise judge prompt (PROTOCOL.md §4; issue 14) and its rendering. Registered in
``jobs.prompts.PROMPTS`` when the app is ready.

- ``intrinsic-listwise-v1`` (kind ``listwise``): a chat judge sees a paper's background and research question and all
  its candidate hypotheses, shuffled by a seeded per-paper shuffle and labelled C1, C2, ... in the order shown; it
  answers its top five labels, best first. It never sees a candidate's external id, which candidate is gold, its
  position in the file, or anything about the scorers.

The shuffle is ``random.Random(f"{seed}:{paper external id}")``: the same seed shows every paper the same way (a
replay, a rerun), and two papers differ. A template's text never changes once released: a new wording is a new
version.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from jobs.prompts import PromptTemplate, RenderedTask, prompt_register

LISTWISE_V1 = "intrinsic-listwise-v1"
LISTWISE_KIND = "listwise"

LISTWISE_SYSTEM_V1 = """You are an expert scientist. You are given the background of a research paper, its research question,
and a list of candidate hypotheses, each under a label (C1, C2, ...). Exactly one candidate is the hypothesis the
paper actually proposes; the others are plausible alternatives. Rank the candidates by how likely each is to be the
paper's hypothesis, and give the labels of your top {k}, most likely first. The order in which the candidates are
listed carries no information.
Answer with one JSON object and nothing else:
{{"top": ["<label>", ... exactly {k} distinct labels from the list ...]}}"""

TEMPLATES: tuple[PromptTemplate, ...] = (PromptTemplate(LISTWISE_V1, LISTWISE_KIND, LISTWISE_SYSTEM_V1),)
DEFAULT_LISTWISE = {LISTWISE_KIND: LISTWISE_V1}


def prompts_register() -> None:
    """Register the templates with the engine (a second template of one version raises)."""
    for template in TEMPLATES:
        prompt_register(template)


def label(index: int) -> str:
    """The anonymous label of the candidate shown at ``index`` (0 first)."""
    return f"C{index + 1}"


def shuffled(candidate_ids: Sequence[str], *, seed: int, paper_id: str) -> list[str]:
    """The candidates' ids in the order the judge sees them: a shuffle seeded by the run's seed and the paper's id
    (independent of the file's order, which often puts the gold first)."""
    order = sorted(candidate_ids)  # the file's order must not leak through the shuffle's input
    random.Random(f"{seed}:{paper_id}").shuffle(order)
    return order


def render_listwise_task(
    *, background: str, question: str, texts: Sequence[str], k: int, template: PromptTemplate
) -> RenderedTask:
    """The judge's prompt: the paper's background and question and ``texts`` (already shuffled) under C1, C2, ...;
    ``block_a`` is the candidates' block (what the blindness gate scans), ``block_b`` is empty."""
    block = "\n".join(f"{label(i)}: {' '.join(text.split())}" for i, text in enumerate(texts))
    user = (
        f"=== BACKGROUND ===\n{background}\n\n=== RESEARCH QUESTION ===\n{question}\n\n=== CANDIDATES ===\n{block}\n=== END ===\n\n"
        f"Which {k} candidates are most likely the paper's hypothesis, most likely first? Answer in JSON."
    )
    return RenderedTask(system=template.system.format(k=k), user=user, block_a=block, block_b="")
