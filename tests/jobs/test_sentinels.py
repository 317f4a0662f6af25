"""Drift sentinels (issue 27): pinned frozen verdicts of a reference judge, re-checked by judge configurations through
ordinary judge runs of the sentinel subjects only, scored by the engine's durable step; the dashboard's alert, the
sentinels page, the refusal of a drifted configuration until a researcher accepts it, and the beat task.

The judge is the scripted endpoint (tests/fake_llm): it answers A to every Lit2Test pair for the reference run, A
again for an agreeing check and B for a drifting one. Runs are driven in this process (Celery's eager mode)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from jobs.lifecycle import RunError
from jobs.models import SentinelCheck, SentinelItem
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute
from jobs.tasks import sentinels_check_due_task
from tests.clients import client_for

from .helpers import JUDGE, chat_requests

pytestmark = pytest.mark.django_db(transaction=True)

SUBJECTS = 2  # sentinel subjects pinned: two pairs, each frozen in both orders


def sentinels(benchmark: Benchmark, *options: object) -> str:
    out = io.StringIO()
    call_command("sentinels", str(benchmark.pk), *map(str, options), stdout=out)
    return out.getvalue()


@pytest.fixture
def pinned(imported: Benchmark, fake_llm: Any, researcher: Any) -> Benchmark:  # noqa: ANN401
    """The benchmark with sentinels pinned from a completed run whose judge answered A to each of three pairs."""
    fake_llm.script(judge={"policy": "always_a"})
    request = JudgeRunRequest(benchmark=imported, judge_model=JUDGE, base_url=fake_llm.base_url, select="sample:3")
    run, _ = judge_run_create(request=request)
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert judge_run_execute(run_id=run.pk) == "completed"
    sentinels(imported, "--pin", run.pk, "--size", SUBJECTS, "--seed", 1, "--by", researcher.username)
    return imported


def check(benchmark: Benchmark, fake: Any, policy: str) -> SentinelCheck:  # noqa: ANN401
    """A check by the reference's own judge configuration, its endpoint now answering ``policy``; its run ends here."""
    fake.script(judge={"policy": policy})
    sentinels(benchmark, "--check", "--model", JUDGE, "--base-url", fake.base_url)
    return SentinelCheck.objects.select_related("run").latest("id")


def test_a_drifted_configuration_raises_the_alert_and_is_refused_until_a_researcher_accepts_it(
    pinned: Benchmark,
    fake_llm: Any,  # noqa: ANN401
    researcher: Any,  # noqa: ANN401
) -> None:
    items = SentinelItem.objects.filter(sentinel_set__benchmark=pinned)
    assert items.count() == SUBJECTS * 2
    assert {json.loads(item.verdict)["winner"] for item in items} == {"A"}  # what the reference judge answered
    sentinels(pinned, "--refuse-drifted")
    researcher_client = client_for(researcher)
    dashboard, page = reverse("arena:dashboard"), reverse("jobs:sentinels", args=[pinned.pk])

    agreeing = check(pinned, fake_llm, "always_a")

    assert len(chat_requests(fake_llm.log())) == SUBJECTS * 2  # the sentinels only, both orders
    assert agreeing.run.status == "completed" and agreeing.run.parameters["sentinels"]
    assert (agreeing.agreed, agreeing.compared, agreeing.agreement, agreeing.drifted) == (4, 4, 1.0, False)
    assert 'id="sentinel-alerts"' not in researcher_client.get(dashboard).content.decode()

    drifting = check(pinned, fake_llm, "always_b")

    assert (drifting.agreed, drifting.compared, drifting.agreement, drifting.drifted) == (0, 4, 0.0, True)
    assert drifting.previous == agreeing and drifting.previous_agreement == 0.0
    assert drifting.config_key == agreeing.config_key  # the same judge configuration, changed behind its name
    alert = researcher_client.get(dashboard).content.decode()
    assert 'id="sentinel-alerts"' in alert and f'data-config="{drifting.config_key}"' in alert
    shown = researcher_client.get(page).content.decode()
    assert 'id="sentinel-chart"' in shown and f'id="accept-{drifting.config_key}"' in shown

    same = JudgeRunRequest(benchmark=pinned, judge_model=JUDGE, base_url=fake_llm.base_url, select="sample:3")
    with pytest.raises(RunError) as refused:
        judge_run_create(request=same)
    message = str(refused.value)
    for part in (f"sentinel check {drifting.pk}", "on 0% of 4", "tolerance of 90%", f"--accept {drifting.config_key}"):
        assert part in message
    with pytest.raises(CommandError, match=f"sentinel check {drifting.pk}"):
        call_command("run_judge", str(pinned.pk), "--model", JUDGE, "--base-url", fake_llm.base_url, stdout=io.StringIO())
    form = {
        **{"benchmark": pinned.pk, "judge_model": JUDGE, "base_url": fake_llm.base_url, "run_type": "holistic"},
        **{"select": "sample:3", "orders": ["original", "reverse"], "concurrency": 2, "temperature": 0, "max_tokens": 1024},
        **{"timeout": 5, "launch_key": "sentinel-refusal"},
    }
    on_form = researcher_client.post(reverse("jobs:run-new"), form)
    assert on_form.status_code == 200 and f"sentinel check {drifting.pk}" in on_form.content.decode()
    assert not JudgeRun.objects.filter(launch_key="sentinel-refusal").exists()
    other = JudgeRunRequest(benchmark=pinned, judge_model=JUDGE, base_url=fake_llm.base_url, select="sample:3", temperature=0.5)
    judge_run_create(request=other)  # another configuration is not refused

    accepted = researcher_client.post(reverse("jobs:sentinels-accept", args=[pinned.pk]), {"config": drifting.config_key})

    assert accepted.status_code == 302
    drifting.refresh_from_db()
    assert drifting.accepted_by == researcher and drifting.accepted_at is not None
    run, _ = judge_run_create(request=same)  # allowed again
    assert run.pk
    assert 'id="sentinel-alerts"' not in researcher_client.get(dashboard).content.decode()
    status = json.loads(sentinels(pinned, "--status", "--json"))
    (config,) = status["configurations"]
    assert [c["agreement"] for c in config["checks"]] == [1.0, 0.0]
    assert config["last"]["accepted_by"] == researcher.username and not config["refused"]


def test_beat_launches_each_scheduled_check_once_and_only_researchers_see_the_page(
    pinned: Benchmark,
    fake_llm: Any,  # noqa: ANN401
    annotator: Any,  # noqa: ANN401
    researcher: Any,  # noqa: ANN401
) -> None:
    assert sentinels_check_due_task() == []  # sentinels without a schedule are not checked
    sentinels(pinned, "--every", 60, "--model", JUDGE, "--base-url", fake_llm.base_url)

    first = sentinels_check_due_task.delay().get()
    again = sentinels_check_due_task()

    assert len(first) == 1 and again == []
    made = SentinelCheck.objects.get()
    assert made.scheduled and made.run_id == first[0] and made.run.launch_key.startswith("sentinels-")
    assert made.run.status == "completed" and made.agreement == 1.0  # the endpoint still answers A

    page, accept = reverse("jobs:sentinels", args=[pinned.pk]), reverse("jobs:sentinels-accept", args=[pinned.pk])
    annotator_client = client_for(annotator)
    assert annotator_client.get(page).status_code == 403
    assert annotator_client.post(accept, {"config": made.config_key}).status_code == 403
    assert client_for(researcher).get(accept).status_code == 405
    made.refresh_from_db()
    assert made.accepted_at is None
