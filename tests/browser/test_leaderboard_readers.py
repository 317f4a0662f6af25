"""The leaderboard's readers' additions in Chromium (issue 24): at 1400 px the comparisons heat map is shaded with a count
in every cell and the scale switch moves Table 1 to the 1500 scale; at 390 px the page does not scroll sideways; axe-core
finds nothing at either size, with issue 26's honest intervals and style-controlled ranking on the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from lit2test.release import release_import

from .conftest import log_in
from .test_accessibility import violations
from .test_phones import PHONE, sideways

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_heat_map_and_the_scale_switch_at_desktop_and_phone_sizes(
    page, browser, live_server, researcher, release_dir: Path
) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    url = f"/dashboard/benchmarks/{benchmark.pk}/leaderboard/"
    log_in(page, "rita", "pw-rita")
    page.goto(f"{url}?style=length,citations,structure")  # with issue 26's style control, checked by axe below too

    cells = page.locator("#comparisons-map tbody td.cmp")
    assert cells.count() == 12  # 4 models: 12 ordered pairs off the diagonal
    # GPT 5.2 (first row) against Claude-Sonnet-4.6 (second column): 400 judgments, 252 won, 148 lost.
    assert cells.first.inner_text() == "400\nwins 0.63"
    assert all(text.startswith("400\n") for text in cells.all_inner_texts()), cells.all_inner_texts()
    # Every pair has the most judgments: the darkest shade, its text white, read without colour too.
    background = cells.first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background == "rgb(10, 74, 144)" and cells.first.evaluate("e => getComputedStyle(e).color") == "rgb(255, 255, 255)"
    assert page.locator("#comparisons-map caption").inner_text().startswith("Accepted ordered judgments")
    assert page.locator("#comparisons-map tbody th[scope=row]").count() == 4
    assert page.locator("#table1 tbody tr").nth(0).locator("td.rank-range").inner_text() == "1–1"
    assert page.locator("#table1 tbody tr").nth(0).locator("td.judgments").inner_text() == "1,200"
    assert page.locator("#last-updated time").get_attribute("datetime")
    # Issue 26: the honest intervals and the style-controlled ranking, a row per model; rank sets written as sets.
    assert page.locator("#table1 tbody tr").nth(0).locator("td.rank-set").inner_text() == "{1}"
    assert page.locator("#honest-table tbody tr").count() == 4 and page.locator("#style-table tbody tr").count() == 4
    assert page.locator("#drop-k").inner_text().startswith("The top rank (GPT 5.2) holds")
    assert violations(page) == []

    # The switch is a pair of links; the current one says so.
    assert page.locator("#scale-switch a[aria-current=true]").get_attribute("data-scale") == "log-ability"
    page.click("#scale-switch a[data-scale=elo]")
    page.wait_for_selector('#board[data-scale="elo"]')
    assert page.locator("#scale-switch a[aria-current=true]").get_attribute("data-scale") == "elo"
    assert page.locator("#table1 tbody tr").nth(0).locator("td").nth(2).inner_text().startswith("1720 [")
    # The fit selector keeps the scale.
    page.select_option("#fit-select", "stable")
    page.wait_for_selector('#table1[data-fit="stable"]')
    assert page.locator("#board").get_attribute("data-scale") == "elo"
    assert violations(page) == []

    phone = browser.new_context(base_url=live_server.url, **PHONE)
    phone.set_default_timeout(15_000)
    small = phone.new_page()
    log_in(small, "rita", "pw-rita")
    small.goto(f"{url}?scale=elo")
    assert sideways(small) is None, sideways(small)
    assert small.locator("#comparisons-map tbody td.cmp").count() == 12
    assert violations(small) == []
    phone.close()
