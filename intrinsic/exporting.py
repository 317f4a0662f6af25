"""The export of an Intrinsic-scoring benchmark as the JSONL files of ``FORMAT.md``, the files the import reads.

Importing what it writes into a new benchmark reproduces the benchmark, and exporting that gives the same bytes: the
export is how a benchmark is shared, so it writes only what the import accepts (whole papers per scorer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.jsonl import jsonl_write
from arena.models import Benchmark
from arena.protocols import protocol_phrase

from .importing import FILES, IntrinsicError
from .models import PROTOCOL, Candidate, CandidateScore, ListwiseRanking, Paper, Scorer


def intrinsic_export(*, benchmark: Benchmark, directory: Path) -> dict[str, int]:
    """Write the benchmark's files (``FORMAT.md``) into ``directory``; returns the lines written per file. Importing
    them into a new benchmark reproduces it, and exporting that gives the same bytes.

    A paper a scorer scored only in part (a scoring run that ended with failed candidates; the report leaves it out for
    that scorer) is not written: a score file names whole papers. ``"partial (scorer, paper) left out"`` counts them
    (resume the run to complete them)."""
    if benchmark.protocol != PROTOCOL:
        raise IntrinsicError(f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not an Intrinsic-scoring one")
    directory.mkdir(parents=True, exist_ok=True)
    candidates: dict[int, list[dict[str, Any]]] = {}
    for c in Candidate.objects.filter(paper__benchmark=benchmark).order_by("paper_id", "position"):
        candidates.setdefault(c.paper_id, []).append({"id": c.external_id, "text": c.text, "gold": c.gold})
    papers = Paper.objects.filter(benchmark=benchmark).order_by("discipline", "external_id")
    scores = (
        CandidateScore.objects.filter(scorer__benchmark=benchmark)
        .select_related("scorer", "candidate__paper")
        .order_by("scorer__name", "candidate__paper__discipline", "candidate__paper__external_id", "candidate__position")
    )
    rankings = (
        ListwiseRanking.objects.filter(scorer__benchmark=benchmark)
        .select_related("scorer", "paper")
        .order_by("scorer__name", "paper__discipline", "paper__external_id")
    )
    scored: dict[tuple[int, int], int] = {}
    for scorer_id, paper_id in CandidateScore.objects.filter(scorer__benchmark=benchmark).values_list(
        "scorer_id", "candidate__paper_id"
    ):
        scored[(scorer_id, paper_id)] = scored.get((scorer_id, paper_id), 0) + 1
    partial = {key for key, n in scored.items() if n != len(candidates.get(key[1], []))}
    scores = [x for x in scores if (x.scorer_id, x.candidate.paper_id) not in partial]

    def endpoint(scorer: Scorer) -> dict[str, str]:
        return {"endpoint": scorer.endpoint} if scorer.endpoint else {}

    records: dict[str, list[dict[str, Any]]] = {
        "papers": [
            {
                "paper_id": p.external_id,
                "discipline": p.discipline,
                "background": p.background,
                "question": p.question,
                "candidates": candidates.get(p.pk, []),
            }
            for p in papers
        ],
        "scores": [
            {
                "paper_id": x.candidate.paper.external_id,
                "candidate_id": x.candidate.external_id,
                "scorer": x.scorer.name,
                "model": x.scorer.model,
                "criterion": x.scorer.criterion,
                "mean": x.mean,
                "sum": x.total,
                "tokens": x.tokens,
            }
            | endpoint(x.scorer)
            for x in scores
        ],
        "listwise": [
            {"paper_id": r.paper.external_id, "scorer": r.scorer.name, "model": r.scorer.model}
            | ({"top": r.top} if r.status == ListwiseRanking.Status.ACCEPTED else {"status": r.status, "reason": r.reason})
            | endpoint(r.scorer)
            for r in rankings
        ],
    }
    written = {}
    for kind in FILES:
        if records[kind] or kind == "papers":
            written[f"{kind}.jsonl"] = jsonl_write(directory / f"{kind}.jsonl", records[kind])
    if partial:
        written["partial (scorer, paper) left out"] = len(partial)
    return written
