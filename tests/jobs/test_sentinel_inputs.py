"""What ``manage.py sentinels`` and the sentinel services refuse: an endpoint URL holding a key (never stored in the
schedule, never printed by ``--status``, never echoed by the refusal) and a schedule interval that is not a finite
number of minutes in the accepted range; each refusal names the option and what to give instead."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from jobs.lifecycle import RunError
from jobs.models import SentinelSet
from jobs.sentinels import CheckConfig, sentinels_check_due, sentinels_of, sentinels_settings_update

pytestmark = pytest.mark.django_db

SECRET = "sk-SECRET123"
#: A key in the URL's user info, its password, its query and its fragment: each refused, none stored or echoed.
SECRET_URLS = [
    f"http://user:{SECRET}@127.0.0.1:9/v1",
    f"http://{SECRET}@127.0.0.1:9/v1",
    f"http://127.0.0.1:9/v1?api_key={SECRET}",
    f"http://127.0.0.1:9/v1#{SECRET}",
]
GOOD_URL = "http://127.0.0.1:9/v1"


def sentinels(benchmark: Benchmark, *options: object) -> str:
    out = io.StringIO()
    call_command("sentinels", str(benchmark.pk), *map(str, options), stdout=out, stderr=io.StringIO())
    return out.getvalue()


def refusal(benchmark: Benchmark, *options: object) -> str:
    with pytest.raises(CommandError) as caught:
        sentinels(benchmark, *options)
    return str(caught.value)


@pytest.fixture
def pinned(imported: Benchmark) -> Benchmark:
    """The sample release with sentinels pinned from its completed judge run (no endpoint is called here)."""
    run = JudgeRun.objects.filter(benchmark=imported, status="completed").first()
    assert run is not None
    sentinels(imported, "--pin", run.pk, "--size", 5)
    return imported


@pytest.mark.parametrize("url", SECRET_URLS)
def test_a_schedule_with_a_key_in_its_url_is_refused_and_nothing_of_it_is_stored_or_printed(
    pinned: Benchmark, rita_client, url: str
) -> None:  # noqa: ANN001
    message = refusal(pinned, "--every", 60, "--model", "judge-x", "--base-url", url)

    assert "--base-url" in message and SECRET not in message
    stored = SentinelSet.objects.get(benchmark=pinned)
    assert stored.scheduled == {} and stored.check_every is None
    assert SECRET not in sentinels(pinned, "--status", "--json")
    assert SECRET not in rita_client.get(reverse("jobs:sentinels", args=[pinned.pk])).content.decode()


@pytest.mark.parametrize("url", SECRET_URLS)
def test_a_check_with_a_key_in_its_url_is_refused_without_echoing_it(pinned: Benchmark, url: str) -> None:
    runs = JudgeRun.objects.count()

    message = refusal(pinned, "--check", "--model", "judge-x", "--base-url", url)

    assert "--base-url" in message and SECRET not in message
    assert JudgeRun.objects.count() == runs


@pytest.mark.parametrize("url", SECRET_URLS)
def test_the_service_refuses_the_configuration_whatever_calls_it(pinned: Benchmark, url: str) -> None:
    with pytest.raises(RunError) as caught:
        sentinels_settings_update(
            sentinel_set=sentinels_of(pinned),
            check_every=timedelta(hours=1),
            scheduled=CheckConfig(judge_model="judge-x", base_url=url),
        )
    assert SECRET not in str(caught.value)
    assert SentinelSet.objects.get(benchmark=pinned).scheduled == {}


def test_a_schedule_stored_with_a_key_before_the_check_is_never_printed_nor_launched(pinned: Benchmark) -> None:
    # A row written before configurations were checked (straight to the database, as an old version stored it).
    legacy = {"judge_model": "judge-x", "base_url": SECRET_URLS[0], "api_key_env": None}
    SentinelSet.objects.filter(benchmark=pinned).update(scheduled=legacy, check_every=timedelta(hours=1))
    runs = JudgeRun.objects.count()

    status = sentinels(pinned, "--status", "--json")

    assert SECRET not in status and json.loads(status)["scheduled"]["base_url"] == GOOD_URL
    assert sentinels_check_due() == [] and JudgeRun.objects.count() == runs


@pytest.mark.parametrize("every", ["nan", "inf", "-inf", "1e12", "-1", "0", "4.9", "525601"])
def test_every_must_be_a_finite_number_of_minutes_in_range(pinned: Benchmark, every: str) -> None:
    message = refusal(pinned, f"--every={every}", "--model", "judge-x", "--base-url", GOOD_URL)  # = : "-1" is a value

    assert "--every" in message and "from 5 to 525600" in message
    assert SentinelSet.objects.get(benchmark=pinned).check_every is None


@pytest.mark.parametrize(("every", "expected"), [("5", timedelta(minutes=5)), ("525600", timedelta(days=365))])
def test_every_accepts_the_ends_of_its_range(pinned: Benchmark, every: str, expected: timedelta) -> None:
    sentinels(pinned, "--every", every, "--model", "judge-x", "--base-url", GOOD_URL)

    stored = SentinelSet.objects.get(benchmark=pinned)
    assert stored.check_every == expected and stored.scheduled["base_url"] == GOOD_URL


@pytest.mark.parametrize(("option", "value"), [("--temperature", "nan"), ("--temperature", "-1"), ("--max-tokens", "0")])
def test_the_schedules_numbers_are_checked_as_a_judge_runs(pinned: Benchmark, option: str, value: str) -> None:
    message = refusal(pinned, "--every", 60, "--model", "judge-x", "--base-url", GOOD_URL, option, value)

    assert option in message
    assert SentinelSet.objects.get(benchmark=pinned).scheduled == {}
