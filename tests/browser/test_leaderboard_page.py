from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.release import release_import

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


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

    # The page and the API agree.
    api = json.loads(page.goto(f"/api/benchmarks/{benchmark.pk}/leaderboard/?format=json").text())
    strengths = {m: round(v["strength"], 2) for m, v in api["bt"]["ordered"].items()}
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/leaderboard/")
    for i, model in enumerate(api["models"]):
        cells = page.locator("#table1 tbody tr").nth(i).locator("td")
        assert cells.nth(1).inner_text() == model
        assert cells.nth(2).inner_text().startswith(f"{strengths[model]:.2f} [")
