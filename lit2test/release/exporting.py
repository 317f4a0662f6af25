"""Exporting a Lit2Test benchmark in the release formats (plus CSV copies), so that importing an export into an empty
database reproduces the benchmark; other apps add files through ``arena.extensions.export_file_register``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.csvsafe import csv_safe
from arena.extensions import export_files
from arena.jsonl import jsonl_write
from arena.models import Benchmark, OrderedJudgment, Proposal

from .reading import (
    BENCHMARK_FILE,
    CONTEXT_OPTIONAL_FIELDS,
    CONTEXT_TEXT_FIELDS,
    PAPER_SHORT_FIELDS,
    PAPER_TEXT_FIELDS,
    fold_label,
)


def export_rows(benchmark: Benchmark) -> dict[str, list[dict[str, Any]]]:
    """The benchmark as release-format rows: contexts, proposals, judgments, folded cases."""
    contexts = []
    for context in benchmark.contexts.filter(has_text=True).select_related("batch").prefetch_related("papers"):
        row: dict[str, Any] = {"context_id": context.external_id}
        row |= {k: getattr(context, k) for k in (*CONTEXT_OPTIONAL_FIELDS, *CONTEXT_TEXT_FIELDS)}
        row["batch"] = context.batch.name if context.batch else None
        row["papers"] = [
            {"title": p.title, "paper_id": p.source_paper_id}
            | {k: getattr(p, k) for k in (*PAPER_TEXT_FIELDS, *PAPER_SHORT_FIELDS)}
            | p.metadata
            for p in context.papers.all()
        ]
        row["pool_metadata"] = context.metadata
        contexts.append(row)
    proposals = [
        {"context_id": p.context.external_id, "model": p.participant.name, "schema": p.schema}
        | p.content
        | {"validation_status": p.validation_status, "validation_errors": p.validation_errors}
        | p.release_metadata
        for p in Proposal.objects.filter(context__benchmark=benchmark).select_related("context", "participant")
    ]
    judgments = []
    folded: dict[tuple[int, int], dict[str, Any]] = {}
    queryset = (
        OrderedJudgment.objects.filter(run__benchmark=benchmark)
        .select_related("run", "pair__context__batch", "pair__participant_a", "pair__participant_b", "shown_a", "winner")
        .order_by("run_id", "pair__internal_key", "order", "id")
    )
    for j in queryset:
        pair, run = j.pair, j.run
        models = sorted((pair.participant_a.name, pair.participant_b.name))
        winning = "tie" if j.is_tie else (j.winner.name if j.winner else None)
        row = {
            "pair_id": pair.internal_key,
            "pair_public_id": pair.public_id,
            "order": j.order,
            "context_id": pair.context.external_id,
            "batch": pair.context.batch.name if pair.context.batch else None,
            "judge_model": run.judge_model,
            "run_label": run.label,
            "provider": run.provider,
            "prompt_version": run.prompt_version,
            "run_type": run.run_type,
            "is_canonical": run.is_canonical,
            "status": j.status,
            "model_pair": models,
            "system_a": j.shown_a.name if j.shown_a else None,
            "system_b": (models[1] if models[0] == j.shown_a.name else models[0]) if j.shown_a else None,
            "winner": ("tie" if j.is_tie else j.verdict) if j.verdict else None,
            "winning_system": winning,
            "confidence": j.confidence,
            "main_reason": j.main_reason,
            "weakness_a": j.weakness_a,
            "weakness_b": j.weakness_b,
            "judge_errors": j.errors,
            "attempt": j.attempt,
            "elapsed_seconds": j.latency_seconds,
            "prompt_tokens": j.prompt_tokens,
            "completion_tokens": j.completion_tokens,
            "raw_response": j.raw_response,
            "metadata": j.metadata,
        }
        judgments.append(row)
        if j.status == OrderedJudgment.Status.ACCEPTED:
            case = folded.setdefault(
                (run.pk, pair.pk),
                {
                    "judge_model": run.judge_model,
                    "run_label": run.label,
                    "pair_id": pair.internal_key,
                    "context_id": pair.context.external_id,
                    "batch": row["batch"],
                    "model_pair": models,
                    "original_winner": None,
                    "reverse_winner": None,
                },
            )
            case[f"{j.order}_winner"] = winning
    cases = []
    for case in folded.values():
        if case["original_winner"] is None or case["reverse_winner"] is None:
            continue  # an unfinished case folds to nothing yet
        case["stability_label"], case["folded_winner"] = fold_label(case["original_winner"], case["reverse_winner"])
        cases.append(case)
    return {"contexts": contexts, "proposals": proposals, "judgments": judgments, "folded_cases": cases}


def _csv_cell(key: str, value: object) -> object:
    """A list as a person reads it in a spreadsheet, not as a Python repr: the model pair ``["Alpha 1", "Beta-2"]``
    (sorted names in the JSONL) as "Alpha 1 vs Beta-2", a list of errors or flags joined by "; "."""
    if not isinstance(value, list | tuple):
        return value
    return (" vs " if key == "model_pair" else "; ").join(str(item) for item in value)


def release_export(*, benchmark: Benchmark, directory: Path) -> dict[str, int]:
    """Write the benchmark to ``directory`` as JSONL (importable) and CSV. Returns row counts.

    The JSONL files hold the text exactly; the CSV copies are for spreadsheets, so a text cell a
    spreadsheet would run as a formula is neutralised (``csvsafe``). The importer reads only JSONL.
    """
    import pandas as pd  # heavy; only needed here

    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        k: getattr(benchmark, k)
        for k in ("name", "version", "description", "canonical_judge", "verdict_rule", "proposal_schema", "orientation_seed")
    }
    (directory / BENCHMARK_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    rows = export_rows(benchmark)
    counts = {}
    for name, table in rows.items():
        jsonl_write(directory / f"{name}.jsonl", table)
        if name != "contexts":
            table = [{key: _csv_cell(key, value) for key, value in row.items()} for row in table]
            frame = pd.json_normalize(table) if table else pd.DataFrame()
            # Text cells only: numbers (a negative latency, say) stay numbers.
            text = frame.select_dtypes(include=["object", "string"]).columns
            frame[text] = frame[text].map(csv_safe)
            frame.columns = [csv_safe(c) for c in frame.columns]
            # CRLF rows, as RFC 4180 says: the csv writer then quotes every cell holding a lone "\r",
            # which a reader would otherwise take for the end of the row.
            frame.to_csv(directory / f"{name}.csv", index=False, lineterminator="\r\n")
        counts[name] = len(table)
    for name, make_rows in export_files.items():
        table = make_rows(benchmark)
        if table:
            jsonl_write(directory / f"{name}.jsonl", table)
            counts[name] = len(table)
    return counts
