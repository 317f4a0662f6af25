"""Older answers never overwrite newer ones (issue 9, item 2).

The page carries the version of the draft it was rendered with (``draft_version``: when that draft was
saved); the autosave's answer carries the new one. A form sent from an older page (a reload that re-posts,
a second window) is refused without writing anything, and a failed submission redirects to the item, so
the browser never stays on a URL whose reload posts the form again.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Label

from .helpers import complete_values

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def item(study, annotator, ann_client) -> Assignment:  # noqa: ANN001
    a = Assignment.objects.filter(study=study, annotator=annotator).order_by("position").first()
    ann_client.post(reverse("annotation:item-start", args=[a.token]))
    return a


def url(a: Assignment, name: str = "annotation:item") -> str:
    return reverse(name, args=[a.token])


def page_version(html: str) -> str:
    """The draft version a page (or an autosave's answer) tells the form to send next."""
    found = re.findall(r'<input type="hidden" id="draft-version" name="draft_version" value="([^"]*)"', html)
    assert len(found) == 1, found
    return found[0]


def test_the_page_and_every_autosave_answer_carry_the_draft_version(item, ann_client: Client) -> None:
    assert page_version(ann_client.get(url(item)).content.decode()) == ""  # nothing saved yet

    first = ann_client.post(url(item, "annotation:item-draft"), {"a_grounding": "2", "draft_version": ""}, **HTMX)
    v1 = page_version(first.content.decode())
    assert first.status_code == 200 and 'hx-swap-oob="true"' in first.content.decode()
    item.refresh_from_db()
    assert v1 == item.draft_saved_at.isoformat(timespec="microseconds")

    second = ann_client.post(url(item, "annotation:item-draft"), {"a_grounding": "3", "draft_version": v1}, **HTMX)
    v2 = page_version(second.content.decode())
    assert second.status_code == 200 and v2 > v1  # each save moves the version forward
    assert page_version(ann_client.get(url(item)).content.decode()) == v2


def test_a_reloaded_failed_submit_cannot_put_an_older_score_back(item, ann_client: Client) -> None:
    # The reported case: a failed submit, autosave stores a newer score, then F5 re-sends the old form.
    old_form = complete_values(rationale="") | {"a_grounding": "2", "draft_version": ""}
    failed = ann_client.post(url(item, "annotation:item-submit"), old_form)
    assert failed.status_code == 302 and failed["Location"] == url(item) + "?check=1"
    shown = ann_client.get(failed["Location"]).content.decode()
    assert 'id="err-rationale"' in shown and 'name="a_grounding" value="2" checked' in shown

    newer = complete_values(rationale="") | {"a_grounding": "3", "draft_version": page_version(shown)}
    assert ann_client.post(url(item, "annotation:item-draft"), newer, **HTMX).status_code == 200

    resent = ann_client.post(url(item, "annotation:item-submit"), old_form)
    html = resent.content.decode()
    assert resent.status_code == 409  # the item again: nothing written, and a reload re-sends what is refused again
    assert "Not saved: newer answers for this item were saved in another window" in html
    assert 'name="a_grounding" value="3" checked' in html  # the form holds the newer, saved answers
    # This page's answers that differ from the saved ones are listed, not lost: Grounding of A was 2 here.
    assert "<dt>Grounding (proposal A)</dt><dd>2</dd>" in html
    item.refresh_from_db()
    assert item.draft["a_grounding"] == "3"
    assert not Label.objects.exists()


def test_a_complete_form_from_an_older_page_is_not_accepted(item, ann_client: Client) -> None:
    stale_page = page_version(ann_client.get(url(item)).content.decode())
    ann_client.post(url(item, "annotation:item-draft"), {"choice": "B", "draft_version": stale_page}, **HTMX)

    typed = complete_values("A", rationale="A long rationale typed in the older window, not to be lost.")
    response = ann_client.post(url(item, "annotation:item-submit"), typed | {"draft_version": stale_page})

    html = response.content.decode()
    assert response.status_code == 409
    assert not Label.objects.exists()
    item.refresh_from_db()
    assert item.draft == {"choice": "B"}
    assert 'name="choice" value="B" checked' in html  # the saved answer in the form
    assert "<dt>Choice</dt><dd>A</dd>" in html  # the older window's, listed
    assert "<dt>Rationale</dt><dd>A long rationale typed in the older window, not to be lost.</dd>" in html
    assert "<dt>Confidence</dt><dd>Medium</dd>" in html and "<dt>Neighborhood screening</dt><dd>Coherent</dd>" in html
    current = page_version(html)  # the page now carries the stored version: a Submit from it is taken
    accepted = ann_client.post(url(item, "annotation:item-submit"), complete_values("A") | {"draft_version": current})
    assert accepted.status_code == 302
    assert Label.objects.get(assignment=item).choice == "A"


def test_an_autosave_from_another_window_is_refused_with_a_409_status_line(item, ann_client: Client) -> None:
    window_1 = window_2 = page_version(ann_client.get(url(item)).content.decode())
    saved = ann_client.post(url(item, "annotation:item-draft"), {"rationale": "newer", "draft_version": window_1}, **HTMX)
    assert saved.status_code == 200

    refused = ann_client.post(url(item, "annotation:item-draft"), {"rationale": "older", "draft_version": window_2}, **HTMX)

    html = refused.content.decode()
    assert refused.status_code == 409
    assert 'id="save-status"' in html and "is-error" in html and "Reload the page" in html
    assert "draft_version" not in html  # the old page keeps its old version: its next save is refused too
    item.refresh_from_db()
    assert item.draft == {"rationale": "newer"}


def test_the_no_javascript_save_button_from_an_older_page_keeps_the_newer_draft(item, ann_client: Client) -> None:
    old = page_version(ann_client.get(url(item)).content.decode())
    ann_client.post(url(item, "annotation:item-draft"), {"screening": "partly", "draft_version": old}, **HTMX)

    response = ann_client.post(url(item, "annotation:item-draft"), {"screening": "incoherent", "draft_version": old})

    html = response.content.decode()
    assert response.status_code == 409 and "newer answers for this item were saved in another window" in html
    assert "<dt>Neighborhood screening</dt><dd>Incoherent</dd>" in html
    item.refresh_from_db()
    assert item.draft == {"screening": "partly"}


def test_the_check_page_names_what_the_stored_draft_still_misses(item, ann_client: Client) -> None:
    # Where a rejected submission lands; a reload of it re-reads the draft and posts nothing.
    ann_client.post(url(item, "annotation:item-draft"), {"screening": "coherent", "rationale": "far too short?"}, **HTMX)
    html = ann_client.get(url(item) + "?check=1").content.decode()
    assert "Not submitted yet: some answers are missing" in html
    assert 'id="err-choice"' in html and 'id="err-a_grounding"' in html
    assert 'id="err-screening"' not in html and 'id="err-rationale"' not in html
    assert 'data-error-for="choice"' in html
    assert "Not submitted yet" not in ann_client.get(url(item)).content.decode()


def test_an_autosave_reads_only_what_its_status_line_needs(item, ann_client: Client) -> None:
    """The autosave runs on every change for an hour at a time: it reads the order check's next position, not the
    page's progress bar or flags (the item's page still shows them)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        answer = ann_client.post(url(item, "annotation:item-draft"), {"a_grounding": "2", "draft_version": ""}, **HTMX)
    assert answer.status_code == 200
    sql = " ".join(q["sql"] for q in queries.captured_queries)
    assert "annotation_flag" not in sql, "the autosave counted the item's flags"
    page = ann_client.get(url(item)).content.decode()
    assert 'id="draft-version"' in page


def page_id(html: str) -> str:
    found = re.findall(r'<input type="hidden" name="draft_page" value="([^"]+)"', html)
    assert len(found) == 1, found
    return found[0]


def test_a_save_whose_answer_was_lost_does_not_make_its_own_page_stale(item, ann_client: Client) -> None:
    """An annotator review of 2026-12-06: a save reached the server but its answer was lost (flaky Wi-Fi), so the
    page kept its old version; every later save was refused "as from another window", and the Submit dropped all the
    answers. A page is never stale against its own save; another page still is."""
    html = ann_client.get(url(item)).content.decode()
    version, page = page_version(html), page_id(html)
    other_page = page_id(ann_client.get(url(item)).content.decode())
    assert other_page != page  # every rendering of the item is a page of its own

    lost = ann_client.post(
        url(item, "annotation:item-draft"), {"confidence": "low", "draft_version": version, "draft_page": page}, **HTMX
    )
    assert lost.status_code == 200  # its answer (the new version) never reached the page
    retried = {"confidence": "low", "rationale": "typed after the lost answer", "draft_version": version, "draft_page": page}
    assert ann_client.post(url(item, "annotation:item-draft"), retried, **HTMX).status_code == 200
    item.refresh_from_db()
    assert item.draft == {"confidence": "low", "rationale": "typed after the lost answer"}

    submitted = ann_client.post(
        url(item, "annotation:item-submit"), complete_values("B") | {"draft_version": version, "draft_page": page}
    )
    assert submitted.status_code == 302 and Label.objects.get(assignment=item).choice == "B"


def test_another_page_is_still_stale_after_a_save_from_this_one(item, ann_client: Client) -> None:
    html = ann_client.get(url(item)).content.decode()
    version = page_version(html)
    this, other = page_id(html), page_id(ann_client.get(url(item)).content.decode())
    ann_client.post(
        url(item, "annotation:item-draft"), {"rationale": "newer", "draft_version": version, "draft_page": this}, **HTMX
    )
    refused = ann_client.post(
        url(item, "annotation:item-draft"), {"rationale": "older", "draft_version": version, "draft_page": other}, **HTMX
    )
    assert refused.status_code == 409
    item.refresh_from_db()
    assert (item.draft, item.draft_page) == ({"rationale": "newer"}, this)


def test_a_stale_page_sending_the_answers_already_stored_is_not_refused(item, ann_client: Client) -> None:
    """A review of this change: a Submit from an older window whose answers equal the stored ones was refused once
    (nothing lost, but a second Submit needed). Nothing older can overwrite anything newer there."""
    old = page_version(ann_client.get(url(item)).content.decode())
    ann_client.post(url(item, "annotation:item-draft"), complete_values("A") | {"draft_version": old}, **HTMX)
    again = ann_client.post(url(item, "annotation:item-submit"), complete_values("A") | {"draft_version": old})
    assert again.status_code == 302 and Label.objects.get(assignment=item).choice == "A"
