"""Runs are never left "running" with nobody working on them: a driver that cannot start fails the run with
its reason; the watchdog relaunches runs whose drivers died and closes runs whose work is done; endpoint
slots of a dead process expire; a limiter whose cache is down fails open; a driver rides out database errors.

Celery runs in-process here (see conftest), so a relaunch executes its driver before the watchdog returns.
The same faults against real processes and services are in tests/faults.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from arena.models import JudgeRun
from jobs.engine import Driver, DriverHooks, run_blocking
from jobs.execution import runs_watchdog
from jobs.limits import EndpointLimiter
from jobs.models import RunDriver, RunEvent
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute
from lit2test.generation import generation_run_create, generation_run_execute
from lit2test.models import GenerationRun, JudgeTask

from .helpers import JUDGE, accepted, chat_requests, create_running, per_task

pytestmark = pytest.mark.django_db(transaction=True)


def _events(run_id: int, kind: str = "judge") -> list[str]:
    return list(RunEvent.objects.filter(kind=kind, run_id=run_id).order_by("id").values_list("code", flat=True))


def test_a_run_whose_worker_lacks_the_api_key_ends_failed_with_the_reason_on_its_page(
    imported,
    fake_llm,
    researcher,
    monkeypatch,  # noqa: ANN001
) -> None:
    monkeypatch.setenv("X_API_KEY", "sk-launcher-only")  # the launching process has it ...
    run, _ = judge_run_create(
        request=JudgeRunRequest(
            benchmark=imported, judge_model=JUDGE, base_url=fake_llm.base_url, api_key_env="X_API_KEY", select="sample:2"
        )
    )
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    monkeypatch.delenv("X_API_KEY")  # ... the worker does not

    assert judge_run_execute(run_id=run.pk) == "failed"

    run.refresh_from_db()
    assert run.status == "failed" and run.finished_at is not None
    assert chat_requests(fake_llm.log()) == []
    assert set(JudgeTask.objects.filter(run=run).values_list("status", flat=True)) == {"pending"}  # resumable as it is
    client = Client()
    client.force_login(researcher)
    page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert 'id="status-reason"' in page
    reason = page.split('id="status-reason" role="alert">', 1)[1].split("</p>", 1)[0]
    assert "X_API_KEY" in reason and "worker" in reason and "resume" in reason
    assert "sk-launcher-only" not in page
    api = client.get(reverse("jobs:api-run-progress", args=[run.pk])).json()
    assert api["status"] == "failed" and "X_API_KEY" in api["status_reason"]
    assert _events(run.pk)[-1] == "driver_failed"


def test_a_generation_run_whose_worker_lacks_the_api_key_ends_failed_with_the_reason(imported, fake_llm, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("GEN_API_KEY", "sk-x")
    imported.contexts.filter(has_text=True).first().proposals.all().delete()
    run = generation_run_create(benchmark=imported, base_url=fake_llm.base_url, api_key_env="GEN_API_KEY")
    GenerationRun.objects.filter(pk=run.pk).update(status="running")
    monkeypatch.delenv("GEN_API_KEY")

    assert generation_run_execute(run_id=run.pk) == "failed"

    assert chat_requests(fake_llm.log()) == []
    event = RunEvent.objects.filter(kind="generation", run_id=run.pk).latest("id")
    assert event.code == "driver_failed" and "GEN_API_KEY" in event.message


def test_the_watchdog_relaunches_a_running_run_whose_driver_died_and_the_work_is_done_once(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:3")
    first, second, *_ = JudgeTask.objects.filter(run=run).order_by("id")
    # A driver that was killed: its row stopped being renewed a minute ago, its claims carry a long lease.
    RunDriver.objects.create(
        kind="judge", run_id=run.pk, token="killed", worker="w", seen_at=timezone.now() - timedelta(minutes=1)
    )
    RunEvent.objects.create(kind="judge", run_id=run.pk, code="launched", message="launched")
    RunEvent.objects.filter(run_id=run.pk).update(created_at=timezone.now() - timedelta(minutes=2))
    JudgeTask.objects.filter(pk__in=[first.pk, second.pk]).update(
        status="claimed", claimed_by="killed", lease_until=timezone.now() + timedelta(minutes=10)
    )

    did = runs_watchdog()

    assert did == [
        f"judge run {run.pk}: relaunched (no driver heard from since "
        f"{RunDriver.objects.get(token='killed').seen_at:%H:%M:%S} UTC)"
    ]
    run.refresh_from_db()
    assert run.status == "completed"
    calls = per_task(fake_llm.log())
    assert len(calls) == 6 and set(calls.values()) == {1}
    assert len(accepted(run)) == 6 == len(set(accepted(run)))
    assert _events(run.pk)[-2:] == ["relaunched", "completed"]
    assert runs_watchdog() == []  # nothing left to do


def test_the_watchdog_leaves_a_run_with_a_live_driver_alone(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:2")
    RunDriver.objects.create(kind="judge", run_id=run.pk, token="alive", worker="w", seen_at=timezone.now())

    assert runs_watchdog() == []

    assert chat_requests(fake_llm.log()) == []
    assert JudgeRun.objects.get(pk=run.pk).status == "running"


def test_the_watchdog_closes_a_running_run_whose_work_is_all_done(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:2")
    assert judge_run_execute(run_id=run.pk) == "completed"
    # The last driver died between storing its last answer and closing the run.
    JudgeRun.objects.filter(pk=run.pk).update(status="running", finished_at=None)

    assert runs_watchdog() == [f"judge run {run.pk}: closed as completed"]

    assert JudgeRun.objects.get(pk=run.pk).status == "completed"
    assert len(chat_requests(fake_llm.log())) == 4


@override_settings(LIT2TEST_RELAUNCH_BACKOFF_SECONDS=60)
def test_the_watchdog_gives_a_waiting_launch_time_and_then_launches_again(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:2")
    RunEvent.objects.create(kind="judge", run_id=run.pk, code="launched", message="launched")  # no worker took it up yet

    assert runs_watchdog() == []
    assert chat_requests(fake_llm.log()) == []

    RunEvent.objects.filter(run_id=run.pk).update(created_at=timezone.now() - timedelta(seconds=61))
    did = runs_watchdog()

    assert len(did) == 1 and "was not taken up by any worker within 60 s" in did[0]
    assert JudgeRun.objects.get(pk=run.pk).status == "completed"


def test_a_launch_that_could_not_reach_the_broker_is_relaunched_at_the_next_round(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:2")
    RunEvent.objects.create(kind="judge", run_id=run.pk, code="launched", message="launched")
    RunEvent.objects.create(kind="judge", run_id=run.pk, code="broker_unreachable", message="no broker")

    did = runs_watchdog()

    assert did == [f"judge run {run.pk}: relaunched (the last launch could not reach the message broker)"]
    assert JudgeRun.objects.get(pk=run.pk).status == "completed"


def test_the_run_page_says_when_nobody_works_on_a_running_run(imported, fake_llm, researcher) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:2")
    RunEvent.objects.create(kind="judge", run_id=run.pk, code="launched", message="launched")
    client = Client()
    client.force_login(researcher)
    assert 'id="status-reason"' not in client.get(reverse("jobs:run", args=[run.pk])).content.decode()  # just launched

    RunEvent.objects.filter(run_id=run.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()

    assert "no worker is working on this run right now" in page and "celery -A lit2test_web worker" in page
    assert '<button id="resume">Resume now</button>' in page


# --------------------------------------------------------------------------- endpoint slots and the cache


def test_the_slots_of_a_process_that_stopped_renewing_them_expire_and_live_ones_do_not() -> None:
    async def scenario() -> tuple[bool, bool]:
        dead = EndpointLimiter(endpoint="http://slots.test/v1", concurrency=1, rate_per_second=None, slot_ttl=3)
        alive = EndpointLimiter(endpoint="http://slots.test/v1", concurrency=1, rate_per_second=None, slot_ttl=3)
        await dead._take_slot()
        await dead.close()  # the process died: nobody renews, nobody releases
        taken = await asyncio.wait_for(alive._take_slot(), timeout=8)  # within one TTL (plus polling)
        # The live holder renews its slot: a third limiter cannot take it for several TTLs.
        third = EndpointLimiter(endpoint="http://slots.test/v1", concurrency=1, rate_per_second=None, slot_ttl=3)
        try:
            await asyncio.wait_for(third._take_slot(), timeout=8)
            stolen = True
        except TimeoutError:
            stolen = False
        await alive.close()
        return taken is not None, stolen

    taken, stolen = run_blocking(scenario)  # not asyncio.run: a browser test may leave a loop running here
    assert taken and not stolen


@override_settings(
    CACHES={"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:9/0"}}
)
def test_a_run_completes_while_the_shared_cache_is_unreachable(imported, fake_llm) -> None:  # noqa: ANN001
    # Port 9 (discard) has no Redis: every limiter call fails, as during a Redis restart.
    run, _ = create_running(imported, fake_llm, select="sample:3", concurrency=2)

    assert judge_run_execute(run_id=run.pk) == "completed"

    calls = per_task(fake_llm.log())
    assert len(calls) == 6 and set(calls.values()) == {1}
    assert len(accepted(run)) == 6


# --------------------------------------------------------------------------- the engine and database errors


def test_the_driver_retries_database_errors_and_reports_the_outage() -> None:
    """Each step's first two attempts fail as a restarting database would; the run still ends with every task stored once."""
    failures: dict[str, int] = {}
    stored: list[int] = []
    outages: list[tuple[float, str]] = []
    tasks = list(range(1, 7))

    def flaky(name: str, fn):  # noqa: ANN001, ANN202
        def call(*args):  # noqa: ANN002, ANN202
            failures[name] = failures.get(name, 0) + 1
            if failures[name] <= 2:
                raise OperationalError("server closed the connection unexpectedly")
            return fn(*args)

        return call

    def claim(n: int, held: frozenset[int]) -> list[int]:
        taken = [t for t in tasks if t not in stored and t not in held][:n]
        return taken

    async def work(spec: int, before_call) -> int:  # noqa: ANN001
        await before_call()
        return spec * 10

    hooks = DriverHooks(
        claim=flaky("claim", claim),
        work=work,
        store=flaky("store", lambda batch: stored.extend(s for s, _ in batch)),
        release=lambda specs: None,
        still_running=flaky("still_running", lambda: True),
        heartbeat=lambda held: None,
        count_calls=flaky("count", lambda counts: None),
        others_open=lambda held: False,
        task_id=lambda spec: spec,
        on_error=lambda exc: None,
        on_outage=lambda seconds, error: outages.append((seconds, error)),
    )

    run_blocking(Driver(hooks=hooks, concurrency=2, db_patience=30).run)

    assert sorted(stored) == tasks
    assert len(outages) >= 4 and all("server closed the connection" in e for _, e in outages)


def test_the_driver_stops_when_the_database_stays_away_longer_than_its_patience() -> None:
    from jobs.engine import DatabaseUnavailable

    def down(*args):  # noqa: ANN002, ANN202
        raise OperationalError("could not connect to server: Connection refused")

    hooks = DriverHooks(
        claim=down,
        work=None,
        store=down,
        release=down,
        still_running=down,
        heartbeat=down,  # type: ignore[arg-type]
        count_calls=down,
        others_open=down,
        task_id=lambda spec: spec,
        on_error=lambda exc: None,
    )
    with pytest.raises(DatabaseUnavailable, match="unreachable for .* Connection refused"):
        run_blocking(Driver(hooks=hooks, concurrency=1, db_patience=1.0).run)
