"""The statistics' input frame, checked row by row against the hand-written verdicts of helpers.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.models import Benchmark, JudgeRun
from hypoarena.importing import hypoarena_import, import_files
from hypoarena.selectors import VERDICT_COLUMNS, benchmark_overview, rubric_rows, singleton_domains, verdict_frame

from . import helpers as h

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark(tmp_path: Path) -> Benchmark:
    return hypoarena_import(name="arena-x", files=import_files([h.folder(tmp_path)])).benchmark


def test_the_verdict_frame_has_one_row_per_accepted_ordered_verdict_in_the_match_s_orientation(benchmark: Benchmark) -> None:
    frame = verdict_frame(run=JudgeRun.objects.get(label="r1"))
    assert list(frame.columns) == VERDICT_COLUMNS
    # c1: Alpha is A in the original order (line 1), so first = Alpha; "Ref" vs "Alpha" original: first = Ref; s1's reverse
    # line shows Beta as A, so first = Ref. The invalid line is not a verdict.
    assert sorted(frame.itertuples(index=False, name=None)) == sorted(
        [
            ("ops", "c1", "Alpha", "Beta", "original", "A>B"),
            ("ops", "c1", "Alpha", "Beta", "reverse", "B>>A"),
            ("ops", "c1", "Ref", "Alpha", "original", "A=B"),
            ("safety", "s1", "Ref", "Beta", "reverse", "A>>B"),
        ]
    )
    assert singleton_domains(benchmark=benchmark) == ("safety",)


def test_rubric_rows_and_the_overview(benchmark: Benchmark) -> None:
    rows = rubric_rows(run=JudgeRun.objects.get(label="rub"))
    assert rows == [
        {
            "domain": "ops",
            "singleton": False,
            "case": "c1",
            "model": "Alpha",
            "k": 2,
            "g": [5, 3],
            "l": [4, 3],
            "j": [4, 2],
            "b": 4,
            "d": 3,
            "u": 5,
        },
        {
            "domain": "safety",
            "singleton": True,
            "case": "s1",
            "model": "Ref",
            "k": 1,
            "g": [2],
            "l": [3],
            "j": [4],
            "b": 3,
            "d": None,
            "u": 2,
        },
    ]
    overview = benchmark_overview(benchmark=benchmark)
    assert [(d.name, d.singleton, d.n_cases, d.n_submissions) for d in overview["domains"]] == [
        ("ops", False, 2, 6),
        ("safety", True, 1, 3),
    ]
    assert overview["models"] == [
        {"name": "Alpha", "reference": False, "submissions": 3},
        {"name": "Beta", "reference": False, "submissions": 3},
        {"name": "Ref", "reference": True, "submissions": 3},
    ]
    assert [(r.label, r.n_accepted, r.n_invalid, r.n_scores) for r in overview["runs"]] == [("r1", 4, 1, 0), ("rub", 0, 0, 2)]
