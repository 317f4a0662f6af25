"""Every launch form and every command that creates a run, a scorer, a selection, a benchmark, a study, an account
or imported rows, submitted three times at once (issue 22, item 3): no answer is a 500, no command ends in a traceback
(each does its work, finds it done, or refuses with a message naming what was made), and at most one object is made.

Already covered elsewhere: the judge-run form (tests/jobs/test_launch_once.py), the Swiss and Intrinsic launch forms
(tests/reconstruction/test_launch_page.py, tests/intrinsic/test_launch_page.py) and the Reconstruction, Intrinsic
and HypoArena imports into one new name (tests/test_concurrent_protocol_imports.py). The same forms and commands
posted or run again later: tests/test_launch_again.py.

A command has no form key: each invocation asks for what it names. Where a run would ask what a run not yet ended is
asking (a generation, a proposer run, a scorer's candidates) the later ones are refused and name the first; a judge
run and a study are deliberately repeatable (a second run of one judge is how its stability is measured; a second
study is a second sample), so three invocations make three, none crashing, unless a label names the run.

Needs PostgreSQL: concurrent writers wait for each other's row locks and unique keys there, which is what is tested.
No worker runs here: a launched run's driver is only enqueued, so its endpoint (NOWHERE) is never called."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connections
from django.urls import reverse

from arena.models import Benchmark, JudgeRun, OrderedJudgment, Participant
from tests.arena import builders
from tests.clients import client_for, needs_postgresql, posted_at_once
from tests.launching import NOWHERE, lit2test_release, study_values

pytestmark = pytest.mark.django_db(transaction=True)

TIMES = 3


@pytest.fixture(autouse=True)
def _postgresql() -> None:
    needs_postgresql("concurrent inserts that wait for each other's locks and unique keys need PostgreSQL")


@pytest.fixture
def lit2test(tmp_path: Path) -> Benchmark:
    return lit2test_release(tmp_path / "release", "at-once")


def at_once(work: Callable[[], str], times: int = TIMES) -> list[str]:
    """What ``work`` gave, run ``times`` at once on threads of their own connections: its text, ``refused: ...`` for a
    CommandError, ``crashed: ...`` for anything else (a traceback)."""
    start = threading.Barrier(times)
    outcomes: list[str] = []

    def run() -> None:
        try:
            start.wait()
            outcomes.append(work())
        except CommandError as exc:
            outcomes.append(f"refused: {exc}")
        except BaseException as exc:  # noqa: BLE001 - what the issue saw: a raw traceback
            outcomes.append(f"crashed: {type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(times)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(outcomes) == times, f"a thread did not finish: {outcomes}"
    return outcomes


def command_at_once(name: str, *args: str) -> list[str]:
    def work() -> str:
        out = StringIO()
        call_command(name, *args, stdout=out, stderr=StringIO())
        return "done: " + out.getvalue().strip()

    return at_once(work)


def one_done_others_refused(outcomes: list[str], refusal: str) -> None:
    """One invocation did the work; each other was refused with a message matching ``refusal``; none crashed."""
    assert [o for o in outcomes if o.startswith("done")] and len([o for o in outcomes if o.startswith("done")]) == 1, outcomes
    for outcome in outcomes:
        assert outcome.startswith("done") or re.fullmatch(f"refused: {refusal}", outcome), outcome


def answered_without_500(answers: list[Any]) -> None:
    assert len(answers) == TIMES and all(a.status_code in (200, 302) for a in answers), [a.status_code for a in answers]


# --------------------------------------------------------------------------- Lit2Test


def test_the_generation_form_posted_three_times_at_once_launches_one_run(lit2test: Benchmark, researcher) -> None:  # noqa: ANN001
    from lit2test.models import GenerationRun, GenerationTask

    values = {
        "benchmark": str(lit2test.pk),
        "base_url": NOWHERE,
        "api_key_env": "",
        "contexts": "all",
        "temperature": "1",
        "max_tokens": "1600",
        "concurrency": "2",
    }
    answers = posted_at_once(researcher, reverse("lit2test:generation-new"), values)

    run = GenerationRun.objects.get()
    assert GenerationTask.objects.filter(run=run).count() == 3  # the new context, for each of the three models
    answered_without_500(answers)
    refused = [a.content.decode() for a in answers if a.status_code == 200]
    assert len(refused) == TIMES - 1
    for page in refused:
        assert f"is being asked by generation run {run.pk}" in page


def test_run_generation_three_times_at_once_makes_one_run(lit2test: Benchmark) -> None:
    from lit2test.models import GenerationRun

    outcomes = command_at_once("run_generation", "at-once", "--base-url", NOWHERE)

    run = GenerationRun.objects.get()
    one_done_others_refused(outcomes, rf"nothing to ask: .* is being asked by generation run {run.pk} .*")


def test_the_dashboard_upload_posted_three_times_at_once_imports_once(tmp_path: Path, researcher) -> None:  # noqa: ANN001
    files = {name: builders.encode(rows) for name, rows in builders.small_release().items()}
    start = threading.Barrier(TIMES)
    answers: list[Any] = []

    def post() -> None:
        try:
            client = client_for(researcher, raise_request_exception=False)
            uploads = [SimpleUploadedFile(name, content) for name, content in files.items()]
            start.wait()
            answers.append(client.post(reverse("arena:dashboard"), {"files": uploads, "benchmark": "uploaded", "version": "1"}))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post) for _ in range(TIMES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert [a.status_code for a in answers] == [302] * TIMES
    assert Benchmark.objects.filter(name="uploaded").count() == 1
    assert OrderedJudgment.objects.filter(run__benchmark__name="uploaded").count() == 12  # written once


def test_import_lit2test_three_times_at_once_imports_once(tmp_path: Path) -> None:
    folder = builders.write(tmp_path / "release", builders.small_release())

    outcomes = command_at_once("import_lit2test", str(folder), "--benchmark", "imported-at-once")

    assert not [o for o in outcomes if not o.startswith("done")], outcomes
    assert sorted(o.split(":")[1].split()[0] for o in outcomes) == ["created", "nothing", "nothing"], outcomes
    assert Benchmark.objects.filter(name="imported-at-once").count() == 1
    assert OrderedJudgment.objects.filter(run__benchmark__name="imported-at-once").count() == 12


def test_the_new_version_button_pressed_three_times_at_once_makes_one_version(lit2test: Benchmark, researcher) -> None:  # noqa: ANN001
    answers = posted_at_once(researcher, reverse("lit2test:benchmark-new-version", args=[lit2test.pk]), {})

    new = Benchmark.objects.get(name="at-once", version="2")
    assert Benchmark.objects.filter(name="at-once").count() == 2
    assert [a.status_code for a in answers] == [302] * TIMES
    assert {a["Location"] for a in answers} == {f"{reverse('jobs:run-new')}?benchmark={new.pk}"}


# --------------------------------------------------------------------------- judge runs from the command line


def test_run_judge_three_times_at_once_makes_three_runs_and_no_traceback(lit2test: Benchmark) -> None:
    outcomes = command_at_once("run_judge", "at-once", "--model", "Judge-Local", "--base-url", NOWHERE, "--select", "sample:1")

    assert all(o.startswith("done: run: ") for o in outcomes), outcomes
    assert JudgeRun.objects.filter(benchmark=lit2test, judge_model="Judge-Local").count() == TIMES


def test_run_judge_with_one_label_three_times_at_once_makes_one_run(lit2test: Benchmark) -> None:
    args = ("--model", "Judge-Local", "--base-url", NOWHERE, "--select", "sample:1", "--label", "stability-1")

    outcomes = command_at_once("run_judge", "at-once", *args)

    run = JudgeRun.objects.get(benchmark=lit2test, judge_model="Judge-Local")
    one_done_others_refused(
        outcomes,
        rf"run {run.pk} of at-once v1 is labelled 'stability-1' for judge 'Judge-Local' already; nothing new was made: "
        r"give this run another label \(--label\)",
    )


# --------------------------------------------------------------------------- Reconstruction


@pytest.fixture
def recon(tmp_path: Path) -> Benchmark:
    """One frozen seed (s1) with Alpha's and Beta's hypotheses; Gamma, a participant already, has none yet."""
    from reconstruction.importing import import_files, reconstruction_import
    from tests.reconstruction import helpers as h

    benchmark = reconstruction_import(name="recon-at-once", files=import_files(h.folder(tmp_path / "recon"))).benchmark
    Participant.objects.create(benchmark=benchmark, name="Gamma")
    return benchmark


def test_the_proposer_form_posted_three_times_at_once_launches_one_run(recon: Benchmark, researcher) -> None:  # noqa: ANN001
    from reconstruction.models import ProposerRun, ProposerTask

    values = {
        "action": "propose",
        "propose-proposers": "Gamma",
        "propose-seeds": "all",
        "propose-base_url": NOWHERE,
        "propose-concurrency": "2",
        "propose-timeout": "30",
        "propose-temperature": "1",
        "propose-max_tokens": "1000",
    }
    answers = posted_at_once(researcher, reverse("reconstruction:launch", args=[recon.pk]), values)

    run = ProposerRun.objects.get()
    assert list(ProposerTask.objects.filter(run=run).values_list("participant__name", "seed__external_id")) == [("Gamma", "s1")]
    answered_without_500(answers)
    for page in (a.content.decode() for a in answers if a.status_code == 200):
        assert f"is being asked by proposer run {run.pk}" in page


def test_reconstruction_propose_three_times_at_once_makes_one_run(recon: Benchmark) -> None:
    from reconstruction.models import ProposerRun

    outcomes = command_at_once("reconstruction_propose", "recon-at-once", "--proposers", "Gamma", "--base-url", NOWHERE)

    run = ProposerRun.objects.get()
    one_done_others_refused(outcomes, rf"nothing to ask: .* is being asked by proposer run {run.pk} .*")


def test_reconstruction_swiss_three_times_at_once_starts_one_selection(recon: Benchmark) -> None:
    from reconstruction.models import SwissSelection

    args = ("--name", "Sel", "--proposers", "Alpha,Beta", "--judges", "J-delta=delta", "--base-url", NOWHERE)

    outcomes = command_at_once("reconstruction_swiss", "recon-at-once", *args)

    SwissSelection.objects.get()
    assert recon.participants.filter(name="Sel").count() == 1
    # At once, the others wait for the first's insert; one that comes after it is told the name is taken.
    one_done_others_refused(
        outcomes, "(Swiss selection 'Sel' was started already; nothing new was made|'Sel' is already a participant .*)"
    )


# --------------------------------------------------------------------------- HypoArena


def test_hypoarena_generate_three_times_at_once_makes_one_run(tmp_path: Path) -> None:
    from hypoarena.importing import hypoarena_import, import_files
    from hypoarena.models import GenerationRun, GenerationTask
    from tests.hypoarena import helpers as h

    benchmark = hypoarena_import(name="arena-at-once", files=import_files([h.folder(tmp_path / "arena")])).benchmark
    Participant.objects.create(benchmark=benchmark, name="Gamma")  # the only participant without submissions

    outcomes = command_at_once("hypoarena_generate", "arena-at-once", "--base-url", NOWHERE)

    run = GenerationRun.objects.get()
    assert GenerationTask.objects.filter(run=run).count() == 3  # Gamma, on each of the three cases
    one_done_others_refused(outcomes, rf"nothing to ask: .* is being asked by HypoArena generation run {run.pk} .*")


# --------------------------------------------------------------------------- Intrinsic


def test_intrinsic_score_of_a_new_scorer_three_times_at_once_makes_one_scorer_and_run(tmp_path: Path) -> None:
    from intrinsic.models import IntrinsicScoringRun, Scorer
    from tests.intrinsic.helpers import BENCH, make_benchmark

    make_benchmark(tmp_path)
    args = ("--model", "toy", "--criterion", "nll", "--logprobs-mode", "raw_logprobs", "--base-url", NOWHERE)

    outcomes = command_at_once("intrinsic_score", BENCH, *args)

    run = IntrinsicScoringRun.objects.get()
    assert Scorer.objects.count() == 1
    one_done_others_refused(
        outcomes,
        rf"(Scorer 'toy-nll' was launched at the same moment, by run {run.pk}; nothing new was made"
        rf"|scorer 'toy-nll' has run {run.pk} (pending|running): resume it .*)",
    )


def test_intrinsic_score_of_an_existing_scorer_three_times_at_once_makes_one_run(tmp_path: Path) -> None:
    from intrinsic.models import IntrinsicScoringRun
    from intrinsic.scoring import scoring_run_create
    from tests.intrinsic.helpers import BENCH, make_benchmark

    benchmark = make_benchmark(tmp_path)
    first = scoring_run_create(
        benchmark=benchmark, model="toy", criterion="nll", logprobs_mode="raw_logprobs", base_url=NOWHERE, papers="sample:1"
    )
    IntrinsicScoringRun.objects.filter(pk=first.pk).update(status=JudgeRun.Status.COMPLETED)  # the scorer has ended runs
    args = ("--model", "toy", "--criterion", "nll", "--logprobs-mode", "raw_logprobs", "--base-url", NOWHERE)

    outcomes = command_at_once("intrinsic_score", BENCH, *args)

    run = IntrinsicScoringRun.objects.exclude(pk=first.pk).get()
    one_done_others_refused(outcomes, rf"scorer 'toy-nll' has run {run.pk} (pending|running): resume it .*")


# --------------------------------------------------------------------------- imports into a benchmark that exists


def _recon_imports(tmp: Path) -> tuple[Path, Callable[[], Any]]:
    from reconstruction.importing import import_files, reconstruction_import
    from reconstruction.models import Hypothesis
    from tests.reconstruction import helpers as h

    reconstruction_import(
        name="existing", files=import_files(h.folder(tmp / "seeds", references=[], hypotheses=[], labels=[], tournament=[]))
    )
    return h.folder(tmp / "all"), lambda: (Hypothesis.objects.count(), len(h.hypotheses()))


def _arena_imports(tmp: Path) -> tuple[Path, Callable[[], Any]]:
    from hypoarena.importing import hypoarena_import, import_files
    from hypoarena.models import Submission
    from tests.hypoarena import helpers as h

    hypoarena_import(name="existing", files=import_files([h.folder(tmp / "cases", submissions=[], verdicts=[], rubric=[])]))
    return h.folder(tmp / "all"), lambda: (Submission.objects.count(), len(h.submissions()))


def _intrinsic_imports(tmp: Path) -> tuple[Path, Callable[[], Any]]:
    import json

    from intrinsic.importing import intrinsic_import
    from intrinsic.models import Candidate
    from tests.intrinsic import helpers as h

    lines = h.paper_lines()
    (tmp / "one").mkdir(parents=True)
    (tmp / "one" / "papers.jsonl").write_text(json.dumps(lines[0]) + "\n")
    intrinsic_import(name="existing", files={"papers": tmp / "one" / "papers.jsonl"})
    (tmp / "all").mkdir()
    (tmp / "all" / "papers.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return tmp / "all", lambda: (Candidate.objects.count(), sum(len(p["candidates"]) for p in lines))


EXISTING: dict[str, Callable[[Path], tuple[Path, Callable[[], Any]]]] = {
    "import_reconstruction": _recon_imports,
    "import_hypoarena": _arena_imports,
    "import_intrinsic": _intrinsic_imports,
}


@pytest.mark.parametrize("command", sorted(EXISTING))
def test_imports_at_once_into_a_benchmark_that_exists_write_everything_once(command: str, tmp_path: Path) -> None:
    folder, rows = EXISTING[command](tmp_path)

    outcomes = command_at_once(command, "existing", str(folder))

    assert all(o.startswith("done") for o in outcomes), outcomes
    stored, expected = rows()
    assert stored == expected


# --------------------------------------------------------------------------- diagnostic controls


def test_import_controls_three_times_at_once_imports_each_variant_once(lit2test: Benchmark, tmp_path: Path) -> None:
    from controls.models import ControlVariant
    from tests.controls import helpers as h

    lines = h.all_kinds(lit2test)
    path = h.write(tmp_path / "controls.jsonl", lines)

    outcomes = command_at_once("import_controls", "at-once", str(path))

    assert all(o.startswith("done") for o in outcomes), outcomes
    assert ControlVariant.objects.filter(benchmark=lit2test).count() == len(lines)


def test_generate_controls_three_times_at_once_makes_each_variant_once(lit2test: Benchmark) -> None:
    from controls.models import ControlVariant

    outcomes = command_at_once("generate_controls", "at-once", "--kinds", "clear,naive,rendering", "--contexts", "2")

    assert all(o.startswith("done") for o in outcomes), outcomes
    assert ControlVariant.objects.filter(benchmark=lit2test).count() == 2 * (3 + 1 + 1)  # per context: 3 targets, naive, prose


def test_generate_controls_by_a_model_three_times_at_once_stores_each_variant_once(lit2test: Benchmark, fake_llm) -> None:  # noqa: ANN001
    """The model path stores what it made in batches; three at once pay for their calls (a command is a request), but
    each variant is stored once and none crashes."""
    from controls.models import ControlVariant
    from controls.prompts import SUBTLE_TASK_V1
    from tests.controls.helpers import TARGET_FIELD

    rules = []
    for field in TARGET_FIELD.values():
        text = f"A subtle rewrite of the {field} field, written for this test."
        rules += [
            {"contains": [SUBTLE_TASK_V1, f"FIELD TO REWRITE: {field}"], "answers": [{"field": field, "text": text}]},
            {
                "contains": ["FIELD THAT WAS EDITED:", text],
                "answers": [{"only_target_changed": True, "degraded": True, "reason": "Flawed."}],
            },
        ]
    fake_llm.script(replies=rules)

    outcomes = command_at_once(
        "generate_controls",
        "at-once",
        "--kinds",
        "subtle",
        "--contexts",
        "1",
        "--model",
        "writer",
        "--base-url",
        fake_llm.base_url,
    )

    assert all(o.startswith("done") for o in outcomes), outcomes
    assert sorted(ControlVariant.objects.filter(benchmark=lit2test).values_list("kind", "target")) == [
        ("subtle", target) for target in sorted(TARGET_FIELD)
    ]


# --------------------------------------------------------------------------- human studies and annotators


def test_the_study_form_posted_three_times_at_once_creates_one_study(
    lit2test: Benchmark, researcher, annotator, annotator2
) -> None:  # noqa: ANN001
    from annotation.models import Study

    answers = posted_at_once(
        researcher, reverse("annotation:studies"), study_values(lit2test, [annotator, annotator2]) | {"launch_key": "k" * 24}
    )

    study = Study.objects.get()
    assert [a.status_code for a in answers] == [302] * TIMES
    assert {a["Location"] for a in answers} == {reverse("annotation:study", args=[study.pk])}


def test_create_study_three_times_at_once_makes_three_studies_and_no_traceback(
    lit2test: Benchmark, annotator, annotator2
) -> None:  # noqa: ANN001
    from annotation.models import NaiveProposal, Study

    outcomes = command_at_once(
        "create_study", "at-once", "--contexts", "1", "--annotators", "ann,bob", "--naive-controls", "1", "--seed", "3"
    )

    assert all(o.startswith("done: study: ") for o in outcomes), outcomes
    assert Study.objects.count() == TIMES
    assert NaiveProposal.objects.count() == 1  # one naive proposal for the context, shared


def test_the_annotator_form_posted_three_times_at_once_creates_one_account(researcher) -> None:  # noqa: ANN001
    from django.contrib.auth import get_user_model

    answers = posted_at_once(researcher, reverse("annotation:annotators"), {"username": "carla", "email": ""})

    get_user_model().objects.get(username="carla")
    answered_without_500(answers)
    for page in (a.content.decode() for a in answers if a.status_code == 200):
        assert "the username &#x27;carla&#x27; is taken" in page


# --------------------------------------------------------------------------- the demo's commands (make demo)

DEMOS = {
    # command and arguments: the benchmark each makes
    ("demo_reconstruction",): "reconstruction-demo",
    ("demo_hypoarena", "--cases", "1"): "hypoarena-demo",
    ("demo_intrinsic",): "intrinsic-demo",
}


@pytest.mark.parametrize("command", sorted(DEMOS), ids=[c[0] for c in sorted(DEMOS)])
def test_a_demo_build_three_times_at_once_makes_its_benchmark_once(command: tuple[str, ...]) -> None:
    outcomes = command_at_once(*command)

    # At once, the others wait for the first's new benchmark and are refused; one that comes after it changes nothing.
    refusal = (
        f"refused: benchmark {DEMOS[command]} v1 was created by another import while this one ran; nothing was written: "
        "run this import again to add its files to that benchmark"
    )
    assert len([o for o in outcomes if o.startswith("done: created")]) == 1, outcomes
    assert all(o.startswith("done") or o == refusal for o in outcomes), outcomes
    assert Benchmark.objects.filter(name=DEMOS[command]).count() == 1


def test_demo_controls_three_times_at_once_records_each_run_once(lit2test: Benchmark) -> None:
    call_command("generate_controls", "at-once", "--kinds", "clear,naive", "--contexts", "2", stdout=StringIO())

    outcomes = command_at_once("demo_controls", "at-once")

    assert all(o.startswith("done") for o in outcomes), outcomes
    assert sorted(
        JudgeRun.objects.filter(benchmark=lit2test, judge_model__startswith="demo-heuristic").values_list("label", flat=True)
    ) == [
        "demo-heuristic-holistic",
        "demo-heuristic-holistic-replay",
        "demo-heuristic-structured",
    ]


def test_demo_setup_and_demo_study_three_times_at_once_make_each_account_and_study_once(tmp_path: Path, settings) -> None:  # noqa: ANN001
    from django.contrib.auth import get_user_model

    from annotation.models import Study

    settings.LIT2TEST_DATA = str(tmp_path / "no-sample")  # accounts only: the small release below is the benchmark
    outcomes = command_at_once("demo_setup")
    assert all(o.startswith("done") for o in outcomes), outcomes
    assert get_user_model().objects.filter(username__in=["researcher", "annotator1", "annotator2", "annotator3"]).count() == 4
    lit2test_release(tmp_path / "release", "lit2test")

    outcomes = command_at_once("demo_study", "--contexts", "1", "--practice-contexts", "1", "--pairs-per-context", "2")

    assert all(o.startswith("done") for o in outcomes), outcomes
    assert sorted(Study.objects.values_list("name", flat=True)) == ["Demo formal round", "Demo practice round"]
