"""The dashboard's judge-run form (``jobs:run-new``) launches runs of the chosen benchmark's protocol: arena and rubric
runs for a HypoArena benchmark, holistic and structured ones for a Lit2Test benchmark, and refuses the other
protocol's run types with a message naming the benchmark's protocol and the run types it takes.

The runs are created inside the test's transaction, so their drivers (enqueued on commit) never start: no endpoint is
called, and the counts are those of the tasks the form made.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from hypoarena.importing import hypoarena_import
from hypoarena.models import ArenaJudgeTask, Match, RubricJudgeTask
from tests.hypoarena import helpers as h

pytestmark = pytest.mark.django_db


@pytest.fixture
def arena(tmp_path: Path) -> Benchmark:
    """Three cases, three models (Alpha, Beta and the Reference) with a submission each: three matches per case."""
    code = {"Alpha": "kiwi", "Beta": "plum", "Ref": "pear"}  # distinct texts: identical submissions fail the orientation gate
    subs = h.submissions()
    for row in subs:
        for pair in row["pairs"]:
            pair["hypothesis"] += f" The {code[row['model']]} pathway."
    files = {"cases": h.write(tmp_path / "cases.jsonl", h.cases()), "submissions": h.write(tmp_path / "subs.jsonl", subs)}
    return hypoarena_import(name="arena-form", files=files).benchmark


def values(benchmark: Benchmark, run_type: str) -> dict[str, object]:
    return {
        "benchmark": str(benchmark.pk),
        "judge_model": "judge-x",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "",
        "run_type": run_type,
        "prompt_version": "",
        "select": "all",
        "orders": ["original", "reverse"],
        "concurrency": "2",
        "temperature": "0",
        "max_tokens": "256",
        "timeout": "5",
    }


def refusal(response: object) -> str:
    assert response.status_code == 200  # type: ignore[attr-defined]  # the form again, with its errors
    return html.unescape(response.content.decode())  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("run_type", "subjects", "task_model", "message"),
    [
        ("arena", "hypoarena", ArenaJudgeTask, "18 ordered tasks."),  # 9 matches × 2 orders
        ("rubric", "hypoarena_rubric", RubricJudgeTask, "9 tasks."),  # 9 submissions
    ],
)
def test_a_hypoarena_benchmark_launches_its_own_task_kind(
    rita_client: Client, arena: Benchmark, run_type: str, subjects: str, task_model: type, message: str
) -> None:
    assert Match.objects.filter(case__benchmark=arena).count() == 9
    response = rita_client.post(reverse("jobs:run-new"), values(arena, run_type))

    run = JudgeRun.objects.get(benchmark=arena)
    assert response.status_code == 302 and response["Location"] == reverse("jobs:run", kwargs={"run_id": run.pk})
    assert (run.subjects, run.run_type, run.judge_model) == (subjects, run_type, "judge-x")
    assert task_model.objects.filter(run=run).count() == int(message.split()[0])
    assert [str(m) for m in get_messages(response.wsgi_request)] == [f"Run {run.pk} launched: {message}"]


@pytest.mark.parametrize("run_type", ["holistic", "structured"])
def test_a_hypoarena_benchmark_refuses_lit2test_run_types(rita_client: Client, arena: Benchmark, run_type: str) -> None:
    body = refusal(rita_client.post(reverse("jobs:run-new"), values(arena, run_type)))
    assert f"{arena} is a HypoArena benchmark: its runs are arena or rubric, not {run_type}." in body
    assert not JudgeRun.objects.exists()


@pytest.mark.parametrize("run_type", ["arena", "rubric"])
def test_a_lit2test_benchmark_refuses_hypoarena_run_types(rita_client: Client, run_type: str) -> None:
    lit2test = Benchmark.objects.create(name="l2t", version="1")
    body = refusal(rita_client.post(reverse("jobs:run-new"), values(lit2test, run_type)))
    assert f"{lit2test} is a Lit2Test benchmark: its runs are holistic or structured, not {run_type}." in body
    assert not JudgeRun.objects.exists()


def test_a_lit2test_benchmark_still_launches_a_pairs_run(rita_client: Client, imported: Benchmark) -> None:
    before = set(JudgeRun.objects.values_list("pk", flat=True))
    response = rita_client.post(reverse("jobs:run-new"), values(imported, "structured") | {"select": "sample:2"})

    run = JudgeRun.objects.exclude(pk__in=before).get(benchmark=imported)
    assert response.status_code == 302
    assert (run.subjects, run.run_type) == ("pairs", "structured")
    assert run.tasks.count() == 4  # 2 sampled pairs × 2 orders


def test_a_reconstruction_benchmark_launches_match_runs_that_need_the_judge_family(rita_client: Client, tmp_path: Path) -> None:
    from reconstruction.importing import import_files, reconstruction_import
    from reconstruction.models import MatchJudgeTask, MatchLabel
    from tests.reconstruction import helpers as rh

    recon = reconstruction_import(name="recon-form", files=import_files(rh.folder(tmp_path / "in"))).benchmark
    body = refusal(rita_client.post(reverse("jobs:run-new"), values(recon, "match")))
    assert "A Reconstruction match run needs the judge's model family" in body and not JudgeRun.objects.exists()
    body = refusal(rita_client.post(reverse("jobs:run-new"), values(recon, "arena")))
    assert f"{recon} is a Reconstruction benchmark: its runs are match, not arena." in body

    response = rita_client.post(reverse("jobs:run-new"), values(recon, "match") | {"judge_family": "alpha"})
    run = JudgeRun.objects.get(benchmark=recon)
    assert response.status_code == 302 and (run.subjects, run.run_type) == ("reconstruction_match", "match")
    # helpers: Alpha's five (family alpha: recused) and Beta's four valid ones (its slot 5 is invalid: never judged).
    assert MatchJudgeTask.objects.filter(run=run).count() == 4
    assert MatchLabel.objects.filter(run=run, recused=True).count() == 5
    assert [str(m) for m in get_messages(response.wsgi_request)] == [f"Run {run.pk} launched: 4 tasks."]
