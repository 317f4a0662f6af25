"""The run page: every ordered judgment with its prompt, in a bounded number of queries."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from arena.models import JudgeRun
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_run_page_shows_prompts_and_answers_in_few_queries(imported, researcher, fake_llm, django_assert_max_num_queries) -> None:  # noqa: ANN001
    run, _ = judge_run_create(request=JudgeRunRequest(benchmark=imported, judge_model="J", base_url=fake_llm.base_url, pairs="sample:13"))
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert judge_run_execute(run_id=run.pk) == "completed"
    client = Client()
    client.force_login(researcher)
    with django_assert_max_num_queries(25):  # independent of the 25 judgments on the page
        page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert page.count('class="card judgment"') == 25
    assert page.count("=== PROPOSAL A ===") == 25 and page.count("<summary>Raw answer</summary>") == 25
    assert client.post(reverse("jobs:run", args=[run.pk])).status_code == 405
