"""A scoring run has a page (issue 24, item 7): the runs list links it; it shows the run's endpoint, progress, log,
controls and every task with what it scored, follows the run live until it settles, and its controls pause, resume
and (after asking) cancel it. The engine's page serves every run kind without a page of its own (``jobs.kinds``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from intrinsic.models import Candidate, IntrinsicScoringRun, ScoringTask
from intrinsic.scoring import scoring_run_create, scoring_run_launch
from jobs.models import RunEvent
from tests.clients import client_for
from tests.fake_llm import FakeLLM

from .helpers import PAPERS, make_benchmark

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]
HTMX = {"HTTP_HX_REQUEST": "true"}


def _scored(tmp_path: Path, fake_llm: FakeLLM) -> IntrinsicScoringRun:
    """A completed scoring run of the toy model over the physics paper's six candidates."""
    run = scoring_run_create(
        benchmark=make_benchmark(tmp_path),
        model="toy",
        criterion="nll",
        logprobs_mode="raw_logprobs",
        base_url=fake_llm.base_url,
        papers="discipline:physics",
        concurrency=2,
    )
    scoring_run_launch(run=run)  # Celery runs in process here: the run is done on return
    run.refresh_from_db()
    assert run.status == "completed"
    return run


def test_the_runs_list_links_a_scoring_run_to_its_page_which_shows_its_tasks_log_and_progress(
    tmp_path: Path,
    fake_llm: FakeLLM,
    researcher: Any,  # noqa: ANN401
) -> None:
    run = _scored(tmp_path, fake_llm)
    client = client_for(researcher)
    page_url = f"/dashboard/runs/intrinsic_scoring/{run.pk}/"
    listing = client.get(reverse("jobs:runs")).content.decode()
    row = listing.split(f'data-generation="{run.pk}"', 1)[1].split("</tr>", 1)[0]
    assert f'<a href="{page_url}">#{run.pk}</a>' in row

    response = client.get(page_url)
    page = response.content.decode()
    assert response.status_code == 200
    assert f"Intrinsic scoring run #{run.pk}" in page and fake_llm.base_url in page
    assert re.search(r'id="run-status">completed<', page) and '<span id="done-count">6</span>' in page
    assert 'id="run-log"' in page and all(
        e.message in page for e in RunEvent.objects.filter(kind="intrinsic_scoring", run_id=run.pk)
    )
    assert "hx-trigger" not in page  # settled: nothing polls
    assert 'id="pause"' not in page and 'id="cancel"' not in page and 'id="resume"' not in page  # completed
    assert "nothing: the run ends when its tasks are done" in page  # scoring runs have no step after them
    # Every task with what it scored (the candidate: its paper and id), its state and its calls.
    rows = re.findall(r'<tr data-task="(\d+)" data-status="(\w+)"><td>#\d+</td><td class="judged">([^<]*)</td>', page)
    physics = next(p for p in PAPERS if p["discipline"] == "physics")
    assert sorted(about for _, _, about in rows) == sorted(
        f"{physics['paper_id']}/{c.external_id}" for c in Candidate.objects.filter(paper__external_id=physics["paper_id"])
    )
    assert {status for _, status, _ in rows} == {"done"} and len(rows) == ScoringTask.objects.filter(run=run).count() == 6
    assert '<p class="muted" id="task-count">6 tasks.</p>' in page
    assert "No task is failed." in client.get(page_url, {"status": "failed"}).content.decode()

    assert client.post(page_url).status_code == 405
    assert client.get(f"/dashboard/runs/no_such_kind/{run.pk}/").status_code == 404
    assert client.get(f"/dashboard/runs/intrinsic_scoring/{run.pk + 1000}/").status_code == 404


def test_a_running_scoring_run_is_followed_live_and_paused_cancelled_and_resumed_from_its_page(
    tmp_path: Path,
    fake_llm: FakeLLM,
    researcher: Any,  # noqa: ANN401
) -> None:
    run = _scored(tmp_path, fake_llm)
    IntrinsicScoringRun.objects.filter(pk=run.pk).update(status="running")  # as if under way
    client = client_for(researcher)
    page_url = f"/dashboard/runs/intrinsic_scoring/{run.pk}/"
    page = client.get(page_url).content.decode()
    assert f'hx-get="{page_url}?part=progress" hx-trigger="every 2s"' in page
    assert f'hx-get="{page_url}?part=tasks" hx-trigger="every 2s"' in page
    assert 'id="pause"' in page and 'id="cancel"' in page
    assert f'data-confirm="Cancel scoring run #{run.pk}? Tasks not yet started are skipped (Resume reopens them)' in page
    progress = client.get(page_url, {"part": "progress"}, **HTMX).content.decode()
    assert progress.startswith('<section id="progress"') and 'id="done-count">6<' in progress
    tasks = client.get(page_url, {"part": "tasks"}, **HTMX).content.decode()
    assert tasks.startswith('<div id="task-list"') and tasks.count("<tr data-task=") == 6

    response = client.post(f"{page_url}pause/")
    assert response.status_code == 302 and response["Location"] == page_url
    assert IntrinsicScoringRun.objects.get(pk=run.pk).status == "paused"
    assert 'id="resume"' in client.get(page_url).content.decode()

    # Cancelling asks first (no JavaScript: a page), naming what it does to a run of this kind.
    confirm = client.post(f"{page_url}cancel/").content.decode()
    assert f"Cancel scoring run #{run.pk}?" in confirm and "Resume reopens them" in confirm
    assert f'action="{page_url}cancel/"' in confirm and f'href="{page_url}" id="confirm-no"' in confirm
    assert IntrinsicScoringRun.objects.get(pk=run.pk).status == "paused"
    client.post(f"{page_url}cancel/", {"confirm": "yes"})
    assert IntrinsicScoringRun.objects.get(pk=run.pk).status == "cancelled"
    page = client.get(page_url).content.decode()
    assert 'id="resume"' in page and 'id="cancel"' not in page  # a cancelled scoring run resumes

    # Resumed: nothing is left to score, so the run closes again at once (Celery runs in process here).
    response = client.post(f"{page_url}resume/", follow=True)
    assert f"Scoring run {run.pk} resumed: 0 tasks reopened." in response.content.decode()
    assert IntrinsicScoringRun.objects.get(pk=run.pk).status == "completed"
    assert client.post(f"{page_url}explode/").status_code == 404


def test_only_researchers_see_a_scoring_run_page(tmp_path: Path, fake_llm: FakeLLM, annotator: Any, client: Any) -> None:  # noqa: ANN401
    run = _scored(tmp_path, fake_llm)
    page_url = f"/dashboard/runs/intrinsic_scoring/{run.pk}/"
    assert client.get(page_url).status_code == 302  # to the login page
    assert client_for(annotator).get(page_url).status_code == 403
    assert client_for(annotator).post(f"{page_url}cancel/", {"confirm": "yes"}).status_code == 403
    assert IntrinsicScoringRun.objects.get(pk=run.pk).status == "completed"
