"""The completeness validator (a pure function over the submitted values)."""

from __future__ import annotations

import pytest
from django.utils import translation

from annotation.rubric import FIELD_NAMES, SCORE_FIELDS, clean_submission, draft_values, validate_submission

from .helpers import complete_values


def test_a_complete_submission_passes() -> None:
    assert validate_submission(complete_values()) == {}
    assert validate_submission(complete_values("TIE", reason="both_weak")) == {}
    assert validate_submission(complete_values("INVALID", reason="other")) == {}


def test_an_empty_submission_names_every_required_field() -> None:
    errors = validate_submission({})
    assert set(errors) == {"screening", *SCORE_FIELDS, "choice", "confidence", "rationale"}


@pytest.mark.parametrize(
    ("choice", "reason"), [("TIE", ""), ("INVALID", ""), ("TIE", "empty_or_garbled"), ("INVALID", "both_weak")]
)
def test_tie_and_invalid_need_a_reason_from_their_own_taxonomy(choice: str, reason: str) -> None:
    assert set(validate_submission(complete_values(choice, reason=reason))) == {"reason"}


def test_a_reason_sent_with_a_or_b_is_ignored() -> None:
    values = complete_values("B", reason="both_weak")
    assert validate_submission(values) == {}
    assert clean_submission(values).reason == ""


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("a_grounding", "4"),
        ("b_falsifiability", "0"),
        ("a_decisive_metric", "two"),
        ("screening", "maybe"),
        ("choice", "C"),
        ("confidence", "certain"),
        ("rationale", "too short"),
        ("rationale", "x" * 1001),
    ],
)
def test_values_out_of_range_are_named(field: str, value: str) -> None:
    assert set(validate_submission(complete_values(**{field: value}))) == {field}


def test_messages_follow_the_active_language() -> None:
    with translation.override("zh-hans"):
        errors = validate_submission({})
    assert errors["screening"] == "请判断该文献邻域是否连贯。"
    assert errors["a_grounding"] == "请为提案 A 的“文献依据”打分（1、2 或 3）。"
    with translation.override("en"):
        assert validate_submission({})["choice"] == "Choose A, B, TIE or INVALID."


def test_drafts_keep_known_fields_only() -> None:
    values = complete_values() | {"csrfmiddlewaretoken": "x", "participant": "leak"}
    assert set(draft_values(values)) == set(FIELD_NAMES) - {"reason"}  # empty reason not kept
