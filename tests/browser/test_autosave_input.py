"""What an annotator review of 2026-12-06 found in Chromium: text that arrives without key presses (a paste from
the context menu, dictation, an input method's commit) was saved only when the field lost focus — a reload before
that lost it; and Enter on an answer submitted the form through its first button, which on the "that was very
fast" page is "Submit anyway": the fast answer was confirmed without the annotator asking for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Assignment, Label
from annotation.rubric import SCORE_FIELDS
from annotation.services import study_create
from lit2test.release import release_import

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_first_item(page, study) -> Assignment:  # noqa: ANN001
    item = Assignment.objects.filter(study=study, annotator__username="ann").order_by("position").first()
    log_in(page, "ann", "pw-ann")
    page.goto(reverse("annotation:item-start", args=[item.token]))
    with page.expect_navigation():
        page.click("[data-start-item]")
    page.wait_for_load_state("networkidle")
    return item


def test_text_put_in_without_key_presses_is_saved_and_enter_on_an_answer_never_submits(
    page, annotator, annotator2, release_dir: Path
) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    study = study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator, annotator2], n_naive_controls=0, seed=5)
    study.min_answer_seconds = 3600  # every answer is "very fast": the confirmation page comes up
    study.save(update_fields=["min_answer_seconds"])
    item = open_first_item(page, study)

    page.focus("textarea[name=rationale]")
    page.keyboard.insert_text("Pasted: A names a decisive threshold.")  # an input event, no key event
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Draft saved')")
    page.reload()
    page.wait_for_load_state("networkidle")
    assert page.input_value("textarea[name=rationale]") == "Pasted: A names a decisive threshold."

    # Enter on an answer picks it and goes on; it submits nothing.
    page.focus("input[name=screening][value=coherent]")
    page.keyboard.press("Enter")
    page.wait_for_load_state("networkidle")
    assert page.locator("input[name=screening][value=coherent]").is_checked()
    assert "/submit" not in page.url and not Label.objects.exists()

    # Complete the answers, Submit: the "very fast" page asks to confirm. Enter on an answer there does not confirm.
    for name in SCORE_FIELDS:
        page.check(f"input[name={name}][value='2']")
    page.check("input[name=choice][value=A]")
    page.check("input[name=confidence][value=medium]")
    with page.expect_navigation():
        page.click("button[data-submit]")
    assert page.locator("#fast-confirm").is_visible()
    page.focus("input[name=confidence][value=high]")
    page.keyboard.press("Enter")
    page.wait_for_load_state("networkidle")
    assert page.locator("#fast-confirm").is_visible() and not Label.objects.exists()
    assert Assignment.objects.get(pk=item.pk).draft.get("confidence") == "high"  # picked, and saved as a draft
    with page.expect_navigation():
        page.click("[data-confirm-fast]")  # only the button confirms
    assert Label.objects.get(assignment=item).confidence == "high"


def test_the_browser_names_its_time_zone_and_the_item_shows_times_in_it(
    browser, live_server, annotator, annotator2, release_dir: Path
) -> None:  # noqa: ANN001
    import re
    import zoneinfo

    benchmark = release_import(directory=release_dir).benchmark
    study = study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator, annotator2], n_naive_controls=0, seed=5)
    context = browser.new_context(base_url=live_server.url, timezone_id="Asia/Shanghai")
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        item = open_first_item(page, study)
        assert {c["name"]: c["value"] for c in context.cookies()}.get("tz") == "Asia/Shanghai"
        page.check("input[name=screening][value=partly]")
        page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Draft saved')")
        shown = re.search(r"\d\d:\d\d:\d\d", page.locator("#save-status").inner_text()).group(0)
        saved = Assignment.objects.get(pk=item.pk).draft_saved_at
        assert shown == saved.astimezone(zoneinfo.ZoneInfo("Asia/Shanghai")).strftime("%H:%M:%S")
    finally:
        context.close()
