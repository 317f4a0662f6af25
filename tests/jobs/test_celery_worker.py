"""End to end through a real Celery worker process (PostgreSQL + Redis): launch, duplicate delivery, and a
worker killed in the middle of a run.

The worker is ``celery -A lit2test_web worker --pool=threads`` started here with the test database's URL;
it calls the fake LLM server like any endpoint. Without PostgreSQL and Redis these tests skip, unless
LIT2TEST_REQUIRE_SERVICES is set (CI), where they fail instead.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from arena.models import JudgeRun, OrderedJudgment
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_launch, judge_run_resume
from jobs.tasks import judge_run_execute_task
from lit2test.models import JudgeTask

from .helpers import JUDGE, accepted, chat_requests, per_task, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]


def _status(run: JudgeRun) -> str:
    return JudgeRun.objects.get(pk=run.pk).status


def _create(benchmark, fake, **overrides) -> JudgeRun:  # noqa: ANN001, ANN003
    run, _ = judge_run_create(
        request=JudgeRunRequest(benchmark=benchmark, judge_model=JUDGE, base_url=fake.base_url, **overrides)
    )
    return run


def test_a_launched_run_is_completed_by_a_worker(imported, fake_llm, celery_worker) -> None:  # noqa: ANN001
    worker = celery_worker()
    run = _create(imported, fake_llm, select="sample:5")

    judge_run_launch(run=run)  # enqueued on commit, as the dashboard does

    wait_until(
        lambda: _status(run) == "completed", timeout=60, interval=0.2, what=f"the worker to finish\n{worker.log()[-2000:]}"
    )
    assert len(accepted(run)) == 10 == len(set(accepted(run)))
    calls = per_task(fake_llm.log())
    assert len(calls) == 10 and set(calls.values()) == {1}
    assert "judge_run_execute_task" in worker.log()


def test_a_run_delivered_three_times_is_judged_once(imported, fake_llm, celery_worker) -> None:  # noqa: ANN001
    worker = celery_worker()
    fake_llm.script(latency=0.1)
    run = _create(imported, fake_llm, select="sample:10", concurrency=4)

    judge_run_launch(run=run, drivers=2)
    judge_run_execute_task.delay(run.pk)

    wait_until(lambda: _status(run) == "completed", timeout=60, interval=0.2, what="the run to complete")
    wait_until(lambda: worker.log().count("succeeded in") >= 3, timeout=30, what="all three deliveries to return")
    assert len(accepted(run)) == 20 == len(set(accepted(run)))
    assert OrderedJudgment.objects.filter(run=run).count() == 20
    calls = per_task(fake_llm.log())
    assert len(calls) == 20 and set(calls.values()) == {1}


def test_a_run_whose_worker_was_killed_resumes_with_only_the_missing_work(imported, fake_llm, celery_worker) -> None:  # noqa: ANN001
    first = celery_worker()
    fake_llm.script(latency=0.3)
    # A short request timeout keeps the endpoint slots the killed worker leaves behind short-lived (see below).
    run = _create(imported, fake_llm, select="sample:12", concurrency=2, lease_seconds=2, timeout=1.0)
    judge_run_launch(run=run)
    wait_until(lambda: len(accepted(run)) >= 5, timeout=60, what="five judgments")

    first.kill()

    assert _status(run) == "running"
    done = set(accepted(run))
    assert 5 <= len(done) < 24
    claimed = JudgeTask.objects.filter(run=run, status="claimed")
    assert claimed.exists()
    expiry = max(claimed.values_list("lease_until", flat=True))
    wait_until(lambda: timezone.now() > expiry, timeout=10, what="the dead worker's leases to run out")
    # The dead worker's endpoint slots (shared cache) expire after one request timeout plus a margin; meanwhile
    # the resumed driver's heartbeat keeps its own claims alive, so waiting on them never causes a second call.
    done = set(accepted(run))
    before = chat_requests(fake_llm.log())

    second = celery_worker()
    todo = judge_run_resume(run=run)

    assert todo == 24 - len(done)
    wait_until(lambda: _status(run) == "completed", timeout=60, interval=0.2, what=f"the resumed run\n{second.log()[-2000:]}")
    assert len(accepted(run)) == 24 == len(set(accepted(run)))
    assert OrderedJudgment.objects.filter(run=run).count() == 24
    after = chat_requests(fake_llm.log())
    assert len(after) - len(before) == todo
    assert len({e["task"] for e in after[len(before) :]}) == todo  # each missing task asked once
