from __future__ import annotations

from pathlib import Path

import pytest
from django.db import IntegrityError, transaction

from arena.models import CanonicalPair, JudgeRun, OrderedJudgment, Paper
from arena.selectors import paper_provenance_audit
from lit2test.release import release_import

from . import builders as b

pytestmark = pytest.mark.django_db


@pytest.fixture
def small(tmp_path: Path):  # noqa: ANN201
    return release_import(directory=b.write(tmp_path, b.small_release())).benchmark


def test_the_database_refuses_a_second_accepted_judgment_for_a_task(small) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get()
    existing = run.judgments.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        OrderedJudgment.objects.create(run=run, pair=existing.pair, order=existing.order, winner=existing.winner)


def test_invalid_attempts_may_sit_beside_the_accepted_judgment(small) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get()
    existing = run.judgments.first()
    OrderedJudgment.objects.create(run=run, pair=existing.pair, order=existing.order, status="invalid", attempt=3)
    assert run.judgments.filter(pair=existing.pair, order=existing.order).count() == 2


def test_an_accepted_judgment_needs_a_winner_or_a_tie(small) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get()
    pair = CanonicalPair.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        OrderedJudgment.objects.create(
            run=JudgeRun.objects.create(benchmark=small, judge_model="J", label="x", provider="recorded"),
            pair=pair,
            order="original",
        )
    assert run.judgments.count() == 12


def test_a_pair_cannot_oppose_a_model_to_itself(small) -> None:  # noqa: ANN001
    pair = CanonicalPair.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        CanonicalPair.objects.create(
            benchmark=small,
            context=pair.context,
            participant_a=pair.participant_a,
            participant_b=pair.participant_a,
            internal_key="self",
        )


def test_the_provenance_audit_finds_a_paper_in_two_contexts(small) -> None:  # noqa: ANN001
    assert paper_provenance_audit(benchmark=small) == []
    reused = Paper.objects.get(context__external_id="ctx_001__v1", position=0)
    target = Paper.objects.get(context__external_id="ctx_002__v1", position=3)
    target.url = reused.url  # same paper under another id and title
    target.save()
    found = paper_provenance_audit(benchmark=small)
    assert len(found) == 1 and found[0].contexts == ["ctx_001__v1", "ctx_002__v1"]


def test_the_release_sample_passes_the_provenance_audit(imported) -> None:  # noqa: ANN001
    assert paper_provenance_audit(benchmark=imported) == []
