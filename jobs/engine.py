"""The asynchronous loop that runs a run's tasks against a provider.

One event loop per driver: K coroutines call the endpoint concurrently while a single
database thread claims tasks and stores results, so SQLite sees one writer and
PostgreSQL sees short transactions. Work is claimed in small batches; between
batches the driver re-reads the run's status, which is how pause and cancel stop it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db import close_old_connections, connection

from .limits import EndpointLimiter
from .providers import Completion, PermanentError, Provider, TransientError

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_TRANSIENT_RETRIES = 6
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0


@dataclass
class CallOutcome:
    completion: Completion | None
    calls: int
    error: str | None = None


async def call_with_backoff(
    provider: Provider, limiter: EndpointLimiter | None, messages: list[dict[str, str]], task: tuple[int, str] | None
) -> CallOutcome:
    """One answer from the provider, retrying 429/5xx/timeouts with exponential backoff and jitter."""
    calls = 0
    for retry in range(MAX_TRANSIENT_RETRIES + 1):
        calls += 1
        try:
            if limiter is None:
                return CallOutcome(await provider.complete(messages=messages, task=task), calls)
            async with limiter.slot():
                return CallOutcome(await provider.complete(messages=messages, task=task), calls)
        except TransientError as exc:
            if retry == MAX_TRANSIENT_RETRIES:
                return CallOutcome(None, calls, f"gave up after {calls} calls: {exc}")
            pause = exc.retry_after if exc.retry_after is not None else BACKOFF_BASE * 2**retry
            await asyncio.sleep(min(BACKOFF_CAP, pause) * random.uniform(1.0, 1.25))
        except PermanentError as exc:
            return CallOutcome(None, calls, str(exc))
    raise AssertionError("unreachable")


class Driver[T]:
    """Runs claim → work → store until nothing is left or the run stops.

    ``claim(n)`` returns up to n task specs (and is the only place work is taken);
    ``work(spec)`` is a coroutine doing the calls; ``store(results)`` persists a batch of
    (spec, result) pairs in one transaction; ``still_running()`` re-reads the run;
    ``release(specs)`` hands unstarted work back. The synchronous callables run in the DB thread.
    """

    def __init__(
        self,
        *,
        concurrency: int,
        claim: Callable[[int], list[T]],
        work: Callable[[T], Awaitable[Any]],
        store: Callable[[list[tuple[T, Any]]], None],
        still_running: Callable[[], bool],
        release: Callable[[list[T]], None],
        heartbeat: Callable[[], None] | None = None,
        heartbeat_every: float = 1.0,
        on_error: Callable[[Exception], Any] | None = None,
    ) -> None:
        self.concurrency = max(1, concurrency)
        self.claim, self.work, self.store = claim, work, store
        self.still_running, self.release = still_running, release
        self.heartbeat, self.heartbeat_every = heartbeat, heartbeat_every
        # What to store for a task whose work raised: a failed result, so the run ends FAILED and resumes.
        self.on_error = on_error

    async def run(self) -> None:
        db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lit2test-db")
        loop = asyncio.get_running_loop()

        async def in_db(fn: Callable[..., Any], *args: Any) -> Any:
            return await loop.run_in_executor(db, fn, *args)

        queue: asyncio.Queue[T | None] = asyncio.Queue()
        results: asyncio.Queue[tuple[T, Any] | None] = asyncio.Queue()
        stop = asyncio.Event()

        async def worker() -> None:
            while True:
                spec = await queue.get()
                if spec is None:
                    return
                if stop.is_set():
                    await in_db(self.release, [spec])
                    continue
                try:
                    results.put_nowait((spec, await self.work(spec)))
                except Exception as exc:  # one task's bug must not kill the run: the task is stored as failed
                    log.exception("task failed unexpectedly")
                    if self.on_error is not None:
                        results.put_nowait((spec, self.on_error(exc)))

        async def writer() -> None:
            # Results that arrive while a batch is being written wait for the next one:
            # one commit per batch instead of one per answer.
            while True:
                first = await results.get()
                batch = [] if first is None else [first]
                done = first is None
                while not results.empty() and len(batch) < 200:
                    item = results.get_nowait()
                    if item is None:
                        done = True
                        break
                    batch.append(item)
                if batch:
                    try:
                        await in_db(self.store, batch)
                    except Exception:
                        log.exception("storing %d results failed; their tasks stay claimed until resumed", len(batch))
                if done:
                    return

        workers = [asyncio.create_task(worker()) for _ in range(self.concurrency)]
        writing = asyncio.create_task(writer())
        try:
            # Keep about two rounds of work queued so calls never wait on a claim.
            batch = self.concurrency * 2
            beat = loop.time()
            while True:
                if self.heartbeat is not None and loop.time() - beat > self.heartbeat_every:
                    # Claims held while calls wait (slow endpoint, busy slots) must not look abandoned.
                    await in_db(self.heartbeat)
                    beat = loop.time()
                if queue.qsize() > self.concurrency:
                    await asyncio.sleep(0.02)
                    continue
                if not await in_db(self.still_running):
                    stop.set()
                    break
                specs = await in_db(self.claim, batch)
                if not specs:
                    break
                for spec in specs:
                    queue.put_nowait(spec)
            for _ in workers:
                queue.put_nowait(None)
            draining = asyncio.gather(*workers)
            while not draining.done():
                await asyncio.wait([draining], timeout=self.heartbeat_every)
                if self.heartbeat is not None and not draining.done():
                    await in_db(self.heartbeat)
            await draining
            results.put_nowait(None)
            await writing
        finally:
            await in_db(_close_connection)
            db.shutdown(wait=True)


def _close_connection() -> None:
    close_old_connections()
    connection.close()


def run_blocking[T](factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from synchronous code, even where an event loop is already
    running in this thread (Celery's threads pool, a browser test harness): then a fresh thread hosts it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())  # type: ignore[arg-type]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lit2test-loop") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()  # type: ignore[arg-type]
