"""A protocol plugged in from its own folder runs like the built-in ones: launched from ``run_judge`` and from the
dashboard's form, listed on the runs page with its progress, run by a real worker, resumed after that worker is
killed, and reported by its own command and API. Nothing outside ``tests/`` names it (checked here too)."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from arena.models import Benchmark, JudgeRun
from arena.protocols import protocols
from jobs.selectors import run_progress
from jobs.services import judge_run_resume
from tests.clients import client_for

from .models import Item, ToyAnswer, ToyTask

ROOT = Path(__file__).resolve().parents[2]
JUDGE = "Toy-Judge"
# Twelve items; the scripted judge says "yes" to the questions about the sky, "no" to the rest.
QUESTIONS = [
    (f"i{n:02d}", "sky" if n % 3 == 0 else "sea", f"Is item {n:02d} about the {'sky' if n % 3 == 0 else 'sea'}?")
    for n in range(12)
]


def write_items(folder: Path, rows: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def import_toy(tmp_path: Path) -> Benchmark:
    folder = write_items(tmp_path / "toy", [{"id": i, "topic": t, "question": q} for i, t, q in QUESTIONS])
    out = io.StringIO()
    call_command("import_toy", "toy-bench", str(folder), stdout=out)
    assert out.getvalue().strip() == "created 12 items in toy-bench v1"
    return Benchmark.objects.get(name="toy-bench")


def script_judge(fake: Any, *, latency: float = 0.0) -> None:
    fake.script(
        latency=latency,
        replies=[
            {"contains": "about the sky", "answers": [{"answer": "yes"}]},
            {"contains": "about the sea", "answers": [{"answer": "no"}]},
        ],
    )


def answers(run: JudgeRun) -> list[tuple[int, str]]:
    return list(ToyAnswer.objects.filter(run=run, status="accepted").values_list("item_id", "answer"))


def test_the_toy_protocol_is_found_in_every_registry() -> None:
    spec = protocols["toy_protocol"]
    assert spec.label == "Toy protocol" and [t.name for t in spec.run_types] == ["yes_no"]
    assert spec.urls == "tests.toy_protocol.urls"
    assert reverse("toy_protocol:api-report", args=[1]) == "/api/benchmarks/1/toy/"


@pytest.mark.django_db
def test_an_import_refuses_a_bad_line_naming_its_file_line_and_field(tmp_path: Path) -> None:
    folder = write_items(
        tmp_path / "bad", [{"id": "a", "topic": "sky", "question": "ok?"}, {"id": "b", "topic": 3, "question": ""}]
    )
    with pytest.raises(CommandError) as refused:
        call_command("import_toy", "toy-bad", str(folder))
    assert "items.jsonl, line 2: topic: must be text, got number" in str(refused.value)
    assert "items.jsonl, line 2: question: empty" in str(refused.value)
    assert not Benchmark.objects.filter(name="toy-bad").exists() and not Item.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_run_judge_launches_a_toy_run_and_its_report_counts_the_answers(
    tmp_path: Path, fake_llm: Any, celery_in_process: None
) -> None:
    benchmark = import_toy(tmp_path)
    script_judge(fake_llm)
    out = io.StringIO()
    call_command("run_judge", "toy-bench", "--model", JUDGE, "--base-url", fake_llm.base_url, "--wait", stdout=out)
    run = JudgeRun.objects.get(benchmark=benchmark)
    assert (run.subjects, run.run_type, run.prompt_version, run.status) == (
        "toy_protocol_items",
        "yes_no",
        "toy-yes-no-v1",
        "completed",
    )
    assert "12 tasks" in out.getvalue()
    # 4 sky questions (items 0, 3, 6, 9): yes; 8 sea questions: no. Each item answered once.
    assert sorted(a for _, a in answers(run)) == ["no"] * 8 + ["yes"] * 4
    assert len({item for item, _ in answers(run)}) == 12
    report = io.StringIO()
    call_command("toy_report", "toy-bench", "--json", stdout=report)
    document = json.loads(report.getvalue())
    assert document["items"] == 12
    (row,) = document["runs"]
    assert (row["yes"], row["no"], row["invalid"], row["share_yes"]) == (4, 8, 0, pytest.approx(1 / 3))
    api = client_for_researcher().get(reverse("toy_protocol:api-report", args=[benchmark.pk]), {"replicates": 200})
    assert api.status_code == 200 and api.json() == document


def client_for_researcher() -> Any:  # noqa: ANN401
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username="toy-researcher", defaults={"is_staff": True})
    return client_for(user)


@pytest.mark.django_db(transaction=True)
def test_the_dashboard_form_launches_a_toy_run_and_the_runs_page_shows_its_progress(
    tmp_path: Path, fake_llm: Any, celery_in_process: None
) -> None:
    benchmark = import_toy(tmp_path)
    script_judge(fake_llm)
    client = client_for_researcher()
    form = client.get(reverse("jobs:run-new")).content.decode()
    assert 'value="yes_no"' in form and "all · topic:NAME · sample:N" in form
    values = {
        "benchmark": str(benchmark.pk),
        "judge_model": JUDGE,
        "base_url": fake_llm.base_url,
        "run_type": "yes_no",
        "select": "topic:sky",
        "orders": ["original", "reverse"],
        "concurrency": "2",
        "temperature": "0",
        "max_tokens": "64",
        "timeout": "5",
    }
    response = client.post(reverse("jobs:run-new"), values)
    run = JudgeRun.objects.get(benchmark=benchmark)
    assert response.status_code == 302 and response["Location"] == reverse("jobs:run", args=[run.pk])
    assert run.status == "completed" and sorted(answers(run)) == sorted((i.pk, "yes") for i in Item.objects.filter(topic="sky"))
    page = client.get(reverse("jobs:runs")).content.decode()
    row = page[page.index(f'data-run="{run.pk}"') :].split("</tr>")[0]
    assert "Toy-Judge" in row and "yes_no" in row and 'class="num done">4<' in row
    detail = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert "toy items" in detail and "i03 · sky" in detail
    dashboard = client.get(reverse("arena:dashboard")).content.decode()
    # Its own table, with the columns it registered (items and judge runs).
    table = dashboard[dashboard.index('id="benchmarks-toy_protocol"') :].split("</section>")[0]
    assert "Toy protocol" in table and '<th scope="col" class="num">Items</th>' in table
    bench_row = table[table.index("toy-bench v1") :].split("</tr>")[0]
    assert '<td class="num">12</td><td class="num">1</td>' in bench_row and "toy-report-link" in bench_row
    # The dashboard's benchmark link leads to the protocol's own page, which reads its report.
    home = client.get(reverse("arena:benchmark", args=[benchmark.pk]))
    assert home.status_code == 302 and home["Location"] == reverse("toy_protocol:benchmark", args=[benchmark.pk])
    own = client.get(home["Location"]).content.decode()
    assert '<p id="item-count">12 items</p>' in own and f'<tr data-run="{run.pk}">' in own
    # A toy run type on another protocol's benchmark is refused on the form, naming that protocol's run types.
    other = Benchmark.objects.create(name="l2t-x", protocol="lit2test")
    refused = client.post(reverse("jobs:run-new"), values | {"benchmark": str(other.pk)}).content.decode()
    assert "l2t-x v1 is a Lit2Test benchmark: its runs are holistic or structured, not yes_no." in refused


@pytest.mark.django_db(transaction=True)
@pytest.mark.services
def test_a_toy_run_whose_worker_was_killed_resumes_with_only_the_missing_work(
    tmp_path: Path, fake_llm: Any, celery_worker: Any
) -> None:
    benchmark = import_toy(tmp_path)
    first = celery_worker()
    script_judge(fake_llm, latency=0.3)
    call_command(
        "run_judge", "toy-bench", "--model", JUDGE, "--base-url", fake_llm.base_url, "--concurrency", "2", "--timeout", "1",
        stdout=io.StringIO(),
    )  # fmt: skip
    run = JudgeRun.objects.get(benchmark=benchmark)
    run.parameters["lease_seconds"] = 2  # short leases: the dead worker's claims are free again soon
    JudgeRun.objects.filter(pk=run.pk).update(parameters=run.parameters)
    wait_for(lambda: len(answers(run)) >= 4, what="four answers from the first worker")

    first.kill()

    assert JudgeRun.objects.get(pk=run.pk).status == "running"
    done = len(answers(run))
    assert 4 <= done < 12
    claimed = ToyTask.objects.filter(run=run, status="claimed")
    expiry = max(claimed.values_list("lease_until", flat=True), default=timezone.now())
    wait_for(lambda: timezone.now() > expiry, what="the dead worker's leases to run out")
    done = len(answers(run))
    asked_before = len([e for e in fake_llm.log() if e.get("task")])

    second = celery_worker()
    todo = judge_run_resume(run=run)

    assert todo == 12 - done
    wait_for(lambda: JudgeRun.objects.get(pk=run.pk).status == "completed", what=f"the resumed run\n{second.log()[-2000:]}")
    final = answers(run)
    assert len(final) == 12 == len({item for item, _ in final})
    assert ToyAnswer.objects.filter(run=run).count() == 12
    asked_after = [e for e in fake_llm.log() if e.get("task")]
    assert len(asked_after) - asked_before == todo  # each missing item asked once
    progress = run_progress(run=JudgeRun.objects.get(pk=run.pk))
    assert (progress.total, progress.done, progress.accepted, progress.failed, progress.remaining) == (12, 12, 12, 0, 0)


def wait_for(predicate: Any, *, what: str, timeout: float = 60) -> None:  # noqa: ANN401
    from tests.jobs.helpers import wait_until

    wait_until(predicate, timeout=timeout, interval=0.2, what=what)


def test_no_file_outside_tests_names_the_toy_protocol() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    outside = [
        name
        for name in tracked.stdout.splitlines()
        if not name.startswith("tests/")
        and (ROOT / name).is_file()
        and "toy_protocol" in (ROOT / name).read_text(errors="ignore")
    ]
    assert outside == []
