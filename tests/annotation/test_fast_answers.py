"""Implausibly fast answers (issue 24): a label 0.2 s after Start used to be accepted without a word.

Every answer's time from Start to Submit is stored; the study page flags those under the study's minimum (or,
with no minimum, under FAST_ANSWER_SECONDS), and an annotator who submits sooner than the minimum is asked
"are you sure?" (the answers kept as the draft) before the answer is accepted.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import F
from django.urls import reverse

from annotation.models import Assignment, Label, Study

from .helpers import complete_values

pytestmark = pytest.mark.django_db


def first_item(study: Study, user) -> Assignment:  # noqa: ANN001
    return Assignment.objects.filter(study=study, annotator=user).order_by("position").first()


def started(client, a: Assignment, *, seconds_ago: int = 0) -> None:  # noqa: ANN001
    """Press Start on the item; ``seconds_ago`` moves that moment back, as if the annotator had worked so long."""
    client.post(reverse("annotation:item-start", args=[a.token]))
    Assignment.objects.filter(pk=a.pk).update(opened_at=F("opened_at") - timedelta(seconds=seconds_ago))


def submit(client, a: Assignment, **extra: str):  # noqa: ANN001, ANN201
    return client.post(reverse("annotation:item-submit", args=[a.token]), {**complete_values(), **extra})


def flagged_rows(rita_client, study: Study) -> str:  # noqa: ANN001
    page = rita_client.get(reverse("annotation:study", args=[study.pk])).content.decode()
    return page


def test_the_researcher_sets_the_minimum_on_the_study_page(study, rita_client) -> None:  # noqa: ANN001
    url = reverse("annotation:study-min-answer", args=[study.pk])
    assert Study.objects.get(pk=study.pk).min_answer_seconds == 0  # no minimum unless one is set
    page = rita_client.get(reverse("annotation:study", args=[study.pk])).content.decode()
    assert f'action="{url}"' in page and 'name="min_answer_seconds"' in page
    assert rita_client.get(url).status_code == 405
    response = rita_client.post(url, {"min_answer_seconds": "45"}, follow=True)
    assert Study.objects.get(pk=study.pk).min_answer_seconds == 45
    assert "Minimum time per answer set to 45 s." in response.content.decode()
    for bad in ("-1", "abc", "3601", "", "²"):
        response = rita_client.post(url, {"min_answer_seconds": bad}, follow=True)
        assert "give whole seconds from 0 to 3600" in response.content.decode(), bad
        assert Study.objects.get(pk=study.pk).min_answer_seconds == 45, bad


def test_an_annotator_cannot_set_the_minimum(study, ann_client) -> None:  # noqa: ANN001
    Study.objects.filter(pk=study.pk).update(min_answer_seconds=5)
    response = ann_client.post(reverse("annotation:study-min-answer", args=[study.pk]), {"min_answer_seconds": "0"})
    assert response.status_code in (302, 403)
    assert Study.objects.get(pk=study.pk).min_answer_seconds == 5


def test_under_the_minimum_the_annotator_confirms_and_the_researcher_sees_the_flag(
    study, annotator, ann_client, rita_client
) -> None:  # noqa: ANN001
    Study.objects.filter(pk=study.pk).update(min_answer_seconds=60)
    a = first_item(study, annotator)
    started(ann_client, a)
    response = submit(ann_client, a)
    assert response.status_code == 302 and response["Location"] == reverse("annotation:item", args=[a.token]) + "?fast=1"
    assert not Label.objects.exists()  # not accepted yet
    assert Assignment.objects.get(pk=a.pk).draft["rationale"] == complete_values()["rationale"]  # nothing lost
    page = ann_client.get(response["Location"]).content.decode()
    assert "Are you sure? That was very fast" in page and "at least 60 seconds per item" in page
    assert 'name="confirm_fast" value="1"' in page

    response = submit(ann_client, a, confirm_fast="1")
    assert response.status_code == 302 and "?fast=1" not in response["Location"]
    label = Label.objects.get(assignment=a)
    assert 0 <= label.elapsed_seconds < 60  # the time is stored
    page = flagged_rows(rita_client, study)
    assert page.count("data-fast-answer") == 1
    assert "1 answer submitted less than 60 s after Start (this study's minimum)" in page


def test_over_the_minimum_the_answer_goes_through_unflagged(study, annotator, ann_client, rita_client) -> None:  # noqa: ANN001
    Study.objects.filter(pk=study.pk).update(min_answer_seconds=60)
    a = first_item(study, annotator)
    started(ann_client, a, seconds_ago=61)
    assert "?fast=1" not in submit(ann_client, a)["Location"]
    assert Label.objects.get(assignment=a).elapsed_seconds >= 61
    assert "data-fast-answer" not in flagged_rows(rita_client, study)


def test_with_no_minimum_a_fast_answer_is_accepted_but_flagged(study, annotator, ann_client, rita_client) -> None:  # noqa: ANN001
    mine = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position")[:2])
    # The first submitted at once (under the 30 s default threshold), the second two minutes after Start.
    for a, seconds_ago in zip(mine, (0, 120), strict=True):
        started(ann_client, a, seconds_ago=seconds_ago)
        assert "?fast=1" not in submit(ann_client, a)["Location"]  # no minimum: nobody is asked
    assert Label.objects.filter(assignment__in=mine).count() == 2
    page = flagged_rows(rita_client, study)
    assert page.count("data-fast-answer") == 1
    assert "1 answer submitted less than 30 s after Start (no minimum set: the default flag threshold)" in page
