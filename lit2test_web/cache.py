"""The shared cache on Redis, read through: when Redis cannot be reached, a read is a miss and a write is skipped.

Everything the project keeps in the cache can be computed again or read from the database (a leaderboard's document
is also stored in ``arena.StoredDocument``; counts, panels and figures are recomputed), so an unreachable Redis makes
pages slower, never broken: Django's own backend raised, and the leaderboard page and API, the run page and the
reliability panel answered HTTP 500 until Redis was back (the workers already ride out a Redis outage: tests/faults).
A warning is logged at most once a minute while it lasts. ``clear`` still raises (``manage.py forget_reports --cache``
must say when it could not forget).

The socket timeouts bound how long a request waits on a Redis that does not answer at all (a host gone from the network
rather than a refused connection): a second to connect, two for an answer. A deployment that needs other values sets
them in the cache's OPTIONS (``CACHE_URL``'s query string). After a failure the process leaves Redis alone for
:data:`RETRY_AFTER` seconds (every read a miss, every write skipped, no wait): a page making ten cache calls waited
twenty seconds on a Redis that took connections and never answered (review).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache

log = logging.getLogger("lit2test.cache")

#: The socket timeouts of the connection pool, unless the configuration names its own.
DEFAULT_OPTIONS = {"socket_connect_timeout": 1.0, "socket_timeout": 2.0}
_WARN_EVERY = 60.0
_warned_at = -_WARN_EVERY
#: Seconds a process leaves Redis alone after a failed call.
RETRY_AFTER = 5.0


def _unreachable(operation: str, exc: Exception) -> None:
    global _warned_at
    now = time.monotonic()
    if now - _warned_at >= _WARN_EVERY:
        _warned_at = now
        log.warning(
            "the cache (Redis) could not be reached (%s: %s): pages are computed without it until it is back; "
            "check that Redis runs and CACHE_URL points at it",
            operation,
            type(exc).__name__,
        )


def read_through(config: dict[str, Any]) -> dict[str, Any]:
    """A cache configuration (``CACHES["default"]``) with Django's Redis backend swapped for :class:`TolerantRedisCache`;
    any other backend as it is."""
    if config.get("BACKEND") == "django.core.cache.backends.redis.RedisCache":
        return {**config, "BACKEND": "lit2test_web.cache.TolerantRedisCache"}
    return config


class TolerantRedisCache(RedisCache):
    """Django's Redis cache whose reads miss and writes are skipped while Redis cannot be reached (module doc)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        from redis.exceptions import RedisError  # here, not at the settings' import: redis costs a tenth of a second

        self.unreachable = RedisError
        self.away_until = 0.0  # monotonic time until which Redis is not asked (RETRY_AFTER after a failure)
        params = dict(params)
        params["OPTIONS"] = {**DEFAULT_OPTIONS, **(params.get("OPTIONS") or {})}
        super().__init__(server, params)

    def _tolerant(self, operation: str, miss: Any, call: Callable[[], Any]) -> Any:  # noqa: ANN401
        """``call()``, or ``miss`` while Redis is away (and for :data:`RETRY_AFTER` seconds after it failed)."""
        if time.monotonic() < self.away_until:
            return miss
        try:
            return call()
        except self.unreachable as exc:
            self.away_until = time.monotonic() + RETRY_AFTER
            _unreachable(operation, exc)
            return miss

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:  # noqa: ANN401
        return self._tolerant("get", default, lambda: RedisCache.get(self, key, default, version))

    def get_many(self, keys: Any, version: Any = None) -> dict[Any, Any]:  # noqa: ANN401
        return self._tolerant("get_many", {}, lambda: RedisCache.get_many(self, keys, version))

    def has_key(self, key: Any, version: Any = None) -> bool:  # noqa: ANN401
        return self._tolerant("has_key", False, lambda: RedisCache.has_key(self, key, version))

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> None:  # noqa: ANN401
        self._tolerant("set", None, lambda: RedisCache.set(self, key, value, timeout, version))

    def set_many(self, data: dict[Any, Any], timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> list[Any]:  # noqa: ANN401
        return self._tolerant("set_many", list(data), lambda: RedisCache.set_many(self, data, timeout, version))

    def delete(self, key: Any, version: Any = None) -> bool:  # noqa: ANN401
        return self._tolerant("delete", False, lambda: RedisCache.delete(self, key, version))
