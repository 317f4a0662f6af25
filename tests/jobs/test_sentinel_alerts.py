"""The dashboard's sentinel alert (jobs.sentinels.sentinel_alerts) is one query however many benchmarks and judge
configurations have checks, and names exactly the configurations whose latest scored check drifted and is not
accepted (the rule of jobs.drift.last_check)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from arena.models import Benchmark, JudgeRun
from jobs.models import SentinelCheck, SentinelSet
from jobs.sentinels import sentinel_alerts

pytestmark = pytest.mark.django_db


def _check(
    sentinel_set: SentinelSet, key: str, minutes: int, *, drifted: bool, status: str = "completed", **extra
) -> SentinelCheck:  # noqa: ANN003
    run = JudgeRun.objects.create(
        benchmark=sentinel_set.benchmark, label=f"check {minutes}", judge_model=key, provider=JudgeRun.Provider.RECORDED
    )
    done = timezone.now() - timedelta(minutes=100 - minutes) if status else None
    return SentinelCheck.objects.create(
        sentinel_set=sentinel_set, run=run, config_key=key, run_status=status, drifted=drifted, done_at=done, **extra
    )


def _set(name: str) -> SentinelSet:
    return SentinelSet.objects.create(benchmark=Benchmark.objects.create(name=name, version="1"), subjects="pairs")


def test_the_alert_names_each_configuration_whose_latest_check_drifted_in_one_query(
    django_assert_num_queries, researcher
) -> None:  # noqa: ANN001
    expected = []
    for i in range(4):
        sentinel_set = _set(f"bench-{i}")
        _check(sentinel_set, "ok", 1, drifted=True)
        _check(sentinel_set, "ok", 2, drifted=False)  # drifted once, fine since: no alert
        expected.append(_check(sentinel_set, "drift", 3, drifted=True).pk)  # drifted last: alert
        _check(sentinel_set, "accepted", 4, drifted=True, accepted_by=researcher, accepted_at=timezone.now())
        _check(sentinel_set, "pending", 5, drifted=True, status="")  # not scored yet: the scored one before counts
        _check(sentinel_set, "pending", 1, drifted=False)
        _check(sentinel_set, "failed", 6, drifted=True, status="failed")  # a failed run's check never counts
    with django_assert_num_queries(1):
        alerts = sentinel_alerts()
        names = [(a["benchmark"].name, a["check"].config_key) for a in alerts]
    assert [a["check"].pk for a in alerts] == expected
    assert names == [(f"bench-{i}", "drift") for i in range(4)]
