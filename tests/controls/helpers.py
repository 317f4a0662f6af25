"""Control lines built from the release sample's real proposals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.models import Benchmark, Proposal

SIX = ("literature_gap", "hypothesis", "minimal_test", "decisive_metric", "supporting_result", "falsifying_result")
TARGET_FIELD = {"grounding": "literature_gap", "decisive_metric": "decisive_metric", "falsifiability": "falsifying_result"}


def sources(benchmark: Benchmark, n: int = 2) -> list[Proposal]:
    """``n`` valid proposals of different contexts, in a fixed order."""
    found: list[Proposal] = []
    for p in (
        Proposal.objects.filter(context__benchmark=benchmark, validation_status="valid")
        .select_related("context", "participant")
        .order_by("context__external_id", "participant__name")
    ):
        if all(p.context_id != q.context_id for q in found):
            found.append(p)
        if len(found) == n:
            break
    return found


def line(
    source: Proposal, kind: str, target: str | None = None, *, control_id: str | None = None, **overrides: Any
) -> dict[str, Any]:
    content = dict(source.content)
    if kind in ("clear", "subtle", "sham") and target:
        content[TARGET_FIELD[target]] = f"A {kind} rewrite of the {target} field."
    if kind == "falsifier_off":
        content["falsifying_result"] = ""
    if kind == "naive":
        content = {f: f"Naive {f}." for f in SIX}
    row: dict[str, Any] = {
        "control_id": control_id or f"{source.context.external_id[:20]}:{source.participant.name}:{kind}:{target}",
        "kind": kind,
        "context_id": source.context.external_id,
        "source_model": source.participant.name,
        "target": target,
    }
    row |= {"prose": "Prose of " + " ".join(source.content[f] for f in SIX)} if kind == "rendering" else {"proposal": content}
    row.update(overrides)
    return row


def write(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def all_kinds(benchmark: Benchmark) -> list[dict[str, Any]]:
    """One line of every kind and target on two sources: 3 clear + 3 subtle + 3 sham + rendering + falsifier_off + naive
    on each."""
    rows = []
    for source in sources(benchmark, 2):
        for kind in ("clear", "subtle", "sham"):
            rows += [line(source, kind, t) for t in TARGET_FIELD]
        rows += [line(source, k) for k in ("rendering", "falsifier_off", "naive")]
    return rows
