"""An annotator labels items with the keyboard alone, as in Label Studio or Prodigy (issue 24).

Digits answer the marked question and mark the next, K goes back a question, T picks the winner TIE and puts
the focus on the reason list (Esc leaves it for the confidence), A picks A, typing in the rationale types
(digits and the letters A, B and T included) and Ctrl+Enter submits. The legend names the keys in the page's
language, the progress bar counts the submitted items, and the screen stays axe-core clean with the mark
shown. On a wide screen in English and on a phone in Chinese.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Label
from annotation.rubric import DIMENSION_KEYS
from annotation.services import study_create
from lit2test.release import release_import

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"en": {"width": 1400, "height": 1000}, "zh-hans": {"width": 390, "height": 844}}
LEGEND = {"en": ("Keyboard shortcuts", "Next / previous question"), "zh-hans": ("键盘快捷键", "下一题 / 上一题")}
PROGRESS = {"en": "{done} of {total} done", "zh-hans": "已完成 {done} / {total}"}
# The keys for the ten scores, in the screen's order (per dimension, A then B), and what they store.
SCORE_KEYS = "3212312132"
RATIONALE = "Top 3 reasons: A and B tie at 2; T is fine."


def start_with_the_keyboard(page) -> None:  # noqa: ANN001
    """From the list, "next item" and then its Start button, with Tab-free focus and Enter only."""
    page.goto(reverse("annotation:home"))
    page.focus("a.ann-next")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.focus("[data-start-item]")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_load_state("networkidle")


def progress(page) -> tuple[str, str, str]:  # noqa: ANN001
    bar = page.locator("#ann-progress")
    return page.locator("label[for=ann-progress]").inner_text().strip(), bar.get_attribute("value"), bar.get_attribute("max")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_item_is_labelled_with_the_keyboard_only(
    browser, live_server, annotator, annotator2, release_dir: Path, language: str
) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    study = study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator, annotator2], n_naive_controls=0, seed=5)
    total = study.assignments.filter(annotator=annotator).count()
    context = browser.new_context(base_url=live_server.url, viewport=SIZES[language])
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        page.goto(reverse("login"))
        if language != "en":
            with page.expect_navigation():
                page.select_option("select[name=language]", language)
        log_in(page, "ann", "pw-ann")
        start_with_the_keyboard(page)
        assert not Label.objects.exists()
        assert page.locator("html").get_attribute("lang") == language
        assert progress(page) == (PROGRESS[language].format(done=0, total=total), "0", str(total))
        legend = page.locator("[data-shortcuts-help]").inner_text()
        assert all(text in legend for text in LEGEND[language]), f"the shortcut legend in {language} reads {legend!r}"

        reason = answer_with_the_keyboard(page, language)
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")
        page.wait_for_load_state("networkidle")
        check_the_stored_label(Label.objects.get(assignment__annotator=annotator), reason)

        # The next item: A picks the winner A from anywhere; the bar has moved on by one.
        page.focus("[data-start-item]")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        page.wait_for_load_state("networkidle")
        assert progress(page) == (PROGRESS[language].format(done=1, total=total), "1", str(total))
        page.keyboard.press("a")
        assert page.locator("input[name=choice][value=A]").is_checked()
        assert page.locator("#field-confidence").get_attribute("data-kbd-current") == ""
    finally:
        context.close()


def answer_with_the_keyboard(page, language: str) -> str:  # noqa: ANN001
    """Every question of the item by keys alone; returns the TIE reason that ArrowDown chose."""
    # Screening: 1 (coherent), then K back to it and 2 (partly); the ten scores; T for TIE: the reason list.
    page.keyboard.press("1")
    assert page.locator("input[name=screening][value=coherent]").is_checked()
    page.keyboard.press("k")
    assert page.locator("#field-screening").get_attribute("data-kbd-current") == ""
    page.keyboard.press("2")
    assert page.locator("input[name=screening][value=partly]").is_checked()
    assert page.locator("#field-a_grounding").get_attribute("data-kbd-current") == ""
    assert violations(page) == [], f"axe-core on the item screen with the shortcut mark ({language})"
    page.screenshot(path=f"/tmp/annotation_keyboard_{language}.png")
    for key in SCORE_KEYS:
        page.keyboard.press(key)
    page.keyboard.press("t")
    assert page.locator("input[name=choice][value=TIE]").is_checked()
    assert page.evaluate("document.activeElement.name") == "reason"
    page.keyboard.press("ArrowDown")  # the first TIE reason
    reason = page.locator("select[name=reason]").input_value()
    assert reason, "ArrowDown in the focused reason list should choose its first reason"
    page.keyboard.press("Escape")  # out of the list: the confidence is marked
    assert page.locator("#field-confidence").get_attribute("data-kbd-current") == ""
    page.keyboard.press("3")  # low: then the focus is in the rationale, where keys type
    assert page.locator("input[name=confidence][value=low]").is_checked()
    page.keyboard.type(RATIONALE)
    assert page.locator("textarea[name=rationale]").input_value() == RATIONALE
    assert page.locator("input[name=choice][value=TIE]").is_checked()  # the A, B and T typed did not pick
    assert page.locator("input[name=confidence][value=low]").is_checked()  # nor did the digits
    return reason


def check_the_stored_label(label: Label, reason: str) -> None:
    """The label holds what the keys answered (scores per dimension, A then B, as SCORE_KEYS typed them)."""
    typed = {
        (side, d): int(key) for (d, side), key in zip([(d, s) for d in DIMENSION_KEYS for s in "ab"], SCORE_KEYS, strict=True)
    }
    stored = {("a", d): int(label.scores_a[d]) for d in DIMENSION_KEYS} | {
        ("b", d): int(label.scores_b[d]) for d in DIMENSION_KEYS
    }
    assert label.screening == "partly" and label.choice == "TIE" and label.reason == reason
    assert label.confidence == "low" and label.rationale == RATIONALE
    assert stored == typed
