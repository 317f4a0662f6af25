"""Per-endpoint concurrency and rate limits shared by every driver.

Where the limits are shared:
- when the cache is Redis (``CACHE_URL=rediscache://...``, as in production), every worker process shares
  them through Redis: a slot is a member of a sorted set scored by its expiry, taken and given back by one
  Lua script (atomic, on the server's clock); the rate limit is a per-second counter in the same way;
- otherwise (the file or local-memory cache of a single-machine setup), they are shared by the drivers of
  this process only, with no I/O at all. The file cache used to cost a directory listing (its cull) on
  every slot taken, which made the limiter a third of a driver's CPU.

Why it costs less than one round trip per call: a driver holds its slots across calls. A slot given back
while another call of the same driver waits is handed over at once; one given back while none waits is
parked for ``PARK_SECONDS`` (the same coroutine asks again a moment later, after storing its answer) and
only then returned. Requests and returns that pile up while a round trip is in flight go in the next one,
so a whole burst costs one script call. Rate permits are granted the same way, in batches.

Fairness across drivers: a driver holds at most its share of the endpoint's slots, the concurrency
divided by the run's live drivers (``drivers(n)``, told at each heartbeat), so two workers split a run's
calls instead of the first one keeping every slot.

Liveness: slots expire ``slot_ttl`` seconds after they were taken or last renewed; a renewer keeps the
slots of a live driver, so those of a killed worker free themselves within one TTL.

When Redis cannot be reached (restarting), the limiter fails open: each driver still bounds its own calls
by its concurrency, and the shared limits come back with Redis. A run never fails because of its limiter.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import logging
import math
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

log = logging.getLogger(__name__)

DEFAULT_SLOT_TTL = 30.0
PARK_SECONDS = 0.05  # how long an unused slot stays with its driver before it is given back
REDIS_TIMEOUT = 2.0


class _CacheDown(Exception):
    pass


def endpoint_key(base_url: str) -> str:
    return hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:16]


class _Backend(Protocol):
    async def exchange(self, key: str, *, release: list[str], want: list[str], limit: int, ttl: float) -> list[str]:
        """Give back ``release``, then take as many of ``want`` as the limit leaves free; the tokens taken."""

    async def renew(self, key: str, tokens: list[str], ttl: float) -> None: ...

    async def permits(self, key: str, n: int, per_second: int) -> tuple[int, float]:
        """Up to n calls allowed in the current second: (granted, seconds until the next second)."""

    async def close(self) -> None: ...


# --------------------------------------------------------------------------- in-process backend


class LocalState:
    """Slots and rate counters of every driver in this process (drivers run in threads, each with its loop)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.slots: dict[str, dict[str, float]] = collections.defaultdict(dict)  # key -> token -> expires (monotonic)
        self.rates: dict[str, tuple[int, int]] = {}  # key -> (second, calls)


_LOCAL = LocalState()


class LocalBackend:
    """The limiter's backend when no shared cache is reachable: the slots of this process's drivers only."""

    def __init__(self, state: LocalState = _LOCAL) -> None:
        self.state = state

    async def exchange(self, key: str, *, release: list[str], want: list[str], limit: int, ttl: float) -> list[str]:
        now = time.monotonic()
        with self.state.lock:
            slots = self.state.slots[key]
            for token in release:
                slots.pop(token, None)
            for token in [t for t, expires in slots.items() if expires <= now]:
                del slots[token]
            granted = want[: max(0, limit - len(slots))]
            for token in granted:
                slots[token] = now + ttl
            return granted

    async def renew(self, key: str, tokens: list[str], ttl: float) -> None:
        now = time.monotonic()
        with self.state.lock:
            slots = self.state.slots[key]
            for token in tokens:
                if token in slots:
                    slots[token] = now + ttl

    async def permits(self, key: str, n: int, per_second: int) -> tuple[int, float]:
        now = time.time()
        second = int(now)
        with self.state.lock:
            was, used = self.state.rates.get(key, (second, 0))
            used = used if was == second else 0
            granted = max(0, min(n, per_second - used))
            self.state.rates[key] = (second, used + granted)
        return granted, second + 1 - now

    async def close(self) -> None:
        return None


# --------------------------------------------------------------------------- Redis backend

# KEYS[1] the slots (sorted set: token -> expiry in ms, server clock). ARGV: ttl ms, limit, number of
# tokens to give back, those tokens, then the tokens wanted. Returns the tokens taken.
_EXCHANGE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl, limit, nrel = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 4, 3 + nrel do redis.call('ZREM', KEYS[1], ARGV[i]) end
local free = limit - redis.call('ZCARD', KEYS[1])
local taken = {}
for i = 4 + nrel, #ARGV do
  if free <= 0 then break end
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
  free = free - 1
  taken[#taken + 1] = ARGV[i]
end
if redis.call('ZCARD', KEYS[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ttl * 2) end
return taken
"""
_RENEW = """
local t = redis.call('TIME')
local expires = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', expires, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return 0
"""
# KEYS[1] a prefix; ARGV: calls wanted, calls allowed per second. Returns {granted, ms to the next second}.
_PERMITS = """
local t = redis.call('TIME')
local key = KEYS[1] .. ':' .. t[1]
local used = tonumber(redis.call('GET', key) or '0')
local granted = math.max(0, math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - used))
if granted > 0 then redis.call('INCRBY', key, granted); redis.call('EXPIRE', key, 5) end
return {granted, 1000 - math.floor(tonumber(t[2]) / 1000)}
"""


class _RedisBackend:
    """One asyncio Redis client per limiter, made in the driver's event loop on first use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client: Any = None
        self.scripts: dict[str, Any] = {}

    def _script(self, name: str, source: str) -> Any:
        if self.client is None:
            import redis.asyncio as aredis

            self.client = aredis.Redis.from_url(self.url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT)
        if name not in self.scripts:
            self.scripts[name] = self.client.register_script(source)
        return self.scripts[name]

    async def _call(self, name: str, source: str, keys: list[str], args: list[Any]) -> Any:
        try:
            return await self._script(name, source)(keys=keys, args=args)
        except Exception as exc:  # redis.ConnectionError, TimeoutError, OSError, a server that is loading ...
            raise _CacheDown(f"{type(exc).__name__}: {exc}") from exc

    async def exchange(self, key: str, *, release: list[str], want: list[str], limit: int, ttl: float) -> list[str]:
        taken = await self._call(
            "exchange", _EXCHANGE, [f"limiter:slots:{key}"], [int(ttl * 1000), limit, len(release), *release, *want]
        )
        return [t.decode() if isinstance(t, bytes) else t for t in taken]

    async def renew(self, key: str, tokens: list[str], ttl: float) -> None:
        if tokens:
            await self._call("renew", _RENEW, [f"limiter:slots:{key}"], [int(ttl * 1000), *tokens])

    async def permits(self, key: str, n: int, per_second: int) -> tuple[int, float]:
        granted, ms = await self._call("permits", _PERMITS, [f"limiter:rate:{key}"], [n, per_second])
        return int(granted), int(ms) / 1000

    async def close(self) -> None:
        if self.client is not None:
            try:
                await self.client.aclose()
            except Exception:  # noqa: BLE001 - closing a client whose server is gone
                pass


def shared_backend() -> _Backend:
    """Redis when the configured cache is Redis (shared by every worker), else this process's own state."""
    from django.conf import settings

    cache = settings.CACHES.get("default", {})
    backend = cache.get("BACKEND", "")
    location = cache.get("LOCATION")
    if "redis" in backend.lower() and location:
        url = location[0] if isinstance(location, list | tuple) else str(location).split(",")[0]
        return _RedisBackend(url)
    return LocalBackend()


# --------------------------------------------------------------------------- the limiter


class EndpointLimiter:
    """The slots and rate permits of one driver for one endpoint. Use from one event loop."""

    def __init__(
        self,
        *,
        endpoint: str,
        concurrency: int,
        rate_per_second: float | None,
        slot_ttl: float = DEFAULT_SLOT_TTL,
        backend: _Backend | None = None,
    ) -> None:
        self.key = endpoint_key(endpoint)
        self.concurrency = max(1, concurrency)
        self.rate = rate_per_second
        self.slot_ttl = max(3, int(slot_ttl))
        self.backend = backend if backend is not None else shared_backend()
        self._drivers = 1
        self._busy: set[str] = set()  # slots of calls in progress
        self._parked: dict[str, float] = {}  # held, unused slots -> when parked (monotonic)
        self._unshared: set[str] = set()  # tokens handed out while the shared store was down
        self._waiters: collections.deque[asyncio.Future[str]] = collections.deque()
        self._to_release: list[str] = []
        self._flusher: asyncio.Task[None] | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._rate_waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._rate_flusher: asyncio.Task[None] | None = None
        self._warned_at = 0.0
        self.round_trips = 0  # script calls made (for the benchmark's account)

    # ------------------------------------------------------------------ sharing among drivers

    def drivers(self, n: int) -> None:
        """The run's live drivers: this one holds at most its share of the slots. Safe from any thread."""
        self._drivers = max(1, int(n))

    @property
    def cap(self) -> int:
        return max(1, math.ceil(self.concurrency / self._drivers))

    def _held(self) -> int:
        return len(self._busy) + len(self._parked)

    def _cache_down(self, exc: _CacheDown) -> None:
        now = time.monotonic()
        if now - self._warned_at > 30:
            log.warning("the shared limiter store is unreachable (%s): endpoint limits are per driver until it is back", exc)
            self._warned_at = now

    # ------------------------------------------------------------------ slots

    async def _take_slot(self) -> str:
        """A slot's token: a parked one at once, else one from the shared store (waiting while none is free)."""
        if self._parked and self._held() <= self.cap:
            token = self._parked.popitem()[0]
            self._busy.add(token)
            return token
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        self._kick()
        try:
            token = await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._give_back(future.result())
            raise
        return token

    def _give_back(self, token: str) -> None:
        self._busy.discard(token)
        if token in self._unshared:
            self._unshared.discard(token)
            if self._waiters:
                self._kick()
            return
        while self._waiters and self._held() < self.cap:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._busy.add(token)
                waiter.set_result(token)  # handed over: no round trip
                if self._waiters and self._held() < self.cap:
                    self._kick()  # the share grew (a driver left): take more slots for the calls still waiting
                return
        if self._held() < self.cap:
            self._parked[token] = time.monotonic()
        else:
            self._to_release.append(token)
        self._kick()

    def _kick(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        """Trade slots with the shared store until no call waits and nothing is left to give back."""
        pause = 0.005
        while True:
            now = time.monotonic()
            for token, parked_at in list(self._parked.items()):
                if now - parked_at >= PARK_SECONDS or self._held() > self.cap:
                    del self._parked[token]
                    self._to_release.append(token)
            while self._waiters and self._waiters[0].done():
                self._waiters.popleft()
            waiting = [w for w in self._waiters if not w.done()]
            wanted = max(0, min(len(waiting), self.cap - self._held()))
            if not wanted and not self._to_release:
                if self._parked:
                    await asyncio.sleep(PARK_SECONDS)
                    continue
                return  # waiters at the local cap get their slots handed over by calls that end
            release, self._to_release = self._to_release, []
            want = [uuid.uuid4().hex for _ in range(wanted)]
            try:
                self.round_trips += 1
                taken = await self.backend.exchange(
                    self.key, release=release, want=want, limit=self.concurrency, ttl=self.slot_ttl
                )
            except _CacheDown as exc:
                self._cache_down(exc)
                taken = want  # fail open: within this driver's own bound
                self._unshared.update(want)
            for token in taken:
                self._busy.add(token)
                waiter = next((w for w in self._waiters if not w.done()), None)
                if waiter is None:
                    self._busy.discard(token)
                    self._parked[token] = time.monotonic()
                    continue
                self._waiters.remove(waiter)
                waiter.set_result(token)
            if taken:
                self._ensure_renewer()
            if wanted and len(taken) < wanted:
                await asyncio.sleep(pause)  # the endpoint's slots are taken by other drivers: poll, backing off
                pause = min(pause * 2, 0.1)
            else:
                pause = 0.005

    def _ensure_renewer(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        """Keep this driver's slots alive; a dead process stops renewing and its slots expire."""
        while self._busy or self._parked:
            await asyncio.sleep(self.slot_ttl / 3)
            tokens = [t for t in (*self._busy, *self._parked) if t not in self._unshared]
            try:
                self.round_trips += 1
                await self.backend.renew(self.key, tokens, self.slot_ttl)
            except _CacheDown as exc:
                self._cache_down(exc)

    # ------------------------------------------------------------------ rate

    async def _respect_rate(self) -> None:
        if not self.rate:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._rate_waiters.append(future)
        if self._rate_flusher is None or self._rate_flusher.done():
            self._rate_flusher = asyncio.get_running_loop().create_task(self._grant_permits())
        await future

    async def _grant_permits(self) -> None:
        per_second = max(1, int(self.rate or 1))
        while self._rate_waiters:
            waiting = [w for w in self._rate_waiters if not w.done()]
            self._rate_waiters = collections.deque(waiting)
            if not waiting:
                return
            try:
                self.round_trips += 1
                granted, wait = await self.backend.permits(self.key, len(waiting), per_second)
            except _CacheDown as exc:
                self._cache_down(exc)
                granted, wait = len(waiting), 0.0
            for _ in range(granted):
                if self._rate_waiters:
                    waiter = self._rate_waiters.popleft()
                    if not waiter.done():
                        waiter.set_result(None)
            if self._rate_waiters:
                await asyncio.sleep(max(0.0, wait) + 0.002)

    # ------------------------------------------------------------------ use

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        token = await self._take_slot()
        try:
            await self._respect_rate()
            yield
        finally:
            self._give_back(token)

    async def close(self) -> None:
        """Give back parked slots and stop the renewer. Slots of calls still running are left to expire."""
        for task in (self._flusher, self._rate_flusher):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        release = [t for t in (*self._to_release, *self._parked) if t not in self._unshared]
        self._to_release, self._parked = [], {}
        if release:
            try:
                await self.backend.exchange(self.key, release=release, want=[], limit=self.concurrency, ttl=self.slot_ttl)
            except _CacheDown as exc:
                self._cache_down(exc)
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
        await self.backend.close()
