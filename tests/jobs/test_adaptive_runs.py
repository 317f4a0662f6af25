"""Adaptive judge runs (issue 27): rounds chosen by the statistics, a durable step between rounds, a stop when the
target holds; on a small Lit2Test benchmark whose four models have a planted strength order, judged by the scripted
endpoint (the longer hypothesis wins: each model's hypothesis is longer than the next one's, in every context)."""

from __future__ import annotations

import re
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F
from django.urls import reverse

from arena.models import Benchmark, JudgeRun, OrderedJudgment
from hypoarena.models import ArenaJudgeTask, Match
from jobs.adaptive import adaptive_parameters
from jobs.models import RunEvent, RunStep
from jobs.services import JudgeRunRequest, RunError, judge_run_create, judge_run_execute, judge_run_finish
from jobs.steps import step_carry_out
from jobs.views import run_page_url
from lit2test.models import JudgeTask
from tests.arena import builders
from tests.html_forms import page_forms
from tests.jobs.helpers import JUDGE, chat_requests

pytestmark = pytest.mark.django_db(transaction=True)

#: Strongest first: the planted order. Each model's hypothesis has the length of its rank (words), so the fake judge's
#: "prefer the longer hypothesis" follows it in every context and both orders.
MODELS = ("Oak", "Birch", "Cedar", "Dahlia")
CONTEXTS = [f"ctx_{n:03d}__v1" for n in range(1, 9)]
UNITS = len(CONTEXTS) * 6  # every pair of four models in every context
#: The scripted endpoint's rule: the longer hypothesis wins.
JUDGE_SCRIPT = {"policy": "prefer_field", "field": "hypothesis"}
WORDS = {
    "Oak": "granite lichen moss fern sedge",
    "Birch": "river delta silt clay",
    "Cedar": "wind pollen seed",
    "Dahlia": "frost",
}


def planted_files(folder: Path) -> Path:
    """A release folder: eight contexts, the four models, every pair (the release judge's verdicts follow the order)."""
    contexts = [builders.context(c, papers=2) for c in CONTEXTS]
    proposals = [
        builders.proposal(
            c, m, **{f: f"{WORDS[m]} {f} {c}" for f in builders.SIX} | {"hypothesis": f"{WORDS[m]} {WORDS[m]} in {c}"}
        )
        for c in CONTEXTS
        for m in MODELS
    ]
    pairs = [builders.folded(c, a, b, a, a) for c in CONTEXTS for i, a in enumerate(MODELS) for b in MODELS[i + 1 :]]
    return builders.write(
        folder, {"contexts.jsonl": contexts, "proposals.jsonl": proposals, "corrected_folded_pairs.jsonl": pairs}
    )


def planted_release(folder: Path, name: str) -> Benchmark:
    from lit2test.release import release_import

    return release_import(directory=planted_files(folder), benchmark_name=name).benchmark


@pytest.fixture
def planted(tmp_path: Path) -> Benchmark:
    return planted_release(tmp_path / "release", "planted")


def launch(benchmark: Benchmark, fake, **adaptive) -> JudgeRun:  # noqa: ANN001
    settings = adaptive_parameters(**({"target": "top-k:1", "alpha": 0.05, "batch": 4, "seed": 7} | adaptive))
    request = JudgeRunRequest(benchmark=benchmark, judge_model=JUDGE, base_url=fake.base_url, adaptive=settings, label=None)
    run, _ = judge_run_create(request=request)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING)
    run.refresh_from_db()
    return run


def top_model(run: JudgeRun) -> str:
    """The model with the most accepted wins in the run's verdicts (read from the rows, not from the statistics)."""
    wins = Counter(
        OrderedJudgment.objects.filter(run=run, status="accepted", is_tie=False).values_list("winner__name", flat=True)
    )
    return wins.most_common(1)[0][0]


def test_an_adaptive_run_stops_before_judging_every_pair_with_the_right_top_model(planted, fake_llm, rita_client) -> None:  # noqa: ANN001
    fake_llm.script(judge=JUDGE_SCRIPT)
    run = launch(planted, fake_llm)
    assert JudgeTask.objects.filter(run=run).count() == 2 * 4  # round 0: the warm-up batch, both orders
    judge_run_execute(run_id=run.pk)  # eager Celery: each later round's driver runs in process, after the step
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.COMPLETED
    settings = run.parameters["adaptive"]
    calls = len(chat_requests(fake_llm.log()))
    assert settings["stopped"] in ("target", "settled")
    assert settings["round"] >= 1
    assert calls == JudgeTask.objects.filter(run=run).count() < 2 * UNITS
    assert top_model(run) == "Oak"
    # No subject asked twice in an order, and every task has its one verdict.
    tasks = list(JudgeTask.objects.filter(run=run).values_list("pair_id", "order"))
    assert len(tasks) == len(set(tasks))
    assert sorted(OrderedJudgment.objects.filter(run=run).values_list("pair_id", "order")) == sorted(tasks)
    # The step between rounds ran once per round, and the log says why the run stopped.
    assert RunEvent.objects.filter(kind="judge", run_id=run.pk, code="adaptive_round").count() == settings["round"]
    assert RunEvent.objects.filter(kind="judge", run_id=run.pk, code="adaptive_stopped").count() == 1
    assert RunStep.objects.get(kind="judge", run_id=run.pk).status == RunStep.Status.DONE
    # A driver or watchdog closing the run again (a message delivered twice) repeats no step: no round, no task.
    events = RunEvent.objects.filter(kind="judge", run_id=run.pk).count()
    assert judge_run_finish(run.pk) == step_carry_out("judge", run.pk) == JudgeRun.Status.COMPLETED
    assert (JudgeTask.objects.filter(run=run).count(), RunEvent.objects.filter(kind="judge", run_id=run.pk).count()) == (
        len(tasks),
        events,
    )
    # The run page shows the target, the uncertainty the last step measured, the calls and why it stopped.
    page = rita_client.get(run_page_url(run)).content.decode()
    shown = {key: re.search(rf'id="adaptive-{key}">([^<]*)<', page).group(1) for key in ("target", "uncertainty", "calls")}
    assert shown == {"target": "top-k:1", "uncertainty": f"{settings['rounds'][-1]['uncertainty']:.3f}", "calls": str(calls)}
    assert float(shown["uncertainty"]) < 0.5
    assert 'id="adaptive-stopped"' in page

    # The full run on the same benchmark makes a call per pair and order.
    fake_llm.reset()
    fake_llm.script(judge=JUDGE_SCRIPT)
    full, _ = judge_run_create(request=JudgeRunRequest(benchmark=planted, judge_model=JUDGE, base_url=fake_llm.base_url))
    JudgeRun.objects.filter(pk=full.pk).update(status=JudgeRun.Status.RUNNING)
    assert judge_run_execute(run_id=full.pk) == "completed"
    assert len(chat_requests(fake_llm.log())) == 2 * UNITS > calls
    assert top_model(full) == "Oak"


def test_the_form_and_the_command_launch_an_adaptive_run_and_refuse_a_target_they_cannot_read(
    planted, fake_llm, rita_client
) -> None:  # noqa: ANN001
    fake_llm.script(judge=JUDGE_SCRIPT)
    page = rita_client.get(reverse("jobs:run-new"), {"benchmark": planted.pk}).content.decode()
    assert "Adaptive: stop when the ranking is known" in page
    form = page_forms(page)["run-form"]
    data = form.data() | {"judge_model": JUDGE, "base_url": fake_llm.base_url, "adaptive": "on"}
    refused = rita_client.post(reverse("jobs:run-new"), data | {"adaptive_target": "top-3"}).content.decode()
    assert "write top-k:K" in refused and not JudgeRun.objects.filter(judge_model=JUDGE).exists()
    data |= {"adaptive_target": "top-k:1", "adaptive_alpha": "0.05", "adaptive_batch": "3"}
    response = rita_client.post(reverse("jobs:run-new"), data)
    run = JudgeRun.objects.get(judge_model=JUDGE)
    assert response.status_code == 302 and response["Location"] == reverse("jobs:run", args=[run.pk])
    settings = run.parameters["adaptive"]
    assert (settings["target"], settings["alpha"], settings["batch"], len(settings["pool"])) == ("top-k:1", 0.05, 3, UNITS)
    # Eager Celery: the launch ran the run; its warm-up round was three subjects in both orders.
    assert (settings["rounds"][0]["subjects"], settings["rounds"][0]["calls"]) == (3, 6)

    out = StringIO()
    call_command(
        "run_judge", "planted", "--model", JUDGE, "--base-url", fake_llm.base_url, "--label", "cli",
        "--adaptive", "--target", "top-k:1", "--alpha", "0.002", "--batch", "5", "--budget-calls", "20", stdout=out,
    )  # fmt: skip
    made = JudgeRun.objects.get(label="cli")
    assert f"run: {made.pk}\n10 ordered tasks in round 0 (adaptive, target top-k:1)" in out.getvalue()
    made.refresh_from_db()
    # alpha 0.002 is not met by 20 calls: the budget stops it, two rounds of five subjects in both orders.
    assert (made.status, made.parameters["adaptive"]["stopped"], made.parameters["adaptive"]["alpha"]) == (
        "completed",
        "budget",
        0.002,
    )
    assert JudgeTask.objects.filter(run=made).count() == 20
    with pytest.raises(CommandError, match="--adaptive: target 'top-3': write top-k:K"):
        call_command("run_judge", "planted", "--model", JUDGE, "--base-url", fake_llm.base_url, "--adaptive", "--target", "top-3")


def test_cost_to_precision_gives_the_full_runs_calls_and_a_cheaper_adaptive_projection_and_keeps_nothing(
    planted, rita_client
) -> None:  # noqa: ANN001
    url = reverse("jobs:run-cost-to-precision")
    asked = {"benchmark": planted.pk, "adaptive_target": "top-k:1", "adaptive_alpha": "0.05", "adaptive_batch": "4"}
    figures = rita_client.get(url, asked).json()
    assert (figures["subjects"], figures["sides"], figures["full_calls"]) == (UNITS, len(MODELS), 2 * UNITS)
    assert 8 <= figures["adaptive_calls_range"][0] <= figures["adaptive_calls"] < 2 * UNITS
    assert figures["full_ci_width"] > 0
    assert not JudgeRun.objects.filter(judge_model="cost-to-precision").exists()  # planned, then rolled back
    fragment = rita_client.get(url, asked, headers={"HX-Request": "true"}).content.decode()
    assert re.search(r'id="cost-full-calls">96<', fragment) and 'id="cost-adaptive-calls"' in fragment
    refused = rita_client.get(url, asked | {"adaptive_target": "top-3"})
    assert refused.status_code == 400 and "write top-k:K" in refused.json()["error"]


def test_a_hypoarena_run_is_adaptive_too_and_a_kind_without_two_sides_is_refused(tmp_path, fake_llm) -> None:  # noqa: ANN001
    from tests.hypoarena.test_runs import make_benchmark

    arena = make_benchmark(tmp_path)
    settings = adaptive_parameters(target="top-k:1", batch=2, seed=3)
    base = {"benchmark": arena, "judge_model": JUDGE, "base_url": fake_llm.base_url, "run_type": "arena", "adaptive": settings}
    run, _ = judge_run_create(request=JudgeRunRequest(task_kind="hypoarena", **base))
    pool = run.parameters["adaptive"]["pool"]
    # Every match between two different participants is in the pool (item: its case; sides: its participants).
    matches = Match.objects.filter(case__benchmark=arena).exclude(first__participant=F("second__participant"))
    assert sorted(row[0] for row in pool) == sorted(matches.values_list("id", flat=True))
    assert all(row[2] != row[3] for row in pool)
    tasks = ArenaJudgeTask.objects.filter(run=run)
    assert tasks.count() == 2 * 2 and {t.order for t in tasks} == {"original", "reverse"}
    with pytest.raises(RunError, match="cannot be adaptive: .* an adaptive run needs a two-sided task kind"):
        judge_run_create(request=JudgeRunRequest(task_kind="hypoarena_rubric", **base | {"run_type": "rubric"}))
