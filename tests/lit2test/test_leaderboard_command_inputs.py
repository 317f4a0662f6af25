"""``manage.py leaderboard`` refuses what the leaderboard API refuses (a seed outside [0, 2³² − 1], a pseudo-count
that is not a finite number in [0, 100]) with an error naming the option, and computes what the API computes for a
pseudo-count of 0: both give the document, whose simulated Wald coverage leaves out the simulated sets without a
finite fit instead of failing."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from arena.models import Benchmark
from tests.launching import lit2test_release

pytestmark = pytest.mark.django_db

REPLICATES = "20"


@pytest.fixture
def small(tmp_path: Path) -> Benchmark:
    """Three models over two contexts: at pseudo-count 0 the simulated judgments often separate the models."""
    return lit2test_release(tmp_path / "release", "small")


def command(benchmark: Benchmark, *options: str) -> str:
    out = io.StringIO()
    call_command("leaderboard", str(benchmark.pk), "--replicates", REPLICATES, *options, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--pseudo-count", "nan"),
        ("--pseudo-count", "inf"),
        ("--pseudo-count", "-5"),
        ("--pseudo-count", "100.5"),
        ("--seed", "-1"),
        ("--seed", str(2**32)),
    ],
)
def test_a_number_the_api_refuses_is_refused_naming_its_option(small: Benchmark, option: str, value: str) -> None:
    with pytest.raises(CommandError) as caught:
        command(small, f"{option}={value}", "--json")  # = : "-5" is the option's value, not an option

    assert str(caught.value).startswith(f"{option} must be") and value.lstrip("-") in str(caught.value)


@pytest.mark.parametrize("style", [None, "length"])
def test_pseudo_count_zero_gives_the_same_document_in_the_command_and_the_api(
    small: Benchmark, rita_client, style: str | None
) -> None:  # noqa: ANN001
    extra = ("--style-control", style, "--style-replicates", "3") if style else ()
    doc = json.loads(command(small, "--pseudo-count", "0", "--json", *extra))
    query = {"pseudo_count": "0", "replicates": REPLICATES} | ({"style_control": style, "style_replicates": "3"} if style else {})

    answer = rita_client.get(reverse("lit2test:api-leaderboard", args=[small.pk]), query)

    assert answer.status_code == 200
    assert answer.json()["honest_intervals"] == doc["honest_intervals"]
    coverage = doc["honest_intervals"]["coverage"]
    used = coverage["sandwich_simulations"]
    assert 0 < used < coverage["simulations"]  # some simulated sets of two contexts separate the three models
    assert f"{coverage['simulations'] - used} of the {coverage['simulations']}" in coverage["sandwich_skipped"]
    # The Wald coverage is a share of the simulated sets it is over: a whole number of them per model.
    for share in coverage["sandwich"].values():
        assert 0.0 <= share <= 1.0 and share * used == pytest.approx(round(share * used))


@pytest.mark.parametrize("pseudo_count", ["1e-300", "1e-50"])
def test_a_tiny_pseudo_count_gives_a_finite_document(small: Benchmark, rita_client, pseudo_count: str) -> None:  # noqa: ANN001
    # The fits' π underflowed to 0 and divided 0 by 0 (arena.stats.bt.PI_FLOOR): "non-finite float in the leaderboard
    # document", HTTP 500.
    url = reverse("lit2test:api-leaderboard", args=[small.pk])
    response = rita_client.get(url, {"pseudo_count": pseudo_count, "replicates": REPLICATES})
    assert response.status_code == 200, response.content[:300]
    assert json.loads(command(small, "--pseudo-count", pseudo_count, "--json"))["models"] == response.json()["models"]
