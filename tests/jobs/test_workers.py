"""Concurrency, idempotency, pause, resume and cancel of judge runs, driven from threads of this process.

The driver (``judge_run_execute``) is called directly, once or twice at the same time, the way two
Celery deliveries of one task would call it; the fake server's log is the record of every HTTP call.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from arena.models import JudgeRun, OrderedJudgment
from jobs.models import RunDriver
from jobs.selectors import run_progress
from jobs.services import RunError, judge_run_cancel, judge_run_execute, judge_run_launch, judge_run_pause, judge_run_resume
from lit2test.models import JudgeTask

from .helpers import (
    OTHER_DRIVER,
    Background,
    accepted,
    chat_requests,
    claims_taken_by_another_driver,
    create_running,
    max_in_flight,
    per_task,
    wait_until,
    while_driver_runs,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _statuses(run: JudgeRun) -> dict[str, int]:
    counts: dict[str, int] = {}
    for status in JudgeTask.objects.filter(run=run).values_list("status", flat=True):
        counts[status] = counts.get(status, 0) + 1
    return counts


def test_slow_answers_are_awaited_concurrently(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(latency=0.3)
    run, _ = create_running(imported, fake_llm, select="sample:8", concurrency=8)

    assert judge_run_execute(run_id=run.pk) == "completed"

    starts = [e["t"] for e in chat_requests(fake_llm.log())]
    assert len(starts) == 16
    # Each request took at least the 0.3 s latency from its arrival, so these intervals under-count overlap.
    assert 4 <= max_in_flight(starts, 0.3) <= 8


def test_no_more_calls_are_in_flight_than_the_run_allows(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(latency=0.2)
    run, _ = create_running(imported, fake_llm, select="sample:4", concurrency=2)

    assert judge_run_execute(run_id=run.pk) == "completed"

    starts = [e["t"] for e in chat_requests(fake_llm.log())]
    assert len(starts) == 8
    assert max_in_flight(starts, 0.2) == 2


def test_two_drivers_on_one_run_share_the_work_without_doing_any_twice(imported, fake_llm) -> None:  # noqa: ANN001
    if connection.vendor == "sqlite":
        pytest.skip(
            "two drivers writing at once: the in-memory shared-cache SQLite test database answers 'database table is "
            "locked' instead of waiting like a file database; this runs on PostgreSQL"
        )
    fake_llm.script(latency=0.2)
    run, _ = create_running(imported, fake_llm, select="sample:10", concurrency=4)

    drivers = [Background(lambda: judge_run_execute(run_id=run.pk)) for _ in range(2)]
    for driver in drivers:
        driver.start()
    results = [driver.join_result() for driver in drivers]

    assert "completed" in results
    run.refresh_from_db()
    assert run.status == "completed"
    assert len(set(JudgeTask.objects.filter(run=run).values_list("claimed_by", flat=True))) == 2  # both drivers worked
    assert sorted(accepted(run)) == sorted(set(accepted(run))) and len(accepted(run)) == 20
    assert OrderedJudgment.objects.filter(run=run).count() == 20
    calls = per_task(fake_llm.log())
    assert len(calls) == 20 and set(calls.values()) == {1}


def test_a_finished_run_delivered_again_calls_nobody(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:5")
    assert judge_run_execute(run_id=run.pk) == "completed"
    assert len(chat_requests(fake_llm.log())) == 10

    assert judge_run_execute(run_id=run.pk) == "completed"
    # Even with the run forced back to running, every task is done: nothing is claimed, nobody is called.
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert judge_run_execute(run_id=run.pk) == "completed"

    assert len(chat_requests(fake_llm.log())) == 10
    assert OrderedJudgment.objects.filter(run=run).count() == 10 == len(set(accepted(run)))


def test_a_late_answer_after_the_lease_ran_out_is_discarded_counted_and_the_work_taken_back(imported, fake_llm) -> None:  # noqa: ANN001
    # A driver that missed its heartbeats (a frozen worker) lost its claims to another driver while its calls
    # were in flight: when its answers come back they must not be stored, but they were paid for and are counted.
    fake_llm.script(latency=1.0)
    run, _ = create_running(imported, fake_llm, select="sample:2", concurrency=4)

    first = Background(lambda: judge_run_execute(run_id=run.pk))
    first.start()
    wait_until(lambda: len(chat_requests(fake_llm.log())) == 4, timeout=10, what="the first driver's calls")
    claims_taken_by_another_driver("judge", run, JudgeTask.objects.filter(run=run))

    wait_until(lambda: JudgeTask.objects.filter(run=run, discarded=1).count() == 4, timeout=10, what="four discarded answers")
    assert OrderedJudgment.objects.filter(run=run).count() == 0  # every late answer was discarded
    tasks = list(JudgeTask.objects.filter(run=run))
    assert {t.claimed_by for t in tasks} == {"other-driver"}
    assert all(t.discarded_prompt_tokens > 0 and t.discarded_completion_tokens > 0 for t in tasks)
    # The first driver does not give up while another live driver holds the run's open work ...
    assert first.is_alive()

    # ... and when that driver dies, it takes the work back and does each task once more.
    while_driver_runs(lambda: RunDriver.objects.filter(token=OTHER_DRIVER).update(ended_at=timezone.now()))
    assert first.join_result() == "completed"
    log = chat_requests(fake_llm.log())
    assert len(log) == 8 and set(per_task(log).values()) == {2}
    assert len(accepted(run)) == 4 == len(set(accepted(run)))
    assert OrderedJudgment.objects.filter(run=run).count() == 4
    assert sorted(JudgeTask.objects.filter(run=run).values_list("calls", "discarded")) == [(2, 1)] * 4
    progress = run_progress(run=JudgeRun.objects.get(pk=run.pk))
    assert (progress.calls, progress.discarded) == (8, 4)


def test_a_task_kept_past_its_lease_by_its_own_driver_is_not_called_twice(imported, fake_llm) -> None:  # noqa: ANN001
    # One call at a time, 0.4 s each, while the driver keeps about two rounds claimed ahead with 0.5 s leases:
    # queued tasks outlive their lease before their turn comes.
    fake_llm.script(latency=0.4)
    run, _ = create_running(imported, fake_llm, select="sample:3", concurrency=1, lease_seconds=0.5)

    assert judge_run_execute(run_id=run.pk) == "completed"

    assert len(accepted(run)) == 6 == len(set(accepted(run)))  # the database kept one verdict each ...
    assert set(per_task(fake_llm.log()).values()) == {1}  # ... but each task should also have been asked once


def test_claims_of_dead_drivers_are_taken_over_at_once_and_live_ones_are_waited_for(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:4")
    expired, silent, alive, *_ = JudgeTask.objects.filter(run=run).order_by("id")
    now = timezone.now()
    RunDriver.objects.create(kind="judge", run_id=run.pk, token="silent-worker", worker="w1", seen_at=now - timedelta(minutes=5))
    RunDriver.objects.create(kind="judge", run_id=run.pk, token="busy-worker", worker="w2", seen_at=now)
    # An unregistered claimer whose lease ran out, a registered one that stopped heartbeating (its lease is still
    # long: the driver's silence is what counts), and a live one.
    JudgeTask.objects.filter(pk=expired.pk).update(status="claimed", claimed_by="gone", lease_until=now - timedelta(seconds=1))
    JudgeTask.objects.filter(pk=silent.pk).update(
        status="claimed", claimed_by="silent-worker", lease_until=now + timedelta(hours=1)
    )
    JudgeTask.objects.filter(pk=alive.pk).update(status="claimed", claimed_by="busy-worker", lease_until=now + timedelta(hours=1))

    driver = Background(lambda: judge_run_execute(run_id=run.pk))
    driver.start()
    wait_until(lambda: len(chat_requests(fake_llm.log())) == 7, timeout=30, what="seven calls")
    wait_until(lambda: JudgeTask.objects.filter(run=run, status="done").count() == 7, timeout=10, what="seven stored")

    assert driver.is_alive()  # waiting for the live driver's claim, not ending with the run still open
    alive.refresh_from_db()
    assert (alive.status, alive.claimed_by) == ("claimed", "busy-worker")
    assert (alive.pair_id, alive.order) not in accepted(run)
    assert {(expired.pair_id, expired.order), (silent.pair_id, silent.order)} <= set(accepted(run))

    # The busy driver stops heartbeating: its claim is taken over once and the run completes.
    while_driver_runs(lambda: RunDriver.objects.filter(token="busy-worker").update(seen_at=timezone.now() - timedelta(minutes=5)))
    assert driver.join_result() == "completed"
    calls = per_task(fake_llm.log())
    assert len(calls) == 8 and set(calls.values()) == {1}
    assert len(accepted(run)) == 8 == len(set(accepted(run)))
    assert RunDriver.objects.filter(kind="judge", run_id=run.pk, ended_at__isnull=False).count() == 1  # the driver said it ended


def test_a_resume_takes_back_the_claims_of_a_dead_driver_at_once(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:3")
    tasks = list(JudgeTask.objects.filter(run=run).order_by("id"))
    now = timezone.now()
    RunDriver.objects.create(kind="judge", run_id=run.pk, token="killed", worker="w", seen_at=now - timedelta(minutes=1))
    JudgeTask.objects.filter(pk__in=[t.pk for t in tasks[:2]]).update(
        status="claimed",
        claimed_by="killed",
        lease_until=now + timedelta(minutes=14),  # an old 900 s lease
    )
    JudgeRun.objects.filter(pk=run.pk).update(status="paused")

    assert judge_run_resume(run=run) == 6  # Celery runs in-process here: the driver has finished on return

    run.refresh_from_db()
    assert run.status == "completed"
    calls = per_task(fake_llm.log())
    assert len(calls) == 6 and set(calls.values()) == {1}
    assert list(JudgeTask.objects.filter(run=run).values_list("calls", flat=True)) == [1] * 6


def test_a_paused_run_resumes_with_only_the_missing_work(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(latency=0.2)
    run, _ = create_running(imported, fake_llm, select="sample:10", concurrency=2)

    driver = Background(lambda: judge_run_execute(run_id=run.pk))
    driver.start()
    # Six requests with two at a time means each worker stored its answers before asking again: at least four
    # judgments. Watching the server's log rather than the database keeps this thread off the database meanwhile.
    wait_until(lambda: len(chat_requests(fake_llm.log())) >= 6, timeout=30, what="six requests")
    while_driver_runs(lambda: judge_run_pause(run=run))
    assert driver.join_result() == "paused"

    run.refresh_from_db()
    assert run.status == "paused"
    done = set(accepted(run))
    assert 4 <= len(done) < 20 and len(done) == len(accepted(run))
    statuses = _statuses(run)
    assert statuses == {"done": len(done), "pending": 20 - len(done)}  # claims not yet started were given back
    before = chat_requests(fake_llm.log())
    assert len(before) == len(done)

    todo = judge_run_resume(run=run)  # Celery runs in-process here, so the driver has finished on return

    assert todo == 20 - len(done)
    after = chat_requests(fake_llm.log())
    assert len(after) - len(before) == todo
    assert not {e["task"] for e in after[len(before) :]} & {e["task"] for e in before}
    run.refresh_from_db()
    assert run.status == "completed"
    assert len(accepted(run)) == 20 == len(set(accepted(run)))
    assert OrderedJudgment.objects.filter(run=run).count() == 20


def test_resuming_a_completed_run_leaves_it_as_it_was(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:2")
    assert judge_run_execute(run_id=run.pk) == "completed"
    run.refresh_from_db()
    finished = run.finished_at

    try:
        judge_run_resume(run=run)
    except RunError:
        pass  # refusing is fine too

    run.refresh_from_db()
    assert (run.status, run.finished_at) == ("completed", finished)
    assert len(chat_requests(fake_llm.log())) == 4


def test_a_cancelled_run_stops_skips_its_pending_tasks_and_cannot_resume(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(latency=0.2)
    run, _ = create_running(imported, fake_llm, select="sample:10", concurrency=2)

    driver = Background(lambda: judge_run_execute(run_id=run.pk))
    driver.start()
    wait_until(lambda: len(chat_requests(fake_llm.log())) >= 4, timeout=30, what="four requests (two judgments)")
    while_driver_runs(lambda: judge_run_cancel(run=run))
    assert driver.join_result() == "cancelled"

    run.refresh_from_db()
    assert run.status == "cancelled" and run.finished_at is not None
    statuses = _statuses(run)
    assert statuses.get("skipped", 0) > 0
    assert statuses.get("done", 0) == len(accepted(run)) == len(chat_requests(fake_llm.log()))
    with pytest.raises(RunError, match="cancelled"):
        judge_run_resume(run=run)
    with pytest.raises(RunError):
        judge_run_launch(run=run)
    with pytest.raises(RunError):
        judge_run_pause(run=run)
    assert judge_run_execute(run_id=run.pk) == "cancelled"
    assert len(chat_requests(fake_llm.log())) == statuses.get("done", 0)


def test_no_task_of_a_cancelled_run_is_left_to_do(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(latency=0.2)
    run, _ = create_running(imported, fake_llm, select="sample:10", concurrency=2)

    driver = Background(lambda: judge_run_execute(run_id=run.pk))
    driver.start()
    wait_until(lambda: len(chat_requests(fake_llm.log())) >= 4, timeout=30, what="four requests (two judgments)")
    while_driver_runs(lambda: judge_run_cancel(run=run))
    assert driver.join_result() == "cancelled"

    statuses = _statuses(run)
    assert set(statuses) <= {"done", "skipped"}, statuses
