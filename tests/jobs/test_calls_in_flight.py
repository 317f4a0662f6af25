"""What a run's progress calls "in flight" is calls under way, not claimed tasks (issue 24, item 4): a driver claims
about two rounds of tasks ahead, but sends no more calls at once than the run's concurrency (its endpoint slots)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from arena.models import JudgeRun
from jobs.models import RunDriver
from jobs.selectors import run_progress
from lit2test.models import JudgeTask

from .helpers import create_running

pytestmark = pytest.mark.django_db


def _claim(run: JudgeRun, token: str, n: int) -> None:
    ids = list(JudgeTask.objects.filter(run=run, status="pending").values_list("pk", flat=True)[:n])
    JudgeTask.objects.filter(pk__in=ids).update(
        status="claimed", claimed_by=token, lease_until=timezone.now() + timedelta(minutes=1)
    )


def test_eleven_claimed_tasks_at_concurrency_four_are_four_calls_in_flight(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:8", concurrency=4)  # 16 ordered tasks
    RunDriver.objects.create(kind="judge", run_id=run.pk, token="busy", worker="w", seen_at=timezone.now())
    _claim(run, "busy", 11)
    progress = run_progress(run=run)
    assert (progress.remaining, progress.in_flight) == (16, 4)


def test_fewer_claimed_tasks_than_the_concurrency_are_each_a_call_and_none_without_a_live_driver(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:8", concurrency=4)
    _claim(run, "gone", 3)
    assert run_progress(run=run).in_flight == 0  # no driver holds them: nothing is being sent
    RunDriver.objects.create(kind="judge", run_id=run.pk, token="busy", worker="w", seen_at=timezone.now())
    assert run_progress(run=run).in_flight == 3
