"""The import's fast paths read exactly what the checked paths read (issue 10, item 6).

``folded_line_plain`` reads a folded line with type tests only and must decline (None) whatever the checked reader
would report or read differently; ``rows_insert`` serialises a JSON object shared by many rows once, and each
row stores it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.bulk import rows_insert
from arena.jsonl import Ref
from arena.models import CanonicalPair, OrderedJudgment
from lit2test.release import TIE, Problem, release_import
from lit2test.release.reading import folded_limits, folded_line_checked, folded_line_plain

from . import builders as b

CTX = "ctx_001__v1"


def _line(**changes: Any) -> dict[str, Any]:
    record = b.folded(CTX, "Alpha 1", "Beta-2", "Alpha 1", "Beta-2")
    for key, value in changes.items():
        if value is _ABSENT:
            record.pop(key)
        else:
            record[key] = value
    return record


_ABSENT = object()


def test_a_plain_line_reads_as_written() -> None:
    expected = (
        b.pair_id(CTX, "Alpha 1", "Beta-2"),
        CTX,
        ("Alpha 1", "Beta-2"),
        "b1",
        {"original": "Alpha 1", "reverse": "Beta-2"},
        {"original": "high", "reverse": "medium"},
        "frozen_original_source",
    )
    assert folded_line_plain(_line(), folded_limits()) == expected
    # Unsorted names are sorted; "TIE" in any case is a tie; a blank batch is none.
    tie = _line(model_pair=["Beta-2", "Alpha 1"], gemini_original_winner="TIE", batch=" ", stability_label="order-unstable")
    assert folded_line_plain(tie, folded_limits()) == (
        expected[0],
        CTX,
        ("Alpha 1", "Beta-2"),
        None,
        {"original": TIE, "reverse": "Beta-2"},
        expected[5],
        expected[6],
    )


# Lines the checked reader accepts but reads through a conversion (a number for a text, null for a blank),
# and lines with a problem: the fast path must decline every one of them.
CONVERTED = [
    _line(batch=7),
    _line(gemini_original_confidence=None),
    _line(gemini_reverse_confidence=3),
]
WRONG = [
    _line(pair_id=None),
    _line(pair_id="   "),
    _line(pair_id="other__Alpha_1__vs__Beta-2"),
    _line(context_id=5),
    _line(model_pair=["Alpha 1"]),
    _line(model_pair=["Alpha 1", "Alpha 1"]),
    _line(model_pair=["Alpha 1", " "]),
    _line(model_pair=["Alpha 1", "B" * 201]),
    _line(batch="b" * 101),
    _line(gemini_original_winner="Gamma-3"),
    _line(gemini_original_winner=""),
    _line(gemini_reverse_winner=_ABSENT),
    _line(gemini_original_confidence="very very high"),
    _line(reverse_judgment_source={"x": 1}),
    _line(stability_label="order-stable"),
    _line(folded_winner="Alpha 1"),
    _line(folded_winner=None),
]


@pytest.mark.parametrize("record", CONVERTED + WRONG)
def test_the_fast_path_declines_what_the_checked_path_converts_or_refuses(record: dict[str, Any]) -> None:
    assert folded_line_plain(record, folded_limits()) is None


@pytest.mark.parametrize("record", WRONG)
def test_the_checked_path_reports_each_refused_line(record: dict[str, Any]) -> None:
    problems: list[Problem] = []
    folded_line_checked(record, Ref("f", 1), problems, clean=True)
    assert problems


SAME = [
    _line(),
    _line(gemini_reverse_winner="tie", stability_label="order-unstable"),
    _line(batch=""),
    _line(batch=None),
    _line(reverse_judgment_source=None),
    _line(reverse_judgment_source=" "),
    _line(gemini_original_confidence=_ABSENT, stability_label=_ABSENT, folded_winner=_ABSENT),
]


@pytest.mark.parametrize("record", SAME)
def test_where_the_fast_path_reads_a_line_the_checked_path_reads_the_same(record: dict[str, Any]) -> None:
    problems: list[Problem] = []
    assert folded_line_plain(record, folded_limits()) == folded_line_checked(record, Ref("f", 1), problems, clean=True)
    assert problems == []


@pytest.mark.django_db
def test_one_json_object_shared_by_many_rows_is_stored_in_each(tmp_path: Path) -> None:
    benchmark = release_import(directory=b.write(tmp_path, b.small_release())).benchmark
    run = benchmark.runs.create(label="shared", judge_model="Judge-Y", provider="recorded")
    pairs = list(CanonicalPair.objects.filter(benchmark=benchmark).order_by("pk").values_list("pk", flat=True))
    shared, other = {"reverse_judgment_source": "frozen"}, {"n": [1, 2]}
    rows = [
        (run.pk, pk, order, "accepted", True, meta) for pk in pairs for order, meta in (("original", shared), ("reverse", other))
    ]
    written = rows_insert(model=OrderedJudgment, fields=("run_id", "pair_id", "order", "status", "is_tie", "metadata"), rows=rows)
    assert written == 2 * len(pairs)
    stored = list(OrderedJudgment.objects.filter(run=run).values_list("order", "metadata"))
    assert len(stored) == written
    assert all(
        meta == ({"reverse_judgment_source": "frozen"} if order == "original" else {"n": [1, 2]}) for order, meta in stored
    )
