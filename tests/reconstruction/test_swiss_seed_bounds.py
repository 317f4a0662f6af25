"""The Swiss selection's seed is recorded on the selection (``SwissSelection.seed``, a positive integer column:
2**31 - 1 on PostgreSQL): a larger one was an error page, on the launch page and as ``reconstruction_swiss --seed``.
And the bracket page's ``?seed=`` took "²" for a number (``str.isdigit()`` does) and failed on ``int()``."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from arena.models import Benchmark
from reconstruction.importing import import_files, reconstruction_import
from reconstruction.models import SeedPaper, SwissSelection

from . import helpers as h
from .test_launch_page import swiss

pytestmark = pytest.mark.django_db

LARGEST = 2_147_483_647  # a PositiveIntegerField's largest value on every database Django supports


@pytest.fixture
def bench(tmp_path: Path) -> Benchmark:
    return reconstruction_import(name="recon-seeds", files=import_files(h.folder(tmp_path / "in"))).benchmark


@pytest.mark.parametrize("seed", [str(LARGEST + 1), "9" * 25])
def test_a_seed_the_selection_cannot_record_is_refused_on_the_seed_field(
    rita_client: Client, bench: Benchmark, seed: str
) -> None:
    response = rita_client.post(reverse("reconstruction:launch", args=[bench.pk]), swiss(**{"swiss-seed": seed}))
    assert response.status_code == 200
    assert response.context["swiss_form"].errors["seed"] == [f"Ensure this value is less than or equal to {LARGEST}."]
    assert not SwissSelection.objects.exists()


def test_the_command_refuses_it_naming_the_option(bench: Benchmark) -> None:
    with pytest.raises(CommandError, match=rf"--seed: '{LARGEST + 1}': Ensure this value is less than or equal to {LARGEST}"):
        call_command(
            "reconstruction_swiss",
            str(bench.pk),
            "--name",
            "Sel",
            "--proposers",
            "Alpha",
            "--judges",
            "J-delta=delta",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--seed",
            str(LARGEST + 1),
            stdout=io.StringIO(),
        )
    assert not SwissSelection.objects.exists()


def test_the_largest_seed_is_taken_and_its_bracket_read_with_a_superscript_seed_shows_the_first(
    rita_client: Client,
    bench: Benchmark,
) -> None:
    response = rita_client.post(reverse("reconstruction:launch", args=[bench.pk]), swiss(**{"swiss-seed": str(LARGEST)}))
    selection = SwissSelection.objects.get()
    assert response.status_code == 302 and selection.seed == LARGEST
    # helpers: the one frozen seed paper, s1
    first = SeedPaper.objects.get(benchmark=bench, external_id="s1")
    bracket = rita_client.get(reverse("reconstruction:bracket", args=[bench.pk, selection.pk]), {"seed": "²"})
    assert bracket.status_code == 200 and bracket.context["current"] == first


@pytest.mark.parametrize("url", ["http://user:sk-SECRET123@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?api_key=sk-SECRET123"])
def test_a_recorded_selection_refuses_a_base_url_holding_a_key_and_stores_nothing(bench: Benchmark, url: str) -> None:
    # A recorded run calls nothing, but the URL it is given is stored with the selection's parameters: it was never
    # checked, so a key written into it reached the database (review).
    from arena.models import JudgeRun
    from jobs.lifecycle import RunError
    from reconstruction.swiss import selection_create

    with pytest.raises(RunError) as caught:
        selection_create(
            benchmark=bench,
            name="Sel",
            proposers=["Alpha"],
            judges=[{"model": "J-delta", "family": "delta"}],
            base_url=url,
            provider=JudgeRun.Provider.RECORDED,
            launch=False,
        )
    assert "--base-url" in str(caught.value) and "SECRET" not in str(caught.value)
    assert not SwissSelection.objects.exists()
