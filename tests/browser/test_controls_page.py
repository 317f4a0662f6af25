"""The Controls page in Chromium (issue 11: "the controls page works in Chromium"): reached from the leaderboard, its
run pickers switch the report, both Figure-3 plots are drawn with a point per estimate, and axe finds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.models import JudgeRun
from controls.demo import HOLISTIC_LABEL, REPLAY_LABEL, STRUCTURED_LABEL, demo_controls_record
from controls.import_export import controls_import
from controls.models import ControlVariant
from controls.services import controls_generate
from lit2test.release import release_import
from tests.controls import helpers as h

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]


def test_the_controls_page_from_the_leaderboard_with_its_pickers_and_plots(
    page, researcher, release_dir: Path, tmp_path: Path
) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    # The demo's template variants on 2 cases, and model-style subtle and sham variants of one source (imported), so that
    # both plots have points: clear and subtle drops for 3 dimensions each, and 3 sham-adjusted preferences.
    controls_generate(benchmark=benchmark, kinds=["clear", "rendering", "falsifier_off", "naive"], contexts=2, seed=0)
    source = h.sources(benchmark, 1)[0]
    lines = [h.line(source, kind, target) for kind in ("subtle", "sham") for target in h.TARGET_FIELD]
    controls_import(benchmark=benchmark, path=h.write(tmp_path / "subtle.jsonl", lines))
    ControlVariant.objects.filter(benchmark=benchmark).update(status=ControlVariant.Status.APPROVED)
    demo_controls_record(benchmark=benchmark)
    runs = {r.label: r for r in JudgeRun.objects.filter(benchmark=benchmark, subjects="controls")}
    assert runs[REPLAY_LABEL].status == "completed"

    log_in(page, "rita", "pw-rita")
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/leaderboard/")
    with page.expect_navigation():
        page.click("#controls-report-link")
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/dashboard/benchmarks/{benchmark.pk}/controls/report/")
    assert page.locator("h1").inner_text().startswith("Controls")
    # The default: the newest completed holistic run (the replay) with the structured run beside it.
    assert page.locator("#report").get_attribute("data-run") == str(runs[REPLAY_LABEL].pk)
    assert page.locator("#report").get_attribute("data-structured") == str(runs[STRUCTURED_LABEL].pk)
    assert page.locator("#demo-note").is_visible()
    assert page.locator("#drop-plot .interval-point").count() == 6
    assert page.locator('#drop-plot .interval-point[data-series="subtle"]').count() == 3
    assert page.locator("#adjusted-plot .interval-point").count() == 3
    assert page.locator("#drop-plot > title").text_content().startswith("Target-score drop")
    assert page.locator("#clear-table tbody tr").count() == 3 and page.locator("#subtle-table tbody tr").count() == 3
    page.screenshot(path=str(tmp_path / "controls.png"), full_page=True)
    assert violations(page) == []

    # The plotted values are in a table too.
    page.click("#figure-3 details.plot-table summary >> nth=0")
    assert page.locator("#drop-plot-table tbody tr").count() == 6

    # The structured run alone: its own scores, so both plots stay.
    with page.expect_navigation():
        page.select_option("#run-select", str(runs[STRUCTURED_LABEL].pk))
    page.wait_for_selector(f'#report[data-run="{runs[STRUCTURED_LABEL].pk}"]')
    assert "this run’s own scores" in page.locator("#structured-select option:checked").inner_text()
    assert page.locator("#drop-plot .interval-point").count() == 6

    # The imported holistic run, then no structured run: no score, so no drop plot; the sham-adjusted plot stays.
    with page.expect_navigation():
        page.select_option("#run-select", str(runs[HOLISTIC_LABEL].pk))
    page.wait_for_selector(f'#report[data-run="{runs[HOLISTIC_LABEL].pk}"]')
    with page.expect_navigation():
        page.select_option("#structured-select", "none")
    page.wait_for_selector('#report[data-structured=""]')
    assert page.locator("#drop-plot").count() == 0 and page.locator("#drop-plot-empty").is_visible()
    assert page.locator("#adjusted-plot .interval-point").count() == 3
    assert page.locator("#clear-table tbody tr").first.locator("td.target-drop").inner_text() == "needs a structured run"

    # And on to the variants it reports on.
    with page.expect_navigation():
        page.click("#variants-link")
    assert page.url.endswith(f"/dashboard/benchmarks/{benchmark.pk}/controls/")
