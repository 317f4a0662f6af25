"""Small helpers shared by the judge- and generation-run tests (no assertions about the code live here)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from django.db import OperationalError, connections

from arena.models import Benchmark, JudgeRun, OrderedJudgment, Proposal
from jobs.services import JudgeRunRequest, judge_run_create

PARTICIPANTS = ("GPT 5.2", "Claude-Sonnet-4.6", "GLM-5", "DeepSeek-V3.2")
JUDGE = "Judge-Local"


def create_running(benchmark: Benchmark, fake: Any, **overrides: Any) -> tuple[JudgeRun, int]:
    """Create a run and mark it running without enqueueing a driver: the test drives it itself."""
    request = JudgeRunRequest(benchmark=benchmark, judge_model=JUDGE, base_url=fake.base_url, **overrides)
    run, skipped = judge_run_create(request=request)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    run.refresh_from_db()
    return run, skipped


def accepted(run: JudgeRun) -> list[tuple[int, str]]:
    """(pair id, order) of every accepted judgment of the run, duplicates kept."""
    return list(OrderedJudgment.objects.filter(run=run, status="accepted").values_list("pair_id", "order"))


def chat_requests(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in log if entry.get("task")]


def per_task(log: list[dict[str, Any]]) -> Counter[str]:
    """HTTP requests per fake-server task key (a hash of the messages: one key per ordered task)."""
    return Counter(entry["task"] for entry in chat_requests(log))


def user_text(entry: dict[str, Any]) -> str:
    return next(m["content"] for m in entry["messages"] if m["role"] == "user")


def all_text(entry: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in entry["messages"])


def hypothesis(context_id: int, participant_id: int) -> str:
    return Proposal.objects.get(context_id=context_id, participant_id=participant_id).content["hypothesis"]


def _locked(exc: OperationalError) -> bool:
    # The in-memory SQLite test database is shared-cache: a reader that meets another connection's write
    # gets "database table is locked" at once instead of waiting (a file database would wait its timeout).
    return "locked" in str(exc)


def wait_until(predicate: Callable[[], bool], *, timeout: float, interval: float = 0.05, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OperationalError as exc:
            if not _locked(exc):
                raise
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def while_driver_runs(fn: Callable[[], Any], attempts: int = 50) -> Any:
    """Call a service from the test thread while a driver thread writes; retried only on SQLite's shared-cache lock."""
    for _ in range(attempts - 1):
        try:
            return fn()
        except OperationalError as exc:
            if not _locked(exc):
                raise
            time.sleep(0.01)
    return fn()


OTHER_DRIVER = "other-driver"


def claims_taken_by_another_driver(kind: str, run: Any, tasks: Any) -> None:  # noqa: ANN401
    """As if another worker's driver (token :data:`OTHER_DRIVER`) had taken every claim of ``run``: its driver row
    and an hour's lease on each of ``tasks`` (the run's task queryset), written while the run's own driver writes."""
    from datetime import timedelta

    from django.utils import timezone

    from jobs.models import RunDriver

    while_driver_runs(
        lambda: RunDriver.objects.create(kind=kind, run_id=run.pk, token=OTHER_DRIVER, worker="elsewhere", seen_at=timezone.now())
    )
    while_driver_runs(lambda: tasks.update(claimed_by=OTHER_DRIVER, lease_until=timezone.now() + timedelta(hours=1)))


class Background(threading.Thread):
    """Runs ``fn`` in a thread with its own database connection; ``join_result()`` re-raises its error."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.fn = fn
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            self.error = exc
        finally:
            connections.close_all()

    def join_result(self, timeout: float = 60) -> Any:
        self.join(timeout)
        if self.is_alive():
            raise AssertionError(f"background call still running after {timeout}s")
        if self.error is not None:
            raise self.error
        return self.result


def max_in_flight(starts: list[float], duration: float) -> int:
    """Largest number of intervals [start, start + duration) that overlap at one instant."""
    events = sorted([(t, 1) for t in starts] + [(t + duration, -1) for t in starts], key=lambda e: (e[0], e[1]))
    best = current = 0
    for _, step in events:
        current += step
        best = max(best, current)
    return best
