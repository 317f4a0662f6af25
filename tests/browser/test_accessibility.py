"""axe-core (4.12, bundled by axe-playwright-python) finds no violation of moderate or higher impact on the pages
people spend their time in: the annotation screen (English and Chinese), the leaderboard, the runs dashboard,
a run's page and the study page, the controls pages, and HypoArena's leaderboard and inter-judge pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe

from annotation.models import Assignment
from annotation.services import study_create
from arena.models import JudgeRun
from controls.models import ControlVariant
from controls.services import controls_generate
from hypoarena.demo import demo_build
from lit2test.release import release_import

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SERIOUS = {"moderate", "serious", "critical"}


def violations(page) -> list[str]:  # noqa: ANN001
    """Every violation of moderate or higher impact, one readable line each (rule, impact, first offending nodes)."""
    results = Axe().run(page, options={"resultTypes": ["violations"]})
    found = []
    for v in results.response["violations"]:
        if v["impact"] in SERIOUS:
            targets = "; ".join(" ".join(n["target"]) for n in v["nodes"][:3])
            found.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {targets}")
    return found


def open_item(page, assignment: Assignment) -> None:  # noqa: ANN001
    """The item's screen, starting its clock the way a person does (the Start button of its interstitial)."""
    page.goto(f"/annotate/item/{assignment.token}/")
    start = page.locator("[data-start-item]")
    if start.count():
        with page.expect_navigation():
            start.first.click()
    page.wait_for_load_state("networkidle")


def test_the_main_pages_have_no_moderate_or_worse_axe_violations(page, researcher, annotator, release_dir: Path) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    study = study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator], n_naive_controls=1, seed=3)
    run = JudgeRun.objects.filter(benchmark=benchmark).first()
    assert run is not None
    controls_generate(benchmark=benchmark, kinds=["clear", "rendering"], contexts=1, seed=0)
    variant = ControlVariant.objects.filter(benchmark=benchmark, kind="clear").first()
    assert variant is not None
    hypoarena = demo_build(cases_per_domain=2, name="hypoarena-axe").benchmark

    log_in(page, "ann", "pw-ann")
    first = Assignment.objects.filter(annotator=annotator).order_by("position").first()
    found: dict[str, list[str]] = {}
    page.goto("/annotate/")
    found["annotator home"] = violations(page)
    open_item(page, first)
    found["annotation screen (en)"] = violations(page)
    with page.expect_navigation():
        page.select_option("select[name=language]", "zh-hans")
    page.wait_for_load_state("networkidle")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    found["annotation screen (zh)"] = violations(page)
    page.context.clear_cookies()

    log_in(page, "rita", "pw-rita")
    for name, url in [
        ("leaderboard", f"/dashboard/benchmarks/{benchmark.pk}/leaderboard/"),
        ("runs dashboard", "/dashboard/runs/"),
        ("run page", f"/dashboard/runs/{run.pk}/"),
        ("study page", f"/dashboard/studies/{study.pk}/"),
        ("dashboard", "/dashboard/"),
        ("control variants", f"/dashboard/benchmarks/{benchmark.pk}/controls/"),
        ("control review", f"/dashboard/controls/{variant.pk}/"),
        ("controls page", f"/dashboard/benchmarks/{benchmark.pk}/controls/report/"),
        ("HypoArena leaderboard", f"/dashboard/benchmarks/{hypoarena.pk}/hypoarena/leaderboard/?replicates=50"),
        ("HypoArena inter-judge page", f"/dashboard/benchmarks/{hypoarena.pk}/hypoarena/agreement/?replicates=50"),
    ]:
        page.goto(url)
        page.wait_for_load_state("networkidle")
        found[name] = violations(page)

    assert {name: v for name, v in found.items() if v} == {}
