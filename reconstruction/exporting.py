"""The export of a Reconstruction benchmark as the JSONL files of ``FORMAT.md``, the files the import reads.

References carry their anonymous id, so importing the export reproduces the same frozen bibliographies (same hashes):
the export is how a benchmark is shared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.jsonl import jsonl_write
from arena.models import Benchmark
from arena.protocols import protocol_phrase

from .import_lines import format_date
from .importing import FILES
from .models import PROTOCOL, Hypothesis, MatchLabel, Reference, SeedPaper, TournamentRecord
from .services import ReconstructionError


def selection_lines(benchmark: Benchmark) -> list[dict[str, Any]]:
    """The Swiss selections' matches as tournament.jsonl lines (FORMAT.md), one per match, with every judge's votes."""
    from .models import SwissMatch, SwissVote

    votes: dict[int, list[dict[str, str]]] = {}
    for v in SwissVote.objects.filter(match__tournament__selection__benchmark=benchmark, status="accepted").order_by(
        "judge", "order"
    ):
        votes.setdefault(v.match_id, []).append({"judge": v.judge, "order": v.order, "winner": v.winner})
    matches = (
        SwissMatch.objects.filter(tournament__selection__benchmark=benchmark)
        .select_related("tournament__selection__participant", "tournament__seed_paper", "a__participant", "b__participant")
        .order_by(
            "tournament__selection__participant__name",
            "tournament__seed_paper__external_id",
            "tournament__slot",
            "round",
            "a__participant__name",
        )
    )
    return [
        {
            "seed_id": m.tournament.seed_paper.external_id,
            "selection": m.tournament.selection.participant.name,
            "slot": m.tournament.slot,
            "round": m.round,
            "a": m.a.participant.name,
            "b": m.b.participant.name if m.b else None,
            "votes": votes.get(m.pk, []),
        }
        for m in matches
    ]


def reconstruction_export(*, benchmark: Benchmark, directory: Path) -> dict[str, int]:
    """Write the benchmark's files (``FORMAT.md``) into ``directory``; returns the lines written per file. References
    carry their anonymous id, so importing the export reproduces the same frozen bibliographies (same hashes)."""
    if benchmark.protocol != PROTOCOL:
        raise ReconstructionError(f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not a Reconstruction one")
    directory.mkdir(parents=True, exist_ok=True)
    seeds = SeedPaper.objects.filter(benchmark=benchmark).order_by("external_id")
    refs = Reference.objects.filter(seed__benchmark=benchmark).select_related("seed").order_by("seed__external_id", "original_id")
    hyps = (
        Hypothesis.objects.filter(seed__benchmark=benchmark)
        .select_related("seed", "participant", "origin__participant")
        .order_by("seed__external_id", "participant__name", "slot")
    )
    labels = (
        MatchLabel.objects.filter(hypothesis__seed__benchmark=benchmark)
        .select_related("hypothesis__seed", "hypothesis__participant")
        .order_by("source", "judge", "hypothesis__seed__external_id", "hypothesis__participant__name", "hypothesis__slot")
    )
    records: dict[str, list[dict[str, Any]]] = {
        "seeds": [
            {"seed_id": s.external_id, "domain": s.domain, "title": s.title, "abstract": s.abstract, "t0": s.t0.isoformat()}
            for s in seeds
        ],
        "references": [
            {
                "seed_id": r.seed.external_id,
                "ref_id": r.original_id,
                "anon_id": r.anon_id,
                "title": r.title,
                "abstract": r.abstract,
                "published": format_date(r.published, r.published_precision),
            }
            for r in refs
        ],
        "hypotheses": [
            {
                "seed_id": h.seed.external_id,
                "model": h.participant.name,
                "family": h.family,
                "slot": h.slot,
                "title": h.title,
                "summary": h.summary,
                "cited": h.cited,
            }
            | ({} if h.valid else {"valid": False, "invalid_reason": h.invalid_reason})
            | ({"selected_from": {"model": h.origin.participant.name, "slot": h.origin.slot}} if h.origin else {})
            for h in hyps
        ],
        "labels": [
            {
                "seed_id": x.hypothesis.seed.external_id,
                "model": x.hypothesis.participant.name,
                "slot": x.hypothesis.slot,
                "judge": x.judge,
                "judge_family": x.judge_family,
                "run_label": x.source,
                "label": x.label,
            }
            | ({"recused": True} if x.recused else {})
            | ({"reason": x.reason} if x.reason else {})
            for x in labels
        ],
        "tournament": [
            t.record
            for t in TournamentRecord.objects.filter(seed__benchmark=benchmark).order_by("seed__external_id", "line", "id")
        ]
        + selection_lines(benchmark),
    }
    written = {}
    for kind in FILES:
        if records[kind] or kind in ("seeds", "references"):
            # Tournament lines are free-form objects: PostgreSQL's jsonb does not keep their key order, so they are
            # written with sorted keys, and an export of an import is the same file on every database.
            written[f"{kind}.jsonl"] = jsonl_write(directory / f"{kind}.jsonl", records[kind], sort_keys=kind == "tournament")
    return written
