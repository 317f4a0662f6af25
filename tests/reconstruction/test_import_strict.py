"""Strict import rules (issue 22, item 7): a Swiss champion is a copy of a valid proposer's hypothesis of its own slot;
a slot is a JSON integer (not 1.0, true or "1"); titles, summaries and reasons have a length limit, taken from their
columns. Each problem names the file, line and field, what is wrong and the limit; nothing is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconstruction.models import Hypothesis

from . import helpers as h
from .test_import_export import nothing_stored, problems_of

pytestmark = pytest.mark.django_db

# The documented limits (reconstruction.models): a title 1,000 characters, a summary or a reason 50,000.
TITLE_LIMIT = 1_000
NOTE_LIMIT = 50_000
# Where the hand-made files put things (helpers): Alpha's slot 1 is line 1 of hypotheses.jsonl, Alpha's slot 2 line 2;
# Beta's slot 5 (line 10) is invalid.
ORIGIN = 'slot 1 of "Alpha" for seed "s1", line 1'


def champion(**overrides: Any) -> dict[str, Any]:  # noqa: ANN401
    """A champion of selection "Sel" as a Swiss selection stores it: a copy of Alpha's slot-1 hypothesis."""
    alpha_1 = h.hypotheses()[0]
    return alpha_1 | {"model": "Sel", "selected_from": {"model": "Alpha", "slot": 1}} | overrides


def hypotheses_with(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    return h.hypotheses() + list(extra)


def test_a_champion_copied_from_a_valid_hypothesis_of_its_slot_is_imported(tmp_path: Path) -> None:
    """The rules below refuse only what a Swiss selection cannot make."""
    from reconstruction.importing import import_files, reconstruction_import

    reconstruction_import(name="rec", files=import_files(h.folder(tmp_path, hypotheses=hypotheses_with(champion()))))
    stored = Hypothesis.objects.select_related("origin__participant").get(participant__name="Sel")
    assert (stored.slot, stored.origin.participant.name, stored.origin.slot) == (1, "Alpha", 1)


def test_a_champion_selected_from_an_invalid_hypothesis_is_refused(tmp_path: Path) -> None:
    beta_5 = h.hypotheses()[9]
    assert beta_5["valid"] is False  # the hand-made files' invalid hypothesis
    bad = champion(family="beta", slot=5, selected_from={"model": "Beta", "slot": 5})
    problems = problems_of(h.folder(tmp_path, hypotheses=hypotheses_with(bad), labels=[], tournament=[]))
    assert problems == [
        'hypotheses.jsonl, line 11: selected_from: the hypothesis it was selected from (slot 5 of "Beta" for seed "s1", '
        "line 10) is invalid (schema: no cited reference after 2 retries); a champion is chosen among valid hypotheses only"
    ]
    assert nothing_stored()


def test_a_champion_selected_from_another_slot_is_refused(tmp_path: Path) -> None:
    bad = champion(slot=2)  # Alpha's slot-1 text, but in slot 2
    problems = problems_of(h.folder(tmp_path, hypotheses=hypotheses_with(bad), labels=[], tournament=[]))
    assert problems == [
        f"hypotheses.jsonl, line 11: selected_from.slot: names the hypothesis it was selected from ({ORIGIN}), but this "
        'champion of "Sel" is in slot 2; a Swiss tournament runs per slot, so a champion keeps its origin\'s slot'
    ]
    assert nothing_stored()


@pytest.mark.parametrize(
    ("change", "fields"),
    [
        ({"title": "Another title"}, "title"),
        ({"summary": "Summary 1 of Alpha, reworded."}, "summary"),
        ({"cited": ["R3"]}, "cited"),
        ({"title": "Another title", "summary": "Another summary."}, "title, summary"),
    ],
    ids=["title", "summary", "cited", "title-and-summary"],
)
def test_a_champion_whose_text_differs_from_its_origin_is_refused(tmp_path: Path, change: dict, fields: str) -> None:
    problems = problems_of(h.folder(tmp_path, hypotheses=hypotheses_with(champion(**change)), labels=[], tournament=[]))
    assert problems == [
        f"hypotheses.jsonl, line 11: {fields}: differs from the hypothesis it was selected from ({ORIGIN}); a champion is "
        f"a copy of its origin: give the origin's {fields} as they are"
    ]
    assert nothing_stored()


def test_a_champion_naming_a_stored_origin_says_so(tmp_path: Path) -> None:
    from reconstruction.importing import import_files, reconstruction_import

    reconstruction_import(name="rec", files=import_files(h.folder(tmp_path / "first")))
    later = h.folder(tmp_path / "later", hypotheses=[champion(summary="Not the origin's summary.")], labels=[], tournament=[])
    problems = problems_of(later)
    assert problems == [
        'hypotheses.jsonl, line 1: summary: differs from the hypothesis it was selected from (slot 1 of "Alpha" for seed '
        '"s1", already stored); a champion is a copy of its origin: give the origin\'s summary as they are'
    ]
    assert not Hypothesis.objects.filter(participant__name="Sel").exists()


SLOT_RANGE = "must be a whole number from 1 to 5"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1.0, f"{SLOT_RANGE}, written without a decimal point (1), got 1.0"),
        (True, f"{SLOT_RANGE}, got true"),
        ("1", f'{SLOT_RANGE}, got "1"'),
        (6, f"{SLOT_RANGE}, got 6"),
        (None, "missing; a whole number from 1 to 5"),
    ],
    ids=["float", "true", "text", "out-of-range", "null"],
)
def test_a_slot_must_be_a_json_integer_in_every_file(tmp_path: Path, value: object, message: str) -> None:
    hyps = h.hypotheses()
    hyps[0]["slot"] = value
    labels = h.labels()
    labels[1]["slot"] = value
    hyps.append(champion(slot=2, selected_from={"model": "Alpha", "slot": value}))
    problems = problems_of(h.folder(tmp_path, hypotheses=hyps, labels=labels, tournament=[]))
    assert f"hypotheses.jsonl, line 1: slot: {message}" in problems
    assert f"hypotheses.jsonl, line 11: selected_from.slot: {message}" in problems
    assert f"labels.jsonl, line 2: slot: {message}" in problems
    assert nothing_stored()


def long_text(n: int) -> str:
    return ("word " * (n // 5 + 1))[:n]


@pytest.mark.parametrize(
    ("kind", "index", "key", "limit"),
    [
        ("seeds", 0, "title", TITLE_LIMIT),
        ("references", 2, "title", TITLE_LIMIT),
        ("hypotheses", 0, "title", TITLE_LIMIT),
        ("hypotheses", 1, "summary", NOTE_LIMIT),
        ("hypotheses", 9, "invalid_reason", NOTE_LIMIT),
        ("labels", 0, "reason", NOTE_LIMIT),
    ],
    ids=["seed-title", "reference-title", "hypothesis-title", "summary", "invalid-reason", "label-reason"],
)
def test_titles_summaries_and_reasons_longer_than_their_column_are_refused(
    tmp_path: Path, kind: str, index: int, key: str, limit: int
) -> None:
    rows = {"seeds": h.seeds(), "references": h.references(), "hypotheses": h.hypotheses(), "labels": h.labels()}
    rows[kind][index][key] = long_text(limit + 1)
    problems = problems_of(h.folder(tmp_path, **rows))
    assert f"{kind}.jsonl, line {index + 1}: {key}: has {limit + 1} characters; the limit is {limit}" in problems
    assert nothing_stored()


def test_a_megabyte_summary_is_refused_and_texts_at_the_limit_are_imported(tmp_path: Path) -> None:
    hyps = h.hypotheses()
    hyps[1]["summary"] = "x" * 1_000_000  # the measured case: 1 MB was accepted
    problems = problems_of(h.folder(tmp_path / "big", hypotheses=hyps))
    assert problems == [f"hypotheses.jsonl, line 2: summary: has 1000000 characters; the limit is {NOTE_LIMIT}"]
    assert nothing_stored()

    from reconstruction.importing import import_files, reconstruction_import

    hyps = h.hypotheses()
    hyps[1]["summary"] = long_text(NOTE_LIMIT)
    hyps[2]["title"] = long_text(TITLE_LIMIT)
    reconstruction_import(name="rec", files=import_files(h.folder(tmp_path / "edge", hypotheses=hyps)))
    assert len(Hypothesis.objects.get(participant__name="Alpha", slot=2).summary) == NOTE_LIMIT
    assert len(Hypothesis.objects.get(participant__name="Alpha", slot=3).title) == TITLE_LIMIT
