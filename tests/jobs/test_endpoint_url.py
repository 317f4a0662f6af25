"""An endpoint URL is checked before any run is made, the same way on every launch form and command (a typo such as
``--base-url nope`` used to make a run that failed at its first call): an absolute http(s) URL with a host — a bare
service name such as ``http://vllm:8000/v1`` included, which Django's URLValidator would refuse — and no user name or
password in it (the key comes from an environment variable; the URL is then never echoed)."""

from __future__ import annotations

import html
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from arena.launch import endpoint_url_problem
from arena.models import JudgeRun
from jobs.models import EngineRun
from tests.clients import client_for
from tests.launching import lit2test_release

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8001/v1", "https://api.example.org/v1", "http://vllm:8000/v1", "http://[::1]:8000/v1", " http://h/v1 "],
)
def test_a_usable_url_passes(url: str) -> None:
    assert endpoint_url_problem(url) is None


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("", "is empty"),
        ("nope", "'nope' is not an http:// or https:// address with a host"),
        ("127.0.0.1:8000/v1", "is not an http:// or https:// address with a host"),
        ("ftp://files.example.org/v1", "is not an http:// or https:// address with a host"),
        ("http:///v1", "is not an http:// or https:// address with a host"),
        ("http://host:99999/v1", "has a port that is not a number from 1 to 65535"),
        ("http://host:0/v1", "has a port that is not a number from 1 to 65535"),
        ("http://[::1/v1", "is not an http:// or https:// address with a host"),  # urlsplit raises on it
        ("http://me:sk-live-123@[::1/v1", "holds a user name or password"),
        ("http://host /v1", "contains a space"),
        ("http://me:sk-live-123@host/v1", "holds a user name or password"),
        ("http://host/v1?api_key=sk-live-123", "has a query (?…) or a fragment (#…)"),
        ("http://host/v1#sk-live-123", "has a query (?…) or a fragment (#…)"),
        ("http://host/v1?", "has a query (?…) or a fragment (#…)"),
    ],
)
def test_a_bad_url_is_named_with_what_to_do(url: str, said: str) -> None:
    problem = endpoint_url_problem(url) or ""
    assert said in problem
    assert ("e.g. http://127.0.0.1:8001/v1" in problem) != (
        "environment variable" in problem
    )  # an example, or where the key goes
    assert "sk-live-123" not in problem


def test_run_judge_with_a_typo_makes_no_run(tmp_path: Path) -> None:
    bench = lit2test_release(tmp_path, "typo")
    before = JudgeRun.objects.count()
    with pytest.raises(CommandError) as refused:
        call_command("run_judge", bench.name, "--model", "judge-x", "--base-url", "nope", stdout=StringIO())
    assert "the judge's base URL (--base-url) 'nope' is not an http:// or https:// address" in str(refused.value)
    assert JudgeRun.objects.count() == before


def test_the_judge_run_form_shows_the_problem_on_its_field_and_makes_nothing(tmp_path: Path, researcher) -> None:  # noqa: ANN001
    bench = lit2test_release(tmp_path, "typo-form")
    client = client_for(researcher)
    form = client.get(reverse("jobs:run-new")).content.decode()
    values = {"benchmark": str(bench.pk), "judge_model": "judge-x", "base_url": "http://me:sk-live-123@host/v1"}
    body = html.unescape(client.post(reverse("jobs:run-new"), values).content.decode())
    assert 'name="base_url"' in form
    assert "The endpoint URL holds a user name or password" in body and "sk-live-123" not in body
    assert 'value="http://host/v1"' in body  # the rest of the URL is given back, to correct
    # A key in the query is refused and never shown back either.
    body = html.unescape(
        client.post(reverse("jobs:run-new"), values | {"base_url": "http://host/v1?api_key=sk-live-456"}).content.decode()
    )
    assert "has a query (?…) or a fragment (#…)" in body and "sk-live-456" not in body
    assert 'value="http://host/v1"' in body
    assert not JudgeRun.objects.filter(judge_model="judge-x").exists()


def made() -> dict[str, int]:
    """Rows of every run model (each kind extends EngineRun), of the Swiss selections and of the controls."""
    from django.apps import apps

    from controls.models import ControlVariant
    from reconstruction.models import SwissSelection

    runs = [m for m in apps.get_models() if issubclass(m, EngineRun)] + [SwissSelection, ControlVariant]
    return {m.__name__: m.objects.count() for m in runs}


def test_every_protocol_s_command_refuses_a_typo_before_making_a_run(tmp_path: Path) -> None:
    for demo in ("demo_hypoarena", "demo_reconstruction", "demo_intrinsic"):
        call_command(demo, *(("--cases", "1") if demo == "demo_hypoarena" else ()), stdout=StringIO())
    lit2test_release(tmp_path, "typo-gen")
    commands = {
        "run_generation": ("typo-gen", "--base-url", "nope"),
        "hypoarena_generate": ("hypoarena-demo", "--base-url", "nope"),
        "reconstruction_propose": ("reconstruction-demo", "--proposers", "Aster-L", "--base-url", "nope"),
        "reconstruction_swiss": (
            "reconstruction-demo",
            "--name",
            "Sel2",
            "--proposers",
            "Aster-L",
            "--judges",
            "J=j",
            "--base-url",
            "nope",
        ),
        "intrinsic_score": (
            "intrinsic-demo",
            "--model",
            "m",
            "--criterion",
            "nll",
            "--logprobs-mode",
            "raw_logprobs",
            "--base-url",
            "nope",
        ),
        "generate_controls": ("typo-gen", "--kinds", "subtle", "--contexts", "1", "--model", "m", "--base-url", "nope"),
    }
    before = made()
    for command, args in commands.items():
        with pytest.raises(CommandError) as refused:
            call_command(command, *args, stdout=StringIO(), stderr=StringIO())
        assert "'nope' is not an http:// or https:// address with a host" in str(refused.value), (command, str(refused.value))
    bad_tokenizer = (
        "intrinsic-demo",
        "--model",
        "m",
        "--criterion",
        "nll",
        "--logprobs-mode",
        "raw_logprobs",
        "--base-url",
        "http://127.0.0.1:9/v1",
    )
    with pytest.raises(CommandError) as refused:
        call_command("intrinsic_score", *bad_tokenizer, "--tokenize-url", "tok", stdout=StringIO(), stderr=StringIO())
    assert "the tokenize URL (--tokenize-url) 'tok' is not an http:// or https:// address" in str(refused.value)
    assert made() == before
