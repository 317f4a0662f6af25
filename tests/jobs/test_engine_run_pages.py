"""Every run kind has a page (issue 24, item 7): a run of a kind without a page of its own (here a Lit2Test
generation run) gets the engine's, with the step that follows its tasks (``jobs.kinds.Step``) as it stands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from lit2test.generation import generation_run_create, generation_run_launch
from lit2test.models import GenerationRun, GenerationTask
from lit2test.release import release_import
from tests.arena import builders
from tests.clients import client_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bench(tmp_path: Path) -> Benchmark:
    """One context every model has answered, and two no model has: every model is asked for a proposal on each."""
    contexts = [builders.context(c) for c in ("ctx_000__v1", "ctx_010__v1", "ctx_011__v1")]
    proposals = [builders.proposal("ctx_000__v1", m) for m in builders.MODELS]
    builders.write(tmp_path / "release", {"contexts.jsonl": contexts, "proposals.jsonl": proposals})
    return release_import(directory=tmp_path / "release", benchmark_name="engine-page-test").benchmark


def test_a_generation_run_page_shows_its_tasks_and_the_step_that_follows_them(bench, fake_llm, researcher) -> None:  # noqa: ANN001
    fake_llm.script(mode="generate")
    run = generation_run_create(benchmark=bench, base_url=fake_llm.base_url, concurrency=2)
    client = client_for(researcher)
    url = f"/dashboard/runs/generation/{run.pk}/"

    page = client.get(url).content.decode()
    assert f"Lit2Test generation run #{run.pk}" in page and 'id="run-status">pending<' in page
    assert "pair the new proposals for judging — once every task is done" in page
    # Each task names what it is about: its foreign keys but the run, as the model declares them.
    expected = sorted(f"{t.context.external_id} · {t.participant.name}" for t in GenerationTask.objects.filter(run=run))
    assert len(expected) == len(builders.MODELS) * 2
    assert (
        sorted(re.findall(r'<tr data-task="\d+" data-status="pending"><td>#\d+</td><td class="judged">([^<]*)</td>', page))
        == expected
    )
    assert 'id="cancel"' in page and 'id="pause"' not in page  # pending: it can be cancelled, not paused

    generation_run_launch(run=run)  # Celery runs in process here: the run and its step are done on return
    page = client.get(url).content.decode()
    assert 'id="run-status">completed<' in page
    assert 'pair the new proposals for judging — <span class="step-done">done</span>' in page
    assert "hx-trigger" not in page
    listing = client.get(reverse("jobs:runs")).content.decode()
    assert f'<a href="{url}">#{run.pk}</a>' in listing


def test_a_judge_run_s_engine_address_leads_to_its_own_page(imported, researcher) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get()
    response = client_for(researcher).get(f"/dashboard/runs/judge/{run.pk}/")
    assert response.status_code == 302 and response["Location"] == reverse("jobs:run", args=[run.pk])


def test_the_generation_form_leads_to_the_new_run_s_page(bench, fake_llm, researcher) -> None:  # noqa: ANN001
    fake_llm.script(mode="generate")
    values = {
        "benchmark": str(bench.pk),
        "base_url": fake_llm.base_url,
        "api_key_env": "",
        "contexts": "all",
        "temperature": "1",
        "max_tokens": "1600",
        "concurrency": "2",
    }
    response = client_for(researcher).post(reverse("lit2test:generation-new"), values)
    run = GenerationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/dashboard/runs/generation/{run.pk}/"
