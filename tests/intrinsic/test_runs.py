"""Intrinsic scoring and listwise runs on the shared engine against the scripted endpoint (tests/fake_llm).

Scoring runs: every stored mean and sum is compared with values computed here from the toy model's logits
(``toy_lm.logit``; the log-softmax, NLL, energy, means and sums are computed in ``helpers.py``), with faults injected
(429, 500, timeouts), a paused run and a killed driver's run taken over without a candidate asked twice, and the
refusals (a criterion the endpoint's mode cannot give, a probe contradicting the configured mode, a blank candidate).
Listwise runs: the judge's scripted labels are read back through the prompt it was shown (the test parses the
logged prompt's ``C<i>: text`` lines itself), malformed answers are asked again then invalid, and a replay gives the
stored rankings back without a call.
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse
from django.utils import timezone

import jobs.engine
from arena.models import Benchmark, JudgeRun
from intrinsic.listwise import parse_listwise_answer, scorer_name
from intrinsic.models import (
    Candidate,
    CandidateScore,
    IntrinsicScoringRun,
    ListwiseJudgment,
    ListwiseRanking,
    Scorer,
    ScoringTask,
)
from intrinsic.scoring import (
    scoring_progress,
    scoring_run_create,
    scoring_run_execute,
    scoring_run_launch,
    scoring_run_pause,
    scoring_run_resume,
)
from jobs.execution import runs_watchdog
from jobs.models import RunDriver, RunEvent
from jobs.parsing import ParseError
from jobs.selectors import run_progress
from jobs.services import JudgeRunRequest, RunError, judge_run_create
from tests.fake_llm import FakeLLM, toy_lm

from .helpers import (
    BENCH,
    FAULTS,
    MODES,
    PAPERS,
    PROBE_TEXT,
    assert_scores_match_the_toy_model,
    chat_prompts,
    cid,
    completions,
    expected_values,
    gold_rank,
    listwise_replies,
    make_benchmark,
    paper_lines,
    run_listwise,
    score_command,
    scored_prompts,
    shown_labels,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without a server-sent Retry-After wait 10 ms instead of 0.5 s, 1 s, 2 s, ..."""
    monkeypatch.setattr(jobs.engine, "BACKOFF_BASE", 0.01)


# --------------------------------------------------------------------------- the toy model, computed here


# --------------------------------------------------------------------------- scoring runs


@pytest.mark.parametrize("criterion", ["nll", "energy"])
def test_a_scoring_run_stores_the_toy_models_means_and_sums(tmp_path: Path, fake_llm: FakeLLM, criterion: str) -> None:
    benchmark = make_benchmark(tmp_path)
    fake_llm.script(completions={"logprobs_mode": MODES[criterion]})
    run, out = score_command(benchmark, fake_llm, criterion, "--price-per-1k-prompt", "0.5")
    assert (
        "18 candidates to score for scorer toy-" + criterion in out
        and f"scoring run {run.pk} completed: 18 candidates scored" in out
    )
    run.refresh_from_db()
    assert run.status == "completed" and run.finished_at is not None
    assert (run.scorer.name, run.scorer.model, run.scorer.criterion) == (f"toy-{criterion}", "toy", criterion)
    assert_scores_match_the_toy_model(run, criterion)
    # The "(a) ..." candidate's first characters merge with the prefix's colon: its span came from the text offsets.
    merged = CandidateScore.objects.get(run=run, candidate__external_id=cid(PAPERS[0], 3))
    assert (merged.detail["span_method"], merged.detail["boundary_merged"], merged.detail["skipped_chars"]) == (
        "text_offset",
        True,
        2,
    )
    assert CandidateScore.objects.filter(run=run, detail__span_method="tokenize").count() == 17
    # Costed like a judge run: every request is a call (per candidate its completion and its prompt's tokenization,
    # and the paper's prefix when this driver had not tokenized it yet), the endpoint's prompt tokens, the price per 1k
    # prompt tokens. The energy run's probe belongs to no candidate: its requests are told in the run's log and counted
    # on the run's first task.
    tasks = list(ScoringTask.objects.filter(run=run).select_related("candidate__paper").order_by("id"))
    log = fake_llm.log()
    probe_requests = [e for e in log if PROBE_TEXT in (e.get("prompt") or "")]
    assert len(probe_requests) == (3 if criterion == "energy" else 0)  # its prefix and prompt tokenized, its completion
    own = [t.calls - (len(probe_requests) if i == 0 else 0) for i, t in enumerate(tasks)]
    assert set(own) <= {2, 3} and {t.failed_calls for t in tasks} == {0}
    prompt_tokens = sum(
        len(
            toy_lm.tokenize(
                f"Background: {t.candidate.paper.background}\nResearch Question: {t.candidate.paper.question}"
                f"\nHypothesis: {t.candidate.text}"
            )
        )
        for t in tasks
    )
    progress = scoring_progress(run=run)
    assert (progress.total, progress.done, progress.failed, progress.calls, progress.prompt_tokens) == (
        18,
        18,
        0,
        len(log),
        prompt_tokens,
    )
    assert progress.completion_tokens == 18 and progress.cost == pytest.approx(prompt_tokens / 1000 * 0.5)
    probes = RunEvent.objects.filter(kind="intrinsic_scoring", run_id=run.pk, code="probe")
    assert [e.message for e in probes] == (
        [f"mode probe ({len(probe_requests)} request(s)): raw logits proved by the probe"] if criterion == "energy" else []
    )
    assert sum(scored_prompts(fake_llm.log()).values()) == 18

    # A second run of the same scorer has nothing left to do; a scorer name held by another criterion is refused.
    with pytest.raises(CommandError, match=f"scorer 'toy-{criterion}' has scored every chosen candidate"):
        score_command(benchmark, fake_llm, criterion)
    other = "energy" if criterion == "nll" else "nll"
    with pytest.raises(RunError, match=f"scorer 'toy-{criterion}' of .* is model 'toy', criterion '{criterion}'"):
        scoring_run_create(
            benchmark=benchmark,
            model="toy",
            criterion=other,
            logprobs_mode=MODES[other],
            base_url=fake_llm.base_url,
            scorer=f"toy-{criterion}",
        )


def test_faults_are_retried_and_every_candidate_is_scored_once(tmp_path: Path, fake_llm: FakeLLM, quick_backoff: None) -> None:
    benchmark = make_benchmark(tmp_path)
    # Every prompt (the probe's too): a 429, then a 500, then a reply slower than the timeout, then the answer.
    fake_llm.script(
        completions={"logprobs_mode": "raw_logits"},
        failures=[*FAULTS, {"endpoints": ["completions"], "attempts": [3], "sleep": 1.6}],
    )
    run = scoring_run_create(
        benchmark=benchmark,
        model="toy",
        criterion="energy",
        logprobs_mode="raw_logits",
        base_url=fake_llm.base_url,
        concurrency=8,
        timeout=0.8,
    )
    scoring_run_launch(run=run)
    run.refresh_from_db()
    assert run.status == "completed"
    assert_scores_match_the_toy_model(run, "energy")
    tasks = list(ScoringTask.objects.filter(run=run))
    assert all(t.calls >= 4 and t.failed_calls >= 3 for t in tasks)  # at least the three faults, each recorded
    assert all(
        re.match(r"(HTTP (429|500) from |the (completions|tokenize) endpoint timed out)", t.last_call_error) for t in tasks
    )
    log = completions(fake_llm.log())
    faults = Counter(e["fault"] for e in log if e["fault"])
    assert faults["status 429"] == faults["status 500"] == faults["sleep 1.6"] == 19  # 18 candidates and the probe
    assert set(scored_prompts(fake_llm.log()).values()) == {1} and len(scored_prompts(fake_llm.log())) == 18
    assert scoring_progress(run=run).failed_calls == sum(t.failed_calls for t in tasks)


def test_a_paused_run_resumes_without_asking_a_candidate_twice(tmp_path: Path, fake_llm: FakeLLM) -> None:
    benchmark = make_benchmark(tmp_path)
    fake_llm.script(latency=0.05)
    run = scoring_run_create(
        benchmark=benchmark,
        model="toy",
        criterion="nll",
        logprobs_mode="raw_logprobs",
        base_url=fake_llm.base_url,
        concurrency=2,
        timeout=10,
    )
    IntrinsicScoringRun.objects.filter(pk=run.pk).update(status="running")
    outcome: dict[str, str] = {}

    def drive() -> None:
        try:
            outcome["status"] = scoring_run_execute(run_id=run.pk)
        finally:
            connection.close()  # this thread's own connection; left open, it would keep the test database busy

    driver = threading.Thread(target=drive)
    driver.start()
    deadline = time.monotonic() + 30
    while CandidateScore.objects.filter(run=run).count() < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    scoring_run_pause(run=run)
    driver.join(30)
    assert outcome["status"] == "paused"
    before = CandidateScore.objects.filter(run=run).count()
    assert 3 <= before < 18
    assert scoring_run_resume(run=run) == 0  # nothing had failed or been abandoned: the pending tasks simply go on
    run.refresh_from_db()
    assert run.status == "completed"
    assert_scores_match_the_toy_model(run, "nll")
    asked = scored_prompts(fake_llm.log())
    assert len(asked) == 18 and set(asked.values()) == {1}  # in-flight answers at the pause were stored, not redone
    with pytest.raises(RunError, match=f"scoring run {run.pk} is completed; only a paused, failed or cancelled run resumes"):
        scoring_run_resume(run=run)


def test_a_killed_drivers_claims_are_taken_over_once(tmp_path: Path, fake_llm: FakeLLM) -> None:
    benchmark = make_benchmark(tmp_path)
    run = scoring_run_create(
        benchmark=benchmark,
        model="toy",
        criterion="nll",
        logprobs_mode="raw_logprobs",
        base_url=fake_llm.base_url,
        papers="discipline:physics",
        concurrency=3,
        timeout=5,
    )
    assert run.tasks.count() == 6
    IntrinsicScoringRun.objects.filter(pk=run.pk).update(status="running")
    # A driver that was killed: its row stopped being renewed a minute ago, its two claims carry a long lease.
    RunDriver.objects.create(
        kind="intrinsic_scoring", run_id=run.pk, token="killed", worker="w", seen_at=timezone.now() - timedelta(minutes=1)
    )
    RunEvent.objects.create(kind="intrinsic_scoring", run_id=run.pk, code="launched", message="launched")
    RunEvent.objects.filter(run_id=run.pk).update(created_at=timezone.now() - timedelta(minutes=2))
    claimed = list(run.tasks.order_by("id").values_list("id", flat=True)[:2])
    ScoringTask.objects.filter(pk__in=claimed).update(
        status="claimed", claimed_by="killed", lease_until=timezone.now() + timedelta(minutes=10)
    )

    did = runs_watchdog()

    assert did == [
        f"intrinsic_scoring run {run.pk}: relaunched (no driver heard from since "
        f"{RunDriver.objects.get(token='killed').seen_at:%H:%M:%S} UTC)"
    ]
    run.refresh_from_db()
    assert run.status == "completed"
    assert CandidateScore.objects.filter(run=run).count() == 6
    asked = scored_prompts(fake_llm.log())
    assert len(asked) == 6 and set(asked.values()) == {1}
    assert list(RunEvent.objects.filter(kind="intrinsic_scoring", run_id=run.pk).order_by("id").values_list("code", flat=True))[
        -2:
    ] == ["relaunched", "completed"]
    # Only the other papers are left for this scorer: a new run gets their 12 candidates, none of physics.
    rest = scoring_run_create(
        benchmark=benchmark, model="toy", criterion="nll", logprobs_mode="raw_logprobs", base_url=fake_llm.base_url
    )
    assert rest.scorer_id == run.scorer_id and rest.tasks.count() == 12
    assert not rest.tasks.filter(candidate__paper__discipline="physics").exists()
    with pytest.raises(RunError, match=f"scorer 'toy-nll' has run {rest.pk} pending: resume it"):
        scoring_run_create(
            benchmark=benchmark, model="toy", criterion="nll", logprobs_mode="raw_logprobs", base_url=fake_llm.base_url
        )


def test_a_criterion_the_endpoint_cannot_give_is_refused_with_the_reason(tmp_path: Path, fake_llm: FakeLLM) -> None:
    benchmark = make_benchmark(tmp_path)
    # Configured as a mode that cannot give the criterion: refused before any run exists or any request is sent.
    with pytest.raises(
        CommandError,
        match=r"criterion 'energy' needs raw logits.*--logprobs-mode raw_logprobs.*start vLLM with --logprobs-mode raw_logits",
    ):
        call_command(
            "intrinsic_score",
            str(benchmark.pk),
            "--model",
            "toy",
            "--criterion",
            "energy",
            "--logprobs-mode",
            "raw_logprobs",
            "--base-url",
            fake_llm.base_url,
            stdout=io.StringIO(),
        )
    assert not IntrinsicScoringRun.objects.exists() and not Scorer.objects.exists() and fake_llm.log() == []

    # Configured as raw logits, but the server gives log-probabilities: the energy run's probe refuses it, the run fails
    # with that reason before any candidate is scored, and stays resumable.
    fake_llm.script(completions={"logprobs_mode": "raw_logprobs"})
    with pytest.raises(
        CommandError, match=r"ended failed: the driver could not start .* the mode probe of .* looks like log-probabilities"
    ):
        score_command(benchmark, fake_llm, "energy")
    run = IntrinsicScoringRun.objects.get()
    assert run.status == "failed" and not CandidateScore.objects.exists()
    assert set(run.tasks.values_list("status", flat=True)) == {"pending"}
    assert {e["prompt"].split("Hypothesis: ")[1] for e in completions(fake_llm.log())} == {
        "The medium changes the growth rate of the culture."
    }
    event = RunEvent.objects.filter(kind="intrinsic_scoring", run_id=run.pk).latest("id")
    assert (
        event.code == "driver_failed"
        and "start vLLM with --logprobs-mode raw_logits, or score it with criterion 'nll'" in event.message
    )
    # Fixed server, resumed: the same run completes.
    fake_llm.script(completions={"logprobs_mode": "raw_logits"})
    call_command("intrinsic_score", str(benchmark.pk), "--resume", str(run.pk), "--wait", stdout=io.StringIO())
    run.refresh_from_db()
    assert run.status == "completed"
    assert_scores_match_the_toy_model(run, "energy")

    # An NLL scorer whose server turns out to give logits: every answer is refused, the tasks fail with the reason.
    with pytest.raises(CommandError, match="ended failed"):
        score_command(benchmark, fake_llm, "nll", "--papers", "discipline:physics")
    failed = IntrinsicScoringRun.objects.latest("id")
    assert (
        set(failed.tasks.values_list("status", flat=True)) == {"failed"}
        and not CandidateScore.objects.filter(run=failed).exists()
    )
    assert "returns raw logits" in failed.tasks.first().last_error


def test_a_blank_candidate_is_refused_before_any_request(tmp_path: Path, fake_llm: FakeLLM) -> None:
    benchmark = make_benchmark(tmp_path)
    Candidate.objects.filter(external_id=cid(PAPERS[1], 4)).update(text="  \n ")  # the import refuses blanks; an edit did it
    with pytest.raises(RunError, match=r"1 candidate\(s\) have no text \(p-beta/p-beta-cand-05\): an empty span has no score"):
        scoring_run_create(
            benchmark=benchmark, model="toy", criterion="nll", logprobs_mode="raw_logprobs", base_url=fake_llm.base_url
        )
    assert not IntrinsicScoringRun.objects.exists() and fake_llm.log() == []
    # Blanked after the run was made: the task fails with the reason, and no request is sent for it.
    Candidate.objects.filter(external_id=cid(PAPERS[1], 4)).update(text="Dielectric loss limits it.")
    run = scoring_run_create(
        benchmark=benchmark,
        model="toy",
        criterion="nll",
        logprobs_mode="raw_logprobs",
        base_url=fake_llm.base_url,
        papers="discipline:physics",
    )
    Candidate.objects.filter(external_id=cid(PAPERS[1], 4)).update(text=" ")
    scoring_run_launch(run=run)
    run.refresh_from_db()
    blank = run.tasks.get(candidate__external_id=cid(PAPERS[1], 4))
    assert (run.status, blank.status, blank.calls) == ("failed", "failed", 0) and "empty" in blank.last_error
    assert len(scored_prompts(fake_llm.log())) == 5


def test_scoring_runs_refuse_other_protocols_and_missing_keys(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    benchmark = make_benchmark(tmp_path)
    other = Benchmark.objects.create(name="lit", protocol="lit2test")
    with pytest.raises(RunError, match="Lit2Test benchmark: it has no Intrinsic candidates to score"):
        scoring_run_create(
            benchmark=other, model="toy", criterion="nll", logprobs_mode="raw_logprobs", base_url=fake_llm.base_url
        )
    with pytest.raises(RunError, match="SCORE_API_KEY named for the API key is not set"):
        scoring_run_create(
            benchmark=benchmark,
            model="toy",
            criterion="nll",
            logprobs_mode="raw_logprobs",
            base_url=fake_llm.base_url,
            api_key_env="SCORE_API_KEY",
        )
    monkeypatch.setenv("SCORE_API_KEY", "sk-launcher-only")
    run = scoring_run_create(
        benchmark=benchmark,
        model="toy",
        criterion="nll",
        logprobs_mode="raw_logprobs",
        base_url=fake_llm.base_url,
        api_key_env="SCORE_API_KEY",
    )
    assert "sk-launcher-only" not in json.dumps(run.parameters)
    monkeypatch.delenv("SCORE_API_KEY")  # the worker lacks it
    IntrinsicScoringRun.objects.filter(pk=run.pk).update(status="running")
    assert scoring_run_execute(run_id=run.pk) == "failed"
    assert (
        fake_llm.log() == []
        and "SCORE_API_KEY" in RunEvent.objects.filter(run_id=run.pk, kind="intrinsic_scoring").latest("id").message
    )


# --------------------------------------------------------------------------- listwise runs


def prompt_of(log: list[dict[str, Any]], paper: dict[str, Any]) -> str:
    prompts = {p for p in chat_prompts(log) if paper["question"] in p}
    assert len(prompts) == 1  # every answer of a paper was asked with the same prompt
    return prompts.pop()


def test_a_listwise_run_ranks_each_paper_with_retries_then_invalid(
    tmp_path: Path, fake_llm: FakeLLM, quick_backoff: None
) -> None:
    benchmark = make_benchmark(tmp_path)
    fake_llm.script(failures=FAULTS, replies=listwise_replies("Judge-X"))
    run = run_listwise(benchmark, fake_llm, "--label", "main", "--seed", "7")
    assert (run.subjects, run.run_type, run.prompt_version, run.status) == (
        "intrinsic_listwise",
        "listwise",
        "intrinsic-listwise-v1",
        "completed",
    )
    scorer = Scorer.objects.get(benchmark=benchmark, criterion="listwise")
    assert (
        (scorer.name, scorer.model, scorer.endpoint)
        == ("Judge-X-listwise-main", "Judge-X", fake_llm.base_url)
        == (scorer_name("Judge-X", "main"), "Judge-X", fake_llm.base_url)
    )
    log = fake_llm.log()
    rankings = {r.paper.external_id: r for r in ListwiseRanking.objects.filter(scorer=scorer).select_related("paper")}
    answered = {"p-alpha": ["C2", "C4", "C6", "C1", "C3"], "p-beta": ["C6", "C5", "C4", "C3", "C2"]}
    for paper in PAPERS:
        prompt = prompt_of(log, paper)
        labels = shown_labels(prompt)
        # Every candidate once, under C1..C6, by text only: no external id, no gold marker, no file order.
        assert sorted(labels) == [f"C{i}" for i in range(1, 7)] and sorted(labels.values()) == sorted(paper["texts"])
        assert (
            not any(cid(paper, k) in prompt for k in range(6))
            and "gold" not in prompt.lower()
            and paper["paper_id"] not in prompt
        )
        id_of = {text: cid(paper, k) for k, text in enumerate(paper["texts"])}
        ranking = rankings[paper["paper_id"]]
        assert ranking.run_id == run.pk and ranking.source == "main"
        if paper["paper_id"] in answered:
            assert (ranking.status, ranking.reason) == ("accepted", "")
            assert ranking.top == [id_of[labels[lab]] for lab in answered[paper["paper_id"]]]
    # The seeded shuffle moves the gold: across the three papers it is not always shown at its file position.
    gold_labels = [
        next(lab for lab, text in shown_labels(prompt_of(log, p)).items() if text == p["texts"][p["gold"]]) for p in PAPERS
    ]
    assert gold_labels != [f"C{p['gold'] + 1}" for p in PAPERS]
    gamma = rankings["p-gamma"]
    assert (gamma.status, gamma.top) == ("invalid", [])
    assert gamma.reason.startswith('no valid top 5 after 3 answers: attempt 1: "top" lists 3 labels; exactly 5 were asked for')
    assert "attempt 2: unknown label 'C7' at position 1: the labels are C1 to C6" in gamma.reason
    assert "attempt 3: label C5 is given twice (positions 1 and 3)" in gamma.reason
    beta = ListwiseJudgment.objects.get(run=run, paper__external_id="p-beta")
    assert (beta.status, beta.attempt, beta.labels) == ("accepted", 3, answered["p-beta"])
    assert [a["error"][:20] for a in beta.metadata["rejected_attempts"]] == ["unknown label 'C9' a", "label C1 is given tw"]
    # Each paper's prompt met the 500 and the 429 first, then 1 (alpha) or 3 answers.
    chats = Counter(p.split("Research Question: ")[0] for p in chat_prompts(log))
    assert sum(chats.values()) == (2 + 1) + (2 + 3) + (2 + 3)
    progress = run_progress(run=run)
    assert (progress.total, progress.done, progress.accepted, progress.invalid, progress.failed) == (3, 3, 2, 1, 0)
    assert progress.failed_calls == 6 and progress.calls == 13


def test_a_listwise_run_replays_its_stored_rankings_without_a_call(
    tmp_path: Path, fake_llm: FakeLLM, quick_backoff: None
) -> None:
    benchmark = make_benchmark(tmp_path)
    fake_llm.script(replies=listwise_replies("Judge-X"))
    source = run_listwise(benchmark, fake_llm, "--label", "main", "--seed", "7")
    calls = len(fake_llm.log())
    # The replay has seed 0 of its own: it shuffles with the replayed run's seed, so each label means what it meant.
    with pytest.raises(CommandError, match="ended failed"):  # gamma's answer was invalid: nothing stored to replay
        call_command(
            "run_judge",
            str(benchmark.pk),
            "--model",
            "Judge-X",
            "--replay-of",
            str(source.pk),
            "--label",
            "replay",
            "--wait",
            stdout=io.StringIO(),
        )
    replay = JudgeRun.objects.latest("id")
    assert replay.is_replay and len(fake_llm.log()) == calls

    def stored(run: JudgeRun) -> dict[str, tuple[list[str], list[str]]]:
        return {
            j.paper.external_id: (j.top, j.shown)
            for j in ListwiseJudgment.objects.filter(run=run, status="accepted").select_related("paper")
        }

    assert stored(replay) == stored(source) and set(stored(source)) == {"p-alpha", "p-beta"}
    replayed = Scorer.objects.get(name="Judge-X-listwise-replay")
    assert replayed.endpoint == f"replay of judge run {source.pk}"
    assert {r.paper.external_id: r.top for r in ListwiseRanking.objects.filter(scorer=replayed).select_related("paper")} == {
        k: v[0] for k, v in stored(source).items()
    }
    assert (
        "the recorded run has no verdict for this task"
        in replay.intrinsic_listwise_tasks.get(paper__external_id="p-gamma").last_error
    )


def test_listwise_runs_refuse_other_protocols_and_a_taken_scorer_name(tmp_path: Path, fake_llm: FakeLLM) -> None:
    benchmark = make_benchmark(tmp_path)
    Scorer.objects.create(benchmark=benchmark, name="Judge-X-listwise-main", model="Judge-X", criterion="listwise")
    with pytest.raises(RunError, match="already has a scorer named 'Judge-X-listwise-main'; give the run another --label"):
        judge_run_create(
            request=JudgeRunRequest(
                benchmark=benchmark,
                judge_model="Judge-X",
                base_url=fake_llm.base_url,
                task_kind="intrinsic_listwise",
                run_type="listwise",
                label="main",
            )
        )
    assert not JudgeRun.objects.exists()
    lit = Benchmark.objects.create(name="lit", protocol="lit2test")
    with pytest.raises(RunError, match="Lit2Test benchmark: it has no Intrinsic papers to rank"):
        judge_run_create(
            request=JudgeRunRequest(
                benchmark=lit, judge_model="J", base_url=fake_llm.base_url, task_kind="intrinsic_listwise", run_type="listwise"
            )
        )
    with pytest.raises(RunError, match="'all', 'discipline:NAME' or 'sample:N'"):
        judge_run_create(
            request=JudgeRunRequest(
                benchmark=benchmark,
                judge_model="J",
                base_url=fake_llm.base_url,
                task_kind="intrinsic_listwise",
                run_type="listwise",
                select="domain:x",
            )
        )
    run, _ = judge_run_create(
        request=JudgeRunRequest(
            benchmark=benchmark,
            judge_model="J",
            base_url=fake_llm.base_url,
            task_kind="intrinsic_listwise",
            run_type="listwise",
            select="discipline:physics",
        )
    )
    assert list(run.intrinsic_listwise_tasks.values_list("paper__external_id", "order")) == [("p-beta", "single")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"top": ["C1", "C2", "C3", "C4"]}', "lists 4 labels; exactly 5"),
        ('{"top": ["C1", "C2", "C3", "C4", "C5", "C6"]}', "lists 6 labels; exactly 5"),
        ('{"top": ["C1", "C2", "C3", "C4", "C17"]}', "unknown label 'C17' at position 5: the labels are C1 to C16"),
        ('{"top": ["C1", "C2", "C3", "C4", "D"]}', "unknown label 'D'"),
        ('{"top": ["C1", "C2", "c2", "C4", "C5"]}', "label C2 is given twice (positions 2 and 3)"),
        ('{"top": ["C1", "C2", "C3", "C4", 5]}', 'entry 5 of "top" must be a label'),
        ('{"top": "C1, C2, C3, C4, C5"}', '"top" must be a list of 5 labels, got str'),
        ('{"ranking": ["C1", "C2", "C3", "C4", "C5"]}', '"top" must be a list of 5 labels, got nothing'),
        ("C1, C2, C3, C4, C5", "not a JSON object"),
    ],
)
def test_the_listwise_parser_refuses_anything_but_k_distinct_shown_labels(text: str, message: str) -> None:
    with pytest.raises(ParseError) as refused:
        parse_listwise_answer(text, n=16, k=5)
    assert message in str(refused.value)


def test_the_listwise_parser_reads_labels_case_and_spaces_tolerated() -> None:
    assert parse_listwise_answer('```json\n{"top": ["c16", " C3", "C1 ", "C10", "C2"]}\n```', n=16, k=5) == [
        "C16",
        "C3",
        "C1",
        "C10",
        "C2",
    ]
    assert parse_listwise_answer('{"top": ["C2", "C1", "C3"]}', n=3, k=3) == ["C2", "C1", "C3"]


# --------------------------------------------------------------------------- pages


def test_scoring_runs_show_on_the_runs_page(tmp_path: Path, fake_llm: FakeLLM, rita_client: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    run = scoring_run_create(
        benchmark=benchmark,
        model="toy",
        criterion="nll",
        logprobs_mode="raw_logprobs",
        base_url=fake_llm.base_url,
        papers="discipline:physics",
    )
    scoring_run_launch(run=run)
    page = rita_client.get(reverse("jobs:runs")).content.decode()
    row = page.split(f'data-generation="{run.pk}"', 1)[1].split("</tr>", 1)[0]
    assert (
        "Intrinsic scoring (nll: toy-nll)" in row
        and 'data-status="completed"' in page.split(f'data-generation="{run.pk}"', 1)[1][:40]
    )
    # Done, failed, remaining, then the calls: every request the endpoint received (tokenizations included).
    received = len(fake_llm.log())
    assert received > 6
    assert re.search(rf'<td class="num">6</td><td class="num">0</td><td class="num">0</td><td class="num">{received}</td>', row)


# --------------------------------------------------------------------------- the full cycle


def test_the_full_cycle_import_two_scoring_runs_a_listwise_run_with_faults_the_report_and_its_page(
    tmp_path: Path,
    fake_llm: FakeLLM,
    quick_backoff: None,
    rita_client: Any,  # noqa: ANN401
) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "papers.jsonl").write_text("".join(json.dumps(line) + "\n" for line in paper_lines()), encoding="utf-8")
    call_command("import_intrinsic", BENCH, str(folder), stdout=io.StringIO())
    benchmark = Benchmark.objects.get(name=BENCH)

    # Two scoring runs, the second with faults; then the listwise judge with faults and malformed answers.
    fake_llm.script(completions={"logprobs_mode": "raw_logprobs"})
    nll, _ = score_command(benchmark, fake_llm, "nll")
    fake_llm.script(completions={"logprobs_mode": "raw_logits"}, failures=FAULTS)
    energy, _ = score_command(benchmark, fake_llm, "energy")
    assert (nll.status, energy.status) == ("completed", "completed")
    fake_llm.script(failures=FAULTS, replies=listwise_replies("Judge-X"))
    judge = run_listwise(benchmark, fake_llm, "--label", "main", "--seed", "3")
    assert judge.status == "completed"

    # What the report must say, worked out here: the gold's rank under each criterion from the toy model's values, and
    # under the judge from the labels it answered, read through the prompt it was shown (gamma: invalid, left out).
    # (The golds were chosen so that the two criteria disagree: NLL ranks them 1, 2, 3 and energy 2, 2, 2.)
    ranks: dict[str, list[int]] = {"toy-nll": [], "toy-energy": []}
    for criterion in ("nll", "energy"):
        for paper in PAPERS:
            means = [sum(v) / len(v) for v in (expected_values(paper, text, criterion) for text in paper["texts"])]
            ranks[f"toy-{criterion}"].append(gold_rank(means, paper["gold"]))
    answered = {"p-alpha": ["C2", "C4", "C6", "C1", "C3"], "p-beta": ["C6", "C5", "C4", "C3", "C2"]}
    listwise_ranks = []
    for paper in PAPERS[:2]:
        labels = shown_labels(prompt_of(fake_llm.log(), paper))
        listed = [labels[lab] for lab in answered[paper["paper_id"]]]
        gold_text = paper["texts"][paper["gold"]]
        listwise_ranks.append(listed.index(gold_text) + 1 if gold_text in listed else len(paper["texts"]))
    ranks["Judge-X-listwise-main"] = listwise_ranks
    assert (ranks["toy-nll"], ranks["toy-energy"]) == ([1, 2, 3], [2, 2, 2])

    out = io.StringIO()
    call_command("intrinsic_report", str(benchmark.pk), "--json", "--replicates", "200", stdout=out)
    doc = json.loads(out.getvalue())
    pooled = {r["scorer"]: r for r in doc["results"] if r["discipline"] == "all"}
    assert set(pooled) == set(ranks)
    for name, mine in ranks.items():
        row = pooled[name]
        assert row["n_ranked"] == len(mine) and row["n_excluded"] == 3 - len(mine)
        for k in (1, 2, 3, 5):
            assert row["metrics"][f"hit_at_{k}"]["value"] == pytest.approx(sum(r <= k for r in mine) / len(mine))
        if name != "Judge-X-listwise-main":
            assert row["metrics"]["mrr"]["value"] == pytest.approx(sum(1 / r for r in mine) / len(mine))
        else:
            assert row["metrics"]["mrr"] is None  # listwise: Hit@1..5 only
    assert doc["read"]["invalid_rankings"] == 1 and doc["read"]["scores"] == 36

    # The report page names the three scorers; the runs page lists both scoring runs; the judge run's page its papers.
    page = rita_client.get(reverse("intrinsic:report", args=[benchmark.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert all(name in html for name in ranks)
    runs = rita_client.get(reverse("jobs:runs")).content.decode()
    assert f'data-generation="{nll.pk}"' in runs and f'data-generation="{energy.pk}"' in runs
    detail = rita_client.get(reverse("jobs:run", args=[judge.pk]))
    assert detail.status_code == 200 and "paper p-gamma (economics): invalid" in detail.content.decode()
