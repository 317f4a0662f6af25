"""The judge-reliability panel on a run page in Chromium (issue 26): every figure filled (a run that recorded which
side was shown first, with invalid answers whose examples open), and axe finds nothing of moderate or worse impact."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.models import JudgeRun, OrderedJudgment
from lit2test.release import release_import

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_panel_of_a_run_with_every_figure_is_axe_clean(page, researcher, release_dir: Path) -> None:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    source = benchmark.runs.get()
    run = JudgeRun.objects.create(benchmark=benchmark, label="sides", judge_model="Claude-Judge", provider="recorded")
    rows = [
        OrderedJudgment(
            run=run,
            pair_id=j.pair_id,
            order=j.order,
            shown_a_id=j.pair.participant_a_id if j.order == "original" else j.pair.participant_b_id,
            winner_id=j.winner_id,
        )
        for j in OrderedJudgment.objects.filter(run=source).select_related("pair")
    ]
    rows[0].status, rows[0].winner_id, rows[0].raw_response, rows[0].errors = "invalid", None, "<b>not json", ["no JSON object"]
    OrderedJudgment.objects.bulk_create(rows)

    log_in(page, "rita", "pw-rita")
    page.goto(f"/dashboard/runs/{run.pk}/")
    panel = page.locator("#reliability")
    assert panel.locator("#rel-order-effect td.num").inner_text() not in ("", "—")
    page.locator("#rel-invalid-examples summary").click()
    assert "<b>not json" in panel.locator("#rel-invalid-examples").inner_text()  # shown as text, never as markup
    assert violations(page) == []
