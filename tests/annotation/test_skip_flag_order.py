"""Skip, flag with a comment, and the assigned order kept (issue 24, what annotators of Label Studio, Prodigy,
Argilla and Potato expect).

- Only the annotator's next item can be started; a crafted URL to a later one is refused (403) with the item to do
  first named and linked, and nothing is written (no clock started, no draft, label, skip or flag).
- A skip (optional reason) is recorded with its time, writes no label (every figure reads the item as missing),
  keeps the answers typed so far, stays on the list as skipped and can be returned to and answered.
- A flag needs a comment; it is stored once per comment, does not end the item, and the researcher sees it with
  the item and the annotator. Annotators see only their own.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.urls import reverse

from annotation.models import Assignment, Flag, Label, Study
from annotation.selectors import study_agreement, study_frames, study_validation
from tests.clients import client_for, needs_postgresql, posted_at_once

from .helpers import complete_values, make_study

pytestmark = pytest.mark.django_db


def mine(study: Study, user) -> list[Assignment]:  # noqa: ANN001
    return list(Assignment.objects.filter(study=study, annotator=user).order_by("position"))


def url(name: str, a: Assignment) -> str:
    return reverse(f"annotation:{name}", args=[a.token])


def version_of(client, a: Assignment) -> str:  # noqa: ANN001
    html = client.get(url("item", a)).content.decode()
    return re.search(r'id="draft-version" name="draft_version" value="([^"]*)"', html).group(1)


# ------------------------------------------------------------------ the order


def test_a_later_item_is_refused_everywhere_and_the_refusal_names_the_next_item(study, annotator, ann_client) -> None:  # noqa: ANN001
    first, second, third = mine(study, annotator)[:3]
    for method, name, data in [
        ("get", "item-start", {}),
        ("post", "item-start", {}),
        ("post", "item-draft", {"screening": "partly"}),
        ("post", "item-submit", complete_values()),
        ("post", "item-skip", {"skip_reason": "later"}),
        ("post", "item-flag", {"flag_comment": "cut off"}),
    ]:
        response = getattr(ann_client, method)(url(name, third), data)
        html = response.content.decode()
        where = f"{method.upper()} {name} of item 3"
        assert response.status_code == 403, where
        assert "Not yet: your items are done in their order" in html, where
        assert "Item 1 comes next. Answer it, or skip it, before this one." in html, where
        assert f'href="{url("item-start", first)}"' in html and "Go to item 1" in html, where
        assert "data-start-item" not in html, where
    third.refresh_from_db()
    assert third.opened_at is None and third.draft == {} and third.skipped_at is None
    assert not Label.objects.exists() and not Flag.objects.exists()
    # The screen of an unstarted later item goes to its start page, which refuses: the screen is never shown.
    assert ann_client.get(url("item", third))["Location"] == url("item-start", third)

    # Once item 1 is submitted, item 2 is the next: startable; item 3 is still refused, now naming item 2.
    ann_client.post(url("item-start", first))
    assert ann_client.post(url("item-submit", first), complete_values())["Location"] == url("item-start", second)
    assert ann_client.get(url("item-start", second)).status_code == 200
    refused = ann_client.get(url("item-start", third))
    assert refused.status_code == 403 and "Item 2 comes next." in refused.content.decode()


def test_another_annotators_order_is_their_own(study, annotator, annotator2, ann_client, bob_client) -> None:  # noqa: ANN001
    """Bob's progress opens nothing for Ann, and Ann's tokens are 404 for Bob, refused or not."""
    bobs = mine(study, annotator2)
    bob_client.post(url("item-start", bobs[0]))
    bob_client.post(url("item-submit", bobs[0]), complete_values())
    assert ann_client.get(url("item-start", mine(study, annotator)[1])).status_code == 403
    for name in ("item-start", "item-skip", "item-flag"):
        assert bob_client.post(url(name, mine(study, annotator)[0]), {"flag_comment": "x"}).status_code == 404


def test_the_list_links_only_the_next_item_and_the_open_ones(study, annotator, ann_client) -> None:  # noqa: ANN001
    first, second, third, fourth = mine(study, annotator)[:4]
    ann_client.post(url("item-start", first))
    ann_client.post(url("item-skip", first), {"draft_version": version_of(ann_client, first)})
    ann_client.post(url("item-start", second))
    ann_client.post(url("item-submit", second), complete_values())
    html = ann_client.get(reverse("annotation:home")).content.decode()
    assert f'<a href="{url("item", first)}">Return to it</a>' in html  # skipped: open
    assert f'<a href="{url("item", second)}">View</a>' in html  # submitted: open
    assert html.count(f'href="{url("item-start", third)}"') == 2  # the next one: the button and its row
    assert fourth.token not in html
    assert html.count('<span class="muted">Later</span>') == 10
    assert "1 item skipped: return to it whenever you are ready." in html
    assert '<span class="ann-status ann-status-skipped">Skipped</span>' in html


# ------------------------------------------------------------------ skip


def test_a_skip_keeps_the_answers_writes_no_label_and_can_be_answered_later(study, annotator, ann_client, rita_client) -> None:  # noqa: ANN001
    first, second = mine(study, annotator)[:2]
    ann_client.post(url("item-start", first))
    typed = {"screening": "partly", "rationale": "half way", "skip_reason": "need to reread paper 2"}
    response = ann_client.post(url("item-skip", first), {**typed, "draft_version": version_of(ann_client, first)})
    assert response.status_code == 302 and response["Location"] == url("item-start", second)
    first.refresh_from_db()
    assert first.skipped_at is not None and first.skip_reason == "need to reread paper 2"
    assert first.draft == {"screening": "partly", "rationale": "half way"}  # kept for the return
    assert not Label.objects.exists()
    shown = ann_client.get(response["Location"]).content.decode()
    assert "Item 1 skipped. It stays on your list as skipped" in shown

    # A stale copy of the form sent again: recorded once, no 500, the first reason and time stay.
    skipped_at = first.skipped_at
    again = ann_client.post(url("item-skip", first), {**typed, "skip_reason": "other", "draft_version": ""}, follow=True)
    assert again.status_code == 200 and "Item 1 was skipped already." in again.content.decode()
    first.refresh_from_db()
    assert (first.skipped_at, first.skip_reason) == (skipped_at, "need to reread paper 2")

    # Back to it: the screen says it was skipped and why, with the answers typed before; then answered.
    page = ann_client.get(url("item", first)).content.decode()
    assert "You skipped this item at" in page and "Your reason: need to reread paper 2" in page
    assert 'value="partly" checked' in page and "half way</textarea>" in page
    assert ann_client.post(url("item-submit", first), complete_values()).status_code == 302
    assert Label.objects.filter(assignment=first).count() == 1
    first.refresh_from_db()
    assert first.skipped_at == skipped_at  # the researcher still sees it was skipped first
    study_page = rita_client.get(reverse("annotation:study", args=[study.pk])).content.decode()
    assert "answered later" in study_page and "need to reread paper 2" in study_page

    # A submitted item cannot be skipped.
    refused = ann_client.post(url("item-skip", first), {}, follow=True)
    assert "This item was already submitted; it cannot be skipped." in refused.content.decode()
    assert Label.objects.filter(assignment=first).count() == 1


def test_a_skip_is_missing_in_every_figure_and_shown_per_item_and_annotator(
    study, annotator, annotator2, ann_client, bob_client, rita_client
) -> None:  # noqa: ANN001
    ann_first = mine(study, annotator)[0]
    bob_same = Assignment.objects.get(study=study, annotator=annotator2, item=ann_first.item)
    bob_first = mine(study, annotator2)[0]
    # Bob answers the item Ann skips (taking his own items in his order up to it).
    for b in mine(study, annotator2):
        bob_client.post(url("item-start", b))
        assert bob_client.post(url("item-submit", b), complete_values("B"))["Location"] != url("item-start", b)
        if b == bob_same:
            break
    ann_client.post(url("item-start", ann_first))
    ann_client.post(url("item-skip", ann_first), {"skip_reason": "=HYPERLINK(1)"})

    labels, _items = study_frames(study=study)
    on_item = labels[labels["item"] == ann_first.item_id]
    assert list(on_item["annotator"]) == ["bob"]  # Ann's skip is no row: missing, not a verdict
    assert study_agreement(study=study)["counts"]["labels"] == Label.objects.count() == bob_same.position
    entries = {(e.annotator, e.position): e.status for e in study_validation(study=study).entries}
    assert entries[("ann", 1)] == "skipped" and entries[("bob", bob_first.position)] == "ok"

    page = rita_client.get(reverse("annotation:study", args=[study.pk]))
    html = page.content.decode()
    ann_row = next(p for p in page.context["progress"] if p["annotator"] == "ann")
    assert (ann_row["skipped"], ann_row["skips"], ann_row["submitted"]) == (1, 1, 0)
    assert '<td class="num" data-skipped-by="ann">1 (1)</td>' in html
    assert html.count("<tr data-skip>") == 1
    assert f'<tr data-skip><td class="num">{ann_first.item.position}</td><td>ann</td><td class="num">1</td>' in html
    assert "still skipped" in html and "1 skip. A skip is no answer" in html

    export = rita_client.get(reverse("annotation:study-skips-flags", args=[study.pk]))
    rows = list(csv.DictReader(io.StringIO(export.content.decode("utf-8-sig"))))
    assert [(r["kind"], r["annotator"], r["item"], r["annotator_position"], r["answered_later"]) for r in rows] == [
        ("skip", "ann", str(ann_first.item_id), "1", "0")
    ]
    assert rows[0]["text"] == "'=HYPERLINK(1)"  # annotators' text never runs as a spreadsheet formula
    assert ann_client.get(reverse("annotation:study-skips-flags", args=[study.pk])).status_code in (302, 403)


def test_skip_and_flag_answer_a_get_with_the_item(study, annotator, ann_client) -> None:  # noqa: ANN001
    first = mine(study, annotator)[0]
    ann_client.post(url("item-start", first))
    for name in ("item-skip", "item-flag"):
        assert ann_client.get(url(name, first))["Location"] == url("item", first)
    first.refresh_from_db()
    assert first.skipped_at is None and not Flag.objects.exists()


def test_a_skip_reason_with_a_nul_is_refused_and_nothing_is_skipped(study, annotator, ann_client) -> None:  # noqa: ANN001
    first = mine(study, annotator)[0]
    ann_client.post(url("item-start", first))
    response = ann_client.post(url("item-skip", first), {"skip_reason": "bad\x00"}, follow=True)
    assert "Not skipped: the reason holds a NUL character" in response.content.decode()
    first.refresh_from_db()
    assert first.skipped_at is None


def test_answers_sent_with_a_skip_or_flag_from_a_stale_page_are_not_saved_and_the_annotator_is_told(
    study, annotator, ann_client
) -> None:  # noqa: ANN001
    first = mine(study, annotator)[0]
    ann_client.post(url("item-start", first))
    old_page = version_of(ann_client, first)
    # Newer answers saved from another window after the old page was loaded.
    ann_client.post(url("item-draft", first), {"screening": "coherent", "rationale": "newer", "draft_version": old_page})
    flag = {"flag_comment": "B is cut off", "screening": "partly", "rationale": "older", "draft_version": old_page}
    shown = ann_client.post(url("item-flag", first), flag, follow=True).content.decode()
    assert "Flag sent to the study coordinator." in shown  # the flag itself goes through
    assert "The answers on that page of item 1 were not saved: newer answers were saved after it was loaded" in shown
    first.refresh_from_db()
    assert first.draft == {"screening": "coherent", "rationale": "newer"}  # older values never overwrite newer ones
    # The same answers as those kept, from a stale page: nothing was lost, nothing to say.
    same = {"flag_comment": "also paper 2", "screening": "coherent", "rationale": "newer", "draft_version": old_page}
    assert "were not saved" not in ann_client.post(url("item-flag", first), same, follow=True).content.decode()
    # A NUL in the answers sent with a skip: the skip goes through, the answers saved before stay, and it says so.
    nul = {"rationale": "bad\x00", "draft_version": version_of(ann_client, first)}
    skipped = ann_client.post(url("item-skip", first), nul, follow=True).content.decode()
    assert "Item 1 skipped." in skipped
    assert "The answers on that page of item 1 were not saved: a NUL character (\\0) cannot be stored." in skipped
    first.refresh_from_db()
    assert first.skipped_at is not None and first.draft == {"screening": "coherent", "rationale": "newer"}


# ------------------------------------------------------------------ flag


def test_a_flag_needs_a_comment_is_stored_once_and_does_not_end_the_item(
    study, annotator, annotator2, ann_client, bob_client, rita_client
) -> None:  # noqa: ANN001
    first = mine(study, annotator)[0]
    ann_client.post(url("item-start", first))
    empty = ann_client.post(url("item-flag", first), {"flag_comment": "   "}, follow=True)
    assert "Flag not sent: write what is wrong with the item" in empty.content.decode()
    assert '<details class="ann-panel" id="flag" data-own-submit open>' in empty.content.decode()  # back where it was
    assert not Flag.objects.exists()

    comment = "The proposal text of B is cut off after the hypothesis."
    data = {"flag_comment": comment, "screening": "coherent", "draft_version": version_of(ann_client, first)}
    sent = ann_client.post(url("item-flag", first), data)
    assert sent["Location"] == url("item", first)  # back to the item: a flag is not an answer
    page = ann_client.get(sent["Location"]).content.decode()
    assert "Flag sent to the study coordinator." in page
    assert f"You flagged this item once. Your comment:\n      “{comment}”" in page
    assert 'value="coherent" checked' in page  # the answers sent along are kept
    again = ann_client.post(url("item-flag", first), data, follow=True)  # the same form again (stale)
    assert "You had already flagged this item with this comment" in again.content.decode()
    assert Flag.objects.count() == 1

    # Bob sees nothing of Ann's flag on the same item.
    bob_same = Assignment.objects.get(study=study, annotator=annotator2, item=first.item)
    Assignment.objects.filter(pk=bob_same.pk).update(opened_at=first.opened_at)
    assert "You flagged this item" not in bob_client.get(url("item", bob_same)).content.decode()

    # Answered after the flag; a flag on the submitted item is still taken (a problem noticed afterwards).
    assert ann_client.post(url("item-submit", first), complete_values())["Location"] != url("item", first)
    ann_client.post(url("item-flag", first), {"flag_comment": "Paper 3's abstract is missing too."})
    assert list(Flag.objects.filter(assignment=first).values_list("comment", flat=True)) == [
        comment,
        "Paper 3's abstract is missing too.",
    ]
    assert Label.objects.filter(assignment=first).count() == 1
    html = rita_client.get(reverse("annotation:study", args=[study.pk])).content.decode()
    assert html.count("<tr data-flag>") == 2 and "2 flags from annotators." in html
    assert f'<tr data-flag><td class="num">{first.item.position}</td><td>ann</td><td class="num">1</td>' in html
    assert comment in html


def test_a_flag_longer_than_the_limit_is_refused(study, annotator, ann_client) -> None:  # noqa: ANN001
    first = mine(study, annotator)[0]
    ann_client.post(url("item-start", first))
    response = ann_client.post(url("item-flag", first), {"flag_comment": "x" * 1001}, follow=True)
    assert "the comment has 1001 characters; shorten it to 1000" in response.content.decode()
    assert not Flag.objects.exists()


# ------------------------------------------------------------------ the guideline in place


def test_the_work_screen_holds_the_guideline_in_a_dialog_with_ids_of_its_own(study, annotator, ann_client) -> None:  # noqa: ANN001
    first = mine(study, annotator)[0]
    ann_client.post(url("item-start", first))
    html = ann_client.get(url("item", first)).content.decode()
    dialog = html[html.index('<dialog id="guide-dialog"') :]
    assert "Order, skipping and flagging" in dialog and "The five dimensions and their anchors" in dialog
    assert 'id="guide-rubric"' in dialog and 'id="rubric"' not in dialog
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert html.count("data-guide-open") == 2  # the bar's link and the top bar's, both opening the dialog
    assert "<span><kbd>S</kbd> Skip this item</span>" in html and "<span><kbd>F</kbd> Flag a problem</span>" in html
    page = ann_client.get(reverse("annotation:guide")).content.decode()
    assert 'id="rubric"' in page and 'id="guide-rubric"' not in page and 'id="order"' in page


# ------------------------------------------------------------------ sent at once


@pytest.mark.django_db(transaction=True)
def test_a_skip_and_a_flag_sent_three_times_at_once_are_recorded_once(imported, annotator, annotator2) -> None:  # noqa: ANN001
    """A double-clicked button: each post a request of its own, at the same moment; no 500, one skip, one flag."""
    needs_postgresql("concurrent posts that wait for each other's row lock or unique key need PostgreSQL")
    study = make_study(imported, [annotator, annotator2])
    first = mine(study, annotator)[0]
    client_for(annotator).post(url("item-start", first))
    comment = {"flag_comment": "Paper 2 has no abstract."}
    flags = posted_at_once(annotator, url("item-flag", first), comment)
    assert sorted(r.status_code for r in flags) == [302, 302, 302]
    assert Flag.objects.filter(assignment=first).count() == 1
    skips = posted_at_once(annotator, url("item-skip", first), {"skip_reason": "later"})
    assert sorted(r.status_code for r in skips) == [302, 302, 302]
    first.refresh_from_db()
    assert first.skipped_at is not None and first.skip_reason == "later" and not Label.objects.exists()


def test_validate_study_counts_skips_apart_and_an_export_waits_for_them(imported, annotator, ann_client) -> None:  # noqa: ANN001
    from django.core.management import call_command

    study = make_study(imported, [annotator], n_contexts=1, n_naive_controls=0)  # ann alone: 6 items
    for a in mine(study, annotator):
        ann_client.post(url("item-start", a))
        if a.position == 2:
            ann_client.post(url("item-skip", a), {"skip_reason": "unsure"})
        else:
            ann_client.post(url("item-submit", a), complete_values())
    out = io.StringIO()
    call_command("validate_study", str(study.pk), "--pending", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "ann: 5 of 6 complete, 0 pending (0 started, 0 not started), 1 skipped, 0 failing"
    assert lines[1].startswith("  item   2 (#") and ": skipped — " in lines[1]
    assert lines[-1] == f"study {study.pk}: 5 complete, 0 pending, 1 skipped, 0 stored labels failing validation"
    with pytest.raises(SystemExit) as exit_info:
        call_command("validate_study", str(study.pk), "--require-complete", "--quiet", stdout=io.StringIO())
    assert exit_info.value.code == 1
