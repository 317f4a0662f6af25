"""Intrinsic scoring's report page in Chromium (issue 14): reached from the demo benchmark's paper list, its main table
holds a row per scorer, the heat map a cell per discipline and scorer (each printing its value), a gold-rank chart per
scorer with a bar per rank; the bootstrap options redraw it; axe finds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.models import Benchmark
from intrinsic import demo

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_report_page_from_the_paper_list_with_its_table_heat_map_and_distributions(
    page, researcher, settings, tmp_path: Path
) -> None:  # noqa: ANN001
    settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES = 200  # the page's default replicates: few, so that the page is quick
    demo.demo_build()
    benchmark = Benchmark.objects.get(name=demo.DEMO_NAME)
    n_scoring = len(demo.MODELS) * len(demo.CRITERIA)
    n_scorers = n_scoring + 1  # and the listwise judge
    n_disciplines = len(demo.DISCIPLINES)

    log_in(page, "rita", "pw-rita")
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/")  # the dashboard's benchmark link opens the paper list
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/dashboard/benchmarks/{benchmark.pk}/intrinsic/")
    with page.expect_navigation():
        page.click("#report-link")
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/dashboard/benchmarks/{benchmark.pk}/intrinsic/report/")
    assert "200 replicates (seed 0)" in page.locator("#report-summary").inner_text()

    rows = page.locator("#intrinsic-table tbody tr[data-scorer]")
    assert rows.count() == n_scorers
    # The "All models" rows: NLL, energy, every intrinsic criterion together, and the listwise judge's.
    assert page.locator("#intrinsic-table tbody tr[data-group]").count() == 4
    assert page.locator("#intrinsic-table tbody tr[data-scorer].listwise-row").count() == 1
    assert page.locator("#intrinsic-table tr[data-scorer].listwise-row td[data-metric=mrr]").inner_text().startswith("—")
    assert page.locator("#listwise-note").is_visible()
    best = demo.scorer_name(*max(demo.GOLD_ADVANTAGE, key=demo.GOLD_ADVANTAGE.__getitem__))
    assert page.locator("#intrinsic-table tr.best-row").get_attribute("data-scorer") == best

    # The heat map: a row per discipline and the pooled row, a cell per scorer, each printing a percentage.
    assert page.locator("#heat-map tbody tr").count() == n_disciplines + 1
    cells = page.locator("#heat-map tbody td.heat[data-scorer]")
    assert cells.count() == (n_disciplines + 1) * n_scorers
    for text in cells.all_inner_texts()[:n_scorers]:
        assert 0 <= float(text.split("[")[0]) <= 100
    shaded = page.locator("#heat-map tbody td.heat").first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert shaded not in ("rgba(0, 0, 0, 0)", "transparent")  # the stylesheet loaded under the CSP

    # A chart per scorer: a bar per rank (the listwise judge's ranks 1–5 and the terminal rank).
    charts = page.locator(".rank-plot svg")
    assert charts.count() == n_scorers
    assert page.locator(f'.rank-plot[data-scorer="{best}"] rect.bar').count() == demo.CANDIDATES
    listwise = demo.scorer_name(demo.JUDGE, "listwise")
    assert page.locator(f'.rank-plot[data-scorer="{listwise}"] rect.bar').count() == 6
    counts = page.locator(f'.rank-plot[data-scorer="{best}"] rect.bar').evaluate_all("bars => bars.map(b => +b.dataset.count)")
    assert sum(counts) == len(demo.DISCIPLINES) * demo.PAPERS_PER_DISCIPLINE
    assert page.locator("#agreement-table tbody tr").count() == len(demo.CRITERIA)
    assert page.locator("#vs-baseline tbody tr").count() == n_scoring
    assert page.locator("#vs-best tbody tr").count() == n_scorers - 1
    assert violations(page) == []
    page.screenshot(path=str(tmp_path / "intrinsic-report.png"), full_page=True)

    # Other replicates and seed from the option bar.
    page.fill("#replicates-input", "30")
    page.fill("#seed-input", "4")
    with page.expect_navigation():
        page.click("#report-options button[type=submit]")
    assert "30 replicates (seed 4)" in page.locator("#report-summary").inner_text()
    assert page.locator("#intrinsic-table tbody tr[data-scorer]").count() == n_scorers
    assert page.locator("#json-link").get_attribute("href").endswith("?replicates=30&seed=4")
