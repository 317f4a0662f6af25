"""Malformed answers, rate limits, server errors and timeouts, scripted on the fake server.

A malformed answer gets at most two more attempts and is then stored invalid with its reason; a
transient HTTP failure (429, 5xx, timeout) is retried with backoff; a permanent one fails the task.
"""

from __future__ import annotations

import pytest

import jobs.engine
from arena.models import JudgeRun, OrderedJudgment
from jobs.selectors import run_progress
from jobs.services import judge_run_execute, judge_run_resume
from lit2test.models import JudgeTask

from .helpers import accepted, chat_requests, create_running, per_task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without a server-sent Retry-After wait 10 ms instead of 0.5 s, 1 s, 2 s, ..."""
    monkeypatch.setattr(jobs.engine, "BACKOFF_BASE", 0.01)


def test_a_malformed_first_answer_is_retried_and_the_rejected_attempt_is_kept(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"attempts": [1], "malformed": "not json"}])
    run, _ = create_running(imported, fake_llm, select="sample:3")

    assert judge_run_execute(run_id=run.pk) == "completed"

    assert sorted(per_task(fake_llm.log()).values()) == [2] * 6
    judgments = OrderedJudgment.objects.filter(run=run)
    assert judgments.count() == 6 and len(set(accepted(run))) == 6
    for j in judgments:
        assert j.status == "accepted" and j.attempt == 2
        assert len(j.errors) == 1 and j.errors[0].startswith("attempt 1:") and "JSON" in j.errors[0]
        assert [(r["attempt"], r["raw"]) for r in j.metadata["rejected_attempts"]] == [(1, "not json")]
        assert j.raw_response != "not json" and j.verdict in ("A", "B", "TIE")
    assert set(JudgeTask.objects.filter(run=run).values_list("status", "calls")) == {("done", 2)}


def test_an_answer_malformed_every_time_is_stored_invalid_after_three_calls(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"attempts": "all", "malformed": "{broken"}])
    run, _ = create_running(imported, fake_llm, select="sample:3")

    assert judge_run_execute(run_id=run.pk) == "completed"

    assert sorted(per_task(fake_llm.log()).values()) == [3] * 6  # the first answer and two retries
    judgments = OrderedJudgment.objects.filter(run=run)
    assert judgments.count() == 6
    for j in judgments:
        assert (j.status, j.raw_response, j.attempt, j.verdict, j.winner_id) == ("invalid", "{broken", 3, None, None)
        assert [e.split(":")[0] for e in j.errors] == ["attempt 1", "attempt 2", "attempt 3"]
        assert all("JSON" in e for e in j.errors)
    for task in JudgeTask.objects.filter(run=run):
        assert task.status == "done" and task.calls == 3 and "JSON" in task.last_error
    progress = run_progress(run=JudgeRun.objects.get(pk=run.pk))
    assert (progress.accepted, progress.invalid, progress.failed, progress.remaining) == (0, 6, 0, 0)


def test_an_answer_missing_a_required_key_counts_as_malformed(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"attempts": [1], "missing_key": "confidence"}])
    run, _ = create_running(imported, fake_llm, select="sample:2")
    assert judge_run_execute(run_id=run.pk) == "completed"
    for j in OrderedJudgment.objects.filter(run=run):
        assert (j.status, j.attempt) == ("accepted", 2)
        assert j.errors == ["attempt 1: missing key 'confidence'"]

    fake_llm.script(failures=[{"attempts": "all", "missing_key": "confidence"}])
    run, _ = create_running(imported, fake_llm, select="sample:2")
    assert judge_run_execute(run_id=run.pk) == "completed"
    assert sorted(per_task(fake_llm.log()).values()) == [3] * 4
    for j in OrderedJudgment.objects.filter(run=run):
        assert (j.status, j.attempt) == ("invalid", 3)
        assert j.errors == [f"attempt {n}: missing key 'confidence'" for n in (1, 2, 3)]
        assert '"confidence"' not in j.raw_response and '"winner"' in j.raw_response


def test_a_rate_limited_call_waits_as_told_and_is_retried(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"attempts": [1, 2], "status": 429, "retry_after": 0.1}])
    run, _ = create_running(imported, fake_llm, select="sample:3")

    assert judge_run_execute(run_id=run.pk) == "completed"

    log = chat_requests(fake_llm.log())
    assert sorted(per_task(log).values()) == [3] * 6
    for key in {e["task"] for e in log}:
        calls = sorted((e for e in log if e["task"] == key), key=lambda e: e["attempt"])
        assert [e["status"] for e in calls] == [429, 429, 200]
        # Retry-After: 0.1 was honoured between the calls.
        assert calls[1]["t"] - calls[0]["t"] >= 0.1 and calls[2]["t"] - calls[1]["t"] >= 0.1
    assert set(JudgeTask.objects.filter(run=run).values_list("status", "calls")) == {("done", 3)}
    # A rate limit is not a malformed answer: the verdict came at the first parse attempt.
    judgments = OrderedJudgment.objects.filter(run=run)
    assert judgments.count() == 6
    assert all((j.status, j.attempt, j.errors) == ("accepted", 1, []) for j in judgments)


def test_a_server_error_on_the_first_call_is_retried(imported, fake_llm, quick_backoff) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"attempts": [1], "status": 500}])
    run, _ = create_running(imported, fake_llm, select="sample:3")

    assert judge_run_execute(run_id=run.pk) == "completed"

    assert sorted(per_task(fake_llm.log()).values()) == [2] * 6
    assert set(JudgeTask.objects.filter(run=run).values_list("status", "calls")) == {("done", 2)}
    assert len(set(accepted(run))) == 6 == OrderedJudgment.objects.filter(run=run).count()


def test_a_server_that_keeps_failing_fails_the_tasks_and_the_run_which_then_resumes(
    imported,
    fake_llm,
    quick_backoff,
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
) -> None:
    monkeypatch.setattr(jobs.engine, "MAX_TRANSIENT_RETRIES", 2)
    fake_llm.script(failures=[{"attempts": "all", "status": 500}])
    run, _ = create_running(imported, fake_llm, select="sample:3")

    assert judge_run_execute(run_id=run.pk) == "failed"

    assert sorted(per_task(fake_llm.log()).values()) == [3] * 6  # the first call and two retries
    run.refresh_from_db()
    assert run.status == "failed" and run.finished_at is not None
    for task in JudgeTask.objects.filter(run=run):
        assert (task.status, task.calls) == ("failed", 3)
        assert "HTTP 500" in task.last_error and "3 calls" in task.last_error
    assert not OrderedJudgment.objects.filter(run=run).exists()

    # The endpoint recovers; resuming the failed run redoes exactly the failed tasks.
    fake_llm.script()
    assert judge_run_resume(run=run) == 6
    run.refresh_from_db()
    assert run.status == "completed"
    assert sorted(per_task(fake_llm.log()).values()) == [1] * 6
    assert len(set(accepted(run))) == 6 == len(accepted(run))
    assert set(JudgeTask.objects.filter(run=run).values_list("status", "calls")) == {("done", 4)}


def test_a_client_error_is_not_retried(imported, fake_llm, quick_backoff) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"attempts": "all", "status": 400}])
    run, _ = create_running(imported, fake_llm, select="sample:2")

    assert judge_run_execute(run_id=run.pk) == "failed"

    assert sorted(per_task(fake_llm.log()).values()) == [1] * 4
    for task in JudgeTask.objects.filter(run=run):
        assert (task.status, task.calls) == ("failed", 1) and "HTTP 400" in task.last_error


def test_a_call_that_times_out_is_retried_and_the_next_answer_accepted(imported, fake_llm, quick_backoff) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"attempts": [1], "sleep": 2}])
    run, _ = create_running(imported, fake_llm, select="sample:2", timeout=0.5, concurrency=4)

    assert judge_run_execute(run_id=run.pk) == "completed"

    log = chat_requests(fake_llm.log())
    assert sorted(per_task(log).values()) == [2] * 4
    assert sorted(e["fault"] or "" for e in log if e["attempt"] == 1) == ["sleep 2"] * 4
    assert all(e["fault"] is None for e in log if e["attempt"] == 2)
    assert set(JudgeTask.objects.filter(run=run).values_list("status", "calls")) == {("done", 2)}
    for j in OrderedJudgment.objects.filter(run=run):
        assert (j.status, j.attempt, j.errors) == ("accepted", 1, [])
        assert j.latency_seconds is not None and j.latency_seconds < 2  # the stored answer is the retried one
