"""axe-core finds no violation of moderate or higher impact on the drift-sentinels page (its table, chart and accept
button) and on the dashboard showing the drift alert; accepting from the page clears the alert."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from arena.models import JudgeRun
from lit2test.release import release_import
from tests.jobs.helpers import JUDGE

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_sentinels_page_and_the_drift_alert_are_accessible(
    page: Any,  # noqa: ANN401
    researcher: Any,  # noqa: ANN401
    release_dir: Path,
    fake_llm: Any,  # noqa: ANN401
    celery_in_process: None,
) -> None:
    benchmark = release_import(directory=release_dir).benchmark
    reference = JudgeRun.objects.filter(benchmark=benchmark, status="completed").order_by("id").first()
    assert reference is not None
    out = io.StringIO()
    call_command("sentinels", str(benchmark.pk), "--pin", str(reference.pk), "--size", "2", stdout=out)
    fake_llm.script(judge={"policy": "always_b"})  # some imported verdicts were A: B everywhere drifts
    for _ in range(2):
        call_command("sentinels", str(benchmark.pk), "--check", "--model", JUDGE, "--base-url", fake_llm.base_url, stdout=out)

    log_in(page, "rita", "pw-rita")
    page.goto("/dashboard/")
    assert page.locator("#sentinel-alerts").count() == 1
    found = {"dashboard": violations(page)}
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/sentinels/")
    assert page.locator("#sentinel-chart").count() == 1
    found["sentinels"] = violations(page)
    page.locator("#sentinel-configurations button[type=submit]").first.click()
    page.wait_for_load_state("networkidle")
    assert page.locator("#sentinel-configurations button[type=submit]").count() == 0
    found["accepted"] = violations(page)

    assert found == {"dashboard": [], "sentinels": [], "accepted": []}
