"""Lit2Test pages, the Lit2Test API and judge runs of canonical pairs or controls refuse a HypoArena benchmark and say
where to go; the HypoArena page shows the benchmark (to researchers only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from hypoarena.importing import hypoarena_import, import_files
from jobs.services import JudgeRunRequest, RunError, judge_run_create
from tests.clients import client_for

from . import helpers as h

pytestmark = pytest.mark.django_db


@pytest.fixture
def arena_benchmark(tmp_path: Path) -> Benchmark:
    return hypoarena_import(name="arena-x", files=import_files([h.folder(tmp_path)])).benchmark


def test_the_lit2test_leaderboard_and_export_answer_404_naming_the_protocol_and_linking_its_page(
    researcher, arena_benchmark
) -> None:  # noqa: ANN001
    client = client_for(researcher)
    home = reverse("hypoarena:benchmark", args=[arena_benchmark.pk])
    for name in ("lit2test:leaderboard", "lit2test:benchmark-export"):
        response = client.get(reverse(name, args=[arena_benchmark.pk]))
        html = response.content.decode()
        assert response.status_code == 404, name
        assert "arena-x v1 is a HypoArena benchmark" in html and f'href="{home}"' in html


def test_the_benchmark_link_of_the_dashboard_leads_to_the_hypoarena_page(researcher, arena_benchmark) -> None:  # noqa: ANN001
    client = client_for(researcher)
    dashboard = client.get(reverse("arena:dashboard")).content.decode()
    table = dashboard[dashboard.index('id="benchmarks-hypoarena"') :].split("</section>")[0]
    row = table[table.index("arena-x v1") :].split("</tr>")[0]  # in the HypoArena table
    assert reverse("lit2test:leaderboard", args=[arena_benchmark.pk]) not in row
    response = client.get(reverse("arena:benchmark", args=[arena_benchmark.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("hypoarena:benchmark", args=[arena_benchmark.pk])


def test_the_lit2test_leaderboard_api_names_the_protocol_and_the_hypoarena_endpoint(researcher, arena_benchmark) -> None:  # noqa: ANN001
    response = client_for(researcher).get(reverse("lit2test:api-leaderboard", args=[arena_benchmark.pk]))
    assert response.status_code == 404
    assert response.json() == {
        "detail": f"arena-x v1 is a HypoArena benchmark: the Lit2Test leaderboard does not apply; its figures are at /api/benchmarks/{arena_benchmark.pk}/hypoarena/"
    }


@pytest.mark.parametrize(("pairs", "subjects"), [("all", "pairs"), ("controls", "controls")])
def test_a_pairs_or_controls_judge_run_is_refused_on_a_hypoarena_benchmark(arena_benchmark, pairs: str, subjects: str) -> None:  # noqa: ANN001
    request = JudgeRunRequest(benchmark=arena_benchmark, judge_model="judge-y", base_url="http://127.0.0.1:9/v1", select=pairs)
    with pytest.raises(RunError, match=f"arena-x v1 is a HypoArena benchmark: it has no Lit2Test {subjects} to judge"):
        judge_run_create(request=request)
    assert not JudgeRun.objects.filter(judge_model="judge-y").exists()


def test_the_hypoarena_page_shows_domains_models_and_runs_to_researchers_only(researcher, annotator, arena_benchmark) -> None:  # noqa: ANN001
    url = reverse("hypoarena:benchmark", args=[arena_benchmark.pk])
    response = client_for(researcher).get(url)
    html = response.content.decode()
    assert response.status_code == 200
    assert "singleton (K = 1)" in html and ">Reference</span>" in html and "judge-x" in html
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(researcher).post(url).status_code == 405


def test_the_hypoarena_page_of_a_lit2test_benchmark_is_a_404(researcher) -> None:  # noqa: ANN001
    lit = Benchmark.objects.create(name="lit")
    assert client_for(researcher).get(reverse("hypoarena:benchmark", args=[lit.pk])).status_code == 404
