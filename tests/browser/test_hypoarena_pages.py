"""HypoArena's leaderboard and inter-judge pages in Chromium (issue 12: "pages work in Chromium"): reached from the
dashboard's row of the demo benchmark, their run pickers switch the figures, the interval plots are drawn with a point
per model and fit, and axe finds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.models import Benchmark
from hypoarena.demo import REFERENCE, STRENGTHS, demo_build
from hypoarena.reports import arena_runs

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_leaderboard_and_inter_judge_pages_from_the_dashboard_with_their_run_pickers(
    page, researcher, settings, tmp_path: Path
) -> None:  # noqa: ANN001
    settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES = 30  # the pages' default replicates: few, so that each page is quick
    demo_build(cases_per_domain=3, name="demo-browser")
    benchmark = Benchmark.objects.get(name="demo-browser")
    run_1, run_2 = arena_runs(benchmark=benchmark)
    n_models = len(STRENGTHS)

    log_in(page, "rita", "pw-rita")
    page.goto("/dashboard/")
    row = page.locator("tr", has_text="demo-browser v1")
    with page.expect_navigation():
        row.locator("a.hypoarena-leaderboard-link").click()
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/dashboard/benchmarks/{benchmark.pk}/hypoarena/leaderboard/")
    assert page.locator("h1").inner_text().startswith("HypoArena leaderboard")
    assert page.locator("#board").get_attribute("data-run") == str(run_1.pk)
    assert page.locator("#hypoarena-table tbody tr").count() == n_models
    assert page.locator("#hypoarena-table tr.reference-row th").inner_text().startswith(REFERENCE)
    # A plot per domain and one of the pooled fit, a point per model in each.
    assert page.locator("#rating-plots svg.interval-plot").count() == 4
    assert page.locator("#plot-pooled .interval-point").count() == n_models
    assert "30 case-bootstrap replicates" in page.locator("#run-summary").inner_text()
    assert violations(page) == []
    page.screenshot(path=str(tmp_path / "hypoarena-leaderboard.png"), full_page=True)

    # The second judge's run, with other replicates and seed from the option bar.
    with page.expect_navigation():
        page.select_option("#run-select", str(run_2.pk))
    page.wait_for_selector(f'#board[data-run="{run_2.pk}"]')
    assert "demo-judge-2" in page.locator("#run-summary").inner_text()
    page.fill("#replicates-input", "12")
    page.fill("#seed-input", "5")
    with page.expect_navigation():
        page.click("#board-options button[type=submit]")
    assert "12 case-bootstrap replicates (seed 5)" in page.locator("#run-summary").inner_text()
    assert page.locator("#board").get_attribute("data-run") == str(run_2.pk)

    # The inter-judge page, from the page's own navigation: the first two arena runs by default.
    with page.expect_navigation():
        page.click("#agreement-link")
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/dashboard/benchmarks/{benchmark.pk}/hypoarena/agreement/")
    assert page.locator("#agreement").get_attribute("data-run-a") == str(run_1.pk)
    assert page.locator("#agreement").get_attribute("data-run-b") == str(run_2.pk)
    assert page.locator("#agreement-table tbody tr").count() == 4  # three domains and the pooled row
    assert page.locator("#ratings-table tbody tr").count() == n_models
    rho = page.locator("#pooled-spearman").inner_text()
    assert -1 <= float(rho.replace("\u2212", "-")) <= 1
    assert violations(page) == []
    page.screenshot(path=str(tmp_path / "hypoarena-agreement.png"), full_page=True)

    # Judge A to the second run: both pickers then name one run, and the page says to pick two ...
    with page.expect_navigation():
        page.select_option("#run-a-select", str(run_2.pk))
    assert "pick two different arena runs" in page.locator("#report-problem").inner_text()
    # ... and judge B to the first run swaps the comparison.
    with page.expect_navigation():
        page.select_option("#run-b-select", str(run_1.pk))
    page.wait_for_selector(f'#agreement[data-run-a="{run_2.pk}"][data-run-b="{run_1.pk}"]')
    assert page.locator("#pooled-spearman").inner_text() == rho  # ρ is symmetric in the two judges
    assert page.locator("#agreement-table tbody tr").count() == 4

    # Back to the benchmark's own page, which links both.
    with page.expect_navigation():
        page.click("#benchmark-link")
    assert page.locator("#agreement-link").count() == 1 and page.locator("#leaderboard-link").count() == 1
