"""The annotator's pages: list, annotation screen, drafts, submissions, the cap, and the guideline."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Label
from annotation.selectors import assignment_status, study_agreement

from .helpers import complete_values

pytestmark = pytest.mark.django_db


def first_assignment(study, user) -> Assignment:  # noqa: ANN001
    return Assignment.objects.filter(study=study, annotator=user).order_by("position").first()


def item_url(a: Assignment, name: str = "annotation:item") -> str:
    return reverse(name, args=[a.token])


# ------------------------------------------------------------------ methods and permissions


@pytest.mark.parametrize(("name", "method"), [("annotation:home", "post"), ("annotation:guide", "post")])
def test_pages_refuse_wrong_methods(ann_client, name: str, method: str) -> None:  # noqa: ANN001
    assert getattr(ann_client, method)(reverse(name)).status_code == 405


def test_item_endpoints_refuse_wrong_methods(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    assert ann_client.post(item_url(a)).status_code == 405
    assert ann_client.put(item_url(a, "annotation:item-draft")).status_code == 405
    assert ann_client.put(item_url(a, "annotation:item-submit")).status_code == 405
    assert ann_client.delete(item_url(a, "annotation:item-submit")).status_code == 405


def test_a_get_on_the_post_endpoints_goes_back_to_the_item(study, annotator, ann_client) -> None:  # noqa: ANN001
    # Reloading a rejected submission's page, or switching language on it, lands on the item with its draft.
    a = first_assignment(study, annotator)
    for name in ("annotation:item-draft", "annotation:item-submit"):
        response = ann_client.get(item_url(a, name))
        assert response.status_code == 302 and response["Location"] == item_url(a)
    assert not Label.objects.exists()


@pytest.mark.parametrize("name", ["annotation:home", "annotation:guide"])
def test_anonymous_visitors_are_sent_to_log_in(name: str) -> None:
    response = Client().get(reverse(name))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_anonymous_visitors_cannot_open_or_post_items(study, annotator) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    for url, method in ((item_url(a), "get"), (item_url(a, "annotation:item-draft"), "post"), (item_url(a, "annotation:item-submit"), "post")):
        response = getattr(Client(), method)(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    a.refresh_from_db()
    assert a.opened_at is None


def test_an_unknown_token_is_404(ann_client, study) -> None:  # noqa: ANN001
    assert ann_client.get(reverse("annotation:item", args=["no-such-token"])).status_code == 404


# ------------------------------------------------------------------ the list


def test_the_list_shows_my_items_in_my_order_with_their_status(study, annotator, ann_client) -> None:  # noqa: ANN001
    mine = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))
    response = ann_client.get(reverse("annotation:home"))
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count('data-status="todo"') == 13
    assert f'href="{item_url(mine[0])}"' in html  # the "Next item" button and the row link
    positions = [html.index(f'href="{item_url(a)}"') for a in mine[1:]]
    assert positions == sorted(positions)
    assert "0 of 13 submitted" in html


def test_an_annotator_without_assignments_sees_the_welcome_text(outsider) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(outsider)
    assert "You have no assignments yet" in client.get(reverse("annotation:home")).content.decode()


# ------------------------------------------------------------------ the screen, the timer, drafts


def test_the_first_opening_starts_the_clock_and_later_ones_do_not(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    response = ann_client.get(item_url(a))
    assert response.status_code == 200
    a.refresh_from_db()
    opened = a.opened_at
    assert opened is not None and abs((timezone.now() - opened).total_seconds()) < 5
    Assignment.objects.filter(pk=a.pk).update(opened_at=opened - timedelta(minutes=4))
    html = ann_client.get(item_url(a)).content.decode()
    a.refresh_from_db()
    assert a.opened_at == opened - timedelta(minutes=4)
    remaining = int(html.split('data-remaining="')[1].split('"')[0])
    assert 355 <= remaining <= 360  # 6 of the 10 minutes left, computed by the server
    assert "6 minutes" in html  # the no-JavaScript rendering of the countdown
    assert response["Cache-Control"].startswith("max-age=0")


def test_the_screen_shows_the_neighborhood_and_both_proposals_as_a_and_b(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    html = ann_client.get(item_url(a)).content.decode()
    item = a.item
    first, second = item.first_content(), item.second_content()
    shown_a, shown_b = (first, second) if a.a_is_first else (second, first)
    assert html.index(shown_a["hypothesis"][:60]) < html.index(shown_b["hypothesis"][:60])
    for paper in item.context.papers.all():
        assert f'href="{paper.url}" target="_blank" rel="noopener noreferrer"' in html
    assert "Proposal A" in html and "Proposal B" in html
    assert f"Item <strong data-position>{a.position} / 13</strong>" in html


def test_drafts_save_through_htmx_and_come_back_on_reload(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    ann_client.get(item_url(a))
    response = ann_client.post(
        item_url(a, "annotation:item-draft"),
        {"screening": "partly", "a_grounding": "3", "choice": "TIE", "reason": "both_weak", "rationale": "half-written tho"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert 'id="save-status"' in response.content.decode() and "Draft saved" in response.content.decode()
    a.refresh_from_db()
    assert a.draft == {"screening": "partly", "a_grounding": "3", "choice": "TIE", "reason": "both_weak", "rationale": "half-written tho"}
    html = ann_client.get(item_url(a)).content.decode()
    assert 'value="partly" checked' in html
    assert 'name="a_grounding" value="3" checked' in html
    assert 'value="both_weak" selected' in html
    assert ">half-written tho</textarea>" in html
    assert assignment_status(a) == "draft"


def test_the_no_javascript_draft_button_redirects_back(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    response = ann_client.post(item_url(a, "annotation:item-draft"), {"screening": "coherent"})
    assert response.status_code == 302 and response["Location"] == item_url(a)
    a.refresh_from_db()
    assert a.draft == {"screening": "coherent"} and a.opened_at is not None


# ------------------------------------------------------------------ submissions


def test_it_rejects_an_incomplete_submission_naming_each_missing_field_and_keeps_what_was_typed(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    ann_client.get(item_url(a))
    values = complete_values("TIE", reason="") | {"rationale": "Both miss the decisive metric entirely."}
    del values["b_falsifiability"]
    response = ann_client.post(item_url(a, "annotation:item-submit"), values)
    assert response.status_code == 422
    html = response.content.decode()
    assert 'id="err-b_falsifiability"' in html and "Score proposal B on Falsifiability (1, 2 or 3)." in html
    assert 'id="err-reason"' in html and "Choose a reason for the tie." in html
    assert '<a href="#field-reason">Reason</a>' in html and '<a href="#field-b_falsifiability">Falsifiability (proposal B)</a>' in html
    assert ">Both miss the decisive metric entirely.</textarea>" in html
    assert 'name="a_grounding" value="2" checked' in html
    assert not Label.objects.exists()
    a.refresh_from_db()
    assert a.draft["rationale"] == "Both miss the decisive metric entirely."  # nothing typed is lost


def test_a_complete_submission_is_stored_with_canonical_sides_and_moves_on(study, annotator, ann_client) -> None:  # noqa: ANN001
    a, second = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))[:2]
    ann_client.get(item_url(a))
    values = complete_values("A") | {"a_grounding": "3", "b_grounding": "1"}
    response = ann_client.post(item_url(a, "annotation:item-submit"), values)
    assert response.status_code == 302 and response["Location"] == item_url(second)
    label = Label.objects.get(assignment=a)
    assert label.choice == "A" and not label.over_time
    assert label.winner_side == ("first" if a.a_is_first else "second")
    assert (label.scores_first if a.a_is_first else label.scores_second)["grounding"] == 3
    assert (label.scores_second if a.a_is_first else label.scores_first)["grounding"] == 1
    # Submitted items are read-only: the page shows the answers, and a second submission changes nothing.
    html = ann_client.get(item_url(a)).content.decode()
    assert "It can no longer be changed." in html and 'name="a_grounding" value="3" checked' in html
    again = ann_client.post(item_url(a, "annotation:item-submit"), complete_values("B"))
    assert again.status_code == 302
    assert Label.objects.get(assignment=a).choice == "A"
    draft = ann_client.post(item_url(a, "annotation:item-draft"), {"screening": "incoherent"}, HTTP_HX_REQUEST="true")
    assert "Already submitted" in draft.content.decode()


def test_it_accepts_a_submission_after_the_cap_and_marks_it_over_time(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    ann_client.get(item_url(a))
    Assignment.objects.filter(pk=a.pk).update(opened_at=timezone.now() - timedelta(minutes=10, seconds=5))
    html = ann_client.get(item_url(a)).content.decode()
    assert "Time is up" in html and 'class="ann-countdown is-over"' in html
    response = ann_client.post(item_url(a, "annotation:item-submit"), complete_values("B"), follow=True)
    label = Label.objects.get(assignment=a)
    assert label.over_time and label.elapsed_seconds > 600
    assert "marked over time" in response.content.decode()
    a.refresh_from_db()
    assert assignment_status(a) == "over_time"
    listing = ann_client.get(reverse("annotation:home")).content.decode()
    assert listing.count('data-status="over_time"') == 1
    # Kept, but excluded from the statistics by default.
    doc = study_agreement(study=study)
    assert doc["counts"] == doc["counts"] | {"labels": 1, "counted": 0, "over_time": 1}
    assert study_agreement(study=study, include_over_time=True)["counts"]["counted"] == 1


def test_the_cap_is_measured_from_the_first_opening_not_from_the_browser(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    ann_client.get(item_url(a))
    Assignment.objects.filter(pk=a.pk).update(opened_at=timezone.now() - timedelta(minutes=9))
    # Whatever the browser claims, the server's clock decides.
    ann_client.post(item_url(a, "annotation:item-submit"), complete_values() | {"elapsed": "1", "over_time": "0"})
    assert not Label.objects.get(assignment=a).over_time


def test_the_guideline_has_every_anchor(ann_client) -> None:  # noqa: ANN001
    from annotation.rubric import DIMENSIONS, INVALID_REASONS, TIE_REASONS

    html = ann_client.get(reverse("annotation:guide")).content.decode()
    for d in DIMENSIONS:
        for anchor in d.anchors:
            assert str(anchor).replace("“", "&ldquo;")[:40] in html or str(anchor)[:40] in html
    for _value, label in TIE_REASONS + INVALID_REASONS:
        assert str(label) in html


def test_the_list_needs_the_same_few_queries_however_many_items(imported, annotator, ann_client, django_assert_max_num_queries) -> None:  # noqa: ANN001
    from .helpers import make_study

    make_study(imported, [annotator], n_contexts=1, n_naive_controls=0)
    with django_assert_max_num_queries(4):  # session, user, assignments with their study and label
        ann_client.get(reverse("annotation:home"))
    make_study(imported, [annotator], n_contexts=5, n_naive_controls=2)
    with django_assert_max_num_queries(4):
        assert ann_client.get(reverse("annotation:home")).status_code == 200
