"""Small hand-made HypoArena files for the tests: two domains (one singleton), three cases, three models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def pair(n: int) -> dict[str, str]:
    return {"hypothesis": f"Hypothesis {n}: the queue grows with load.", "evidence": f"Evidence {n}: the logs show it."}


def cases() -> list[dict[str, Any]]:
    return [
        {
            "case_id": "c1",
            "domain": "ops",
            "context": "The service slowed down on Monday.",
            "reference_conclusion": "A cache expired.",
        },
        {"case_id": "c2", "domain": "ops", "singleton": False, "context": "Disk usage doubled overnight."},
        {"case_id": "s1", "domain": "safety", "singleton": True, "context": "An alarm did not sound during the shift change."},
    ]


def submissions() -> list[dict[str, Any]]:
    rows = []
    for case_id, k in (("c1", 2), ("c2", 3), ("s1", 1)):
        for model in ("Alpha", "Beta", "Ref"):
            row: dict[str, Any] = {"case_id": case_id, "model": model, "pairs": [pair(n) for n in range(k)]}
            if model == "Ref":
                row["reference"] = True
            rows.append(row)
    return rows


def verdict(case_id: str, a: str, b: str, order: str, level: str, **extra: Any) -> dict[str, Any]:  # noqa: ANN401
    return {
        "case_id": case_id,
        "model_a": a,
        "model_b": b,
        "order": order,
        "verdict": level,
        "judge": "judge-x",
        "run_label": "r1",
    } | extra


def verdicts() -> list[dict[str, Any]]:
    return [
        verdict("c1", "Alpha", "Beta", "original", "A>B"),
        verdict("c1", "Beta", "Alpha", "reverse", "B>>A"),
        verdict("c1", "Ref", "Alpha", "original", "A=B"),
        verdict("s1", "Beta", "Ref", "reverse", "A>>B"),
        verdict("s1", "Ref", "Beta", "original", None, status="invalid", raw="I cannot decide"),
    ]


def rubric() -> list[dict[str, Any]]:
    return [
        {
            "case_id": "c1",
            "model": "Alpha",
            "judge": "judge-x",
            "run_label": "rub",
            "pairs": [{"g": 5, "l": 4, "j": 4}, {"g": 3, "l": 3, "j": 2}],
            "b": 4,
            "d": 3,
            "u": 5,
        },
        {
            "case_id": "s1",
            "model": "Ref",
            "judge": "judge-x",
            "run_label": "rub",
            "pairs": [{"g": 2, "l": 3, "j": 4}],
            "b": 3,
            "d": None,
            "u": 2,
        },
    ]


def write(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def folder(tmp: Path, **overrides: list[Any]) -> Path:
    """A folder with the four files; ``overrides`` replaces the lines of a file (an empty list leaves it out)."""
    rows = {"cases": cases(), "submissions": submissions(), "verdicts": verdicts(), "rubric": rubric()} | overrides
    tmp.mkdir(parents=True, exist_ok=True)
    for kind, lines in rows.items():
        if lines:
            write(tmp / f"{kind}.jsonl", lines)
    return tmp
