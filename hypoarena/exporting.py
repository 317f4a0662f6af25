"""The export of a HypoArena benchmark as the JSONL files of ``FORMAT.md``, the files the import reads.

Lines are written in a fixed order and every orientation a verdict fixed is in the verdicts' ``model_a``, so that
importing the export into a new benchmark gives the same benchmark (the round-trip test): the export is how a
benchmark is shared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from arena.jsonl import jsonl_write
from arena.models import Benchmark
from arena.protocols import protocol_phrase

from .importing import BATCH
from .models import PROTOCOL, ArenaVerdict, Case, RubricScore, Submission
from .services import HypoArenaError


def hypoarena_export(*, benchmark: Benchmark, directory: Path) -> dict[str, int]:
    """Write the benchmark's files (``FORMAT.md``) into ``directory``: cases and submissions always, verdicts and
    rubric when there are any. Returns the lines written per file. Importing them into a new benchmark gives the
    same benchmark (the round-trip test), because lines are written in a fixed order and every orientation a
    verdict fixed is in the verdicts' ``model_a``."""
    if benchmark.protocol != PROTOCOL:
        raise HypoArenaError(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not a HypoArena one; export it with its own export"
        )
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}

    def write(kind: str, records: Iterable[Mapping[str, Any]], *, always: bool) -> None:
        rows = list(records)
        if rows or always:
            written[f"{kind}.jsonl"] = jsonl_write(directory / f"{kind}.jsonl", rows)

    cases = Case.objects.filter(benchmark=benchmark).select_related("domain").order_by("domain__name", "external_id")
    write(
        "cases",
        (
            {"case_id": c.external_id, "domain": c.domain.name, "singleton": c.domain.singleton, "context": c.context}
            | ({"reference_conclusion": c.reference_conclusion} if c.reference_conclusion else {})
            for c in cases
        ),
        always=True,
    )
    submissions = (
        Submission.objects.filter(case__benchmark=benchmark)
        .select_related("case", "participant")
        .order_by("case__external_id", "participant__name")
    )
    write(
        "submissions",
        (
            {"case_id": s.case.external_id, "model": s.participant.name, "reference": s.is_reference, "pairs": s.pairs}
            for s in submissions
        ),
        always=True,
    )
    names = dict(Submission.objects.filter(case__benchmark=benchmark).values_list("pk", "participant__name"))
    verdicts = (
        ArenaVerdict.objects.filter(run__benchmark=benchmark)
        .select_related("run", "match__case")
        .order_by(
            "run__judge_model",
            "run__label",
            "match__case__external_id",
            "match__first__participant__name",
            "match__second__participant__name",
            "order",
            "id",
        )
    )

    def verdict_record(v: ArenaVerdict) -> dict[str, Any]:
        first, second = names[v.match.first_id], names[v.match.second_id]
        a, b = (first, second) if v.order == "original" else (second, first)
        record = {
            "case_id": v.match.case.external_id,
            "model_a": a,
            "model_b": b,
            "order": v.order,
            "verdict": v.verdict,
            "judge": v.run.judge_model,
            "run_label": v.run.label,
        }
        if v.status != ArenaVerdict.Status.ACCEPTED:
            record["status"] = v.status
        return record | ({"reasons": v.reasons} if v.reasons else {}) | ({"raw": v.raw_response} if v.raw_response else {})

    write("verdicts", (verdict_record(v) for v in verdicts.iterator(chunk_size=BATCH)), always=False)
    scores = (
        RubricScore.objects.filter(run__benchmark=benchmark)
        .select_related("run", "submission__case", "submission__participant")
        .order_by("run__judge_model", "run__label", "submission__case__external_id", "submission__participant__name")
    )
    write(
        "rubric",
        (
            {
                "case_id": r.submission.case.external_id,
                "model": r.submission.participant.name,
                "judge": r.run.judge_model,
                "run_label": r.run.label,
                "pairs": [{"g": g, "l": ell, "j": j} for g, ell, j in zip(r.grounding, r.insight, r.justification, strict=True)],
                "b": r.breadth,
                "d": r.distinctness,
                "u": r.utility,
            }
            for r in scores
        ),
        always=False,
    )
    return written
