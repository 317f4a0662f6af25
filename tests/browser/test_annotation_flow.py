"""An annotator completes a formal round in the browser, in English and in Chinese.

On the way: each item's clock starts only with the Start button of its start page, a rejected incomplete
submission names the missing field (in the page's language) and leaves the browser on the item, a reload
mid-item keeps the draft, and an item submitted after its cap is marked over time. Then (issue 9): the
next item stays unstarted while the annotator takes a break, older answers never come back over newer
ones, the scores stay beside the proposals while reading, and an error goes once its field is fixed.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.db.models import F
from django.utils import timezone

from annotation.models import Assignment, Label
from annotation.rubric import DIMENSION_KEYS
from annotation.services import study_create
from lit2test.release import release_import

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def choose_score(page, field: str, value: int) -> None:  # noqa: ANN001
    page.locator(f"#field-{field} label").nth(value - 1).click()


def fill_scores(page, score: int = 2) -> None:  # noqa: ANN001
    for dimension in DIMENSION_KEYS:
        for side in ("a", "b"):
            choose_score(page, f"{side}_{dimension}", score)


def press_start(page) -> None:  # noqa: ANN001
    """On an item's start page, press Start (the only thing that starts its clock)."""
    with page.expect_navigation():
        page.click("[data-start-item]")
    page.wait_for_load_state("networkidle")


def start_first_item(page) -> None:  # noqa: ANN001
    """Sign in as the first annotator, follow "next item" from the list and press Start."""
    log_in(page, "ann", "pw-ann")
    page.goto("/annotate/")
    page.click("a.ann-next")
    page.wait_for_load_state("networkidle")
    press_start(page)


def complete_item(page, *, choice: str = "A", reason: str | None = None, rationale: str = "A names the decisive metric.") -> None:  # noqa: ANN001
    if page.url.endswith("/start"):
        press_start(page)
    page.check("input[name=screening][value=coherent]")
    fill_scores(page)
    page.check(f"input[name=choice][value={choice}]")
    if reason:
        page.select_option("select[name=reason]", reason)
    page.check("input[name=confidence][value=medium]")
    page.fill("textarea[name=rationale]", rationale)
    with page.expect_navigation():
        page.click("button[data-submit]")


def current_assignment(page) -> Assignment:  # noqa: ANN001
    token = re.search(r"/annotate/item/([^/]+)/", page.url).group(1)
    return Assignment.objects.get(token=token)


def show_proposals(page) -> None:  # noqa: ANN001
    """Scroll so the two proposals fill the window under the sticky bar, as an annotator reads them."""
    page.evaluate("document.getElementById('proposals-h').scrollIntoView({block: 'start'})")
    page.wait_for_timeout(100)


def switch_language(page, code: str) -> None:  # noqa: ANN001
    with page.expect_navigation():
        page.select_option("select[name=language]", code)
    page.wait_for_load_state("networkidle")


def _formal_round_items(annotator, annotator2, release_dir: Path) -> int:  # noqa: ANN001
    """A one-context study for both annotators, with one naive control: seven items each; returns their number."""
    benchmark = release_import(directory=release_dir).benchmark
    study = study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator, annotator2], n_naive_controls=1, seed=5)
    n_items = study.items.count()
    assert n_items == 7
    return n_items


def _open_the_first_start_page(page, n_items: int) -> None:  # noqa: ANN001
    """Every item is to do; "next item" leads to a start page that shows the cap and starts no clock."""
    log_in(page, "ann", "pw-ann")
    page.goto("/annotate/")
    assert page.locator("[data-status=todo]").count() == n_items
    page.click("a.ann-next")
    page.wait_for_load_state("networkidle")
    # The start page shows the cap; nothing is timed until Start.
    assert page.url.endswith("/start") and "You have 10 minutes for this item." in page.content()
    assert current_assignment(page).opened_at is None


def _start_the_first_item(page, n_items: int) -> None:  # noqa: ANN001
    """Start opens the clock and the item: its position, a running countdown and the two proposals (screenshots)."""
    press_start(page)
    assert current_assignment(page).opened_at is not None
    assert page.locator("[data-position]").inner_text() == f"1 / {n_items}"
    assert re.fullmatch(r"\d\d:\d\d", page.locator("[data-countdown-value]").inner_text())  # the JavaScript countdown
    assert page.locator(".ann-colhead").all_inner_texts() == ["Proposal A", "Proposal B"]
    show_proposals(page)
    page.screenshot(path="/tmp/annotation_en.png")
    page.screenshot(path="/tmp/annotation_en_full.png", full_page=True)


def _check_an_incomplete_submission_is_rejected(page) -> None:  # noqa: ANN001
    """An incomplete submission is rejected, the missing field named next to it, nothing typed lost."""
    page.check("input[name=screening][value=partly]")
    fill_scores(page, 3)
    page.check("input[name=choice][value=TIE]")
    assert page.locator("select[name=reason]").is_visible()  # the reason appears for TIE
    page.select_option("select[name=reason]", "tradeoffs")
    page.check("input[name=confidence][value=low]")
    with page.expect_navigation():
        page.click("button[data-submit]")
    assert "/submit" not in page.url and page.url.endswith("?check=1")  # a reload posts nothing
    assert page.locator("#error-summary").is_visible()
    assert page.locator("#error-summary").inner_text().count("Rationale") == 1
    assert page.locator("#err-rationale").inner_text() == "Write a short rationale (at least 10 characters)."
    assert page.locator("input[name=screening][value=partly]").is_checked()
    assert page.locator("input[name=b_falsifiability][value='3']").is_checked()
    assert page.locator("select[name=reason]").input_value() == "tradeoffs"
    assert not Label.objects.exists()


def _check_the_rejection_in_chinese(page) -> None:  # noqa: ANN001
    """In Chinese: the draft comes back and the same rejection names the missing field in Chinese (screenshots)."""
    switch_language(page, "zh-hans")
    assert "/submit" not in page.url and page.locator("html").get_attribute("lang") == "zh-hans"
    assert page.locator("input[name=screening][value=partly]").is_checked()  # the draft came back
    page.fill("textarea[name=rationale]", "太短")
    with page.expect_navigation():
        page.click("button[data-submit]")
    assert page.locator("#err-rationale").inner_text() == "理由太短：请至少写 10 个字符。"
    assert "理由" in page.locator("#error-summary").inner_text()
    show_proposals(page)
    page.screenshot(path="/tmp/annotation_zh.png")
    page.screenshot(path="/tmp/annotation_zh_full.png", full_page=True)


def _check_a_reload_keeps_the_draft(page, annotator) -> None:  # noqa: ANN001
    """A reload mid-item keeps the draft (saved by htmx as the annotator types); then the item is submitted."""
    page.goto(page.url.split("?")[0])
    page.fill("textarea[name=rationale]", "两份提案各有取舍，A 的指标更直接。")
    page.check("input[name=confidence][value=medium]")
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('草稿已于')")
    page.wait_for_load_state("networkidle")
    page.reload()
    assert page.locator("textarea[name=rationale]").input_value() == "两份提案各有取舍，A 的指标更直接。"
    assert page.locator("input[name=confidence][value=medium]").is_checked()
    assert page.locator("input[name=a_grounding][value='3']").is_checked()
    assert page.locator("select[name=reason]").input_value() == "tradeoffs"
    with page.expect_navigation():
        page.click("button[data-submit]")
    first = Label.objects.get(assignment__annotator=annotator)
    assert (first.choice, first.reason, first.screening, first.over_time) == ("TIE", "tradeoffs", "partly", False)


def _check_a_late_item_is_marked_over_time(page) -> None:  # noqa: ANN001
    """Back in English, an item opened 10.5 minutes ago shows time up and is stored over time when submitted."""
    switch_language(page, "en")
    late = current_assignment(page)
    Assignment.objects.filter(pk=late.pk).update(opened_at=timezone.now() - timedelta(minutes=10, seconds=30))
    page.reload()
    assert page.locator("#countdown").get_attribute("class").endswith("is-over")
    assert "Time is up" in page.locator("#countdown").inner_text()
    complete_item(page, choice="B")
    assert "marked over time" in page.locator(".messages").inner_text()
    assert Label.objects.get(assignment=late).over_time


def _complete_the_remaining_items(page, annotator, annotator2, n_items: int) -> None:  # noqa: ANN001
    """The remaining items are submitted; the list shows them all done, one over time; the other annotator's are untouched."""
    while "/annotate/item/" in page.url:
        complete_item(page, choice="A")
    assert Label.objects.filter(assignment__annotator=annotator).count() == n_items
    assert "All items submitted" in page.content()
    assert page.locator("[data-status=over_time]").count() == 1
    assert page.locator("[data-status=submitted]").count() == n_items - 1
    assert page.locator("[data-status=over_time] .ann-status").inner_text() == "Over time"
    assert not Assignment.objects.filter(annotator=annotator2).exclude(opened_at=None).exists()


def test_an_annotator_completes_a_formal_round_in_both_languages(page, annotator, annotator2, release_dir: Path) -> None:  # noqa: ANN001
    n_items = _formal_round_items(annotator, annotator2, release_dir)

    _open_the_first_start_page(page, n_items)
    _start_the_first_item(page, n_items)

    # 1. An incomplete submission is rejected, the missing field named next to it, nothing typed lost.
    _check_an_incomplete_submission_is_rejected(page)

    # 2. In Chinese: the same rejection names the missing field in Chinese.
    _check_the_rejection_in_chinese(page)

    # 3. A reload mid-item keeps the draft (saved by htmx as the annotator types).
    _check_a_reload_keeps_the_draft(page, annotator)

    # 4. Back to English for the rest; one item is submitted after its cap.
    _check_a_late_item_is_marked_over_time(page)

    # 5. The remaining items.
    _complete_the_remaining_items(page, annotator, annotator2, n_items)


def _one_context_study(annotator, annotator2, release_dir: Path):  # noqa: ANN001, ANN202
    benchmark = release_import(directory=release_dir).benchmark
    return study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator, annotator2], n_naive_controls=0, seed=5)


def test_after_submitting_and_an_hours_break_the_next_item_is_still_unstarted(
    page, annotator, annotator2, release_dir: Path
) -> None:  # noqa: ANN001
    study = _one_context_study(annotator, annotator2, release_dir)
    log_in(page, "ann", "pw-ann")
    page.goto("/annotate/")
    page.click("a.ann-next")
    page.wait_for_load_state("networkidle")
    complete_item(page, choice="A")
    # Submit leads to the next item's start page, not into its clock.
    assert page.url.endswith("/start")
    following = current_assignment(page)
    assert following.position == 2 and following.opened_at is None
    assert "Submitted. Thank you!" in page.locator(".messages").inner_text()

    # The annotator walks away for an hour: every stored time moves an hour back, then the page is reloaded.
    hour = timedelta(hours=1)
    Assignment.objects.filter(study=study, annotator=annotator).exclude(opened_at=None).update(
        opened_at=F("opened_at") - hour, draft_saved_at=F("draft_saved_at") - hour
    )
    Label.objects.filter(assignment__annotator=annotator).update(submitted_at=F("submitted_at") - hour)
    page.reload()
    assert page.url.endswith("/start") and Assignment.objects.get(pk=following.pk).opened_at is None
    page.screenshot(path="/tmp/annotation_start.png")
    page.goto("/annotate/")
    assert page.locator("[data-status=todo]").count() == study.items.count() - 1
    assert page.locator("[data-status=draft], [data-status=started], [data-status=over_time]").count() == 0

    # Back at work: Start gives the whole cap, and the answer is on time.
    page.click("a.ann-next")
    page.wait_for_load_state("networkidle")
    press_start(page)
    assert page.locator("[data-position]").inner_text() == f"2 / {study.items.count()}"
    assert page.locator("[data-countdown-value]").inner_text() in ("10:00", "09:59", "09:58")
    complete_item(page, choice="B")
    assert not Label.objects.get(assignment=following).over_time


def test_a_reload_after_a_failed_submit_keeps_the_newer_autosaved_score(page, annotator, annotator2, release_dir: Path) -> None:  # noqa: ANN001
    _one_context_study(annotator, annotator2, release_dir)
    start_first_item(page)
    item = current_assignment(page)
    fill_scores(page, 2)
    page.check("input[name=screening][value=coherent]")
    with page.expect_navigation():
        page.click("button[data-submit]")  # no choice, confidence or rationale: refused
    assert page.url.endswith(f"/annotate/item/{item.token}/?check=1")

    choose_score(page, "a_grounding", 3)
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Draft saved')")
    page.wait_for_load_state("networkidle")
    page.reload()  # F5: a GET of the item, no form sent again
    page.wait_for_load_state("networkidle")
    assert page.locator("input[name=a_grounding][value='3']").is_checked()
    assert Assignment.objects.get(pk=item.pk).draft["a_grounding"] == "3"

    # A second window opened before the change is older: its autosave and its submit are refused.
    older = page.context.new_page()
    older.goto(page.url.split("?")[0])
    older.wait_for_load_state("networkidle")
    choose_score(page, "b_grounding", 3)
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Draft saved')")
    page.wait_for_load_state("networkidle")
    choose_score(older, "a_grounding", 1)
    # htmx settles a swapped element with the old one's classes for a moment: wait until the swap has settled.
    older.wait_for_function(
        "() => { const s = document.getElementById('save-status');"
        " return s.textContent.includes('another window') && !s.classList.contains('htmx-settling'); }"
    )
    assert "is-error" in older.locator("#save-status").get_attribute("class")
    older.check("input[name=choice][value=A]")
    older.check("input[name=confidence][value=high]")
    older.fill("textarea[name=rationale]", "Older window: A is better grounded.")
    older.wait_for_load_state("networkidle")
    with older.expect_navigation():
        older.click("button[data-submit]")
    stale = older.locator("#stale-summary").inner_text()
    assert "newer answers for this item were saved in another window" in stale
    assert "Older window: A is better grounded." in stale  # what this window typed is listed, not lost
    assert older.evaluate("document.activeElement.id") == "stale-summary"  # read first by a screen reader
    assert older.locator("input[name=a_grounding][value='3']").is_checked()  # the newer answers are in the form
    assert not Label.objects.exists()
    stored = Assignment.objects.get(pk=item.pk).draft
    assert (stored["a_grounding"], stored["b_grounding"]) == ("3", "3")
    older.close()


def in_viewport(page, selector: str) -> bool:  # noqa: ANN001
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] + box["width"] <= size["width"]
    )


def test_the_scores_stay_beside_the_proposals_and_an_error_goes_once_fixed(
    page, annotator, annotator2, release_dir: Path
) -> None:  # noqa: ANN001
    _one_context_study(annotator, annotator2, release_dir)
    start_first_item(page)
    assert page.viewport_size == {"width": 1400, "height": 1000}
    page.locator(".ann-papers").screenshot(path="/tmp/annotation_papers.png")

    # Scroll the proposals to their middle: every score control is still in view, beside the text.
    page.evaluate("""() => {
        const grid = document.querySelector('.ann-grid').getBoundingClientRect();
        window.scrollTo(0, window.scrollY + grid.top + grid.height / 2 - window.innerHeight / 2);
    }""")
    page.wait_for_timeout(100)
    middle = page.evaluate(
        "() => { const g = document.querySelector('.ann-grid').getBoundingClientRect(); return g.top < 0 && g.bottom > innerHeight; }"
    )
    assert middle, "the proposals should fill the window at their middle"
    for dimension in DIMENSION_KEYS:
        for side in ("a", "b"):
            assert in_viewport(page, f"#field-{side}_{dimension} .ann-score"), f"{side}_{dimension} out of view"
    text_box = page.locator(".ann-grid").bounding_box()
    rubric_box = page.locator("[data-rubric]").bounding_box()
    assert rubric_box["x"] >= text_box["x"] + text_box["width"]  # beside the proposals, not over them
    choose_score(page, "a_decisive_metric", 3)  # usable where it is
    assert page.locator("input[name=a_decisive_metric][value='3']").is_checked()
    page.screenshot(path="/tmp/annotation_side_panel.png")

    # A refused submission; each error goes as soon as its field is fixed, then the summary goes.
    page.evaluate("window.scrollTo(0, 0)")
    page.check("input[name=screening][value=coherent]")
    with page.expect_navigation():
        page.click("button[data-submit]")
    assert page.locator("#err-a_grounding").is_visible() and page.locator("#err-rationale").is_visible()
    assert page.locator("#field-a_grounding").get_attribute("class").count("has-error") == 1
    choose_score(page, "a_grounding", 2)
    assert page.locator("#err-a_grounding").count() == 0
    assert "has-error" not in page.locator("#field-a_grounding").get_attribute("class")
    assert page.locator("#error-summary [data-error-for=a_grounding]").count() == 0
    assert page.locator("#err-b_grounding").is_visible()  # the others stay until they are fixed
    page.fill("textarea[name=rationale]", "short")
    assert page.locator("#err-rationale").is_visible()  # still too short
    page.fill("textarea[name=rationale]", "Long enough: A names the decisive metric.")
    assert page.locator("#err-rationale").count() == 0
    assert page.locator("#rationale").get_attribute("aria-describedby") == "rationale-hint"
    page.check("input[name=choice][value=TIE]")
    assert page.locator("#err-choice").count() == 0
    page.check("input[name=confidence][value=low]")
    fill_scores(page, 2)
    assert page.locator("#error-summary").is_hidden()
    assert page.locator(".ann-error").count() == 0


def test_on_a_narrow_screen_the_scores_come_after_the_proposals(page, annotator, annotator2, release_dir: Path) -> None:  # noqa: ANN001
    _one_context_study(annotator, annotator2, release_dir)
    page.set_viewport_size({"width": 800, "height": 1000})
    start_first_item(page)
    text_box = page.locator(".ann-grid").bounding_box()
    rubric_box = page.locator("[data-rubric]").bounding_box()
    assert rubric_box["y"] >= text_box["y"] + text_box["height"]
    assert rubric_box["width"] >= text_box["width"] - 2
