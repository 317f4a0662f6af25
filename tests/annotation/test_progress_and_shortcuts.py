"""The item screen's progress bar and keyboard-shortcut legend (issue 24), as the server renders them.

The bar counts the annotator's submitted items of the study, not the item's position and not the other
annotator's labels; the legend is there while the item can be answered and gone once it is submitted.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.models import Assignment

from .helpers import complete_values

pytestmark = pytest.mark.django_db

BAR = re.compile(r'<progress id="ann-progress" max="(\d+)" value="(\d+)"')


def bar(response) -> tuple[int, int]:  # noqa: ANN001
    """(done, total) of the progress bar on an item screen."""
    found = BAR.search(response.content.decode())
    assert found, "the item screen has no progress bar (<progress id=ann-progress>)"
    return int(found.group(2)), int(found.group(1))


def test_the_bar_counts_the_annotators_submitted_items(study, annotator, annotator2, ann_client, bob_client) -> None:  # noqa: ANN001
    mine = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))
    total = len(mine)
    assert total > 3
    # Bob submits one of his: it counts for nobody but him.
    bobs = Assignment.objects.filter(study=study, annotator=annotator2).order_by("position").first()
    bob_client.post(reverse("annotation:item-start", args=[bobs.token]))
    assert bob_client.post(reverse("annotation:item-submit", args=[bobs.token]), complete_values()).status_code == 302

    # Ann skips her first item, answers her second, then returns to the first: 1 of n done, though it is item 1.
    ann_client.post(reverse("annotation:item-start", args=[mine[0].token]))
    assert ann_client.post(reverse("annotation:item-skip", args=[mine[0].token])).status_code == 302
    ann_client.post(reverse("annotation:item-start", args=[mine[1].token]))
    assert bar(ann_client.get(reverse("annotation:item", args=[mine[1].token]))) == (0, total)
    assert ann_client.post(reverse("annotation:item-submit", args=[mine[1].token]), complete_values()).status_code == 302
    page = ann_client.get(reverse("annotation:item", args=[mine[0].token]))
    assert bar(page) == (1, total)
    assert f"1 of {total} done" in page.content.decode()
    assert "data-shortcuts-help" in page.content.decode() and 'aria-keyshortcuts="Control+Enter"' in page.content.decode()

    # A refused submission renders the screen again: the bar is still there, still 1.
    refused = ann_client.post(reverse("annotation:item-submit", args=[mine[0].token]), complete_values(rationale=""))
    assert bar(refused if refused.status_code == 200 else ann_client.get(refused["Location"])) == (1, total)

    # The submitted item, read-only: counted, and without the shortcut legend.
    done = ann_client.get(reverse("annotation:item", args=[mine[1].token]))
    assert bar(done) == (1, total)
    assert "data-shortcuts-help" not in done.content.decode()


@pytest.mark.parametrize(("language", "text"), [("en", "0 of {total} done"), ("zh-hans", "已完成 0 / {total}")])
def test_the_bar_and_the_legend_are_in_the_annotators_language(study, annotator, ann_client, language: str, text: str) -> None:  # noqa: ANN001
    a = Assignment.objects.filter(study=study, annotator=annotator).order_by("position").first()
    total = Assignment.objects.filter(study=study, annotator=annotator).count()
    ann_client.post(reverse("set_language"), {"language": language})
    ann_client.post(reverse("annotation:item-start", args=[a.token]))
    page = ann_client.get(reverse("annotation:item", args=[a.token])).content.decode()
    assert text.format(total=total) in page
    assert ("Keyboard shortcuts" if language == "en" else "键盘快捷键") in page
