"""Reconstruction's researcher pages in Chromium (issue 13): from the dashboard to the seed list, a seed's frozen
bibliography and audit, the results table, and a Swiss selection's bracket with its seed picker; axe finds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.models import Benchmark
from reconstruction import demo
from reconstruction.models import SwissSelection, SwissTournament

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_seed_list_seed_results_and_bracket_pages(page, researcher, tmp_path: Path) -> None:  # noqa: ANN001
    demo.demo_build()
    demo.demo_swiss()
    benchmark = Benchmark.objects.get(name=demo.DEMO_NAME)
    selection = SwissSelection.objects.get(benchmark=benchmark)
    seeds = list(
        SwissTournament.objects.filter(selection=selection)
        .values_list("seed_paper_id", flat=True)
        .distinct()
        .order_by("seed_paper_id")
    )

    log_in(page, "rita", "pw-rita")
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/")
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/dashboard/benchmarks/{benchmark.pk}/reconstruction/")  # the dashboard link opens the seed list
    assert page.locator("#seeds tbody tr").count() == len(demo.DOMAINS) * demo.SEEDS_PER_DOMAIN
    assert violations(page) == []

    with page.expect_navigation():
        page.locator("#seeds tbody tr a").first.click()
    assert "Frozen" in page.content() or "frozen" in page.content()
    assert violations(page) == []
    page.go_back()

    with page.expect_navigation():
        page.click("a.selection-link")
    assert page.locator("h1").inner_text().startswith(demo.DEMO_SELECTION)
    assert page.locator("section.bracket").count() == 5
    assert page.locator("section.bracket").first.locator("table.round").count() == 2  # three candidates: two rounds
    assert page.locator(".champion-line").count() == 5
    assert violations(page) == []
    page.screenshot(path=str(tmp_path / "bracket.png"), full_page=True)
    first_champion = page.locator(".champion-line").first.inner_text()

    with page.expect_navigation():
        page.select_option("#seed-choice", str(seeds[1]))
        page.click("form.inline button[type=submit]")
    assert page.url.endswith(f"?seed={seeds[1]}")
    assert page.locator("#seed-choice").input_value() == str(seeds[1])
    assert page.locator(".champion-line").count() == 5
    assert page.locator(".champion-line").first.inner_text() != first_champion  # another seed's hypotheses

    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/reconstruction/results/")
    assert demo.DEMO_SELECTION in page.locator("body").inner_text()  # the selection system has its own row
    assert violations(page) == []
