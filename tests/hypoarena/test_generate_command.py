"""``manage.py hypoarena_generate`` against the scripted endpoint (tests/fake_llm): it elicits K-pair submissions
through the engine, pairs them into matches, and refuses what it cannot do in words that say what to fix.

The benchmark (tests/hypoarena/helpers.py): domain ops (c1, c2, multi-pair) and domain safety (s1, singleton); the
source-derived Reference "Ref" has a submission for each case; Alpha and Beta have none yet.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from arena.models import Benchmark, Participant
from hypoarena.importing import hypoarena_import
from hypoarena.models import GenerationRun, GenerationTask, Match, Submission

from . import helpers as h

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]

CONTEXT = {"c1": "service slowed down on Monday", "c2": "Disk usage doubled overnight", "s1": "alarm did not sound"}


@pytest.fixture
def benchmark(tmp_path: Path) -> Benchmark:
    refs = [row for row in h.submissions() if row["model"] == "Ref"]
    files = {"cases": h.write(tmp_path / "cases.jsonl", h.cases()), "submissions": h.write(tmp_path / "subs.jsonl", refs)}
    bench = hypoarena_import(name="gen-cmd", files=files).benchmark
    for name in ("Alpha", "Beta"):
        Participant.objects.get_or_create(benchmark=bench, name=name)
    return bench


def pairs(model: str, case: str, k: int) -> list[dict[str, str]]:
    return [
        {"hypothesis": f"{model} hypothesis {i} for {case}.", "evidence": f"{model} evidence {i} from {case}."} for i in range(k)
    ]


def run_command(*args: str) -> str:
    out = io.StringIO()
    call_command("hypoarena_generate", *args, stdout=out)
    return out.getvalue()


def test_the_command_elicits_k_pair_submissions_and_pairs_them(benchmark: Benchmark, fake_llm: Any) -> None:  # noqa: ANN401
    rules = []
    for model, endpoint_name in (("Alpha", "alpha-7b"), ("Beta", "Beta")):
        for case, needle in CONTEXT.items():
            good = {"pairs": pairs(model, case, 1 if case == "s1" else 2)}
            # Beta's first answer on c2 has one pair of the two asked for: refused and asked again.
            answers = [{"pairs": good["pairs"][:1]}, good] if (model, case) == ("Beta", "c2") else [good]
            rules.append({"model": endpoint_name, "contains": needle, "answers": answers})
    fake_llm.script(replies=rules)
    out = run_command(str(benchmark.pk), "--base-url", fake_llm.base_url, "--k", "2", "--model-map", "Alpha=alpha-7b", "--wait")

    run = GenerationRun.objects.get(benchmark=benchmark)
    assert f"run: {run.pk}" in out
    assert "6 submissions to elicit" in out  # Alpha and Beta × 3 cases; the Reference is never generated
    assert f"HypoArena generation run {run.pk} completed: 6 submissions stored, 0 invalid after every attempt, 0 failed" in out
    assert run.parameters["k"] == 2 and run.parameters["model_names"] == {"Alpha": "alpha-7b"}
    for s in (
        Submission.objects.filter(case__benchmark=benchmark)
        .exclude(participant__name="Ref")
        .select_related("case", "participant")
    ):
        case = s.case.external_id
        assert s.pairs == pairs(s.participant.name, case, 1 if case == "s1" else 2)
    assert Submission.objects.filter(case__benchmark=benchmark).count() == 9
    # Three submissions per case (Ref, Alpha, Beta) make three matches in each of the three cases.
    assert Match.objects.filter(case__benchmark=benchmark).count() == 9

    log = fake_llm.log()
    assert sorted(entry["model"] for entry in log) == ["Beta"] * 4 + ["alpha-7b"] * 3
    prompts = ["\n".join(m["content"] for m in entry["messages"]) for entry in log]
    assert not any("A cache expired." in p for p in prompts)  # c1's reference conclusion stays hidden
    assert sum("Propose exactly 1 hypothesis-evidence pair as JSON" in p for p in prompts) == 2  # s1, singleton
    assert sum("Propose exactly 2 hypothesis-evidence pairs as JSON" in p for p in prompts) == 5


def test_participants_and_cases_narrow_the_run(benchmark: Benchmark, fake_llm: Any) -> None:  # noqa: ANN401
    fake_llm.script(replies=[{"contains": "", "answers": [{"pairs": pairs("Beta", "x", 1)}]}])
    out = run_command(
        str(benchmark.pk), "--base-url", fake_llm.base_url, "--participants", "Beta", "--cases", "domain:ops", "--k", "1"
    )
    assert "2 submissions to elicit" in out
    run = GenerationRun.objects.get(benchmark=benchmark)
    assert set(GenerationTask.objects.filter(run=run).values_list("participant__name", "case__external_id")) == {
        ("Beta", "c1"),
        ("Beta", "c2"),
    }
    assert len(fake_llm.log()) == 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--participants", "Alpha,Nova"], "not participants of .*: Nova"),
        (["--participants", "Ref"], "Ref is the source-derived Reference"),
        (["--api-key-env", "NOWHERE_SET_API_KEY"], "environment variable NOWHERE_SET_API_KEY named for the API key is not set"),
        (["--api-key-env", "HOME"], "'HOME' is not an API-key variable"),
        (["--cases", "batch:one"], "cases must be 'all' or 'domain:NAME'"),
        (["--model-map", "Alpha"], "--model-map entries look like NAME=MODEL"),
        (["--k", "0"], "argument --k: '0': Ensure this value is greater than or equal to 1"),
        (["--k", "21"], "argument --k: '21': Ensure this value is less than or equal to 20"),
        (["--k", "two"], "argument --k: 'two': Enter a whole number"),
        (["--concurrency", "0"], "argument --concurrency: '0': Ensure this value is greater than or equal to 1"),
        (["--temperature", "3"], "argument --temperature: '3': Ensure this value is less than or equal to 2"),
    ],
)
def test_what_the_command_refuses(benchmark: Benchmark, fake_llm: Any, extra: list[str], message: str) -> None:  # noqa: ANN401
    with pytest.raises(CommandError, match=message):
        run_command(str(benchmark.pk), "--base-url", fake_llm.base_url, *extra)
    assert not GenerationRun.objects.exists() and fake_llm.log() == []


def test_it_refuses_a_benchmark_that_is_not_hypoarena(benchmark: Benchmark, fake_llm: Any) -> None:  # noqa: ANN401
    lit2test = Benchmark.objects.create(name="l2t", version="1")
    with pytest.raises(
        CommandError, match=r"l2t.* is a Lit2Test benchmark, not a HypoArena one; elicit its proposals with run_generation"
    ):
        run_command(str(lit2test.pk), "--base-url", fake_llm.base_url)
    recon = Benchmark.objects.create(name="rec", version="1", protocol="reconstruction")
    with pytest.raises(
        CommandError,
        match=r"rec.* is a Reconstruction benchmark, not a HypoArena one; elicit its hypotheses with reconstruction_propose",
    ):
        run_command(str(recon.pk), "--base-url", fake_llm.base_url)
    with pytest.raises(CommandError, match="no-such-bench"):
        run_command("no-such-bench", "--base-url", fake_llm.base_url)
    assert not GenerationRun.objects.exists()
