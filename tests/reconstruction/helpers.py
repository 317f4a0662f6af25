"""Small hand-made Reconstruction files: one seed whose bibliography is built to leak, one with too few references."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SEED_TITLE = "Strain gradients stabilise cubic perovskite films"
SEED_ABSTRACT = (
    "We show that a vertical strain gradient stabilises the cubic phase of lead halide perovskite thin films at room "
    "temperature, and that the gradient can be tuned by the substrate miscut angle during growth."
)


def seeds() -> list[dict[str, Any]]:
    return [
        {"seed_id": "s1", "domain": "materials", "title": SEED_TITLE, "abstract": SEED_ABSTRACT, "t0": "2023-05-10"},
        {
            "seed_id": "s2",
            "domain": "neuro",
            "title": "Replay orders place cells",
            "abstract": "Hippocampal replay sets the order of place cells.",
            "t0": "2022-01-01",
        },
    ]


def references() -> list[dict[str, Any]]:
    return [
        {
            "seed_id": "s1",
            "ref_id": "W100",
            "anon_id": "R3",
            "title": "Phase transitions in halide perovskites",
            "abstract": "Temperature drives tetragonal to cubic transitions.",
            "published": "2019-02-01",
        },
        {
            "seed_id": "s1",
            "ref_id": "W101",
            "anon_id": "R1",
            "title": "Substrate miscut and epitaxy",
            "abstract": "Miscut angles change step density.",
            "published": "2020-07",
        },
        {
            "seed_id": "s1",
            "ref_id": "W102",
            "anon_id": "R6",
            "title": "Flexoelectric effects in oxides",
            "abstract": "Strain gradients polarise oxides. doi:10.1038/nmat1234 and https://example.org/x, Smith et al. 2018",
            "published": "2021",
        },
        {
            "seed_id": "s1",
            "ref_id": "W103",
            "anon_id": "R2",
            "title": "A same-day preprint",
            "abstract": "Cubic films at room temperature.",
            "published": "2023-05-10",
        },
        {
            "seed_id": "s1",
            "ref_id": "W104",
            "anon_id": "R5",
            "title": "An undated note",
            "abstract": "Notes on films.",
            "published": None,
        },
        {
            "seed_id": "s1",
            "ref_id": "W105",
            "anon_id": "R4",
            "title": "Extended version",
            "abstract": "In this extended work: " + SEED_ABSTRACT,
            "published": "2022-01-03",
        },
        {
            "seed_id": "s1",
            "ref_id": "W106",
            "anon_id": "R7",
            "title": "Year of the seed",
            "abstract": "Only a year is known.",
            "published": "2023",
        },
        {
            "seed_id": "s2",
            "ref_id": "N1",
            "title": "Theta sequences",
            "abstract": "Sequences within theta cycles.",
            "published": "2015-03-03",
        },
        {
            "seed_id": "s2",
            "ref_id": "N2",
            "title": "Sharp wave ripples",
            "abstract": "Ripples during rest.",
            "published": "2016-03-03",
        },
        {"seed_id": "s2", "ref_id": "N3", "title": "Late work", "abstract": "After the seed.", "published": "2022-02-01"},
    ]


def hypotheses() -> list[dict[str, Any]]:
    rows = []
    for model, family in (("Alpha", "alpha"), ("Beta", "beta")):
        for slot in range(1, 6):
            rows.append(
                {
                    "seed_id": "s1",
                    "model": model,
                    "family": family,
                    "slot": slot,
                    "title": f"{model} idea {slot}",
                    "summary": f"Summary {slot} of {model}.",
                    "cited": ["R3", "R1"] if slot % 2 else ["R6"],
                }
            )
    rows[-1] = {
        "seed_id": "s1",
        "model": "Beta",
        "family": "beta",
        "slot": 5,
        "valid": False,
        "invalid_reason": "schema: no cited reference after 2 retries",
    }
    return rows


def labels() -> list[dict[str, Any]]:
    return [
        {
            "seed_id": "s1",
            "model": "Alpha",
            "slot": 1,
            "judge": "Gamma-J",
            "judge_family": "gamma",
            "run_label": "m1",
            "label": "match",
            "reason": "same mechanism",
        },
        {
            "seed_id": "s1",
            "model": "Alpha",
            "slot": 2,
            "judge": "Gamma-J",
            "judge_family": "gamma",
            "run_label": "m1",
            "label": "no_match",
        },
        {
            "seed_id": "s1",
            "model": "Alpha",
            "slot": 1,
            "judge": "Alpha-J",
            "judge_family": "alpha",
            "run_label": "m2",
            "label": None,
            "recused": True,
        },
        {
            "seed_id": "s1",
            "model": "Beta",
            "slot": 1,
            "judge": "Alpha-J",
            "judge_family": "alpha",
            "run_label": "m2",
            "label": "no_match",
        },
    ]


def tournament() -> list[dict[str, Any]]:
    return [
        {
            "seed_id": "s1",
            "slot": 1,
            "round": 1,
            "a": "Alpha",
            "b": "Beta",
            "judge": "Gamma-J",
            "order": "original",
            "winner": "A",
        }
    ]


def write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def folder(tmp: Path, **overrides: list[Any]) -> Path:
    """A folder with the five files; ``overrides`` replaces a file's lines (an empty list leaves the file out)."""
    rows = {
        "seeds": seeds(),
        "references": references(),
        "hypotheses": hypotheses(),
        "labels": labels(),
        "tournament": tournament(),
    } | overrides
    tmp.mkdir(parents=True, exist_ok=True)
    for kind, lines in rows.items():
        if lines:
            write(tmp / f"{kind}.jsonl", lines)
    return tmp
