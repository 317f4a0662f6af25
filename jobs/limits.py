"""Per-endpoint concurrency and rate limits shared by every worker process.

Slots are cache keys taken with an atomic add (SET NX on Redis) and released by delete;
a slot held by a worker that died expires with its timeout, so a crash never leaks
capacity for long. The rate limit counts requests per endpoint per second.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import random
import time
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

from django.core.cache import cache

# Cache round trips are short but blocking; a dedicated pool keeps them from queueing
# behind other work in the loop's small default executor.
_CACHE_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="lit2test-limits")


async def _cache(fn, *args):  # noqa: ANN001, ANN002, ANN202
    return await asyncio.get_running_loop().run_in_executor(_CACHE_POOL, fn, *args)


def endpoint_key(base_url: str) -> str:
    return hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:16]


class EndpointLimiter:
    def __init__(self, *, endpoint: str, concurrency: int, rate_per_second: float | None, slot_ttl: float) -> None:
        self.key = endpoint_key(endpoint)
        self.concurrency = max(1, concurrency)
        self.rate = rate_per_second
        self.slot_ttl = max(5, int(slot_ttl))
        # Slots this process released lately are the likeliest to be free: try them first, so a
        # single driver takes a slot in one round trip instead of scanning occupied ones.
        self._recent: collections.deque[int] = collections.deque(range(self.concurrency))

    async def _take_slot(self) -> str:
        token = uuid.uuid4().hex
        delay = 0.005
        while True:
            start = random.randrange(self.concurrency)
            order = [self._recent.popleft()] if self._recent else []
            order += [(start + i) % self.concurrency for i in range(self.concurrency) if (start + i) % self.concurrency not in order]
            for index in order:
                slot = f"lit2test:slot:{self.key}:{index}"
                if await _cache(cache.add, slot, token, self.slot_ttl):
                    return slot
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.1)

    async def _respect_rate(self) -> None:
        if not self.rate:
            return
        per_second = max(1, int(self.rate))
        while True:
            second = int(time.time())
            counter = f"lit2test:rate:{self.key}:{second}"
            await _cache(cache.add, counter, 0, 5)
            try:
                count = await _cache(cache.incr, counter)
            except ValueError:  # expired between add and incr
                continue
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
            await _cache(cache.delete, slot)
            self._recent.append(int(slot.rsplit(":", 1)[1]))
