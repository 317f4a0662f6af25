from __future__ import annotations

import json
from pathlib import Path

import pytest

from lit2test.release import release_import

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MINUS = "\u2212"

# The number of distinct line boxes the text of an element occupies.
LINE_BOXES = """el => {
  const range = document.createRange();
  range.selectNodeContents(el);
  const tops = new Set();
  for (const r of range.getClientRects()) { if (r.width > 0) tops.add(Math.round(r.top)); }
  return tops.size;
}"""


def test_a_researcher_sees_table_1_and_both_plots(page, researcher, release_dir: Path, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    log_in(page, "rita", "pw-rita")
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/leaderboard/")
    rows = page.locator("#table1 tbody tr")
    assert rows.count() == 4
    first = rows.nth(0).inner_text()
    assert "GPT 5.2" in first and "424–49–127" in first and "1.2" in first
    assert rows.nth(3).locator("td.model").inner_text() == "DeepSeek-V3.2"
    assert page.locator("#forest-plot .forest-row").count() == 4
    assert page.locator("#heat-map .heat-cell").count() == 16
    heat_titles = page.locator("#heat-map .heat-cell title").all_text_contents()
    assert "GPT 5.2 vs Claude-Sonnet-4.6: 90 stable wins, 38 stable losses, 72 order-sensitive" in heat_titles
    page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)

    # The page and the API agree (the page writes a real minus sign).
    api = json.loads(page.goto(f"/api/benchmarks/{benchmark.pk}/leaderboard/?format=json").text())
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/leaderboard/")
    for i, model in enumerate(api["models"]):
        cells = page.locator("#table1 tbody tr").nth(i).locator("td")
        assert cells.nth(1).inner_text() == model
        strength = f"{api['bt']['ordered'][model]['strength']:.2f}".replace("-", MINUS)
        assert cells.nth(2).inner_text().startswith(f"{strength} [")


def test_the_fit_and_decimals_selectors_switch_the_table(page, researcher, release_dir: Path) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    log_in(page, "rita", "pw-rita")
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/leaderboard/")
    gpt = page.locator("#table1 tbody tr").nth(0).locator("td").nth(2)
    assert gpt.inner_text() == "1.27 [1.14, 1.40]"
    assert "the paper’s Table 1" in page.locator("#fit-select option:checked").inner_text()

    page.select_option("#fit-select", "stable")
    page.wait_for_selector('#table1[data-fit="stable"]')
    assert "stable-only" in page.locator("#table1 thead").inner_text()
    assert page.locator("#table1 tbody tr").nth(0).locator("td").nth(2).inner_text().startswith("1.87 [")
    assert "The paper’s Table 1 prints the ordered fit." in page.locator("#fit-note").inner_text()

    page.select_option("#fit-select", "ordered")
    page.wait_for_selector('#table1[data-fit="ordered"]')
    page.select_option("#digits-select", "3")
    page.wait_for_selector('#table1[data-digits="3"]')
    assert page.locator("#table1 tbody tr").nth(0).locator("td").nth(2).inner_text().startswith("1.265 [")
    assert page.locator("#table1 tbody tr").nth(2).locator("td").nth(2).inner_text().startswith(f"{MINUS}0.731 [")


def test_values_stay_on_one_line_numbers_align_right_and_plots_fill_the_width(page, researcher, release_dir: Path) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    log_in(page, "rita", "pw-rita")
    page.set_viewport_size({"width": 900, "height": 1000})  # narrow: a value that may wrap does
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/leaderboard/")
    page.click("#batch-strengths summary")  # folded by default: unfold it so its values are laid out too
    cells = page.locator("#table1 tbody td.num, #fits-table td.num, #batches td.nowrap, #cluster-bootstrap td.num")
    assert cells.count() > 60
    for k in range(cells.count()):
        cell = cells.nth(k)
        assert cell.evaluate(LINE_BOXES) == 1, cell.inner_text()
    # Figures are right-aligned in tabular digits.
    strength = page.locator("#table1 tbody tr").nth(0).locator("td").nth(2)
    assert strength.evaluate("el => getComputedStyle(el).textAlign") == "right"
    assert strength.evaluate("el => getComputedStyle(el).fontVariantNumeric") == "tabular-nums"
    # Per-batch orderings: one line per batch.
    rows = page.locator("#batches > .table-scroll tbody tr")
    assert rows.count() == 5
    for k in range(5):
        assert rows.nth(k).evaluate("el => el.getBoundingClientRect().height") < 40
    # The forest plot and the heat map each span the board.
    board = page.locator("#board").bounding_box()["width"]
    for plot in ("#forest-plot", "#heat-map"):
        assert page.locator(plot).bounding_box()["width"] >= 0.9 * board, plot
