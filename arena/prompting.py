"""How the shared core's literature neighbourhoods and proposals read in a prompt (Lit2Test's judges, its generation
runs, the diagnostic controls): one rendering, so every protocol that shows them shows them alike.

``context_format`` is part of a prompt template's version: format 2 lists each paper's source id (the OpenReview id
proposals cite, e.g. "the RBM method from 7UHlKybsQM") so that grounding can be checked; format 1 renders as it always
did, so an old run's page still shows the prompts its judge received. A source id names a paper, never a model: the
blindness gate sees it like any other context text.
"""

from __future__ import annotations

import threading
from typing import Any

from .aliases import Matcher
from .blindness import proposal_blind_content
from .models import Context, Proposal
from .schemas import SIX_FIELD


def render_context(context: Context, *, context_format: int = 1) -> str:
    """The context block of a prompt; ``context_format`` 2 adds each paper's source id."""
    papers = []
    for i, paper in enumerate(context.papers.all(), start=1):
        source = f" (source id {paper.source_paper_id})" if context_format >= 2 and paper.source_paper_id else ""
        papers.append(
            f"Paper {i}{source}: {paper.title}\nAbstract: {paper.abstract}\nReviewer-noted limitation: {paper.limitation}"
        )
    return (
        f"=== CONTEXT ===\nResearch context: {context.research_context}\nOpen problem: {context.open_problem}\n"
        f"Resource constraint: {context.resource_constraint}\nTask: {context.task_instruction}\n\n" + "\n\n".join(papers)
    )


def render_proposal(label: str, proposal: Proposal, matcher: Matcher | None = None) -> str:
    """A proposal as a judge sees it: its blind content, every model alias redacted (``arena.blindness``)."""
    content = proposal_blind_content(proposal, matcher=matcher)
    fields = "\n".join(f"[{name}]\n{content.get(name, '')}" for name in SIX_FIELD.fields)
    return f"=== PROPOSAL {label} ===\n{fields}"


def _same(a: Any, b: Any) -> bool:  # noqa: ANN401
    """Equal and of the same types all the way down (``==`` alone takes ``True`` for ``1`` and ``1`` for ``1.0``, which
    render differently)."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is str:
        return a == b
    if kind is dict:
        if a.keys() != b.keys():
            return False
        for key, value in a.items():
            if not _same(value, b[key]):
                return False
        return True
    if kind is list or kind is tuple:
        if len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):
            if not _same(x, y):
                return False
        return True
    return a == b


class ProposalBlocks:
    """Rendered proposal blocks remembered across the claims of a judge run (a driver renders each proposal about once
    per claim it appears in, and both orders show it): a block is rendered again unless the label, the proposal's
    content, blind content, blind digest, owner and the matcher are all what they were, compared by value (content by
    equality, the matcher by identity), so a reused block is exactly what :func:`render_proposal` would give."""

    MEMORY = 20_000  # blocks remembered at most: bounded memory on huge benchmarks

    def __init__(self) -> None:
        self.blocks: dict[tuple[int, str], tuple[Any, ...]] = {}
        self.lock = threading.Lock()

    def render(self, label: str, proposal: Proposal, matcher: Matcher | None = None) -> str:
        if proposal.pk is None:
            return render_proposal(label, proposal, matcher)
        inputs = (proposal.content, proposal.blind_content, proposal.blind_digest, proposal.participant.name, matcher)
        key = (proposal.pk, label)
        known = self.blocks.get(key)
        if known is not None and known[4] is matcher and _same(known[:4], inputs[:4]):
            return known[5]
        block = render_proposal(label, proposal, matcher)
        with self.lock:
            if len(self.blocks) >= self.MEMORY:
                self.blocks.clear()
            self.blocks[key] = (*inputs, block)
        return block
