"""The asynchronous loop that runs a run's tasks against a provider.

One event loop per driver: K coroutines call the endpoint concurrently while a single
database thread claims tasks and stores results, so SQLite sees one writer and
PostgreSQL sees short transactions. Work is claimed in small batches; between
batches the driver re-reads the run's status, which is how pause and cancel stop it.

What keeps a run from being left "running" with nobody working on it:
- the driver renews the leases of the tasks it holds (and its own ``RunDriver`` row) with a
  heartbeat, so only a driver that stopped loses its claims;
- a driver ends only when the run has no open task left (or the run stopped): while other
  drivers hold claims it waits, and takes their work over if they die;
- a database error that looks transient (the server restarting, a dropped connection) is
  retried with backoff for up to ``db_patience`` seconds, on a fresh connection;
- every call to the endpoint is counted in the database before it is sent (a group commit
  shared by the concurrent calls), so calls in flight when a worker dies are paid for and counted.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db import InterfaceError, OperationalError, close_old_connections, connection

from .limits import EndpointLimiter
from .providers import Completion, PermanentError, Provider, TransientError

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_TRANSIENT_RETRIES = 6
#: Seconds between two stores of a driver's results at most (a group commit; see ``Driver.run``'s writer).
STORE_EVERY = 0.2
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
# Errors of a database that is restarting or unreachable; each driver step is its own transaction,
# so repeating it on a new connection is safe.
TRANSIENT_DB_ERRORS = (OperationalError, InterfaceError)

BeforeCall = Callable[[], Awaitable[None]]


class DatabaseUnavailable(Exception):
    """The database stayed unreachable for longer than the driver's patience; the driver stopped."""


@dataclass
class CallOutcome:
    completion: Completion | None
    calls: int
    error: str | None = None


async def call_with_backoff(
    provider: Provider,
    limiter: EndpointLimiter | None,
    messages: list[dict[str, str]],
    task: tuple[int, str] | None,
    before_call: BeforeCall | None = None,
) -> CallOutcome:
    """One answer from the provider, retrying 429/5xx/timeouts with exponential backoff and jitter.

    ``before_call`` runs right before each request is sent (after the endpoint slot is taken):
    the driver counts the call there, durably, so that no call goes uncounted. If it also has a
    ``failed(message)`` coroutine (the driver's does), every call that fails is reported there, so that
    retried errors leave a trace on their task.
    """
    calls = 0
    failed = getattr(before_call, "failed", None)
    for retry in range(MAX_TRANSIENT_RETRIES + 1):
        try:
            if limiter is None:
                if before_call is not None:
                    await before_call()
                calls += 1
                return CallOutcome(await provider.complete(messages=messages, task=task), calls)
            async with limiter.slot():
                if before_call is not None:
                    await before_call()
                calls += 1
                return CallOutcome(await provider.complete(messages=messages, task=task), calls)
        except TransientError as exc:
            if failed is not None:
                await failed(str(exc))
            if retry == MAX_TRANSIENT_RETRIES:
                return CallOutcome(None, calls, f"gave up after {calls} calls: {exc}")
            pause = exc.retry_after if exc.retry_after is not None else BACKOFF_BASE * 2**retry
            await asyncio.sleep(min(BACKOFF_CAP, pause) * random.uniform(1.0, 1.25))
        except PermanentError as exc:
            if failed is not None and calls:  # an error raised before any request was sent is not a failed call
                await failed(str(exc))
            return CallOutcome(None, calls, str(exc))
    raise AssertionError("unreachable")


@dataclass
class DriverHooks[T]:
    """What a run kind tells the driver. The synchronous callables run in the driver's database thread.

    ``claim(n, held)`` takes up to n claimable tasks, never one of ``held`` (the driver's own);
    ``work(spec, before_call)`` does the calls of one task; ``store(results)`` persists a batch of
    (spec, result) pairs in one transaction; ``release(specs)`` hands unstarted work back;
    ``still_running()`` re-reads the run; ``heartbeat(held)`` renews the leases of the held tasks and the
    driver's liveness; ``count_calls({task_id: n})`` adds calls about to be made; ``others_open(held)``
    says whether tasks the driver does not hold are still open (claimed by other drivers, or pending);
    ``calls_failed({task_id: (n, last error)})`` adds calls that ended in an HTTP error or timeout.
    """

    claim: Callable[[int, frozenset[int]], list[T]]
    work: Callable[[T, BeforeCall], Awaitable[Any]]
    store: Callable[[list[tuple[T, Any]]], None]
    release: Callable[[list[T]], None]
    still_running: Callable[[], bool]
    heartbeat: Callable[[list[int]], None]
    count_calls: Callable[[dict[int, int]], None]
    others_open: Callable[[frozenset[int]], bool]
    task_id: Callable[[T], int]
    # What to store for a task whose work raised: a failed result, so the run ends FAILED and resumes.
    on_error: Callable[[Exception], Any]
    # Told once the database is back after an outage: (seconds it was unreachable, error).
    on_outage: Callable[[float, str], None] | None = None
    calls_failed: Callable[[dict[int, tuple[int, str]]], None] | None = None


class Driver[T]:
    """Runs claim → work → store until no task of the run is open or the run stops."""

    def __init__(
        self,
        *,
        hooks: DriverHooks[T],
        concurrency: int,
        heartbeat_every: float = 5.0,
        idle_poll: float = 1.0,
        db_patience: float = 300.0,
        store_every: float = STORE_EVERY,
    ) -> None:
        self.hooks = hooks
        self.concurrency = max(1, concurrency)
        self.heartbeat_every = heartbeat_every
        self.store_every = store_every
        self.idle_poll = idle_poll
        self.db_patience = db_patience

    async def run(self) -> None:
        hooks = self.hooks
        db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lit2test-db")
        # Calls are counted on a connection of their own: a call must never wait behind a claim or a store.
        ledger_db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lit2test-ledger")
        loop = asyncio.get_running_loop()

        async def in_db(fn: Callable[..., Any], *args: Any, executor: ThreadPoolExecutor = db) -> Any:
            """Run ``fn`` in a database thread, retrying transient database errors on a new connection."""
            started = loop.time()
            pause = 0.25
            first_error: str | None = None
            while True:
                try:
                    result = await loop.run_in_executor(executor, _in_db_thread, fn, args)
                except TRANSIENT_DB_ERRORS as exc:
                    waited = loop.time() - started
                    first_error = (
                        first_error or f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
                    )
                    if waited + pause > self.db_patience:
                        raise DatabaseUnavailable(
                            f"the database was unreachable for {waited:.0f} s ({first_error}); the driver stopped"
                        ) from exc
                    log.warning("database unavailable (%s); retrying in %.1f s", first_error, pause)
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 5.0)
                    continue
                if first_error is not None and hooks.on_outage is not None:
                    outage = (loop.time() - started, first_error)
                    await loop.run_in_executor(db, _in_db_thread_quiet, hooks.on_outage, outage)
                return result

        held: set[int] = set()
        progressed = asyncio.Event()
        ledger = _CallLedger(functools.partial(in_db, executor=ledger_db), hooks.count_calls, hooks.calls_failed)
        queue: asyncio.Queue[T | None] = asyncio.Queue()
        results: asyncio.Queue[tuple[T, Any] | None] = asyncio.Queue()
        stop = asyncio.Event()

        async def worker() -> None:
            while True:
                spec = await queue.get()
                if spec is None:
                    return
                task_id = hooks.task_id(spec)
                if stop.is_set():
                    await in_db(hooks.release, [spec])
                    held.discard(task_id)
                    continue
                try:
                    result = await hooks.work(spec, _TaskCalls(ledger, task_id))
                except DatabaseUnavailable:
                    raise
                except Exception as exc:  # one task's bug must not kill the run: the task is stored as failed
                    log.exception("task failed unexpectedly")
                    result = hooks.on_error(exc)
                results.put_nowait((spec, result))

        async def writer() -> None:
            # Results that arrive while a batch is being written wait for the next one, and a batch is written at most
            # every ``store_every`` seconds: one commit per batch instead of one per answer. At concurrency 32 answers
            # came one or two at a time, and a store's fixed cost (its transaction, the ownership check, the inserts'
            # compiling, a trip to the database thread) was a fifth of the driver's CPU.
            stored_at = -self.store_every
            while True:
                first = await results.get()
                wait = stored_at + self.store_every - loop.time()
                if first is not None and wait > 0:
                    await asyncio.sleep(wait)  # the end of the work (None) queued meanwhile is seen below
                stored_at = loop.time()
                batch = [] if first is None else [first]
                done = first is None
                while not results.empty() and len(batch) < 200:
                    item = results.get_nowait()
                    if item is None:
                        done = True
                        break
                    batch.append(item)
                if batch:
                    await store_results(in_db, hooks, batch)
                    for spec, _ in batch:
                        held.discard(hooks.task_id(spec))
                    progressed.set()
                if done:
                    return

        workers = [asyncio.create_task(worker()) for _ in range(self.concurrency)]
        writing = asyncio.create_task(writer())
        beat = loop.time()

        async def beat_if_due() -> None:
            nonlocal beat
            if loop.time() - beat >= self.heartbeat_every:
                # Claims held while calls wait (slow endpoint, busy slots) must not look abandoned.
                await in_db(hooks.heartbeat, sorted(held))
                beat = loop.time()

        def watch(*tasks: asyncio.Task[Any]) -> None:
            """Re-raise at once if a worker or the writer died (the database stayed away too long)."""
            for t in tasks:
                if t.done() and not t.cancelled() and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]

        try:
            # Keep about two rounds of work queued so calls never wait on a claim.
            batch = self.concurrency * 2
            while True:
                watch(*workers, writing)
                await beat_if_due()
                if queue.qsize() > self.concurrency:
                    await asyncio.sleep(0.02)
                    continue
                if not await in_db(hooks.still_running):
                    stop.set()
                    break
                specs = await in_db(hooks.claim, batch, frozenset(held))
                if specs:
                    for spec in specs:
                        held.add(hooks.task_id(spec))
                        queue.put_nowait(spec)
                    continue
                if not held and not await in_db(hooks.others_open, frozenset()):
                    break
                # Our own work is in flight, or other drivers hold claims: wait, and take over what they drop.
                progressed.clear()
                try:
                    await asyncio.wait_for(progressed.wait(), timeout=self.idle_poll)
                except TimeoutError:
                    pass
            for _ in workers:
                queue.put_nowait(None)
            draining = asyncio.gather(*workers)
            while not draining.done():
                await asyncio.wait([draining], timeout=self.heartbeat_every)
                if not draining.done():
                    await beat_if_due()
            await draining
            results.put_nowait(None)
            await writing
        except BaseException:
            stop.set()
            for t in (*workers, writing):
                t.cancel()
            await asyncio.gather(*workers, writing, return_exceptions=True)
            raise
        finally:
            for executor in (db, ledger_db):
                await loop.run_in_executor(executor, _close_connection)
                executor.shutdown(wait=True)


class UnstorableResult(Exception):
    """A task's result that the database refused for a reason other than an outage: its task is stored as failed."""


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


async def _refused(
    in_db: Callable[..., Awaitable[Any]], store: Callable[[list[Any]], None], batch: list[Any]
) -> Exception | None:
    """Store ``batch``; the error if the database refused it for a reason other than an outage, else None."""
    try:
        await in_db(store, batch)
    except DatabaseUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - any refusal: the caller finds the result refused
        return exc
    return None


async def store_results[T](in_db: Callable[..., Awaitable[Any]], hooks: DriverHooks[T], batch: list[tuple[T, Any]]) -> None:
    """Store a batch of results in one transaction; if the database refuses it (not an outage), store them one by one.

    A result the database still refuses (an answer with a character it cannot hold, say) is replaced by the kind's
    failed result (``on_error``) naming why, so its task ends failed once instead of being redone after its lease
    and refused again forever, taking the results stored with it down each time.
    """
    error = await _refused(in_db, hooks.store, batch)
    if error is None:
        return
    if len(batch) > 1:
        log.warning("storing %d results failed (%s); storing them one by one", len(batch), _first_line(error))
    for item in batch:
        refused = error if len(batch) == 1 else await _refused(in_db, hooks.store, [item])
        if refused is None:
            continue
        task_id = hooks.task_id(item[0])
        log.error("task %s: its result could not be stored (%s)", task_id, _first_line(refused))
        failed = hooks.on_error(
            UnstorableResult(f"the database refused to store its result ({_first_line(refused)}); the task is not redone")
        )
        if await _refused(in_db, hooks.store, [(item[0], failed)]) is not None:
            # Not even its failure could be stored: its claim is left to expire, and it is claimed again.
            log.error("task %s: storing its failure failed too; it will be claimed again", task_id)


class _CallLedger:
    """Counts calls in the database before they are made, one commit for all calls waiting at that moment;
    calls that failed are recorded the same way (count and latest error per task)."""

    def __init__(
        self,
        in_db: Callable[..., Awaitable[Any]],
        count_calls: Callable[[dict[int, int]], None],
        calls_failed: Callable[[dict[int, tuple[int, str]]], None] | None = None,
    ) -> None:
        self.in_db = in_db
        self.count_calls = count_calls
        self.calls_failed = calls_failed
        self.pending: Counter[int] = Counter()
        self.failures: dict[int, tuple[int, str]] = {}
        self.waiters: list[asyncio.Future[None]] = []
        self.flusher: asyncio.Task[None] | None = None

    async def record(self, task_id: int) -> None:
        self.pending[task_id] += 1
        await self._wait()

    async def failed(self, task_id: int, message: str) -> None:
        if self.calls_failed is None:
            return
        n, _ = self.failures.get(task_id, (0, ""))
        self.failures[task_id] = (n + 1, message)
        await self._wait()

    async def _wait(self) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiters.append(future)
        if self.flusher is None or self.flusher.done():
            self.flusher = asyncio.create_task(self._flush())
        await future

    def _write(self, counts: dict[int, int], failures: dict[int, tuple[int, str]]) -> None:
        if counts:
            self.count_calls(counts)
        if failures and self.calls_failed is not None:
            self.calls_failed(failures)

    async def _flush(self) -> None:
        while self.pending or self.failures:
            counts, self.pending = dict(self.pending), Counter()
            failures, self.failures = self.failures, {}
            waiters, self.waiters = self.waiters, []
            try:
                await self.in_db(self._write, counts, failures)
            except BaseException as exc:
                for w in waiters:
                    if not w.done():
                        w.set_exception(exc if isinstance(exc, Exception) else asyncio.CancelledError())
                if not isinstance(exc, Exception):
                    raise
                continue
            for w in waiters:
                if not w.done():
                    w.set_result(None)


class _TaskCalls:
    """The ``before_call`` of one task: counts each call before it is sent; ``failed`` records a failed call."""

    def __init__(self, ledger: _CallLedger, task_id: int) -> None:
        self.ledger = ledger
        self.task_id = task_id

    async def __call__(self) -> None:
        await self.ledger.record(self.task_id)

    async def failed(self, message: str) -> None:
        await self.ledger.failed(self.task_id, message)


def pooled() -> bool:
    """Whether the database goes through a connection pool (PostgreSQL's default here)."""
    return bool(connection.settings_dict.get("OPTIONS", {}).get("pool"))


def release_connection() -> None:
    """Give this thread's connection back to the pool, if there is one: a driver's threads live as long as the
    run, and holding a pooled connection each would exhaust a worker's pool with a few drivers."""
    if pooled():
        _close_connection()


def _in_db_thread(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    try:
        return fn(*args)
    except TRANSIENT_DB_ERRORS:
        # The connection may be broken (server restarted): drop it so the retry opens a new one.
        _close_connection()
        raise
    finally:
        release_connection()


def _in_db_thread_quiet(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - a log line about an outage must not stop the run
        log.exception("could not record an event")


def _close_connection() -> None:
    try:
        close_old_connections()
        connection.close()
    except Exception:  # noqa: BLE001 - the database may be gone; the connection is dropped either way
        pass


def run_blocking[T](factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from synchronous code, even where an event loop is already
    running in this thread (Celery's threads pool, a browser test harness): then a fresh thread hosts it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())  # type: ignore[arg-type]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lit2test-loop") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()  # type: ignore[arg-type]
