"""An imported rubric run counts what it holds (issue 24, item 4: the runs table showed "Done 0" and an empty bar for
a completed rubric run): the import keeps each score as the run's accepted answer too, as a run judged here does, and
a migration gives the runs imported before that their answers."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from django.apps import apps
from django.urls import reverse

from arena.models import JudgeRun
from hypoarena.importing import hypoarena_import, import_files
from hypoarena.models import RubricJudgment
from jobs.selectors import run_progress
from tests.clients import client_for

from . import helpers as h

pytestmark = pytest.mark.django_db

backfill = importlib.import_module("hypoarena.migrations.0004_imported_rubric_judgments").rubric_judgments_backfill


@pytest.fixture
def rubric_run(tmp_path: Path) -> JudgeRun:
    benchmark = hypoarena_import(name="rubric-progress", files=import_files([h.folder(tmp_path)])).benchmark
    return JudgeRun.objects.get(benchmark=benchmark, run_type="rubric")


def expected_answers() -> dict[tuple[str, str], dict]:
    """The answers of tests/hypoarena/helpers.py's rubric lines, by (case, model), in a judge's answer shape."""
    return {(r["case_id"], r["model"]): {"pairs": r["pairs"], "b": r["b"], "d": r["d"], "u": r["u"]} for r in h.rubric()}


def stored_answers(run: JudgeRun) -> dict[tuple[str, str], dict]:
    rows = RubricJudgment.objects.filter(run=run, status="accepted").select_related("submission__case", "submission__participant")
    return {(j.submission.case.external_id, j.submission.participant.name): j.scores for j in rows}


def test_an_imported_rubric_run_is_done_with_every_score_it_holds(rubric_run: JudgeRun, researcher) -> None:  # noqa: ANN001
    n = len(h.rubric())
    progress = run_progress(run=rubric_run)
    assert (progress.total, progress.done, progress.accepted, progress.remaining) == (n, n, n, 0)
    assert stored_answers(rubric_run) == expected_answers()
    runs = client_for(researcher).get(reverse("jobs:runs")).content.decode()
    row = runs[runs.index(f'data-run="{rubric_run.pk}"') :].split("</tr>")[0]
    assert f'class="num done">{n}<' in row


def test_the_migration_gives_runs_imported_before_it_their_answers_once(rubric_run: JudgeRun) -> None:
    RubricJudgment.objects.filter(run=rubric_run).delete()  # as the import left them before
    assert run_progress(run=rubric_run).done == 0
    backfill(apps, None)
    backfill(apps, None)  # a second pass adds nothing
    assert stored_answers(rubric_run) == expected_answers()
    assert RubricJudgment.objects.filter(run=rubric_run).count() == len(h.rubric())
    assert run_progress(run=rubric_run).done == len(h.rubric())
