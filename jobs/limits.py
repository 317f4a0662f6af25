"""Per-endpoint concurrency and rate limits shared by every worker process.

Slots are cache keys taken with an atomic add (SET NX on Redis) and released by delete.
A slot lives ``slot_ttl`` seconds and is renewed while its call runs, so the slots of a
worker that was killed free themselves within one TTL whatever the request timeout.
The rate limit counts requests per endpoint per second.

When the shared cache cannot be reached (Redis restarting), the limiter fails open: each
driver still bounds its own calls by its concurrency, and the shared limits come back with
the cache. A run never fails because its limiter's cache blinked.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import logging
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from django.core.cache import cache

log = logging.getLogger(__name__)

# Cache round trips are short but blocking; a dedicated pool keeps them from queueing
# behind other work in the loop's small default executor.
_CACHE_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="lit2test-limits")
DEFAULT_SLOT_TTL = 30.0


class _CacheDown(Exception):
    pass


async def _cache(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return await asyncio.get_running_loop().run_in_executor(_CACHE_POOL, fn, *args)
    except Exception as exc:  # the backends raise their own errors (redis.ConnectionError, OSError, ...)
        raise _CacheDown(f"{type(exc).__name__}: {exc}") from exc


def endpoint_key(base_url: str) -> str:
    return hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:16]


class EndpointLimiter:
    def __init__(
        self, *, endpoint: str, concurrency: int, rate_per_second: float | None, slot_ttl: float = DEFAULT_SLOT_TTL
    ) -> None:
        self.key = endpoint_key(endpoint)
        self.concurrency = max(1, concurrency)
        self.rate = rate_per_second
        self.slot_ttl = max(3, int(slot_ttl))
        # Slots this process released lately are the likeliest to be free: try them first, so a
        # single driver takes a slot in one round trip instead of scanning occupied ones.
        self._recent: collections.deque[int] = collections.deque(range(self.concurrency))
        self._held: dict[str, str] = {}
        self._renewer: asyncio.Task[None] | None = None
        self._warned_at = 0.0

    def _cache_down(self, exc: _CacheDown) -> None:
        now = time.monotonic()
        if now - self._warned_at > 30:
            log.warning("the shared cache is unreachable (%s): endpoint limits are per driver until it is back", exc)
            self._warned_at = now

    async def _take_slot(self) -> str | None:
        """A free slot's key, or None when the cache is down (fail open)."""
        token = uuid.uuid4().hex
        delay = 0.005
        while True:
            start = random.randrange(self.concurrency)
            order = [self._recent.popleft()] if self._recent else []
            order += [(start + i) % self.concurrency for i in range(self.concurrency) if (start + i) % self.concurrency not in order]
            for index in order:
                slot = f"lit2test:slot:{self.key}:{index}"
                try:
                    taken = await _cache(cache.add, slot, token, self.slot_ttl)
                except _CacheDown as exc:
                    self._cache_down(exc)
                    return None
                if taken:
                    self._held[slot] = token
                    self._ensure_renewer()
                    return slot
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.1)

    def _ensure_renewer(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.create_task(self._renew())

    async def _renew(self) -> None:
        """Keep the slots of running calls alive; a dead process stops renewing and its slots expire."""
        while self._held:
            await asyncio.sleep(self.slot_ttl / 3)
            for slot in list(self._held):
                try:
                    await _cache(cache.touch, slot, self.slot_ttl)
                except _CacheDown as exc:
                    self._cache_down(exc)
                    break

    async def _respect_rate(self) -> None:
        if not self.rate:
            return
        per_second = max(1, int(self.rate))
        while True:
            second = int(time.time())
            counter = f"lit2test:rate:{self.key}:{second}"
            try:
                await _cache(cache.add, counter, 0, 5)
                count = await _cache(cache.incr, counter)
            except _CacheDown as exc:
                if isinstance(exc.__cause__, ValueError):  # expired between add and incr
                    continue
                self._cache_down(exc)
                return
            if count <= per_second:
                return
            await asyncio.sleep(max(0.0, second + 1 - time.time()) + random.uniform(0, 0.02))

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        slot = await self._take_slot()
        try:
            await self._respect_rate()
            yield
        finally:
            if slot is not None:
                self._held.pop(slot, None)
                try:
                    await _cache(cache.delete, slot)
                except _CacheDown as exc:
                    self._cache_down(exc)  # it expires with its TTL
                self._recent.append(int(slot.rsplit(":", 1)[1]))

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
