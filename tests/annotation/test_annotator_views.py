"""The annotator's pages: list, annotation screen, drafts, submissions, the cap, and the guideline."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.db.models import F
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from annotation.models import Assignment, Label
from annotation.selectors import assignment_status, study_agreement
from annotation.services import assignment_open

from .helpers import complete_values

pytestmark = pytest.mark.django_db


def first_assignment(study, user) -> Assignment:  # noqa: ANN001
    return Assignment.objects.filter(study=study, annotator=user).order_by("position").first()


def item_url(a: Assignment, name: str = "annotation:item") -> str:
    return reverse(name, args=[a.token])


def start(client: Client, a: Assignment) -> None:
    """Press Start on the item's start page, as the annotator does before working on it."""
    response = client.post(item_url(a, "annotation:item-start"))
    assert response.status_code == 302 and response["Location"] == item_url(a)


# ------------------------------------------------------------------ methods and permissions


@pytest.mark.parametrize(("name", "method"), [("annotation:home", "post"), ("annotation:guide", "post")])
def test_pages_refuse_wrong_methods(ann_client, name: str, method: str) -> None:  # noqa: ANN001
    assert getattr(ann_client, method)(reverse(name)).status_code == 405


def test_item_endpoints_refuse_wrong_methods(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    assert ann_client.post(item_url(a)).status_code == 405
    assert ann_client.put(item_url(a, "annotation:item-start")).status_code == 405
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
    for url, method in (
        (item_url(a), "get"),
        (item_url(a, "annotation:item-start"), "get"),
        (item_url(a, "annotation:item-start"), "post"),
        (item_url(a, "annotation:item-draft"), "post"),
        (item_url(a, "annotation:item-submit"), "post"),
    ):
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
    # Only the next item can be started (annotation.flow): the "Next item" button and its row link go to its start
    # page; the later items are listed in order, each marked "Later", with no link at all.
    assert html.count(f'href="{item_url(mine[0], "annotation:item-start")}"') == 2
    assert f'href="{item_url(mine[0])}"' not in html
    assert not [a.position for a in mine[1:] if a.token in html]
    rows = re.findall(r'<tr data-status="todo">\s*<td class="num">(\d+)</td>', html)
    assert rows == [str(n) for n in range(1, 14)]
    assert html.count('<span class="muted">Later</span>') == 12
    assert "0 of 13 submitted" in html


def test_an_annotator_without_assignments_sees_the_welcome_text(outsider) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(outsider)
    assert "You have no assignments yet" in client.get(reverse("annotation:home")).content.decode()


# ------------------------------------------------------------------ the screen, the timer, drafts


def test_only_the_start_button_starts_the_clock_and_later_starts_do_not(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    # Opening the item, its start page or the list starts nothing.
    response = ann_client.get(item_url(a))
    assert response.status_code == 302 and response["Location"] == item_url(a, "annotation:item-start")
    page = ann_client.get(item_url(a, "annotation:item-start"))
    html = page.content.decode()
    assert page.status_code == 200 and page["Cache-Control"].startswith("max-age=0")
    assert "You have 10 minutes for this item." in html
    assert (
        f'<form method="post" action="{item_url(a, "annotation:item-start")}"' in html
        and "data-start-item>Start</button>" in html
    )
    ann_client.get(reverse("annotation:home"))
    a.refresh_from_db()
    assert a.opened_at is None

    start(ann_client, a)
    a.refresh_from_db()
    opened = a.opened_at
    assert opened is not None and abs((timezone.now() - opened).total_seconds()) < 5
    Assignment.objects.filter(pk=a.pk).update(opened_at=opened - timedelta(minutes=4))
    # Once started, the start page and a second Start go on to the item and leave the clock alone.
    assert ann_client.get(item_url(a, "annotation:item-start"))["Location"] == item_url(a)
    start(ann_client, a)
    response = ann_client.get(item_url(a))
    html = response.content.decode()
    a.refresh_from_db()
    assert a.opened_at == opened - timedelta(minutes=4)
    remaining = int(html.split('data-remaining="')[1].split('"')[0])
    assert 355 <= remaining <= 360  # 6 of the 10 minutes left, computed by the server
    assert "6 minutes" in html  # the no-JavaScript rendering of the countdown
    assert response["Cache-Control"].startswith("max-age=0")


def test_an_annotator_who_submits_and_walks_away_for_an_hour_finds_the_next_item_unstarted(
    study, annotator, ann_client, rita_client
) -> None:  # noqa: ANN001
    first, second = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))[:2]
    start(ann_client, first)
    response = ann_client.post(item_url(first, "annotation:item-submit"), complete_values("A"))
    # Submit leads to the next item's start page, which starts nothing.
    assert response.status_code == 302 and response["Location"] == item_url(second, "annotation:item-start")
    assert "You have 10 minutes for this item." in ann_client.get(response["Location"]).content.decode()

    # An hour passes (every stored time moves an hour back).
    hour = timedelta(hours=1)
    Assignment.objects.filter(pk=first.pk).update(opened_at=F("opened_at") - hour, draft_saved_at=F("draft_saved_at") - hour)
    Label.objects.filter(assignment=first).update(submitted_at=F("submitted_at") - hour)

    second.refresh_from_db()
    assert second.opened_at is None and assignment_status(second) == "todo"
    listing = ann_client.get(reverse("annotation:home")).content.decode()
    assert listing.count('data-status="todo"') == 12 and 'data-status="draft"' not in listing
    assert f'class="primary ann-next" href="{item_url(second, "annotation:item-start")}"' in listing
    progress = rita_client.get(reverse("annotation:study", args=[study.pk])).context["progress"]
    mine = next(p for p in progress if p["annotator"] == "ann")
    assert (mine["submitted"], mine["in_progress"], mine["started"], mine["not_started"], mine["over_time"]) == (1, 0, 0, 12, 0)

    # Back from the break: the item starts now with its whole cap, and a prompt answer is on time.
    start(ann_client, second)
    html = ann_client.get(item_url(second)).content.decode()
    assert 595 <= int(html.split('data-remaining="')[1].split('"')[0]) <= 600
    ann_client.post(item_url(second, "annotation:item-submit"), complete_values("B"))
    assert not Label.objects.get(assignment=second).over_time


def test_draft_means_something_was_entered_and_an_empty_started_item_is_started(
    study, annotator, ann_client, rita_client
) -> None:  # noqa: ANN001
    a, b, c = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))[:3]
    start(ann_client, a)
    # b and c were started before the order was kept (or after a skip): started items stay open to the annotator.
    assignment_open(assignment=b)
    assignment_open(assignment=c)
    # An autosave with nothing but blanks (a Tab through the form) is not a draft.
    ann_client.post(item_url(b, "annotation:item-draft"), {"rationale": "   ", "reason": ""}, HTTP_HX_REQUEST="true")
    ann_client.post(item_url(c, "annotation:item-draft"), {"screening": "partly"}, HTTP_HX_REQUEST="true")
    for x in (a, b, c):
        x.refresh_from_db()
    assert [assignment_status(x) for x in (a, b, c)] == ["started", "started", "draft"]
    listing = ann_client.get(reverse("annotation:home")).content.decode()
    assert listing.count('data-status="started"') == 2 and listing.count('data-status="draft"') == 1
    assert '<span class="ann-status ann-status-started">Started</span>' in listing
    assert f'<a href="{item_url(a)}">Continue</a>' in listing  # a started item's clock runs: straight back to it
    page = rita_client.get(reverse("annotation:study", args=[study.pk]))
    mine = next(p for p in page.context["progress"] if p["annotator"] == "ann")
    assert (mine["in_progress"], mine["started"], mine["not_started"]) == (1, 2, 10)
    assert '<td class="num">1</td><td class="num">2</td><td class="num">10</td>' in page.content.decode()


def test_the_screen_shows_the_neighborhood_and_both_proposals_as_a_and_b(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    start(ann_client, a)
    html = ann_client.get(item_url(a)).content.decode()
    item = a.item
    first, second = item.first_content(), item.second_content()
    shown_a, shown_b = (first, second) if a.a_is_first else (second, first)
    assert html.index(escape(shown_a["hypothesis"][:60])) < html.index(escape(shown_b["hypothesis"][:60]))
    for paper in item.context.papers.all():
        assert f'href="{paper.url}" target="_blank" rel="noopener noreferrer"' in html
    assert "Proposal A" in html and "Proposal B" in html
    assert f"Item <strong data-position>{a.position} / 13</strong>" in html


def test_paper_cards_show_the_source_id_proposals_cite_and_link_the_paper(study, annotator, ann_client, release_dir) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    start(ann_client, a)
    html = ann_client.get(item_url(a)).content.decode()
    record = next(
        json.loads(line)
        for line in (release_dir / "contexts.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["context_id"] == a.item.context.external_id
    )
    cards = html.split('<li class="ann-paper">')[1:]
    assert len(cards) == 4
    for card, paper in zip(cards, record["papers"], strict=True):
        assert (
            f'<a href="{paper["url"]}" target="_blank" rel="noopener noreferrer" data-source-id>{paper["paper_id"]} ↗</a>' in card
        )


def test_drafts_save_through_htmx_and_come_back_on_reload(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    start(ann_client, a)
    response = ann_client.post(
        item_url(a, "annotation:item-draft"),
        {"screening": "partly", "a_grounding": "3", "choice": "TIE", "reason": "both_weak", "rationale": "half-written tho"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert 'id="save-status"' in response.content.decode() and "Draft saved" in response.content.decode()
    a.refresh_from_db()
    assert a.draft == {
        "screening": "partly",
        "a_grounding": "3",
        "choice": "TIE",
        "reason": "both_weak",
        "rationale": "half-written tho",
    }
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


def test_it_rejects_an_incomplete_submission_naming_each_missing_field_and_keeps_what_was_typed(
    study, annotator, ann_client
) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    start(ann_client, a)
    values = complete_values("TIE", reason="") | {"rationale": "Both miss the decisive metric entirely."}
    del values["b_falsifiability"]
    response = ann_client.post(item_url(a, "annotation:item-submit"), values)
    # Post/redirect/get: the browser ends on the item, so a reload never sends the form again.
    assert response.status_code == 302 and response["Location"] == item_url(a) + "?check=1"
    response = ann_client.get(response["Location"])
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="err-b_falsifiability"' in html and "Score proposal B on Falsifiability (1, 2 or 3)." in html
    assert 'id="err-reason"' in html and "Choose a reason for the tie." in html
    assert (
        '<a href="#field-reason">Reason</a>' in html
        and '<a href="#field-b_falsifiability">Falsifiability (proposal B)</a>' in html
    )
    assert ">Both miss the decisive metric entirely.</textarea>" in html
    assert 'name="a_grounding" value="2" checked' in html
    assert not Label.objects.exists()
    a.refresh_from_db()
    assert a.draft["rationale"] == "Both miss the decisive metric entirely."  # nothing typed is lost


def test_a_complete_submission_is_stored_with_canonical_sides_and_moves_on(study, annotator, ann_client) -> None:  # noqa: ANN001
    a, second = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))[:2]
    start(ann_client, a)
    values = complete_values("A") | {"a_grounding": "3", "b_grounding": "1"}
    response = ann_client.post(item_url(a, "annotation:item-submit"), values)
    assert response.status_code == 302 and response["Location"] == item_url(second, "annotation:item-start")
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
    start(ann_client, a)
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


def test_the_cap_is_measured_from_the_start_not_from_the_browser(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = first_assignment(study, annotator)
    start(ann_client, a)
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


def test_the_list_needs_the_same_few_queries_however_many_items(
    imported, annotator, ann_client, django_assert_max_num_queries
) -> None:  # noqa: ANN001
    from .helpers import make_study

    make_study(imported, [annotator], n_contexts=1, n_naive_controls=0)
    with django_assert_max_num_queries(4):  # session, user, assignments with their study and label
        ann_client.get(reverse("annotation:home"))
    make_study(imported, [annotator], n_contexts=5, n_naive_controls=2)
    with django_assert_max_num_queries(4):
        assert ann_client.get(reverse("annotation:home")).status_code == 200
