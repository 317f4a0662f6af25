"""Intrinsic runs and the call cache (``jobs.call_cache``), as judge and elicitation runs use it: a candidate whose
completions request was scored and accepted before takes that score instead of a request. Requests are counted in the
scripted endpoint's own log (tests/fake_llm); the expected scores are computed from the toy model in ``helpers.py``;
runs are driven in this process (Celery's eager mode) as the other intrinsic run tests do.

Listwise runs are judge runs (``run_judge`` on an Intrinsic benchmark, the judge driver): the last test checks they
take the judge's cache too."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from arena.models import Benchmark
from intrinsic.models import CandidateScore, IntrinsicScoringRun, ListwiseJudgment, ScoringTask
from intrinsic.scoring import scoring_progress, scoring_run_create, scoring_run_execute, scoring_run_pause, scoring_run_resume
from jobs.models import CallCacheEntry, CallCacheHit, RunDriver
from jobs.selectors import run_progress
from tests.clients import client_for
from tests.fake_llm import FakeLLM, toy_lm
from tests.jobs.helpers import OTHER_DRIVER, Background, claims_taken_by_another_driver, wait_until, while_driver_runs

from .helpers import (
    MODES,
    PAPERS,
    PROBE_TEXT,
    assert_scores_match_the_toy_model,
    chat_prompts,
    cid,
    completions,
    expected_values,
    listwise_replies,
    make_benchmark,
    run_listwise,
    score_command,
    scored_prompts,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]
CANDIDATES = sum(len(p["texts"]) for p in PAPERS)


@pytest.fixture
def bench(tmp_path: Path) -> Benchmark:
    return make_benchmark(tmp_path)


def scores_of(run: IntrinsicScoringRun) -> dict[int, tuple[float, float, int, list[float]]]:
    """Each candidate's stored score: mean, sum, token count and values."""
    rows = CandidateScore.objects.filter(run=run)
    return {s.candidate_id: (s.mean, s.total, s.tokens, s.detail["values"]) for s in rows}


def cached_from(run: IntrinsicScoringRun) -> list[Any]:
    """Per stored score, the run its cached answer came from (None: asked of the endpoint)."""
    return [(s.detail.get("cached_from") or {}).get("run") for s in CandidateScore.objects.filter(run=run)]


def prompt_length(paper: dict[str, Any], text: str) -> int:
    return len(toy_lm.tokenize(f"Background: {paper['background']}\nResearch Question: {paper['question']}\nHypothesis: {text}"))


@pytest.mark.parametrize("criterion", ["nll", "energy"])
def test_a_second_identical_run_with_the_cache_is_answered_entirely_from_it(
    bench: Benchmark, fake_llm: FakeLLM, criterion: str
) -> None:
    fake_llm.script(completions={"logprobs_mode": MODES[criterion]})
    first, _ = score_command(bench, fake_llm, criterion, "--scorer", "first")
    assert first.parameters["call_cache"] is False  # reading is opt-in; every accepted score is kept all the same
    assert CallCacheEntry.objects.filter(source_kind="intrinsic_scoring", source_run_id=first.pk).count() == CANDIDATES
    fake_llm.script(completions={"logprobs_mode": MODES[criterion]})  # a fresh log

    again, out = score_command(bench, fake_llm, criterion, "--scorer", "again", "--cache")

    assert f"scoring run {again.pk} completed: {CANDIDATES} candidates scored" in out
    # Not one candidate's request (nor its tokenizations) was sent; an energy run still probes its endpoint first.
    log = fake_llm.log()
    assert scored_prompts(log) == {}
    assert all(PROBE_TEXT in e["prompt"] for e in log) and len(log) == (3 if criterion == "energy" else 0)
    assert_scores_match_the_toy_model(again, criterion)
    assert scores_of(again) == scores_of(first)
    assert set(cached_from(again)) == {first.pk}
    progress = scoring_progress(run=again)
    assert (progress.done, progress.cached, progress.calls, progress.prompt_tokens, progress.completion_tokens) == (
        CANDIDATES,
        CANDIDATES,
        len(log),  # the probe's requests, counted on the run's first task
        0,
        0,
    )
    hits = CallCacheHit.objects.filter(kind="intrinsic_scoring", run_id=again.pk)
    assert hits.count() == CANDIDATES and set(hits.values_list("source_run_id", flat=True)) == {first.pk}


def test_a_run_with_the_cache_off_asks_the_endpoint_again(bench: Benchmark, fake_llm: FakeLLM) -> None:
    first, _ = score_command(bench, fake_llm, "nll", "--scorer", "first")
    fake_llm.script()

    again, _ = score_command(bench, fake_llm, "nll", "--scorer", "again", "--no-cache")

    asked = scored_prompts(fake_llm.log())
    assert len(asked) == CANDIDATES and set(asked.values()) == {1}
    assert_scores_match_the_toy_model(again, "nll")
    assert set(cached_from(again)) == {None}
    assert scoring_progress(run=again).cached == 0
    assert not CallCacheHit.objects.filter(kind="intrinsic_scoring", run_id=again.pk).exists()
    # Its fresh answers replaced the first run's entries (how a researcher refreshes the cache after the server
    # changed behind the same URL and model name): one entry per request still, now from this run.
    assert CallCacheEntry.objects.filter(source_kind="intrinsic_scoring").count() == CANDIDATES
    assert set(CallCacheEntry.objects.values_list("source_run_id", flat=True)) == {again.pk} != {first.pk}


@pytest.mark.parametrize("option", [None, "--no-cache"])
def test_a_run_resumed_after_a_partial_failure_takes_what_the_cache_has(
    bench: Benchmark, fake_llm: FakeLLM, option: str | None
) -> None:
    first, _ = score_command(bench, fake_llm, "nll", "--scorer", "first")
    # The endpoint restarted with a context too short for the longer prompts: those candidates fail (HTTP 400, which
    # no retry fixes), the others are scored, and the run ends failed.
    lengths = sorted(prompt_length(p, t) for p in PAPERS for t in p["texts"])
    limit = lengths[len(lengths) // 2]
    too_long = sum(1 for n in lengths if n > limit)
    assert 0 < too_long < CANDIDATES
    fake_llm.script(completions={"max_model_len": limit})
    with pytest.raises(CommandError, match="ended failed"):
        score_command(bench, fake_llm, "nll", "--scorer", "second")
    second = IntrinsicScoringRun.objects.latest("id")
    assert ScoringTask.objects.filter(run=second, status="failed").count() == too_long
    fake_llm.script()  # the context fixed, a fresh log

    resume = ["--resume", str(second.pk), *([option] if option else []), "--wait"]
    call_command("intrinsic_score", str(bench.pk), *resume, stdout=io.StringIO())

    second.refresh_from_db()
    assert second.status == "completed"
    assert_scores_match_the_toy_model(second, "nll")
    asked = scored_prompts(fake_llm.log())
    progress = scoring_progress(run=second)
    if option is None:  # a resume reads the cache by default: the failed candidates were asked nothing
        assert second.parameters["call_cache"] is True and fake_llm.log() == []
        sources = cached_from(second)
        assert sources.count(first.pk) == too_long and sources.count(None) == CANDIDATES - too_long
        assert progress.cached == too_long
    else:
        assert second.parameters["call_cache"] is False
        assert len(asked) == too_long and set(asked.values()) == {1}
        assert set(cached_from(second)) == {None} and progress.cached == 0


def test_a_cached_score_that_fails_the_check_is_asked_again(bench: Benchmark, fake_llm: FakeLLM) -> None:
    first, _ = score_command(bench, fake_llm, "nll", "--scorer", "first")
    entries = list(CallCacheEntry.objects.filter(source_run_id=first.pk).order_by("id"))
    # Kept scores a fresh answer would not pass: a negative NLL (a log-probability above 0: raw logits), values and
    # tokens of different lengths, another criterion, text that is not JSON, an integer too large for a float.
    broken = []
    for entry, change in zip(
        entries,
        [
            lambda d: d | {"values": [-0.5, *d["values"][1:]]},
            lambda d: d | {"tokens": d["tokens"][1:]},
            lambda d: d | {"criterion": "energy"},
            None,
            lambda d: d | {"values": [10**400, *d["values"][1:]]},
        ],
        strict=False,
    ):
        entry.text = json.dumps(change(json.loads(entry.text))) if change else "not json"
        entry.save(update_fields=["text"])
        broken.append(ScoringTask.objects.get(pk=entry.source_task_id).candidate_id)
    fake_llm.script()

    again, _ = score_command(bench, fake_llm, "nll", "--scorer", "again", "--cache")

    assert_scores_match_the_toy_model(again, "nll")  # no broken value was stored
    asked = scored_prompts(fake_llm.log())
    assert len(asked) == 5 and set(asked.values()) == {1}
    fresh = {s.candidate_id for s in CandidateScore.objects.filter(run=again) if "cached_from" not in s.detail}
    assert fresh == set(broken)
    assert scoring_progress(run=again).cached == CANDIDATES - 5


def test_the_launch_form_s_checkbox_turns_the_cache_on(bench: Benchmark, fake_llm: FakeLLM, researcher: Any) -> None:  # noqa: ANN401
    first, _ = score_command(bench, fake_llm, "nll", "--scorer", "first")
    fake_llm.script()
    form = {
        "model": "toy",
        "criterion": "nll",
        "logprobs_mode": "raw_logprobs",
        "base_url": fake_llm.base_url,
        "api_key_env": "",
        "papers": "all",
        "concurrency": "4",
        "timeout": "5",
        "call_cache": "on",
    }
    page = client_for(researcher).get(reverse("intrinsic:launch", args=[bench.pk])).content.decode()
    assert 'name="call_cache"' in page

    response = client_for(researcher).post(reverse("intrinsic:launch", args=[bench.pk]), form)

    assert response.status_code == 302
    run = IntrinsicScoringRun.objects.latest("id")
    assert run.pk != first.pk and run.parameters["call_cache"] is True and run.status == "completed"
    assert fake_llm.log() == [] and scoring_progress(run=run).cached == CANDIDATES


def test_a_repeated_listwise_run_with_the_cache_asks_only_what_stayed_invalid(bench: Benchmark, fake_llm: FakeLLM) -> None:
    fake_llm.script(replies=listwise_replies("Judge-X"))
    first = run_listwise(bench, fake_llm)
    assert ListwiseJudgment.objects.filter(run=first, status="accepted").count() == 2  # alpha and beta; gamma invalid
    fake_llm.script(replies=listwise_replies("Judge-X"))

    again = run_listwise(bench, fake_llm, "--cache")

    # Alpha's and beta's accepted rankings came from the cache; gamma's three malformed answers are asked again.
    prompts = chat_prompts(fake_llm.log())
    assert len(prompts) == 3 and all(PAPERS[2]["question"] in p for p in prompts)
    assert run_progress(run=again).cached == 2
    same = {j.paper_id: j.top for j in ListwiseJudgment.objects.filter(run=first, status="accepted")}
    assert {j.paper_id: j.top for j in ListwiseJudgment.objects.filter(run=again, status="accepted")} == same


def test_a_resumed_run_takes_the_answers_its_frozen_driver_got_too_late(bench: Benchmark, fake_llm: FakeLLM) -> None:
    # A driver that froze (missed its heartbeats) lost its claims while its requests were in flight: its answers come
    # back too late to be stored, but they were paid for and are kept in the cache; the run, resumed, asks nothing.
    fake_llm.script(latency=0.3)
    run = scoring_run_create(
        benchmark=bench,
        model="toy",
        criterion="nll",
        logprobs_mode="raw_logprobs",
        base_url=fake_llm.base_url,
        papers="discipline:physics",
        concurrency=6,
        timeout=10,
    )
    assert run.parameters["call_cache"] is False
    IntrinsicScoringRun.objects.filter(pk=run.pk).update(status="running")
    frozen = Background(lambda: scoring_run_execute(run_id=run.pk))
    frozen.start()
    wait_until(lambda: len(completions(fake_llm.log())) == 6, timeout=20, what="the six completions requests")
    claims_taken_by_another_driver("intrinsic_scoring", run, ScoringTask.objects.filter(run=run))
    wait_until(lambda: ScoringTask.objects.filter(run=run, discarded=1).count() == 6, timeout=20, what="six discarded answers")
    assert not CandidateScore.objects.filter(run=run).exists()
    while_driver_runs(lambda: scoring_run_pause(run=run))
    assert frozen.join_result() == "paused"
    RunDriver.objects.filter(token=OTHER_DRIVER).update(ended_at=timezone.now())  # the other driver died too
    fake_llm.script()

    assert scoring_run_resume(run=run) == 6  # reads the cache by default

    run.refresh_from_db()
    assert run.status == "completed" and run.parameters["call_cache"] is True
    assert fake_llm.log() == []
    assert set(cached_from(run)) == {run.pk} and scoring_progress(run=run).cached == 6
    physics = PAPERS[1]
    stored = {
        s.candidate.external_id: s.detail["values"] for s in CandidateScore.objects.filter(run=run).select_related("candidate")
    }
    assert stored == {
        cid(physics, k): pytest.approx(expected_values(physics, text, "nll"), abs=1e-9) for k, text in enumerate(physics["texts"])
    }
