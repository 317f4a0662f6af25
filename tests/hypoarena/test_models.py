"""The database, not the importer or a worker, keeps one accepted verdict per (run, match, order) and one match per
pair of submissions."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import IntegrityError, transaction

from arena.models import JudgeRun
from hypoarena.importing import hypoarena_import, import_files
from hypoarena.models import ArenaVerdict, Match, RubricScore, Submission

from . import helpers as h

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(tmp_path: Path) -> JudgeRun:
    hypoarena_import(name="arena-x", files=import_files([h.folder(tmp_path)]))
    return JudgeRun.objects.get(label="r1")


def test_the_database_refuses_a_second_accepted_verdict_but_keeps_invalid_ones(stored: JudgeRun) -> None:
    existing = ArenaVerdict.objects.filter(run=stored, status="accepted").first()
    with pytest.raises(IntegrityError), transaction.atomic():
        ArenaVerdict.objects.create(run=stored, match=existing.match, order=existing.order, verdict="A=B")
    for _ in range(2):  # unreadable answers are kept, however many
        ArenaVerdict.objects.create(run=stored, match=existing.match, order=existing.order, status="invalid")
    other_order = "reverse" if existing.order == "original" else "original"
    if not ArenaVerdict.objects.filter(run=stored, match=existing.match, order=other_order, status="accepted").exists():
        ArenaVerdict.objects.create(run=stored, match=existing.match, order=other_order, verdict="A=B")
    assert ArenaVerdict.objects.filter(run=stored, match=existing.match, status="accepted").count() == 2


@pytest.mark.parametrize(("status", "verdict"), [("accepted", None), ("accepted", "A>>A"), ("invalid", "A>B")])
def test_a_verdict_level_goes_with_accepted_and_only_with_it(stored: JudgeRun, status: str, verdict: str | None) -> None:
    match = Match.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        ArenaVerdict.objects.create(run=stored, match=match, order="original", status=status, verdict=verdict, metadata={"x": 1})


def test_a_match_exists_once_whichever_submission_is_first(stored: JudgeRun) -> None:
    match = Match.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Match.objects.create(case=match.case, first=match.second, second=match.first)
    with pytest.raises(IntegrityError), transaction.atomic():
        Match.objects.create(case=match.case, first=match.first, second=match.first)


def test_rubric_set_scores_stay_on_the_scale(stored: JudgeRun) -> None:
    rubric = JudgeRun.objects.get(label="rub")
    submission = Submission.objects.get(case__external_id="c2", participant__name="Beta")
    with pytest.raises(IntegrityError), transaction.atomic():
        RubricScore.objects.create(
            run=rubric, submission=submission, grounding=[3], insight=[3], justification=[3], breadth=6, utility=3
        )
