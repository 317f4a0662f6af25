"""A launch form posted again from a stale page, or a command run again, after the first has made its object (issue
22, item 3; the same posted at once is tests/test_concurrent_launches.py, on PostgreSQL): the repeat makes nothing and
its answer names what the first made. Runs on any database."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Study
from arena.models import Benchmark, JudgeRun
from tests.clients import client_for
from tests.launching import NOWHERE, lit2test_release, study_values

pytestmark = pytest.mark.django_db


@pytest.fixture
def lit2test(tmp_path: Path) -> Benchmark:
    return lit2test_release(tmp_path / "release", "at-once")


KEY = re.compile(r'name="launch_key" value="([^"]+)"')


def test_a_stale_study_form_posted_again_points_at_its_study(lit2test: Benchmark, researcher, annotator, annotator2) -> None:  # noqa: ANN001
    client = client_for(researcher)
    (key,) = KEY.findall(client.get(reverse("annotation:studies")).content.decode())
    assert len(key) >= 24 and KEY.findall(client.get(reverse("annotation:studies")).content.decode()) != [key]
    values = study_values(lit2test, [annotator, annotator2]) | {"launch_key": key}
    first = client.post(reverse("annotation:studies"), values)
    study = Study.objects.get()
    assert first.status_code == 302 and first["Location"] == reverse("annotation:study", args=[study.pk])

    again = client.post(reverse("annotation:studies"), values)

    assert again.status_code == 302 and again["Location"] == first["Location"]
    assert [str(m) for m in get_messages(again.wsgi_request)][-1] == (
        f"Study {study.pk} was created from this form already; nothing new was made."
    )
    assert Study.objects.count() == 1
    fresh = client.post(reverse("annotation:studies"), values | {"launch_key": key + "-2"})
    assert fresh.status_code == 302 and Study.objects.count() == 2


def test_create_study_keeps_no_key(lit2test: Benchmark, annotator, annotator2) -> None:  # noqa: ANN001
    """A command has no form to post twice: each run is a study (and two keyless studies never collide on the key)."""
    for _ in range(2):
        call_command(
            "create_study", "at-once", "--contexts", "1", "--annotators", "ann,bob", "--naive-controls", "0", stdout=StringIO()
        )
    assert list(Study.objects.values_list("launch_key", flat=True)) == ["", ""]


def test_the_new_version_button_pressed_again_points_at_the_version_it_made(lit2test: Benchmark, researcher) -> None:  # noqa: ANN001
    client = client_for(researcher)
    url = reverse("lit2test:benchmark-new-version", args=[lit2test.pk])
    first = client.post(url)
    new = Benchmark.objects.get(name="at-once", version="2")
    assert first.status_code == 302 and first["Location"] == f"{reverse('jobs:run-new')}?benchmark={new.pk}"

    again = client.post(url)

    assert again.status_code == 302 and again["Location"] == first["Location"]
    assert [str(m) for m in get_messages(again.wsgi_request)][-1] == (
        "at-once v2 exists already; nothing new was made. Launch its canonical judge now."
    )
    assert Benchmark.objects.filter(name="at-once").count() == 2


def test_a_generation_launched_again_names_the_run_asking(lit2test: Benchmark) -> None:  # noqa: F811
    from lit2test.models import GenerationRun

    call_command("run_generation", "at-once", "--base-url", NOWHERE, stdout=StringIO())
    run = GenerationRun.objects.get()

    with pytest.raises(CommandError) as refused:
        call_command("run_generation", "at-once", "--base-url", NOWHERE, stdout=StringIO())

    assert str(refused.value) == (
        "nothing to ask: every chosen context with text has a proposal from these participants, or is being asked by "
        f"generation run {run.pk} (resume that run if it stopped)"
    )
    GenerationRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.CANCELLED)  # an ended run asks nothing
    call_command("run_generation", "at-once", "--base-url", NOWHERE, stdout=StringIO())
    assert GenerationRun.objects.count() == 2


def test_run_judge_with_a_label_the_judge_has_is_refused_by_name(lit2test: Benchmark) -> None:  # noqa: F811
    args = ("at-once", "--model", "Judge-Local", "--base-url", NOWHERE, "--select", "sample:1", "--label", "stability-1")
    call_command("run_judge", *args, stdout=StringIO())
    run = JudgeRun.objects.get(judge_model="Judge-Local")

    with pytest.raises(CommandError) as refused:
        call_command("run_judge", *args, stdout=StringIO())

    assert str(refused.value) == (
        f"run {run.pk} of at-once v1 is labelled 'stability-1' for judge 'Judge-Local' already; nothing new was made: "
        "give this run another label (--label)"
    )
    assert JudgeRun.objects.filter(judge_model="Judge-Local").count() == 1
