"""The endpoint limiter: its bound holds across drivers and processes, rate permits are shared, slots are kept
across calls (no round trip per call), and a driver holds only its share of the slots.

In-flight intervals are recorded inside the slot (start after entering, end before leaving), so counting the
overlap of the recorded intervals can only under-count what the limiter allowed, never over-count it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from jobs.engine import run_blocking
from jobs.limits import EndpointLimiter, LocalBackend, LocalState

ROOT = Path(__file__).resolve().parents[2]


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    """Most intervals open at once; an interval that ends at the instant another starts does not overlap it."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals], key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def test_max_overlap_counts_by_hand() -> None:
    assert max_overlap([(0, 1), (1, 2), (2, 3)]) == 1
    assert max_overlap([(0, 3), (1, 2), (1.5, 4), (3.5, 5)]) == 3


async def _hold(limiter: EndpointLimiter, calls: int, workers: int, seconds: float) -> list[tuple[float, float]]:
    intervals: list[tuple[float, float]] = []

    async def worker(n: int) -> None:
        for _ in range(n):
            async with limiter.slot():
                start = time.time()
                await asyncio.sleep(seconds)
                intervals.append((start, time.time()))

    await asyncio.gather(*(worker(calls // workers) for _ in range(workers)))
    await limiter.close()
    return intervals


def test_the_bound_holds_across_drivers_of_one_process_and_slots_are_kept_across_calls() -> None:
    state = LocalState()  # this process's slots, as drivers in two worker threads share them
    endpoint = f"http://limit-{uuid.uuid4().hex}.test/v1"
    results: list[list[tuple[float, float]]] = []
    limiters: list[EndpointLimiter] = []

    def driver() -> None:
        limiter = EndpointLimiter(endpoint=endpoint, concurrency=3, rate_per_second=None, backend=LocalBackend(state))
        limiters.append(limiter)
        results.append(run_blocking(lambda: _hold(limiter, calls=30, workers=6, seconds=0.01)))

    threads = [threading.Thread(target=driver) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    intervals = results[0] + results[1]
    assert len(intervals) == 60
    assert max_overlap(intervals) == 3
    # 60 calls, but slots are handed over and parked between calls: far fewer than one exchange per call.
    assert sum(limiter.round_trips for limiter in limiters) < 30


def test_a_driver_holds_only_its_share_of_the_slots() -> None:
    limiter = EndpointLimiter(
        endpoint=f"http://share-{uuid.uuid4().hex}.test/v1",
        concurrency=4,
        rate_per_second=None,
        backend=LocalBackend(LocalState()),
    )
    limiter.drivers(2)

    intervals = run_blocking(lambda: _hold(limiter, calls=16, workers=4, seconds=0.02))

    assert max_overlap(intervals) == 2


def test_rate_permits_are_shared_and_granted_per_second() -> None:
    state = LocalState()
    endpoint = f"http://rate-{uuid.uuid4().hex}.test/v1"

    async def scenario() -> tuple[float, int]:
        limiters = [
            EndpointLimiter(endpoint=endpoint, concurrency=50, rate_per_second=20, backend=LocalBackend(state)) for _ in range(2)
        ]
        started = time.time()
        await asyncio.gather(*(_hold(limiter, calls=25, workers=25, seconds=0.0) for limiter in limiters))
        used = sum(calls for _second, calls in state.rates.values())
        return time.time() - started, used

    elapsed, used_in_last_second = run_blocking(scenario)

    # 50 calls at 20 per second, counted in whole seconds: at least two second boundaries pass.
    assert elapsed >= 1.0
    assert 1 <= used_in_last_second <= 20


_CHILD = """
import asyncio, json, os, sys, time
import django
django.setup()
from jobs.limits import EndpointLimiter

async def main():
    limiter = EndpointLimiter(endpoint=sys.argv[1], concurrency=3, rate_per_second=None)
    intervals = []
    async def worker():
        for _ in range(6):
            async with limiter.slot():
                start = time.time()
                await asyncio.sleep(0.03)
                intervals.append((start, time.time()))
    await asyncio.gather(*(worker() for _ in range(4)))
    await limiter.close()
    print(json.dumps({"intervals": intervals, "round_trips": limiter.round_trips}))

asyncio.run(main())
"""


def test_the_bound_holds_across_two_worker_processes_through_redis() -> None:
    cache = settings.CACHES["default"]
    if "redis" not in cache.get("BACKEND", "").lower():
        if os.environ.get("LIT2TEST_REQUIRE_SERVICES"):
            pytest.fail(f"LIT2TEST_REQUIRE_SERVICES is set but the cache is {cache.get('BACKEND')}")
        pytest.skip("the limiter is shared between processes through Redis: set CACHE_URL=rediscache://...")
    endpoint = f"http://processes-{uuid.uuid4().hex}.test/v1"
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lit2test_web.settings", DEBUG="1", PYTHONPATH=str(ROOT))
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, endpoint], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=60) for child in children]
    assert all(child.returncode == 0 for child in children), [err for _, err in outputs]
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]

    intervals = [tuple(i) for report in reports for i in report["intervals"]]
    assert len(intervals) == 48
    assert max_overlap(intervals) == 3  # never more than the limit, and the limit was reached
