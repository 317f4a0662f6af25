"""A Redis cache that cannot be reached makes pages slower, never broken (lit2test_web.cache).

Django's Redis backend raised on every read while Redis was away, and the leaderboard page and API and the run page
answered HTTP 500 (review of the stored leaderboards: the document kept in the database for cold reads was never
reached, the cache read raised first). Here the cache is a real Redis client pointed at a port nothing listens on
(connections refused), as when Redis is stopped.
"""

from __future__ import annotations

import logging

import pytest
from django.test import override_settings
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from lit2test_web import cache as cache_module
from lit2test_web.cache import TolerantRedisCache, read_through

NOWHERE = "redis://127.0.0.1:1/0"  # port 1: refused at once
AWAY = {"default": {"BACKEND": "lit2test_web.cache.TolerantRedisCache", "LOCATION": NOWHERE}}


@pytest.fixture(scope="module")
def sample(sample_once: Benchmark) -> Benchmark:
    return sample_once


def test_the_settings_read_redis_through_and_leave_other_caches_as_they_are() -> None:
    redis = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:6379/1"}
    assert read_through(redis) == {**redis, "BACKEND": "lit2test_web.cache.TolerantRedisCache"}
    files = {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": "/tmp/x"}
    assert read_through(files) == files


def test_reads_miss_and_writes_are_skipped_while_redis_is_away(caplog: pytest.LogCaptureFixture) -> None:
    cache = TolerantRedisCache(NOWHERE, {})
    cache_module._warned_at = -cache_module._WARN_EVERY  # a warning is due
    with caplog.at_level(logging.WARNING, logger="lit2test.cache"):
        assert cache.get("k") is None
        assert cache.get("k", "fallback") == "fallback"
        assert cache.get_many(["a", "b"]) == {}
        assert cache.has_key("k") is False
        cache.set("k", 1)
        assert cache.set_many({"a": 1, "b": 2}) == ["a", "b"]
        assert cache.delete("k") is False
    warnings = [r for r in caplog.records if r.name == "lit2test.cache"]
    assert len(warnings) == 1, "one warning a minute, not one per call"
    assert "could not be reached" in warnings[0].getMessage() and "CACHE_URL" in warnings[0].getMessage()
    # Forgetting must say that it could not: clear still raises.
    with pytest.raises(cache.unreachable):
        cache.clear()


def test_the_socket_timeouts_bound_a_silent_redis_unless_configured() -> None:
    assert TolerantRedisCache(NOWHERE, {})._options["socket_connect_timeout"] == 1.0
    own = TolerantRedisCache(NOWHERE, {"OPTIONS": {"socket_timeout": 9.0}})
    assert own._options["socket_timeout"] == 9.0 and own._options["socket_connect_timeout"] == 1.0


@pytest.mark.django_db
@pytest.mark.parametrize("page", ["leaderboard page", "leaderboard API", "run page", "runs", "benchmarks API"])
def test_pages_answer_while_redis_is_away(rita_client, sample: Benchmark, page: str) -> None:  # noqa: ANN001
    run = JudgeRun.objects.filter(benchmark=sample).first()
    url = {
        "leaderboard page": reverse("lit2test:leaderboard", args=[sample.pk]),
        "leaderboard API": reverse("lit2test:api-leaderboard", args=[sample.pk]) + "?replicates=20",
        "run page": reverse("jobs:run", args=[run.pk]),
        "runs": reverse("jobs:runs"),
        "benchmarks API": reverse("arena:api-benchmarks"),
    }[page]
    rita_client.raise_request_exception = False
    with override_settings(CACHES=AWAY):
        response = rita_client.get(url)
    assert response.status_code == 200, (page, response.status_code, response.content[:300])
    if page == "leaderboard API":
        assert len(response.json()["models"]) == 4  # the sample's four models


def test_after_a_failure_redis_is_left_alone_for_a_few_seconds() -> None:
    # A Redis that takes connections and never answers cost the socket timeout on every call: a page of ten cache calls
    # waited twenty seconds (review). After one failure the process asks it nothing for RETRY_AFTER seconds.
    cache = TolerantRedisCache(NOWHERE, {})
    calls = []
    real = cache._cache

    class Counting:
        def __getattr__(self, name):  # noqa: ANN001, ANN204
            calls.append(name)
            return getattr(real, name)

    cache._cache = Counting()
    assert cache.get("k") is None  # refused: one call made, Redis marked away
    made = len(calls)
    assert made >= 1
    for _ in range(5):
        assert cache.get("k", "x") == "x" and cache.get_many(["a"]) == {}
        cache.set("k", 1)
    assert len(calls) == made, "no call while Redis is away"
    cache.away_until = 0.0  # the few seconds are over: asked again
    assert cache.get("k") is None and len(calls) > made
