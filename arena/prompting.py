"""How the shared core's literature neighbourhoods and proposals read in a prompt (Lit2Test's judges, its generation
runs, the diagnostic controls): one rendering, so every protocol that shows them shows them alike.

``context_format`` is part of a prompt template's version: format 2 lists each paper's source id (the OpenReview id
proposals cite, e.g. "the RBM method from 7UHlKybsQM") so that grounding can be checked; format 1 renders as it always
did, so an old run's page still shows the prompts its judge received. A source id names a paper, never a model: the
blindness gate sees it like any other context text.
"""

from __future__ import annotations

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
