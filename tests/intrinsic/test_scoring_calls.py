"""Intrinsic scoring runs' call ledger and malformed answers (issue 22, item 6), on the engine against the scripted
endpoint (tests/fake_llm).

The ledger is compared with what the fake server received (its log): every ``/tokenize`` and completions request is
one call, a failed one is a failed call too. An answer without log-probabilities is asked again like a judge's
malformed answer; when every answer lacks them the candidate fails with a reason a person can read, the run ends
failed saying so, and a resume against a fixed endpoint finishes it. Expected values come from the toy model
(``helpers.expected_values``) and token counts from its tokenizer, never from the code under test.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import jobs.engine
from intrinsic.models import CandidateScore, IntrinsicScoringRun, ScoringTask
from intrinsic.scoring import scoring_progress, scoring_run_create, scoring_run_launch, scoring_run_resume
from jobs.models import RunEvent
from tests.fake_llm import FakeLLM, toy_lm

from .helpers import (
    MODES,
    PAPERS,
    PROBE_TEXT,
    assert_scores_match_the_toy_model,
    completions,
    expected_values,
    make_benchmark,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]

#: Answers asked for a candidate whose answers all lack log-probabilities: the first and two more, as a judge's
#: malformed answer (``jobs.driving.MAX_PARSE_ATTEMPTS``).
ANSWERS_ASKED = 3
PYTHON_ERRORS = ("TypeError", "NoneType", "KeyError", "IndexError", "Traceback", "internal error", "subscriptable")


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without a server-sent Retry-After wait 10 ms instead of 0.5 s, 1 s, 2 s, ..."""
    monkeypatch.setattr(jobs.engine, "BACKOFF_BASE", 0.01)


def launch(benchmark: Any, fake: FakeLLM, criterion: str = "nll", **kwargs: Any) -> IntrinsicScoringRun:  # noqa: ANN401
    run = scoring_run_create(
        benchmark=benchmark,
        model="toy",
        criterion=criterion,
        logprobs_mode=MODES[criterion],
        base_url=fake.base_url,
        concurrency=4,
        timeout=5,
        **kwargs,
    )
    scoring_run_launch(run=run)
    run.refresh_from_db()
    return run


def prompt_of(task: ScoringTask) -> str:
    paper = task.candidate.paper
    return f"Background: {paper.background}\nResearch Question: {paper.question}\nHypothesis: {task.candidate.text}"


def probe_requests(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in log if PROBE_TEXT in (e.get("prompt") or "")]


# --------------------------------------------------------------------------- (a) every request is a call


@pytest.mark.parametrize(("criterion", "tokenize"), [("nll", True), ("nll", False), ("energy", True)])
def test_every_request_the_endpoint_received_is_a_call_in_the_ledger(
    tmp_path: Path, fake_llm: FakeLLM, quick_backoff: None, criterion: str, tokenize: bool
) -> None:
    benchmark = make_benchmark(tmp_path)
    # Each prompt's first tokenization fails with a 500 and its first completion with a 429: both are retried.
    fake_llm.script(
        completions={"logprobs_mode": MODES[criterion], "tokenize": tokenize},
        failures=[
            {"endpoints": ["tokenize"], "attempts": [1], "status": 500},
            {"endpoints": ["completions"], "attempts": [1], "status": 429, "retry_after": 0.01},
        ],
    )
    run = launch(benchmark, fake_llm, criterion)
    assert run.status == "completed"
    assert_scores_match_the_toy_model(run, criterion)

    log = fake_llm.log()
    probe = probe_requests(log)
    by_endpoint = Counter(e["endpoint"] for e in log)
    assert by_endpoint["tokenize"] >= 18 if tokenize else by_endpoint["tokenize"] >= 1  # the server without it: a 404
    tasks = list(ScoringTask.objects.filter(run=run))
    progress = scoring_progress(run=run)
    # The ledger: every request the endpoint received, the energy probe's too (they belong to no candidate: they are
    # counted on the run's first task) ...
    assert progress.calls == sum(t.calls for t in tasks) == len(log)
    assert (len(probe) >= 1) == (criterion == "energy")
    # ... and the probe's are told in the run's log.
    probes = list(
        RunEvent.objects.filter(kind="intrinsic_scoring", run_id=run.pk, code="probe").values_list("message", flat=True)
    )
    assert probes == ([f"mode probe ({len(probe)} request(s)): raw logits proved by the probe"] if criterion == "energy" else [])
    # Failed calls: the 500s and 429s the candidates met (a 404 of a server without /tokenize is an answer, not a fault).
    failures = [e for e in log if e["status"] in (429, 500) and e not in probe]
    assert progress.failed_calls == sum(t.failed_calls for t in tasks) == len(failures) >= 18


# --------------------------------------------------------------------------- (b) asked again, both calls counted


def test_an_answer_without_logprobs_is_asked_again_and_both_calls_are_counted(tmp_path: Path, fake_llm: FakeLLM) -> None:
    benchmark = make_benchmark(tmp_path)
    fake_llm.script(failures=[{"endpoints": ["completions"], "attempts": [1], "malformed": "a reply without logprobs"}])
    run = launch(benchmark, fake_llm, price_per_1k_prompt=1.0)
    assert run.status == "completed"
    assert_scores_match_the_toy_model(run, "nll")

    log = fake_llm.log()
    asked: dict[str, list[Any]] = {}
    for entry in completions(log):
        asked.setdefault(entry["prompt"], []).append(entry["fault"])
    assert len(asked) == 18 and set(map(tuple, asked.values())) == {("malformed", None)}
    tasks = list(ScoringTask.objects.filter(run=run).select_related("candidate__paper"))
    progress = scoring_progress(run=run)
    assert progress.calls == sum(t.calls for t in tasks) == len(log)
    # Per candidate, two tries of its prompt's tokenization and completion, and the prefix's tokenization if its driver
    # had not got it yet. A malformed answer is not a failed call (a judge's is not either).
    assert {t.calls for t in tasks} <= {4, 5} and progress.failed_calls == 0
    # Both answers were paid for: twice the prompt's tokens, one generated token each.
    for task in tasks:
        assert (task.prompt_tokens, task.completion_tokens) == (2 * len(toy_lm.tokenize(prompt_of(task))), 2)
    assert progress.cost == pytest.approx(sum(t.prompt_tokens for t in tasks) / 1000)


# --------------------------------------------------------------------------- (c) never any logprobs


@pytest.mark.parametrize(
    "fault", [{"malformed": "a reply without logprobs"}, {"missing_key": "logprobs"}], ids=["null", "missing"]
)
def test_an_endpoint_that_never_gives_logprobs_fails_each_task_with_a_reason_a_person_can_read(
    tmp_path: Path, fake_llm: FakeLLM, fault: dict[str, Any]
) -> None:
    benchmark = make_benchmark(tmp_path)
    fake_llm.script(failures=[{"endpoints": ["completions"], **fault}])
    run = launch(benchmark, fake_llm, papers="discipline:physics")
    assert run.status == "failed" and run.finished_at is not None

    log = fake_llm.log()
    assert set(Counter(e["prompt"] for e in completions(log)).values()) == {ANSWERS_ASKED}
    tasks = list(ScoringTask.objects.filter(run=run))
    assert len(tasks) == 6 and {t.status for t in tasks} == {"failed"}
    assert not CandidateScore.objects.filter(run=run).exists()
    for task in tasks:
        reason = task.last_error
        assert reason.startswith(
            f"no usable prompt log-probabilities in 3 answer(s) from the endpoint {fake_llm.base_url}/completions (model 'toy'): "
        )
        assert "choices[0].logprobs is missing or null" in reason and "echo=true" in reason and "logprobs=" in reason
        assert not any(word in reason for word in PYTHON_ERRORS), reason
    progress = scoring_progress(run=run)
    assert progress.calls == sum(t.calls for t in tasks) == len(log) and progress.failed_calls == 0
    assert (progress.status, progress.failed, progress.remaining) == ("failed", 6, 0)
    assert progress.status_reason.startswith("6 task(s) failed (latest: no usable prompt log-probabilities in 3 answer(s)")
    assert "resume the run" in progress.status_reason
    assert not any(word in progress.status_reason for word in PYTHON_ERRORS)

    # The endpoint fixed, a resume asks again for the six candidates only, and the run completes.
    first = len(log)
    fake_llm.script()
    assert scoring_run_resume(run=run) == 6
    run.refresh_from_db()
    assert run.status == "completed"
    physics = next(p for p in PAPERS if p["discipline"] == "physics")
    stored = {s.candidate.text: s for s in CandidateScore.objects.filter(run=run).select_related("candidate")}
    assert set(stored) == set(physics["texts"])
    for text, score in stored.items():
        assert score.mean == pytest.approx(sum(mine := expected_values(physics, text, "nll")) / len(mine), abs=1e-9)
    assert scoring_progress(run=run).calls == first + len(fake_llm.log())
