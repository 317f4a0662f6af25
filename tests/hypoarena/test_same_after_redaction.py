"""A HypoArena match whose two submissions read the same once model names are redacted cannot be judged blind (both
orders would show one prompt): an arena run skips it, counts it and names it, and judges the rest; a run of such
matches only is refused, saying which and what to do (jobs.gates.orientation_sort, issue 22 item 8)."""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from arena.models import Benchmark, JudgeRun
from hypoarena.models import ArenaJudgeTask, ArenaVerdict, Match, Submission
from jobs.models import RunEvent
from jobs.services import JudgeRunRequest, RunError, judge_run_create

from .test_runs import J1, MODELS, make_benchmark, match_of, prompt_texts

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]


def say_the_same(benchmark: Benchmark, case: str, models: tuple[str, ...]) -> None:
    """These models' submissions on ``case`` differ only by their own names: the same text once redacted."""
    for model in models:
        Submission.objects.filter(case__benchmark=benchmark, case__external_id=case, participant__name=model).update(
            pairs=[
                {
                    "hypothesis": f"{model} thinks the alarm relay was muted for the drill.",
                    "evidence": f"The relay log {model} read shows a mute at 06:58.",
                }
            ]
        )


def test_a_match_that_reads_the_same_once_redacted_is_skipped_named_and_the_rest_judged(
    tmp_path: Path,
    fake_llm: Any,
    rita_client: Any,  # noqa: ANN401
) -> None:
    benchmark = make_benchmark(tmp_path)
    say_the_same(benchmark, "s1", ("Orion", "Vega"))
    twin = match_of("s1", "Orion", "Vega")
    fake_llm.script(replies=[{"contains": "=== SUBMISSION B ===", "answers": [{"verdict": "A=B", "reason": "even"}]}])
    out = io.StringIO()
    call_command("run_judge", str(benchmark.pk), "--model", J1, "--base-url", fake_llm.base_url, "--wait", stdout=out)

    run = JudgeRun.objects.get(benchmark=benchmark)
    assert run.status == "completed" and run.parameters["skipped"] == 1
    # 3 cases x 3 pairings of the 3 models = 9 matches; 8 are judged, in both orders.
    assert Match.objects.filter(case__benchmark=benchmark).count() == 9
    judged = set(ArenaJudgeTask.objects.filter(run=run).values_list("match_id", "order"))
    assert len(judged) == 16 and twin.pk not in {m for m, _ in judged}
    assert ArenaVerdict.objects.filter(run=run, status="accepted").count() == 16
    assert "16 ordered tasks; 1 matches skipped: their two submissions read the same" in out.getvalue()
    # No prompt showed one text as both A and B.
    for prompt in prompt_texts(fake_llm.log()):
        a = prompt.split("=== SUBMISSION A ===", 1)[1].split("=== SUBMISSION B ===", 1)[0].strip()
        b = prompt.split("=== SUBMISSION B ===", 1)[1].split("=== END ===", 1)[0].strip()
        assert a != b
    # The run's log names the skipped match; its page counts and names it.
    [event] = RunEvent.objects.filter(run_id=run.pk, code="skipped")
    assert f"match {twin.public_id} (case s1)" in event.message
    page = html.unescape(rita_client.get(f"/dashboard/runs/{run.pk}/").content.decode())
    assert "1 matches skipped: their two submissions read the same once model names are redacted" in page
    assert f"match {twin.public_id} (case s1)" in page


def test_a_run_whose_every_match_reads_the_same_is_refused_saying_which(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    say_the_same(benchmark, "s1", MODELS)
    request = {"benchmark": benchmark, "judge_model": J1, "base_url": fake_llm.base_url, "task_kind": "hypoarena"}
    with pytest.raises(RunError) as refused:
        judge_run_create(request=JudgeRunRequest(run_type="arena", select="domain:safety", **request))
    message = str(refused.value)
    assert (
        "none of the chosen matches can be judged blind" in message and "read the same once model names are redacted" in message
    )
    assert all(f"match {m.public_id} (case s1)" in message for m in Match.objects.filter(case__external_id="s1"))
    assert "nothing was launched" in message and "--pairs" in message
    assert not JudgeRun.objects.exists()
    with pytest.raises(CommandError, match="none of the chosen matches can be judged blind"):
        call_command("run_judge", str(benchmark.pk), "--model", J1, "--base-url", fake_llm.base_url, "--pairs", "domain:safety")
    assert not JudgeRun.objects.exists()
