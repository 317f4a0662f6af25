"""An annotator completes a formal round in the browser, in English and in Chinese.

On the way: a rejected incomplete submission names the missing field (in the page's language), a reload
mid-item keeps the draft, and an item submitted after its cap is marked over time.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotation.models import Assignment, Label
from annotation.rubric import DIMENSION_KEYS
from annotation.services import study_create
from arena.release import release_import

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def choose_score(page, field: str, value: int) -> None:  # noqa: ANN001
    page.locator(f"#field-{field} label").nth(value - 1).click()


def fill_scores(page, score: int = 2) -> None:  # noqa: ANN001
    for dimension in DIMENSION_KEYS:
        for side in ("a", "b"):
            choose_score(page, f"{side}_{dimension}", score)


def complete_item(page, *, choice: str = "A", reason: str | None = None, rationale: str = "A names the decisive metric.") -> None:  # noqa: ANN001
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


def test_an_annotator_completes_a_formal_round_in_both_languages(page, annotator, annotator2, release_dir: Path) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    study = study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator, annotator2], n_naive_controls=1, seed=5)
    n_items = study.items.count()
    assert n_items == 7

    log_in(page, "ann", "pw-ann")
    page.goto("/annotate/")
    assert page.locator("[data-status=todo]").count() == n_items
    page.click("a.ann-next")
    page.wait_for_load_state("networkidle")
    assert page.locator("[data-position]").inner_text() == f"1 / {n_items}"
    assert re.fullmatch(r"\d\d:\d\d", page.locator("[data-countdown-value]").inner_text())  # the JavaScript countdown
    assert page.locator(".ann-colhead").all_inner_texts() == ["Proposal A", "Proposal B"]
    show_proposals(page)
    page.screenshot(path="/tmp/annotation_en.png")
    page.screenshot(path="/tmp/annotation_en_full.png", full_page=True)

    # 1. An incomplete submission is rejected, the missing field named next to it, nothing typed lost.
    page.check("input[name=screening][value=partly]")
    fill_scores(page, 3)
    page.check("input[name=choice][value=TIE]")
    assert page.locator("select[name=reason]").is_visible()  # the reason appears for TIE
    page.select_option("select[name=reason]", "tradeoffs")
    page.check("input[name=confidence][value=low]")
    with page.expect_navigation():
        page.click("button[data-submit]")
    assert page.locator("#error-summary").is_visible()
    assert page.locator("#error-summary").inner_text().count("Rationale") == 1
    assert page.locator("#err-rationale").inner_text() == "Write a short rationale (at least 10 characters)."
    assert page.locator("input[name=screening][value=partly]").is_checked()
    assert page.locator("input[name=b_falsifiability][value='3']").is_checked()
    assert page.locator("select[name=reason]").input_value() == "tradeoffs"
    assert not Label.objects.exists()

    # 2. In Chinese: the same rejection names the missing field in Chinese.
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

    # 3. A reload mid-item keeps the draft (saved by htmx as the annotator types).
    page.goto(page.url.replace("/submit", "/"))
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

    # 4. Back to English for the rest; one item is submitted after its cap.
    switch_language(page, "en")
    late = current_assignment(page)
    Assignment.objects.filter(pk=late.pk).update(opened_at=timezone.now() - timedelta(minutes=10, seconds=30))
    page.reload()
    assert page.locator("#countdown").get_attribute("class").endswith("is-over")
    assert "Time is up" in page.locator("#countdown").inner_text()
    complete_item(page, choice="B")
    assert "marked over time" in page.locator(".messages").inner_text()
    assert Label.objects.get(assignment=late).over_time

    # 5. The remaining items.
    while "/annotate/item/" in page.url:
        complete_item(page, choice="A")
    assert Label.objects.filter(assignment__annotator=annotator).count() == n_items
    assert "All items submitted" in page.content()
    assert page.locator("[data-status=over_time]").count() == 1
    assert page.locator("[data-status=submitted]").count() == n_items - 1
    assert page.locator("[data-status=over_time] .ann-status").inner_text() == "Over time"
    assert not Assignment.objects.filter(annotator=annotator2).exclude(opened_at=None).exists()
