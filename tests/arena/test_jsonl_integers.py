"""The one integer rule of every import (``arena.jsonl.whole_number_problem``, used by ``Fields.integer``): a JSON
integer within the column's range. ``true`` (a bool is an int in Python), ``1.0`` and ``"1"`` are refused, each with a
message saying what is accepted (issue 22, item 7)."""

from __future__ import annotations

import pytest

from arena.jsonl import Fields, Problem, Ref, whole_number_problem
from arena.models import OrderedJudgment

ATTEMPT = (OrderedJudgment, "attempt")  # a PositiveSmallIntegerField: 0 to 32767 in PostgreSQL


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (3, None),
        (1, None),
        (5, None),
        (1.0, "must be a whole number from 1 to 5, written without a decimal point (1), got 1.0"),
        (True, "must be a whole number from 1 to 5, got true"),
        (False, "must be a whole number from 1 to 5, got false"),
        ("1", 'must be a whole number from 1 to 5, got "1"'),
        (1.5, "must be a whole number from 1 to 5, got 1.5"),
        (6, "must be a whole number from 1 to 5, got 6"),
        (6.0, "must be a whole number from 1 to 5, got 6.0"),
        ([1], "must be a whole number from 1 to 5, got array"),
    ],
)
def test_only_a_json_integer_in_range_is_a_whole_number(value: object, message: str | None) -> None:
    assert whole_number_problem(value, 1, 5) == message


def test_fields_integer_names_file_line_and_field_and_reads_the_column_s_range() -> None:
    record = {"a": 2, "b": 2.0, "c": True, "d": "2", "e": None}
    problems: list[Problem] = []
    f = Fields(record, Ref("judgments.jsonl", 7), problems)
    assert [f.integer(k, ATTEMPT, minimum=1, default=1) for k in "abcde"] == [2, 1, 1, 1, 1]
    assert f.integer("e", ATTEMPT, minimum=1, maximum=3, required=True) is None
    assert [str(p) for p in problems] == [
        "judgments.jsonl, line 7: b: must be a whole number from 1 to 32767, written without a decimal point (2), got 2.0",
        "judgments.jsonl, line 7: c: must be a whole number from 1 to 32767, got true",
        'judgments.jsonl, line 7: d: must be a whole number from 1 to 32767, got "2"',
        "judgments.jsonl, line 7: e: missing; a whole number from 1 to 3",
    ]
