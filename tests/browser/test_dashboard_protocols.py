"""The dashboard with every protocol's demo benchmark, the study form and the judge-run form switching protocol, in
Chromium (issue 24, items 4 to 6): a table per protocol with its own columns, the imported rubric run done with a full
bar; the study form offering Lit2Test benchmarks only; on the judge-run form, choosing another benchmark swaps in its
protocol's fields without a reload and keeps what was typed, and without JavaScript the page's benchmark picker does
the same; axe finds nothing on these pages."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from arena.models import Benchmark, JudgeRun
from lit2test.release import release_import

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_benchmarks(release_dir: Path) -> dict[str, Benchmark]:
    """Each protocol's demo data (as ``make demo`` builds it; HypoArena with two cases per domain)."""
    from hypoarena import demo as hypoarena_demo
    from intrinsic import demo as intrinsic_demo
    from reconstruction import demo as reconstruction_demo

    hypoarena = hypoarena_demo.demo_build(cases_per_domain=2).benchmark
    reconstruction_demo.demo_build()
    intrinsic_demo.demo_build()
    return {
        "lit2test": release_import(directory=release_dir).benchmark,
        "hypoarena": hypoarena,
        "reconstruction": Benchmark.objects.get(name=reconstruction_demo.DEMO_NAME),
        "intrinsic": Benchmark.objects.get(name=intrinsic_demo.DEMO_NAME),
    }


def cell(page, protocol: str, benchmark: Benchmark, heading: str) -> str:  # noqa: ANN001
    """The text of a benchmark's cell under ``heading`` in its protocol's table."""
    headings = page.locator(f"#table-{protocol} thead th").all_inner_texts()
    return page.locator(f'#table-{protocol} tr[data-benchmark="{benchmark.pk}"] > *').nth(headings.index(heading)).inner_text()


def test_the_dashboard_shows_each_protocol_as_it_declares(page, researcher, demo_benchmarks, tmp_path: Path) -> None:  # noqa: ANN001
    from hypoarena import demo as hypoarena_demo
    from intrinsic import demo as intrinsic_demo

    log_in(page, "rita", "pw-rita")
    page.goto("/dashboard/")
    page.wait_for_load_state("networkidle")
    expect(page.locator("#run-table")).to_be_visible()  # the runs table came in (htmx)

    for protocol in demo_benchmarks:
        expect(page.locator(f"#table-{protocol}")).to_be_visible()
    assert page.locator("#table-lit2test thead th").all_inner_texts()[1:3] == ["Contexts", "With text"]
    arena, n_domains = demo_benchmarks["hypoarena"], len(hypoarena_demo.DOMAINS)
    assert cell(page, "hypoarena", arena, "Cases") == str(2 * n_domains)
    assert cell(page, "hypoarena", arena, "Models") == str(len(hypoarena_demo.STRENGTHS))
    assert cell(page, "hypoarena", arena, "Matches") == str(2 * n_domains * math.comb(len(hypoarena_demo.STRENGTHS), 2))
    assert cell(page, "hypoarena", arena, "Judge runs") == str(len(hypoarena_demo.JUDGES) + 1)  # and the rubric run
    papers = len(intrinsic_demo.DISCIPLINES) * intrinsic_demo.PAPERS_PER_DISCIPLINE
    assert cell(page, "intrinsic", demo_benchmarks["intrinsic"], "Papers") == f"{papers:,}"
    assert cell(page, "intrinsic", demo_benchmarks["intrinsic"], "Candidates") == f"{papers * intrinsic_demo.CANDIDATES:,}"
    assert "Contexts" not in page.locator("#table-hypoarena thead").inner_text()

    # The imported rubric run: done with what it holds, its bar full.
    rubric = JudgeRun.objects.get(benchmark=arena, run_type="rubric")
    row = page.locator(f'#run-table tr[data-run="{rubric.pk}"]')
    done = int(row.locator("td.done").inner_text().replace(",", ""))
    assert done == rubric.rubric_scores.count() > 0
    bar = row.locator("progress")
    assert bar.get_attribute("value") == bar.get_attribute("max") == str(done)

    assert violations(page) == []
    page.screenshot(path=str(tmp_path / "dashboard-all-protocols.png"), full_page=True)

    # The study form beside it offers Lit2Test benchmarks only, and says why.
    page.goto("/dashboard/studies/")
    page.wait_for_load_state("networkidle")
    options = page.locator("#id_benchmark option").evaluate_all("os => os.map(o => o.value)")
    assert options == [str(demo_benchmarks["lit2test"].pk)]
    expect(page.locator("#study-protocols")).to_contain_text("Studies are of Lit2Test benchmarks")
    assert violations(page) == []


def test_the_launch_form_switches_protocol_with_and_without_javascript(
    page, browser, live_server, researcher, demo_benchmarks
) -> None:  # noqa: ANN001
    log_in(page, "rita", "pw-rita")
    lit2test, arena, recon = demo_benchmarks["lit2test"], demo_benchmarks["hypoarena"], demo_benchmarks["reconstruction"]
    page.goto(f"/dashboard/runs/new/?benchmark={lit2test.pk}")
    page.wait_for_load_state("networkidle")
    expect(page.locator("#protocol-fields")).to_have_attribute("data-protocol", "lit2test")
    expect(page.locator("#benchmark-pick")).to_be_hidden()  # the picker is for pages without JavaScript
    assert violations(page) == []  # the Lit2Test fields, the adaptive fieldset and the cost-to-precision link included
    page.fill("input[name=judge_model]", "Judge-J")
    page.fill("input[name=base_url]", "http://127.0.0.1:9/v1")

    page.select_option("#id_benchmark", str(arena.pk))
    expect(page.locator("#protocol-fields")).to_have_attribute("data-protocol", "hypoarena")
    assert page.locator("#id_run_type option").evaluate_all("os => os.map(o => o.value)") == ["arena", "rubric"]
    expect(page.locator("input[name=orders]").first).to_be_visible()
    expect(page.locator("input[name=canonical]")).to_have_count(0)
    assert page.input_value("input[name=judge_model]") == "Judge-J"  # what was typed outside the swapped part stays
    assert re.search(rf"\?benchmark={arena.pk}$", page.url)  # a reload keeps the benchmark

    page.select_option("#id_benchmark", str(recon.pk))
    expect(page.locator("#protocol-fields")).to_have_attribute("data-protocol", "reconstruction")
    expect(page.locator("input[name=judge_family]")).to_be_visible()
    expect(page.locator("input[name=orders]")).to_have_count(0)
    assert violations(page) == []

    # Without JavaScript: the benchmark picker above the form reloads it for the chosen benchmark.
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False, viewport={"width": 1400, "height": 1000})
    plain = context.new_page()
    try:
        log_in(plain, "rita", "pw-rita")
        plain.goto(f"/dashboard/runs/new/?benchmark={lit2test.pk}")
        plain.select_option("#pick-benchmark", str(arena.pk))
        with plain.expect_navigation():
            plain.click("#benchmark-pick button[type=submit]")
        assert plain.locator("#protocol-fields").get_attribute("data-protocol") == "hypoarena"
        assert plain.locator("#id_benchmark").input_value() == str(arena.pk)
    finally:
        context.close()
