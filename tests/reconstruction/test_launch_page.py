"""The Reconstruction launch page: a proposer run and a Swiss selection from the dashboard, with the commands'
services; refusals on the form with nothing made; a form posted twice makes nothing twice; researchers only.

The runs are created inside the test's transaction, so their drivers (enqueued on commit) never start."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from reconstruction.importing import import_files, reconstruction_import
from reconstruction.models import ProposerRun, ProposerTask, SwissSelection, SwissTournament
from tests.clients import client_for, needs_postgresql, posted_at_once

from . import helpers as h

pytestmark = pytest.mark.django_db


@pytest.fixture
def bench(tmp_path: Path) -> Benchmark:
    return reconstruction_import(name="recon-launch", files=import_files(h.folder(tmp_path / "in"))).benchmark


def propose(**extra: str) -> dict[str, str]:
    return {
        "action": "propose",
        "propose-proposers": "Gamma, Delta",
        "propose-families": "Gamma=gamma",
        "propose-seeds": "all",
        "propose-base_url": "http://127.0.0.1:9/v1",
        "propose-concurrency": "2",
        "propose-timeout": "30",
        "propose-temperature": "1",
        "propose-max_tokens": "1000",
    } | extra


def swiss(**extra: str) -> dict[str, str]:
    return {
        "action": "swiss",
        "swiss-name": "Sel",
        "swiss-proposers": "Alpha",
        "swiss-judges": "J-delta=delta",
        "swiss-base_url": "http://127.0.0.1:9/v1",
        "swiss-concurrency": "2",
        "swiss-timeout": "30",
        "swiss-seed": "0",
    } | extra


def test_researchers_only(bench: Benchmark, annotator, client) -> None:  # noqa: ANN001
    url = reverse("reconstruction:launch", args=[bench.pk])
    assert client.get(url).status_code == 302 and client_for(annotator).get(url).status_code == 403
    assert client_for(annotator).post(url, propose()).status_code == 403 and not ProposerRun.objects.exists()


def test_a_proposer_run_is_launched_and_a_second_post_makes_nothing(bench: Benchmark, researcher) -> None:  # noqa: ANN001
    client = client_for(researcher)
    url = reverse("reconstruction:launch", args=[bench.pk])
    page = client.get(url).content.decode()
    assert 'id="propose-form"' in page and 'id="swiss-form"' in page
    response = client.post(url, propose())
    run = ProposerRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("jobs:runs")
    # helpers: one frozen seed (s1); Gamma and Delta are new participants, Gamma of family gamma, Delta its own name.
    assert set(ProposerTask.objects.filter(run=run).values_list("participant__name", "seed__external_id")) == {
        ("Gamma", "s1"),
        ("Delta", "s1"),
    }
    assert run.parameters["families"] == {"Gamma": "gamma", "Delta": "Delta"} and run.status == "running"
    again = html.unescape(client.post(url, propose()).content.decode())
    assert (
        f"nothing to ask: every chosen seed has hypotheses from these proposers, or is being asked by proposer run {run.pk}"
        in again
    )
    assert ProposerRun.objects.count() == 1


def test_refusals_are_shown_on_the_form_and_nothing_is_made(bench: Benchmark, researcher) -> None:  # noqa: ANN001
    client = client_for(researcher)
    url = reverse("reconstruction:launch", args=[bench.pk])
    body = html.unescape(client.post(url, propose(**{"propose-families": "Gamma"})).content.decode())
    assert "families entries look like NAME=VALUE" in body
    body = html.unescape(client.post(url, propose(**{"propose-base_url": ""})).content.decode())
    assert "This field is required." in body
    body = html.unescape(client.post(url, swiss(**{"swiss-judges": "J-delta"})).content.decode())
    assert "judges entries look like NAME=VALUE" in body
    body = html.unescape(client.post(url, swiss(**{"swiss-proposers": "Nobody"})).content.decode())
    assert "--proposers must name distinct participants" in body and "unknown: Nobody" in body
    assert (
        not ProposerRun.objects.exists()
        and not SwissSelection.objects.exists()
        and not JudgeRun.objects.filter(subjects="reconstruction_swiss").exists()
    )


def test_a_swiss_selection_starts_and_opens_its_bracket(bench: Benchmark, researcher) -> None:  # noqa: ANN001
    client = client_for(researcher)
    url = reverse("reconstruction:launch", args=[bench.pk])
    # helpers: Alpha has five valid hypotheses on s1 (Beta's fifth is invalid, so Beta does not take part on s1).
    response = client.post(url, swiss(**{"swiss-proposers": "Alpha, Beta"}))
    selection = SwissSelection.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "reconstruction:bracket", args=[bench.pk, selection.pk]
    )
    assert SwissTournament.objects.filter(selection=selection).count() == 5
    assert all(len(t.candidates) == 1 for t in SwissTournament.objects.filter(selection=selection))
    again = html.unescape(client.post(url, swiss(**{"swiss-proposers": "Alpha, Beta"})).content.decode())
    assert "'Sel' is already a participant" in again and SwissSelection.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_swiss_form_posted_three_times_at_once_starts_one_selection(tmp_path: Path, researcher) -> None:  # noqa: ANN001
    needs_postgresql("concurrent inserts that wait for each other's unique key need PostgreSQL")
    bench = reconstruction_import(name="recon-once", files=import_files(h.folder(tmp_path / "in"))).benchmark
    url = reverse("reconstruction:launch", args=[bench.pk])

    answers = posted_at_once(researcher, url, swiss(**{"swiss-proposers": "Alpha, Beta"}))

    selection = SwissSelection.objects.get()  # one selection, one participant "Sel"
    bracket = reverse("reconstruction:bracket", args=[bench.pk, selection.pk])
    # A post racing the first is sent to the selection it made; one arriving after the first committed is refused on
    # its form, as a second post is (see above). Never a 500, never a second selection.
    assert len(answers) == 3 and all(a.status_code in (200, 302) for a in answers), [a.status_code for a in answers]
    assert {a["Location"] for a in answers if a.status_code == 302} == {bracket}
    for page in (html.unescape(a.content.decode()) for a in answers if a.status_code == 200):
        assert "'Sel' is already a participant" in page
    assert bench.participants.filter(name="Sel").count() == 1
    assert SwissTournament.objects.filter(selection=selection).count() == 5
