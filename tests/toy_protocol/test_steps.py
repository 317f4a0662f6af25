"""The engine's durable follow-up steps (``jobs.steps``), on the protocol built for tests: a toy run's step counts its
answers (``ToyTally``, one per run), and ``judging.STEP_FAULTS`` makes it fail on demand.

The promise: a run never reads completed before its step is done; a step that did not finish leaves the run running,
says so on its page, and is carried out by the watchdog with no manual step, exactly once; one that keeps failing
ends the run failed with the error and what to do, and a resume carries it out. (Dead workers and a stopped
PostgreSQL in the middle of a step, for HypoArena and Swiss selections: tests/faults/test_step_faults.py.)
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils.html import escape

from arena.models import JudgeRun
from jobs.execution import runs_watchdog
from jobs.lifecycle import run_pause
from jobs.models import RunEvent, RunStep
from jobs.selectors import run_progress
from jobs.services import judge_run_finish, judge_run_resume
from jobs.steps import STEP_ATTEMPTS

from . import judging
from .models import ToyTally
from .test_toy_protocol import JUDGE, client_for_researcher, import_toy, script_judge

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]

TITLE = "count the run's yes and no answers"
SHOWN = escape(TITLE)  # as a page shows it


@pytest.fixture(autouse=True)
def no_faults_left() -> Iterator[None]:
    judging.STEP_FAULTS.clear()
    yield
    judging.STEP_FAULTS.clear()


def launch(tmp_path: Path, fake: Any) -> JudgeRun:  # noqa: ANN401
    """A toy run of the 12 items, driven in this process to its end (or to its pending step)."""
    benchmark = import_toy(tmp_path)
    script_judge(fake)
    call_command("run_judge", "toy-bench", "--model", JUDGE, "--base-url", fake.base_url, stdout=io.StringIO())
    return JudgeRun.objects.get(benchmark=benchmark)


def codes(run: JudgeRun) -> list[str]:
    return list(RunEvent.objects.filter(kind="judge", run_id=run.pk).order_by("id").values_list("code", flat=True))


def tally(run: JudgeRun) -> tuple[int, int, str]:
    (row,) = ToyTally.objects.filter(run=run)
    return row.yes, row.no, row.run_status


def test_a_run_ends_with_its_step_carried_out_once(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    run = launch(tmp_path, fake_llm)

    run.refresh_from_db()
    assert run.status == "completed" and run.finished_at is not None
    # 4 sky questions answered yes, 8 sea questions no; the step saw the run already ended as completed.
    assert tally(run) == (4, 8, "completed")
    step = RunStep.objects.get(kind="judge", run_id=run.pk)
    assert (step.status, step.title, step.attempts, step.outcome) == ("done", TITLE, 0, "completed")
    last = RunEvent.objects.filter(kind="judge", run_id=run.pk).order_by("id").last()
    assert (last.code, last.message) == ("completed", f"every task is done; then {TITLE}: done")
    # Finishing again (a second driver, the watchdog) does nothing twice.
    assert judge_run_finish(run.pk) == "completed"
    assert runs_watchdog() == []
    assert ToyTally.objects.filter(run=run).count() == 1


def test_a_step_that_did_not_finish_keeps_the_run_running_says_so_and_the_watchdog_carries_it_out(
    tmp_path: Path,
    fake_llm: Any,  # noqa: ANN401
) -> None:
    judging.STEP_FAULTS.append(RuntimeError("the tally table is being rebuilt"))
    run = launch(tmp_path, fake_llm)

    run.refresh_from_db()
    assert run.status == "running" and run.finished_at is None  # every task is done, but the step is not
    assert not ToyTally.objects.filter(run=run).exists()
    step = RunStep.objects.get(kind="judge", run_id=run.pk)
    assert (step.status, step.attempts) == ("pending", 1)
    assert step.last_error == "RuntimeError: the tally table is being rebuilt"
    assert codes(run)[-1] == "step_retry"
    progress = run_progress(run=run)
    assert (progress.done, progress.remaining) == (12, 0)
    assert TITLE in progress.step and "under way" in progress.step
    assert "the tally table is being rebuilt" in progress.status_reason and "watchdog" in progress.status_reason
    client = client_for_researcher()
    page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert 'id="run-step"' in page and SHOWN in page and "the tally table is being rebuilt" in page
    listed = client.get(reverse("jobs:runs")).content.decode()
    row = listed[listed.index(f'data-run="{run.pk}"') :].split("</tr>")[0]
    assert SHOWN in row

    did = runs_watchdog()  # what every worker's watchdog does every 15 s

    assert did == [f"judge run {run.pk}: closed as completed"]
    run.refresh_from_db()
    assert run.status == "completed" and tally(run) == (4, 8, "completed")
    assert RunStep.objects.get(kind="judge", run_id=run.pk).status == "done"
    page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert 'id="run-step"' not in page and 'id="status-reason"' not in page
    assert runs_watchdog() == [] and ToyTally.objects.filter(run=run).count() == 1


def test_a_step_failing_every_try_fails_the_run_with_what_to_do_and_a_resume_carries_it_out(
    tmp_path: Path,
    fake_llm: Any,  # noqa: ANN401
) -> None:
    judging.STEP_FAULTS.extend(RuntimeError(f"broken tally {n}") for n in range(1, STEP_ATTEMPTS + 1))
    run = launch(tmp_path, fake_llm)
    for _ in range(STEP_ATTEMPTS - 2):
        runs_watchdog()
        assert JudgeRun.objects.get(pk=run.pk).status == "running"

    runs_watchdog()  # the last try

    run.refresh_from_db()
    assert run.status == "failed" and not ToyTally.objects.filter(run=run).exists()
    assert codes(run).count("step_retry") == STEP_ATTEMPTS - 1 and codes(run)[-1] == "step_failed"
    reason = run_progress(run=run).status_reason
    assert reason == (
        f"every task is done, but the step that follows ({TITLE}) failed {STEP_ATTEMPTS} times (latest: RuntimeError: "
        f"broken tally {STEP_ATTEMPTS}); fix the cause and resume the run: its answers are kept and the step is tried again"
    )
    assert runs_watchdog() == []  # a failed run is left alone
    asked = len(fake_llm.log())

    judge_run_resume(run=run)  # the cause is fixed (no faults left)

    run.refresh_from_db()
    assert run.status == "completed" and tally(run) == (4, 8, "completed")
    assert len(fake_llm.log()) == asked  # nothing was asked again
    assert RunStep.objects.get(kind="judge", run_id=run.pk).attempts == 0


def test_a_run_paused_before_its_step_carries_it_out_when_resumed(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    judging.STEP_FAULTS.append(RuntimeError("not now"))
    run = launch(tmp_path, fake_llm)
    run_pause(run=run)

    assert runs_watchdog() == []
    run.refresh_from_db()
    assert run.status == "paused" and not ToyTally.objects.filter(run=run).exists()
    assert RunStep.objects.get(kind="judge", run_id=run.pk).status == "pending"

    judge_run_resume(run=run)

    run.refresh_from_db()
    assert run.status == "completed" and tally(run) == (4, 8, "completed")
