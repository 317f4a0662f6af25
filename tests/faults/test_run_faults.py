"""Runs under faults, on a private deployment with real workers (the README's command, prefork pool):
a worker without the run's API key, a worker SIGKILLed mid-run, PostgreSQL and Redis stopped mid-run.

The promise checked each time: the run ends (completed, or failed with its reason), exactly one accepted
verdict per (pair, order), every call the endpoint saw is counted, and no manual step is needed.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.fake_llm import FakeLLM
from tests.jobs.helpers import chat_requests

from .stack import Stack, Worker

pytestmark = pytest.mark.services

RECOVERY_LIMIT = 180.0  # the promise: another worker finishes a dead worker's run within 3 minutes


def _launch(stack: Stack, fake: FakeLLM, *args: str, env: dict[str, str] | None = None) -> int:
    result = stack.manage("run_judge", "lit2test", "--model", "Judge-Local", "--base-url", fake.base_url, *args, env=env)
    return int(re.search(r"run: (\d+)", result.stdout).group(1))  # type: ignore[union-attr]


def _wait(stack: Stack, predicate, timeout: float, what: str) -> float:  # noqa: ANN001
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            if predicate():
                return time.monotonic() - started
        except Exception:  # noqa: BLE001 - the database may be down on purpose
            pass
        time.sleep(0.25)
    logs = "\n".join(f"--- {w.log_path.name}\n{w.log()[-2500:]}" for w in stack.workers)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}\n{logs}")


def _exactly_once(stack: Stack, run_id: int, tasks: int) -> None:
    accepted = stack.accepted(run_id)
    assert len(accepted) == tasks == len(set(accepted))
    assert stack.judgments(run_id) == tasks  # no second verdict, not even an invalid one


def _under_way(stack: Stack, fake: FakeLLM, *, pairs: int, stored: int, latency: float) -> tuple[Worker, int]:
    """A worker, and a run of ``pairs`` sample pairs at concurrency 4 with ``stored`` judgments already in."""
    fake.script(latency=latency)
    worker = stack.worker()
    run_id = _launch(stack, fake, "--pairs", f"sample:{pairs}", "--concurrency", "4")
    _wait(stack, lambda: len(stack.accepted(run_id)) >= stored, 60, f"{stored} judgments")
    return worker, run_id


def _calls_counted(stack: Stack, fake: FakeLLM, run_id: int) -> None:
    """Every call the endpoint saw is counted (written before it is sent); at most a dead worker's calls that were
    counted but never left it (one per concurrent slot) are extra."""
    seen = len(chat_requests(fake.log()))
    counted = stack.calls(run_id)
    assert seen <= counted <= seen + 4, (seen, counted)


def test_a_run_whose_worker_lacks_the_api_key_fails_with_the_reason_and_wait_exits_non_zero(
    fresh_stack: Stack, fake_llm: FakeLLM
) -> None:
    worker = fresh_stack.worker()  # its environment has no X_API_KEY
    secret = "sk-only-the-launcher-has-this"

    result = fresh_stack.manage(
        "run_judge",
        "lit2test",
        "--model",
        "Judge-Local",
        "--base-url",
        fake_llm.base_url,
        "--api-key-env",
        "X_API_KEY",
        "--pairs",
        "sample:3",
        "--wait",
        env={"X_API_KEY": secret},
        check=False,
        timeout=120,
    )

    assert result.returncode != 0, result.stdout
    run_id = int(re.search(r"run: (\d+)", result.stdout).group(1))  # type: ignore[union-attr]
    assert f"run {run_id} ended failed" in result.stderr
    assert "X_API_KEY" in result.stderr and "worker" in result.stderr and "resume" in result.stderr
    assert fresh_stack.run_status(run_id) == "failed"
    assert [code for code, _ in fresh_stack.events(run_id)][-1] == "driver_failed"
    assert chat_requests(fake_llm.log()) == []  # nothing was called
    assert secret not in result.stdout + result.stderr + worker.log()


def test_a_run_whose_worker_was_sigkilled_is_finished_by_another_worker_with_no_manual_step(
    fresh_stack: Stack, fake_llm: FakeLLM
) -> None:
    stack = fresh_stack
    first, run_id = _under_way(stack, fake_llm, pairs=30, stored=10, latency=0.4)

    first.kill()
    assert stack.run_status(run_id) == "running"
    killed_at = time.monotonic()
    second = stack.worker()  # the README's command, with default settings: no resume, no flag, nothing else
    up_after = time.monotonic() - killed_at

    took = _wait(stack, lambda: stack.run_status(run_id) == "completed", RECOVERY_LIMIT, "the run to be finished")

    print(f"recovered {up_after + took:.1f} s after the kill (worker up after {up_after:.1f} s)")
    assert up_after + took < RECOVERY_LIMIT
    _exactly_once(stack, run_id, 60)
    assert "relaunched" in [code for code, _ in stack.events(run_id)]  # the watchdog, not a broker redelivery
    _calls_counted(stack, fake_llm, run_id)
    assert second.alive()


def test_a_run_rides_out_postgresql_stopped_for_eight_seconds(fresh_stack: Stack, fake_llm: FakeLLM) -> None:
    stack = fresh_stack
    worker, run_id = _under_way(stack, fake_llm, pairs=25, stored=6, latency=0.3)

    stack.pg.stop("fast")  # terminates every connection
    time.sleep(8)
    stack.pg.start()

    _wait(stack, lambda: stack.run_status(run_id) == "completed", 150, "the run to complete after the outage")
    _exactly_once(stack, run_id, 50)
    assert worker.alive()
    codes = [code for code, _ in stack.events(run_id)]
    assert "database_outage" in codes or "relaunched" in codes
    _calls_counted(stack, fake_llm, run_id)


def test_a_worker_survives_redis_stopped_for_eight_seconds_and_its_run_completes(fresh_stack: Stack, fake_llm: FakeLLM) -> None:
    stack = fresh_stack
    worker, run_id = _under_way(stack, fake_llm, pairs=25, stored=6, latency=0.3)

    stack.redis.stop()  # broker and shared cache at once; without persistence its queues are lost too
    stopped = time.monotonic()
    # A run launched meanwhile is created (the launch cannot reach the broker and says so on the run) ...
    during = _launch(stack, fake_llm, "--pairs", "sample:3")
    time.sleep(max(0.0, 8 - (time.monotonic() - stopped)))
    stack.redis.start()

    _wait(stack, lambda: stack.run_status(run_id) == "completed", 120, "the run to complete after the outage")
    _exactly_once(stack, run_id, 50)
    assert worker.alive(), worker.log()[-3000:]
    assert "Error on stopping Hub" not in worker.log()
    # ... and started by a worker's watchdog once the broker is back.
    assert "broker_unreachable" in [code for code, _ in stack.events(during)]
    _wait(stack, lambda: stack.run_status(during) == "completed", 90, "the run launched during the outage")
    _exactly_once(stack, during, 6)

    # The worker is connected again: a run launched now is taken up and finished by it.
    later = _launch(stack, fake_llm, "--pairs", "sample:3")
    _wait(stack, lambda: stack.run_status(later) == "completed", 90, "a run launched after the outage")
    _exactly_once(stack, later, 6)
