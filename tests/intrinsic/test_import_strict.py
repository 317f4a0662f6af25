"""Strict import rules (issue 22, item 7): a listwise ranking's reason and a paper's texts have a length limit taken from
their columns; a token count is a JSON integer (not 4.0, true or "4"). Each problem names the file, line and field,
what is wrong and the limit; nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_import_export import folder, listwise, nothing_stored, papers, problems_of, scores

pytestmark = pytest.mark.django_db

# The documented limits (intrinsic.models): a reason 50,000 characters, a background, question or candidate 100,000.
REASON_LIMIT = 50_000
TEXT_LIMIT = 100_000


def test_a_listwise_reason_longer_than_its_column_is_refused(tmp_path: Path) -> None:
    rows = listwise()
    rows[1]["reason"] = "r" * (REASON_LIMIT + 1)
    assert problems_of(folder(tmp_path, listwise_=rows)) == [
        f"listwise.jsonl, line 2: reason: has {REASON_LIMIT + 1} characters; the limit is {REASON_LIMIT}"
    ]
    assert nothing_stored()


def test_paper_texts_longer_than_their_columns_are_refused(tmp_path: Path) -> None:
    rows = papers()
    rows[0]["question"] = "q" * (TEXT_LIMIT + 1)
    rows[1]["candidates"][2]["text"] = "t" * (TEXT_LIMIT + 1)
    found = problems_of(folder(tmp_path, papers_=rows, scores_=False, listwise_=False))
    assert found == [
        f"papers.jsonl, line 1: question: has {TEXT_LIMIT + 1} characters; the limit is {TEXT_LIMIT}",
        f"papers.jsonl, line 2: candidates[2].text: has {TEXT_LIMIT + 1} characters; the limit is {TEXT_LIMIT}",
    ]
    assert nothing_stored()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (4.0, "must be a whole number from 1 to 2147483647, written without a decimal point (4), got 4.0"),
        (True, "must be a whole number from 1 to 2147483647, got true"),
        ("4", 'must be a whole number from 1 to 2147483647, got "4"'),
    ],
    ids=["float", "true", "text"],
)
def test_a_token_count_must_be_a_json_integer(tmp_path: Path, value: object, message: str) -> None:
    rows = scores()
    rows[2]["tokens"] = value
    rows[2]["sum"] = rows[2]["mean"] * 4  # what the other lines say of 4 tokens: only the type is wrong
    # (the refused line also leaves its scorer short of a candidate, which the import reports too)
    assert f"scores.jsonl, line 3: tokens: {message}" in problems_of(folder(tmp_path, scores_=rows))
    assert nothing_stored()
