"""The leaderboard page of any judge run over the canonical pairs (issue 24, item 2): a structured run's answered
with a 404, although the command and the API answered, and the run picker left structured runs out but listed a failed
run without a verdict. The picker lists the runs that have a leaderboard."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from arena.models import JudgeRun
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute
from tests.clients import client_for
from tests.jobs.helpers import create_running

pytestmark = pytest.mark.django_db(transaction=True)


def _picker(page: str) -> dict[int, bool]:
    """The run picker's runs: {id: selected}."""
    select = re.search(r'<select id="run-select".*?</select>', page, re.S).group(0)
    return {int(i): bool(s) for i, s in re.findall(r'<option value="(\d+)"( selected)?>', select)}


def _models(page: str) -> list[str]:
    table = re.search(r'<table class="grid leaderboard numbers" id="table1".*?</table>', page, re.S).group(0)
    return re.findall(r'<td class="model">([^<]+)</td>', table)


def test_a_structured_run_has_a_leaderboard_page_and_the_picker_lists_the_runs_that_rank(imported, fake_llm, researcher) -> None:  # noqa: ANN001
    canonical = JudgeRun.objects.get()
    structured, _ = create_running(imported, fake_llm, select="sample:12", run_type="structured", label="structured")
    assert judge_run_execute(run_id=structured.pk) == "completed"
    # A run that failed before any answer: nothing to rank.
    failed, _ = judge_run_create(
        request=JudgeRunRequest(benchmark=imported, judge_model="Judge-Down", base_url=fake_llm.base_url, select="sample:2")
    )
    JudgeRun.objects.filter(pk=failed.pk).update(status="failed")
    # A run still under way: its leaderboard fills in as it works.
    waiting, _ = judge_run_create(
        request=JudgeRunRequest(benchmark=imported, judge_model="Judge-Later", base_url=fake_llm.base_url, select="sample:2")
    )
    client = client_for(researcher)
    url = reverse("lit2test:leaderboard", args=[imported.pk])

    run_page = client.get(reverse("jobs:run", args=[structured.pk])).content.decode()
    link = f'<a href="{url}?run={structured.pk}">Leaderboard of this run</a>'
    assert link in run_page
    response = client.get(url, {"run": structured.pk})
    page = response.content.decode()
    assert response.status_code == 200 and 'id="table1"' in page
    assert _picker(page) == {canonical.pk: False, structured.pk: True, waiting.pk: False}
    assert "· structured" in re.search(rf'<option value="{structured.pk}" selected>[^<]*', page).group(0)
    # The page ranks what the API ranks for that run.
    api = client.get(reverse("lit2test:api-leaderboard", args=[imported.pk]), {"run": structured.pk, "replicates": 20}).json()
    assert _models(page) == api["models"] and len(api["models"]) >= 2

    # The failed run is not offered, but its own link still shows it (nothing to fit), chosen in the picker.
    page = client.get(url, {"run": failed.pk}).content.decode()
    assert 'id="insufficient"' in page and _picker(page)[failed.pk] is True
    assert _picker(client.get(url).content.decode()) == {canonical.pk: True, structured.pk: False, waiting.pk: False}
    for wrong in ("abc", "²", "9" * 30):
        assert client.get(url, {"run": wrong}).status_code == 404, wrong

    # A benchmark whose only ranked run is structured opens on it.
    JudgeRun.objects.filter(pk__in=[canonical.pk, waiting.pk]).delete()
    page = client.get(url).content.decode()
    assert _picker(page) == {structured.pk: True} and _models(page) == api["models"]
    # And one whose runs all ended without a verdict says so, naming them.
    structured.delete()
    page = client.get(url).content.decode()
    assert (
        'id="no-ranked-run"' in page
        and f'<a href="/dashboard/runs/{failed.pk}/">run #{failed.pk}</a> (Judge-Down, failed)' in page
    )
