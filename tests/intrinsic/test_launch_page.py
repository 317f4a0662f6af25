"""The Intrinsic launch page: a scoring run from the dashboard with the command's service; a criterion the endpoint's
mode cannot give, and a form posted twice, are refused on the form with nothing made; researchers only.

The run is created inside the test's transaction, so its driver (enqueued on commit) never starts."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from django.urls import reverse

from arena.models import Benchmark
from intrinsic.models import IntrinsicScoringRun, Scorer, ScoringTask
from tests.clients import client_for, needs_postgresql, posted_at_once

from .test_runs import PAPERS, make_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def bench(tmp_path: Path) -> Benchmark:
    return make_benchmark(tmp_path)


def values(**extra: str) -> dict[str, str]:
    return {
        "model": "toy",
        "criterion": "nll",
        "logprobs_mode": "raw_logprobs",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "",
        "papers": "all",
        "concurrency": "4",
        "timeout": "30",
    } | extra


def test_researchers_only(bench: Benchmark, annotator, client) -> None:  # noqa: ANN001
    url = reverse("intrinsic:launch", args=[bench.pk])
    assert client.get(url).status_code == 302 and client_for(annotator).get(url).status_code == 403
    assert client_for(annotator).post(url, values()).status_code == 403 and not IntrinsicScoringRun.objects.exists()


def test_a_scoring_run_is_launched_and_refusals_make_nothing(bench: Benchmark, researcher) -> None:  # noqa: ANN001
    client = client_for(researcher)
    url = reverse("intrinsic:launch", args=[bench.pk])
    assert 'id="scoring-form"' in client.get(url).content.decode()
    body = html.unescape(client.post(url, values(criterion="energy")).content.decode())  # energy from a log-probability server
    assert "energy" in body and "raw_logits" in body and not IntrinsicScoringRun.objects.exists()
    body = html.unescape(client.post(url, values(concurrency="0")).content.decode())
    assert "Ensure this value is greater than or equal to 1." in body and not IntrinsicScoringRun.objects.exists()

    response = client.post(url, values())
    run = IntrinsicScoringRun.objects.get()
    # It leads to the run's own page (issue 24, item 7: scoring runs had none).
    assert response.status_code == 302 and response["Location"] == reverse("jobs:engine-run", args=["intrinsic_scoring", run.pk])
    assert ScoringTask.objects.filter(run=run).count() == sum(len(p["texts"]) for p in PAPERS)
    again = html.unescape(client.post(url, values()).content.decode())  # the same form posted twice
    assert IntrinsicScoringRun.objects.count() == 1 and "errorlist" in again
    links = client.get(reverse("intrinsic:benchmark", args=[bench.pk])).content.decode()
    assert url in links


@pytest.mark.django_db(transaction=True)
def test_a_new_scorer_posted_three_times_at_once_makes_one_scorer_and_run(tmp_path: Path, researcher) -> None:  # noqa: ANN001
    needs_postgresql("concurrent inserts that wait for each other's unique key need PostgreSQL")
    bench = make_benchmark(tmp_path)

    answers = posted_at_once(researcher, reverse("intrinsic:launch", args=[bench.pk]), values())

    run = IntrinsicScoringRun.objects.get()  # one run of one new scorer
    assert Scorer.objects.filter(benchmark=bench).count() == 1
    assert ScoringTask.objects.filter(run=run).count() == sum(len(p["texts"]) for p in PAPERS)
    # The first post launched it; each other was told so (302 to the runs) or, when it came after, refused on the
    # form because the scorer's run is active (200) - never a 500.
    assert len(answers) == 3 and all(a.status_code in (200, 302) for a in answers)
