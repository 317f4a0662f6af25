"""The shared cache on Redis, read through: when Redis cannot be reached, a read is a miss and a write is skipped.

Everything the project keeps in the cache can be computed again or read from the database (a leaderboard's document
is also stored in ``arena.StoredDocument``; counts, panels and figures are recomputed), so an unreachable Redis makes
pages slower, never broken: Django's own backend raised, and the leaderboard page and API, the run page and the
reliability panel answered HTTP 500 until Redis was back (the workers already ride out a Redis outage: tests/faults).
A warning is logged at most once a minute while it lasts. ``clear`` still raises (``manage.py forget_reports --cache``
must say when it could not forget).

The socket timeouts bound how long a request waits on a Redis that does not answer at all (a host gone from the network
rather than a refused connection): a second to connect, two for an answer. A deployment that needs other values sets
them in the cache's OPTIONS (``CACHE_URL``'s query string).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache

log = logging.getLogger("lit2test.cache")

#: The socket timeouts of the connection pool, unless the configuration names its own.
DEFAULT_OPTIONS = {"socket_connect_timeout": 1.0, "socket_timeout": 2.0}
_WARN_EVERY = 60.0
_warned_at = -_WARN_EVERY


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
        params = dict(params)
        params["OPTIONS"] = {**DEFAULT_OPTIONS, **(params.get("OPTIONS") or {})}
        super().__init__(server, params)

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:  # noqa: ANN401
        try:
            return super().get(key, default, version)
        except self.unreachable as exc:
            _unreachable("get", exc)
            return default

    def get_many(self, keys: Any, version: Any = None) -> dict[Any, Any]:  # noqa: ANN401
        try:
            return super().get_many(keys, version)
        except self.unreachable as exc:
            _unreachable("get_many", exc)
            return {}

    def has_key(self, key: Any, version: Any = None) -> bool:  # noqa: ANN401
        try:
            return super().has_key(key, version)
        except self.unreachable as exc:
            _unreachable("has_key", exc)
            return False

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> None:  # noqa: ANN401
        try:
            super().set(key, value, timeout, version)
        except self.unreachable as exc:
            _unreachable("set", exc)

    def set_many(self, data: dict[Any, Any], timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> list[Any]:  # noqa: ANN401
        try:
            return super().set_many(data, timeout, version)
        except self.unreachable as exc:
            _unreachable("set_many", exc)
            return list(data)

    def delete(self, key: Any, version: Any = None) -> bool:  # noqa: ANN401
        try:
            return super().delete(key, version)
        except self.unreachable as exc:
            _unreachable("delete", exc)
            return False
