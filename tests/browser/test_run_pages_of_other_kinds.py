"""Run pages of kinds other than Lit2Test's judge runs in Chromium (issue 24, items 1 and 7): a scoring run's page,
reached from its row on the runs page, shows the run's progress, log and tasks, and axe finds nothing; a HypoArena
judge run's page lists new verdicts as they come in."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from arena.models import JudgeRun
from hypoarena.models import ArenaVerdict
from intrinsic.scoring import scoring_run_create, scoring_run_launch
from tests.intrinsic.helpers import make_benchmark

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]


def test_a_scoring_run_is_opened_from_the_runs_page(page, researcher, fake_llm, tmp_path: Path) -> None:  # noqa: ANN001
    run = scoring_run_create(
        benchmark=make_benchmark(tmp_path),
        model="toy",
        criterion="nll",
        logprobs_mode="raw_logprobs",
        base_url=fake_llm.base_url,
        papers="discipline:physics",
    )
    scoring_run_launch(run=run)  # Celery runs in process here: the run is done on return

    log_in(page, "rita", "pw-rita")
    page.goto("/dashboard/runs/")
    with page.expect_navigation():
        page.locator(f'tr[data-generation="{run.pk}"] a').click()
    assert page.url.endswith(f"/dashboard/runs/intrinsic_scoring/{run.pk}/")
    expect(page.locator("h1")).to_contain_text(f"Intrinsic scoring run #{run.pk}")
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("#task-table tbody tr")).to_have_count(6)
    page.locator("#run-log summary").click()
    expect(page.locator("#run-log li").first).to_be_visible()
    assert violations(page) == []


def test_another_kind_of_judge_run_lists_new_verdicts_on_top_as_they_come(page, researcher) -> None:  # noqa: ANN001
    """HypoArena's arena verdicts, on the engine's generic judge-run page: rows stored after the page was drawn come on
    top of its table without a reload (they travel in a <template>, the only way a <tr> survives outside a table)."""
    call_command("demo_hypoarena", "--cases", "2", stdout=StringIO())
    run = JudgeRun.objects.filter(subjects="hypoarena").first()
    held = list(ArenaVerdict.objects.filter(run=run).order_by("-id")[:3])  # newest first
    ArenaVerdict.objects.filter(pk__in=[v.pk for v in held]).delete()  # not stored yet when the page is drawn
    JudgeRun.objects.filter(pk=run.pk).update(status="running")

    log_in(page, "rita", "pw-rita")
    page.goto(f"/dashboard/runs/{run.pk}/")
    rows = page.locator("#judgment-list tr")
    before = rows.count()
    assert before > 0
    for verdict in reversed(held):  # stored again, oldest first: the newest gets the highest id
        verdict.pk = None
        verdict.save()
    expect(rows).to_have_count(before + 3)
    for row, verdict in zip(rows.all()[:3], held, strict=True):
        assert verdict.match.public_id in row.locator("td").first.inner_text()
        assert row.get_attribute("data-status") == verdict.status
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # no reload happened
    JudgeRun.objects.filter(pk=run.pk).update(status="completed")
    expect(page.locator("#verdict-feed")).to_have_attribute("data-live", "false")
