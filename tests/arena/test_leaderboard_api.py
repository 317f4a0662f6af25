"""The leaderboard API's parameters: ranges checked before any work, the work bounded by a server-side cap."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def get(client: Client, benchmark, **params: object):  # noqa: ANN001, ANN201
    return client.get(reverse("lit2test:api-leaderboard", args=[benchmark.pk]), params)


@pytest.mark.parametrize("value", ["1e308", "100.5", "-0.1", "nan", "NaN", "inf", "-inf", "Infinity"])
def test_a_pseudo_count_outside_0_to_100_or_not_finite_is_a_400(imported, rita_client, value: str) -> None:  # noqa: ANN001
    response = get(rita_client, imported, pseudo_count=value, replicates=10)
    assert response.status_code == 400, (value, response.content)
    assert "pseudo_count" in response.json()


def test_replicates_above_the_cap_are_a_400_naming_the_cap(imported, rita_client, settings) -> None:  # noqa: ANN001
    assert settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES == 20_000  # the documented default
    response = get(rita_client, imported, replicates=100_000)
    assert response.status_code == 400
    assert "20000" in " ".join(response.json()["replicates"])
    settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES = 300
    response = get(rita_client, imported, replicates=301)
    assert response.status_code == 400 and "300" in " ".join(response.json()["replicates"])
    assert get(rita_client, imported, replicates=300).json()["bootstrap"]["replicates"] == 300


@pytest.mark.parametrize(("name", "value"), [("seed", -1), ("seed", 2**32), ("run", 0), ("run", 2**63), ("replicates", 0)])
def test_other_out_of_range_parameters_are_a_400_naming_them(imported, rita_client, name: str, value: int) -> None:  # noqa: ANN001
    response = get(rita_client, imported, **{name: value})
    assert response.status_code == 400 and name in response.json()


def test_the_bounds_of_the_ranges_are_accepted(imported, rita_client) -> None:  # noqa: ANN001
    for params in (
        {"pseudo_count": 0, "replicates": 20},
        {"pseudo_count": 100, "replicates": 20},
        {"seed": 2**32 - 1, "replicates": 20},
    ):
        response = get(rita_client, imported, **params)
        assert response.status_code == 200, (params, response.content)
    assert response.json()["bootstrap"]["replicates"] == 20


def test_a_run_of_another_benchmark_or_an_unknown_benchmark_is_404(imported, rita_client) -> None:  # noqa: ANN001
    assert get(rita_client, imported, run=2**63 - 1).status_code == 404
    assert rita_client.get(reverse("lit2test:api-leaderboard", args=[10**30])).status_code == 404
