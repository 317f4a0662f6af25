"""A launch form posted twice makes one run (issue 22, item 3): posted again from a stale page, or three times at once
(PostgreSQL), every answer points at the one run, none is a 500, and the endpoint is paid for one run's calls."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from arena.models import JudgeRun
from lit2test.release import RELEASE_JUDGE
from tests.clients import client_for, needs_postgresql, posted_at_once

from .helpers import chat_requests

KEY = re.compile(r'name="launch_key" value="([^"]+)"')


def values(benchmark: Any, fake: Any, key: str) -> dict[str, Any]:  # noqa: ANN401
    return {
        "benchmark": str(benchmark.pk),
        "judge_model": "Judge-Local",
        "base_url": fake.base_url,
        "run_type": "holistic",
        "select": "sample:2",
        "orders": ["original", "reverse"],
        "concurrency": "2",
        "temperature": "0",
        "max_tokens": "256",
        "timeout": "5",
        "launch_key": key,
    }


def new_runs() -> list[JudgeRun]:
    return list(JudgeRun.objects.exclude(judge_model=RELEASE_JUDGE))


@pytest.mark.django_db(transaction=True)
def test_a_stale_form_posted_again_points_at_its_run_and_makes_none(imported, researcher, fake_llm, celery_in_process) -> None:  # noqa: ANN001
    client = client_for(researcher)
    form = client.get(reverse("jobs:run-new")).content.decode()
    (key,) = KEY.findall(form)
    assert len(key) >= 24 and KEY.findall(client.get(reverse("jobs:run-new")).content.decode()) != [key]  # a new key each time
    first = client.post(reverse("jobs:run-new"), values(imported, fake_llm, key))
    (run,) = new_runs()
    assert first.status_code == 302 and first["Location"] == reverse("jobs:run", args=[run.pk])
    calls = len(chat_requests(fake_llm.log()))
    assert calls == 4  # two pairs in both orders

    again = client.post(reverse("jobs:run-new"), values(imported, fake_llm, key))

    assert again.status_code == 302 and again["Location"] == reverse("jobs:run", args=[run.pk])
    # The first answer's message was never shown (its redirect was not followed); the repeat's comes last.
    assert [str(m) for m in get_messages(again.wsgi_request)][-1] == (
        f"Run {run.pk} was launched from this form already; nothing new was made."
    )
    assert [r.pk for r in new_runs()] == [run.pk] and len(chat_requests(fake_llm.log())) == calls
    # A fresh form makes a new run.
    fresh = client.post(reverse("jobs:run-new"), values(imported, fake_llm, KEY.findall(form)[0] + "-2"))
    assert fresh.status_code == 302 and len(new_runs()) == 2


@pytest.mark.django_db(transaction=True)
def test_one_form_posted_three_times_at_once_makes_one_run(imported, researcher, fake_llm, celery_in_process) -> None:  # noqa: ANN001
    needs_postgresql("concurrent inserts that wait for each other's unique key need PostgreSQL")
    fake_llm.script(latency=0.2)
    answers = posted_at_once(researcher, reverse("jobs:run-new"), values(imported, fake_llm, "same-form-" + "x" * 20))

    (run,) = new_runs()
    assert sorted(a.status_code for a in answers) == [302, 302, 302]
    assert {a["Location"] for a in answers} == {reverse("jobs:run", args=[run.pk])}
    assert run.tasks.count() == 4 and len(chat_requests(fake_llm.log())) == 4
