"""The style counts of the texts a Lit2Test judge compared, for the leaderboard's style control (issue 26).

A judged side is a participant's proposal on the pair's context: its six fields (:data:`arena.schemas.SIX_FIELD`)
as the judge saw them, i.e. the blind (alias-redacted) content when there is one, else the content as received.
Cited papers are the context's papers named by their source (OpenReview) id in the text, as the release's
proposals cite them (``"HaX48yksVL shows that …"``); a context without ids falls back to bracketed markers
(:func:`arena.stats.style_text.style_features`).

Two queries per benchmark (its proposals, its papers' ids), never one per judgment; the counts are computed once
per proposal, not per judgment.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from arena.models import JudgeRun, Paper, Proposal
from arena.schemas import PROPOSAL_SCHEMAS, SIX_FIELD
from arena.stats.style_text import FEATURES, style_features


def proposal_text(content: Any, schema: str = SIX_FIELD.name) -> str:  # noqa: ANN401 (a JSON value)
    """A proposal's fields as one text, in the schema's order (other keys after them), blank lines between."""
    if isinstance(content, str):
        return content
    if not isinstance(content, dict):
        return ""
    fields = PROPOSAL_SCHEMAS[schema].fields if schema in PROPOSAL_SCHEMAS else ()
    keys = [f for f in fields if f in content] + sorted(k for k in content if k not in fields)
    return "\n\n".join(str(content[k]) for k in keys if content[k] is not None)


def run_side_features(run: JudgeRun) -> dict[tuple[str, str], dict[str, float]]:
    """``{(context external id, participant name): {feature: count}}`` for every proposal of the run's benchmark."""
    papers: dict[str, list[str]] = defaultdict(list)
    for context_id, source_id in Paper.objects.filter(context__benchmark_id=run.benchmark_id).values_list(
        "context__external_id", "source_paper_id"
    ):
        if source_id:
            papers[context_id].append(source_id)
    rows = list(
        Proposal.objects.filter(context__benchmark_id=run.benchmark_id).values_list(
            "context__external_id", "participant__name", "schema", "blind_content", "content"
        )
    )
    texts = [proposal_text(blind if blind is not None else content, schema) for _c, _p, schema, blind, content in rows]
    counts = style_features(texts, [papers.get(context) or None for context, *_ in rows])
    return {(context, name): {f: float(counts[f][i]) for f in FEATURES} for i, (context, name, *_) in enumerate(rows)}
