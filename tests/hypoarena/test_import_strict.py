"""Strict import rules (issue 22, item 7): a verdict's reasons and raw answer and a case's texts have a length limit
(the reasons' and the case texts' taken from their columns); a rubric score is a JSON integer (not 4.0, true or "4").
Each problem names the file, line and field, what is wrong and the limit; nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from hypoarena.models import ArenaVerdict

from . import helpers as h
from .test_import_export import failure, run

pytestmark = pytest.mark.django_db

# The documented limits: reasons 50,000 characters (hypoarena.models), a raw answer 200,000
# (hypoarena.import_lines), a context or reference conclusion 100,000 (hypoarena.models).
REASONS_LIMIT = 50_000
RAW_LIMIT = 200_000
CONTEXT_LIMIT = 100_000


def test_verdict_reasons_longer_than_their_column_are_refused(tmp_path: Path) -> None:
    verdicts = h.verdicts()
    verdicts[1]["reasons"] = "r" * (REASONS_LIMIT + 1)
    verdicts[2]["reasons"] = "r" * 5_000_000  # the measured case: 5 MB was accepted
    problems = failure("arena-x", h.folder(tmp_path / "in", verdicts=verdicts))
    assert problems == [
        f"  verdicts.jsonl, line 2: reasons: has {REASONS_LIMIT + 1} characters; the limit is {REASONS_LIMIT}",
        f"  verdicts.jsonl, line 3: reasons: has 5000000 characters; the limit is {REASONS_LIMIT}",
    ]


def test_a_raw_answer_and_case_texts_longer_than_their_limit_are_refused(tmp_path: Path) -> None:
    verdicts = h.verdicts()
    verdicts[4]["raw"] = "x" * (RAW_LIMIT + 1)
    cases = h.cases()
    cases[0]["reference_conclusion"] = "c" * (CONTEXT_LIMIT + 1)
    cases[1]["context"] = "c" * (CONTEXT_LIMIT + 1)
    problems = failure("arena-x", h.folder(tmp_path / "in", cases=cases, verdicts=verdicts))
    assert problems == [
        f"  cases.jsonl, line 1: reference_conclusion: has {CONTEXT_LIMIT + 1} characters; the limit is {CONTEXT_LIMIT}",
        f"  cases.jsonl, line 2: context: has {CONTEXT_LIMIT + 1} characters; the limit is {CONTEXT_LIMIT}",
        f"  verdicts.jsonl, line 5: raw: has {RAW_LIMIT + 1} characters; the limit is {RAW_LIMIT}",
    ]


def test_reasons_at_the_limit_are_imported_whole(tmp_path: Path) -> None:
    verdicts = h.verdicts()
    verdicts[0]["reasons"] = "r" * REASONS_LIMIT
    run("arena-x", h.folder(tmp_path / "in", verdicts=verdicts))
    assert [len(r) for r in ArenaVerdict.objects.values_list("reasons", flat=True) if r] == [REASONS_LIMIT]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (4.0, "must be a whole number from 1 to 5, written without a decimal point (4), got 4.0"),
        (True, "must be a whole number from 1 to 5, got true"),
        ("4", 'must be a whole number from 1 to 5, got "4"'),
    ],
    ids=["float", "true", "text"],
)
def test_a_rubric_score_must_be_a_json_integer(tmp_path: Path, value: object, message: str) -> None:
    rubric = h.rubric()
    rubric[0]["pairs"][1]["l"] = value
    rubric[0]["b"] = value
    rubric[0]["d"] = value
    problems = failure("arena-x", h.folder(tmp_path / "in", rubric=rubric))
    assert problems == [
        f"  rubric.jsonl, line 1: pairs[1].l: {message}",
        f"  rubric.jsonl, line 1: b: {message}",
        f"  rubric.jsonl, line 1: d: {message.replace('to 5', 'to 5 or null')}",
    ]
