"""Skip, flag, the guideline in place and the assigned order, as an annotator meets them (issue 24).

On a wide screen in English and on a phone in Chinese: the list links only the next item (the later ones say
"Later"), a crafted URL to a later item is refused with the next one named; on the work screen G opens the
guideline in a dialog over the screen (Esc closes it, the URL and the answers stay), F opens the flag panel and
Ctrl+Enter there sends the flag (back to the item, the answer given before kept), S and Ctrl+Enter skip to the next
item, and the list shows the skipped item with a link to return to it. Every page is axe-core clean (the dialog
open included) and none scrolls sideways.

The Chinese run reads the snippet of translations (/tmp/po_A.po) once it is merged into locale/zh_Hans.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Assignment, Flag, Label
from annotation.services import study_create
from lit2test.release import release_import

from .conftest import log_in
from .test_accessibility import violations
from .test_phones import sideways

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"en": {"width": 1400, "height": 1000}, "zh-hans": {"width": 390, "height": 844}}
TEXT = {
    "en": {
        "later": "Later",
        "refused": "Item 1 comes next.",
        "guide": "Order, skipping and flagging",
        "flagged": "You flagged this item once.",
        "skipped": "Item 1 skipped.",
        "return": "Return to it",
    },
    "zh-hans": {
        "later": "稍后",
        "refused": "下一条是第 1 条。",
        "guide": "顺序、跳过与报告问题",
        "flagged": "您已报告此条一次。",
        "skipped": "第 1 条已跳过。",
        "return": "回到此条",
    },
}
COMMENT = "The text of proposal B stops mid-sentence."


def checked(page, where: str) -> None:  # noqa: ANN001
    """The page is axe-core clean and fits its window."""
    assert violations(page) == [], f"axe-core on {where}"
    assert sideways(page) is None, f"{where}: {sideways(page)}"


def go(page, url: str) -> None:  # noqa: ANN001
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(url), f"expected {url}, at {page.url}"


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_skip_flag_guideline_and_order_on_the_work_screen(
    browser, live_server, annotator, release_dir: Path, language: str
) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    study = study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator], n_naive_controls=0, seed=5)
    first, second, third = Assignment.objects.filter(study=study, annotator=annotator).order_by("position")[:3]
    text = TEXT[language]
    context = browser.new_context(base_url=live_server.url, viewport=SIZES[language])
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        page.goto(reverse("login"))
        if language != "en":
            with page.expect_navigation():
                page.select_option("select[name=language]", language)
        log_in(page, "ann", "pw-ann")

        # The list: the next item has the links; the later ones none.
        page.goto(reverse("annotation:home"))
        assert page.locator(f'a[href*="{third.token}"]').count() == 0
        assert page.locator("tr[data-status=todo] .muted").first.inner_text() == text["later"]
        checked(page, f"the list ({language})")

        # A crafted URL to a later item: refused, naming item 1 with a link to it.
        response = page.goto(reverse("annotation:item-start", args=[third.token]))
        assert response is not None and response.status == 403
        assert text["refused"] in page.locator("[data-out-of-order]").inner_text()
        checked(page, f"the refusal ({language})")
        with page.expect_navigation():
            page.click("[data-next-item]")
        with page.expect_navigation():
            page.click("[data-start-item]")
        page.wait_for_load_state("networkidle")
        item_url = reverse("annotation:item", args=[first.token])
        assert page.url.endswith(item_url)

        # An answer, then the guideline in place: a dialog over the screen, nothing left or lost.
        page.keyboard.press("1")
        assert page.locator("input[name=screening][value=coherent]").is_checked()
        page.keyboard.press("g")
        dialog = page.locator("#guide-dialog")
        assert dialog.is_visible() and text["guide"] in dialog.inner_text()
        page.keyboard.press("a")  # keys are for the dialog while it is open: no winner picked behind it
        assert not page.locator("input[name=choice][value=A]").is_checked()
        checked(page, f"the work screen with the guideline open ({language})")
        page.screenshot(path=f"/tmp/annotation_guide_{language}.png")
        page.keyboard.press("Escape")
        assert not dialog.is_visible() and page.url.endswith(item_url)

        # F: the flag panel, the focus in its comment; Ctrl+Enter sends the flag, not the answers.
        page.keyboard.press("f")
        assert page.evaluate("document.activeElement.name") == "flag_comment"
        page.keyboard.type(COMMENT)
        page.locator("#flag").screenshot(path=f"/tmp/annotation_flag_panel_{language}.png")
        go(page, item_url)
        assert text["flagged"] in page.locator("[data-flagged]").inner_text()
        assert page.locator("input[name=screening][value=coherent]").is_checked()  # the answer sent along is kept
        assert list(Flag.objects.values_list("comment", flat=True)) == [COMMENT] and not Label.objects.exists()
        page.reload()
        assert page.locator("input[name=screening][value=coherent]").is_checked()  # and survives a reload
        checked(page, f"the work screen with a flag ({language})")

        # S: the skip panel; Ctrl+Enter skips to the next item's start page.
        page.keyboard.press("s")
        assert page.evaluate("document.activeElement.name") == "skip_reason"
        page.keyboard.type("reread later")
        go(page, reverse("annotation:item-start", args=[second.token]))
        assert text["skipped"] in page.locator("main").inner_text()
        first.refresh_from_db()
        assert first.skipped_at is not None and first.skip_reason == "reread later" and not Label.objects.exists()

        # The list: item 1 skipped with a link back to it, item 2 next.
        page.goto(reverse("annotation:home"))
        back = page.locator(f'tr[data-status=skipped] a[href="{item_url}"]')
        assert back.inner_text() == text["return"]
        checked(page, f"the list with a skipped item ({language})")
        with page.expect_navigation():
            back.click()
        assert page.locator("[data-skipped]").is_visible()
        assert page.locator("input[name=screening][value=coherent]").is_checked()
        page.screenshot(path=f"/tmp/annotation_skip_flag_{language}.png", full_page=False)
    finally:
        context.close()
