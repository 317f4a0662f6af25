"""The call cache (``jobs.call_cache``): a task whose request was answered and accepted before takes that answer
instead of calling the endpoint. Calls are counted at the scripted endpoint's own log; runs are driven in this
process (Celery's eager mode), as the other run tests here do. Lit2Test pair runs and the test-only toy protocol
(one judging kind that knows nothing of pairs) get it alike."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from arena.models import Benchmark, JudgeRun, OrderedJudgment
from jobs.call_cache import call_key
from jobs.models import CallCacheEntry, CallCacheHit, RunDriver, RunEvent
from jobs.prompts import PROMPTS, PromptTemplate, prompt_register
from jobs.selectors import run_progress
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute, judge_run_resume
from lit2test.models import JudgeTask
from tests.clients import client_for
from tests.toy_protocol.judging import SYSTEM, TEMPLATE
from tests.toy_protocol.models import ToyAnswer
from tests.toy_protocol.test_toy_protocol import JUDGE as TOY_JUDGE
from tests.toy_protocol.test_toy_protocol import import_toy, script_judge

from .helpers import JUDGE, accepted, chat_requests

pytestmark = pytest.mark.django_db(transaction=True)

# The toy template's text under another version: a run asked with it sends the very same messages, so only the
# template version in the key tells the two apart.
COPY = "toy-yes-no-v1-cache-copy"
if PROMPTS.get(COPY) is None:
    prompt_register(PromptTemplate(COPY, TEMPLATE.kind, SYSTEM))


def calls(fake: Any) -> int:  # noqa: ANN401
    """Chat requests the scripted endpoint has received since its last script."""
    return len(chat_requests(fake.log()))


def pairs_run(benchmark: Benchmark, fake: Any, **overrides: Any) -> JudgeRun:  # noqa: ANN401
    """A Lit2Test run of three pairs (six ordered tasks), driven to its end in this process."""
    request = JudgeRunRequest(benchmark=benchmark, judge_model=JUDGE, base_url=fake.base_url, select="sample:3", **overrides)
    run, _ = judge_run_create(request=request)
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert judge_run_execute(run_id=run.pk) == "completed"
    run.refresh_from_db()
    return run


def toy_run(fake: Any, *options: str) -> JudgeRun:  # noqa: ANN401
    """A toy run of the twelve items launched with ``run_judge`` (its driver runs in this process), to its end."""
    call_command("run_judge", "toy-bench", "--model", TOY_JUDGE, "--base-url", fake.base_url, *options, stdout=io.StringIO())
    return JudgeRun.objects.filter(benchmark__name="toy-bench").latest("id")


def toy_sources(run: JudgeRun) -> set[Any]:
    rows = ToyAnswer.objects.filter(run=run, status="accepted").values_list("metadata", flat=True)
    return {(m.get("cached_from") or {}).get("run") for m in rows}


def test_a_repeated_run_with_the_cache_asks_nothing_it_already_has_and_one_without_asks_everything(
    imported: Benchmark,
    fake_llm: Any,  # noqa: ANN401
) -> None:
    first = pairs_run(imported, fake_llm, call_cache=True)
    assert calls(fake_llm) == 6
    asked = calls(fake_llm)

    again = pairs_run(imported, fake_llm, call_cache=True)

    assert calls(fake_llm) == asked  # nothing was sent
    assert sorted(accepted(again)) == sorted(accepted(first)) and len(accepted(again)) == 6 == len(set(accepted(again)))
    verdicts = OrderedJudgment.objects.filter(run=again)
    assert {j.metadata["cached_from"]["run"] for j in verdicts} == {first.pk}
    assert {(j.prompt_tokens, j.completion_tokens) for j in verdicts} == {(0, 0)}  # it cost this run nothing
    same = {(j.pair_id, j.order): (j.verdict, j.raw_response) for j in OrderedJudgment.objects.filter(run=first)}
    assert {(j.pair_id, j.order): (j.verdict, j.raw_response) for j in verdicts} == same
    progress = run_progress(run=again)
    assert (progress.cached, progress.calls, progress.accepted, progress.prompt_tokens) == (6, 0, 6, 0)
    hits = CallCacheHit.objects.filter(kind="judge", run_id=again.pk)
    assert hits.count() == 6 and set(hits.values_list("source_run_id", flat=True)) == {first.pk}
    assert set(JudgeTask.objects.filter(run=again).values_list("calls", flat=True)) == {0}

    without = pairs_run(imported, fake_llm)  # the cache is opt-in: a run without it asks every task

    assert calls(fake_llm) == asked + 6
    assert run_progress(run=without).cached == 0 and len(accepted(without)) == 6


def test_a_killed_worker_s_run_resumed_takes_what_the_cache_has_once_and_asks_nothing(
    imported: Benchmark,
    fake_llm: Any,  # noqa: ANN401
) -> None:
    pairs_run(imported, fake_llm, call_cache=True)
    asked = calls(fake_llm)
    # The same run launched again without the cache, whose worker was killed: two tasks claimed by the dead driver.
    run, _ = judge_run_create(
        request=JudgeRunRequest(benchmark=imported, judge_model=JUDGE, base_url=fake_llm.base_url, select="sample:3")
    )
    assert run.parameters["call_cache"] is False
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    RunDriver.objects.create(
        kind="judge", run_id=run.pk, token="killed", worker="w", seen_at=timezone.now() - timedelta(minutes=1)
    )
    RunEvent.objects.create(kind="judge", run_id=run.pk, code="launched", message="launched")
    first, second, *_ = JudgeTask.objects.filter(run=run).order_by("id")
    JudgeTask.objects.filter(pk__in=[first.pk, second.pk]).update(
        status="claimed", claimed_by="killed", lease_until=timezone.now() - timedelta(seconds=1)
    )

    assert judge_run_resume(run=run) == 6  # reads the cache by default

    run.refresh_from_db()
    assert run.status == "completed" and run.parameters["call_cache"] is True
    assert calls(fake_llm) == asked
    assert len(accepted(run)) == 6 == len(set(accepted(run))) == OrderedJudgment.objects.filter(run=run).count()
    hits = CallCacheHit.objects.filter(kind="judge", run_id=run.pk)
    assert hits.count() == 6 == len(set(hits.values_list("task_id", flat=True)))


def test_a_changed_template_version_temperature_or_token_limit_misses(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    import_toy(tmp_path)
    script_judge(fake_llm)
    first = toy_run(fake_llm, "--cache")
    assert calls(fake_llm) == 12

    toy_run(fake_llm, "--cache", "--prompt-version", COPY)  # the same messages under another template version
    assert calls(fake_llm) == 24
    toy_run(fake_llm, "--cache", "--temperature", "0.5")
    assert calls(fake_llm) == 36
    toy_run(fake_llm, "--cache", "--max-tokens", "512")
    assert calls(fake_llm) == 48
    same = toy_run(fake_llm, "--cache")  # the first run's request again: every answer from the cache
    assert calls(fake_llm) == 48
    assert toy_sources(same) == {first.pk} and ToyAnswer.objects.filter(run=same, status="accepted").count() == 12


def test_invalid_refused_and_failed_answers_are_never_cached(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    import_toy(tmp_path)
    # The sky questions get an answer the kind refuses ("maybe") or a refusal, on every attempt; the sea ones are fine.
    fake_llm.script(
        replies=[
            {"contains": "item 00 about the sky", "answers": ["I cannot help with that."]},
            {"contains": "about the sky", "answers": [{"answer": "maybe"}]},
            {"contains": "about the sea", "answers": [{"answer": "no"}]},
        ]
    )
    first = toy_run(fake_llm, "--cache")
    assert calls(fake_llm) == 4 * 3 + 8  # each sky item asked three times (two retries), each sea item once
    assert ToyAnswer.objects.filter(run=first, status="invalid").count() == 4
    assert CallCacheEntry.objects.filter(source_run_id=first.pk).count() == 8

    script_judge(fake_llm)
    second = toy_run(fake_llm, "--cache")

    assert calls(fake_llm) == 4  # only the sky items are asked again
    assert ToyAnswer.objects.filter(run=second, status="accepted").count() == 12
    assert run_progress(run=second).cached == 8

    # An endpoint that refuses the request (HTTP 400): the tasks fail, nothing is kept, the next run asks again.
    fake_llm.script(failures=[{"status": 400}])
    call_command(
        "run_judge", "toy-bench", "--model", "Toy-Judge-2", "--base-url", fake_llm.base_url, "--cache", stdout=io.StringIO()
    )
    refused = JudgeRun.objects.filter(benchmark__name="toy-bench").latest("id")
    assert refused.status == "failed" and calls(fake_llm) == 12
    assert not CallCacheEntry.objects.filter(source_run_id=refused.pk).exists()
    script_judge(fake_llm)
    call_command(
        "run_judge", "toy-bench", "--model", "Toy-Judge-2", "--base-url", fake_llm.base_url, "--cache", stdout=io.StringIO()
    )
    assert calls(fake_llm) == 12


def test_two_samples_at_a_temperature_above_zero_stay_distinct(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    import_toy(tmp_path)
    script_judge(fake_llm)
    sample_0 = toy_run(fake_llm, "--cache", "--temperature", "0.7")
    assert calls(fake_llm) == 12

    sample_1 = toy_run(fake_llm, "--cache", "--temperature", "0.7", "--sample", "1")

    assert calls(fake_llm) == 24  # sample 1 never reuses sample 0's answers
    assert toy_sources(sample_1) == {None} and sample_1.parameters["sample"] == 1
    again = toy_run(fake_llm, "--cache", "--temperature", "0.7", "--sample", "1")
    assert calls(fake_llm) == 24 and toy_sources(again) == {sample_1.pk} != {sample_0.pk}


def test_the_run_page_says_which_run_each_cached_answer_came_from(tmp_path: Path, fake_llm: Any, researcher: Any) -> None:  # noqa: ANN401
    import_toy(tmp_path)
    script_judge(fake_llm)
    first = toy_run(fake_llm, "--cache")
    again = toy_run(fake_llm, "--cache")

    page = client_for(researcher).get(reverse("jobs:run", args=[again.pk])).content.decode()

    assert page.count(f"cached from run {first.pk}") == 12
    assert "12 answers from the call cache (no call, no cost)" in page
    first_page = client_for(researcher).get(reverse("jobs:run", args=[first.pk])).content.decode()
    assert "cached from run" not in first_page and "from the call cache" not in first_page


def test_the_key_holds_the_model_prompt_order_sample_parameters_and_template() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "q"}], "temperature": 0.0, "max_tokens": 64}
    base = {"url": "http://e/v1", "body": body, "order": "original", "sample": 0, "template_version": "t1"}
    key = call_key(**base)
    assert len(key) == 64 and int(key, 16) >= 0
    assert call_key(**(base | {"url": "http://e/v1/"})) == key  # a trailing slash is the same endpoint
    changed = [
        base | {"body": body | {"model": "other"}},
        base | {"body": body | {"messages": [{"role": "user", "content": "q2"}]}},
        base | {"body": body | {"temperature": 0.7}},
        base | {"body": body | {"max_tokens": 65}},
        base | {"body": body | {"top_p": 0.9}},
        base | {"order": "reverse"},
        base | {"sample": 1},
        base | {"template_version": "t2"},
        base | {"url": "http://other/v1"},
    ]
    assert len({call_key(**c) for c in changed} | {key}) == len(changed) + 1


def test_the_launch_form_s_checkbox_turns_the_cache_on_for_its_run(tmp_path: Path, fake_llm: Any, researcher: Any) -> None:  # noqa: ANN401
    benchmark = import_toy(tmp_path)
    script_judge(fake_llm)
    first = toy_run(fake_llm, "--cache")
    client = client_for(researcher)
    assert 'name="call_cache"' in client.get(reverse("jobs:run-new")).content.decode()
    values = {
        "benchmark": str(benchmark.pk),
        "judge_model": TOY_JUDGE,
        "base_url": fake_llm.base_url,
        "run_type": "yes_no",
        "select": "all",
        "concurrency": "2",
        "temperature": "0",
        "max_tokens": "1024",
        "timeout": "120",
        "call_cache": "on",
    }

    response = client.post(reverse("jobs:run-new"), values)

    run = JudgeRun.objects.filter(benchmark=benchmark).latest("id")
    assert response.status_code == 302 and run.pk != first.pk and run.parameters["call_cache"] is True
    assert run.status == "completed" and calls(fake_llm) == 12 and toy_sources(run) == {first.pk}


@pytest.mark.django_db
def test_a_run_resumed_without_the_cache_still_counts_the_answers_it_took_from_it() -> None:
    """Its done tasks made no call and cost nothing: the page must keep saying why (a resume with --no-cache used to
    zero the count)."""
    from jobs.call_cache import cache_hits

    benchmark = Benchmark.objects.create(name="hits", version="1")
    run = JudgeRun.objects.create(
        benchmark=benchmark, label="r", judge_model="j", provider=JudgeRun.Provider.RECORDED, parameters={"call_cache": False}
    )
    CallCacheHit.objects.bulk_create(
        [
            CallCacheHit(
                kind="judge", run_id=run.pk, task_id=t, key=f"k{t}", source_kind="judge", source_run_id=1, source_task_id=t
            )
            for t in range(3)
        ]
    )
    assert cache_hits(kind="judge", run=run) == 3
