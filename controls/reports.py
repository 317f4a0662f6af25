"""The controls report of a judge run: its control verdicts and scores read into the frames of
``arena.stats.controls``, and the document the command, the API and the page all show.

A run's verdicts are the verdicts of a *controls* run (``JudgeRun.subjects == "controls"``). The 0-4 scores
and the structured overall verdicts come from ``structured_run`` (a structured controls run on the same
variants) or, when the run itself is structured and no other is named, from the run. ``target_drop`` and
``nontarget_drift`` are null without scores, and the dimension audit's agreement needs a holistic run and a
structured one.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from arena.models import Benchmark, JudgeRun
from arena.stats.controls import DEFAULT_REPLICATES, controls_document
from jobs.prompts import DIMENSIONS

from .models import ControlJudgment
from .selectors import control_case_key

VERDICT_COLUMNS = ["case", "kind", "target", "order", "winner"]
SCORE_COLUMNS = ["case", "kind", "target", "order", "dimension", "clean", "variant"]


class ControlReportError(ValueError):
    """The runs asked for cannot make a controls report; the message says why and what to pass instead."""


def controls_runs(*, benchmark: Benchmark) -> list[JudgeRun]:
    """The benchmark's controls runs, newest first."""
    return list(benchmark.runs.filter(subjects=JudgeRun.Subjects.CONTROLS).order_by("-created_at", "-id"))


def _check_run(benchmark: Benchmark, run: JudgeRun, what: str) -> None:
    if run.benchmark_id != benchmark.pk:
        raise ControlReportError(f"{what} {run.pk} is not a run of {benchmark}")
    if run.subjects != JudgeRun.Subjects.CONTROLS:
        raise ControlReportError(
            f"{what} {run.pk} judged the leaderboard's pairs, not diagnostic controls; launch one with run_judge {benchmark.name} "
            "--pairs controls, or pick one of the benchmark's controls runs"
        )


def _judgments(run: JudgeRun) -> list[ControlJudgment]:
    return list(
        ControlJudgment.objects.filter(run=run, status="accepted").select_related("variant").order_by("variant_id", "order")
    )


def verdicts_frame(judgments: list[ControlJudgment]) -> pd.DataFrame:
    rows = [(control_case_key(j.variant), j.variant.kind, j.variant.target, j.order, j.winner) for j in judgments]
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def scores_frame(judgments: list[ControlJudgment]) -> pd.DataFrame:
    """One row per (ordered judgment, dimension): the clean side's and the variant's 0-4 scores in that judgment."""
    rows = []
    for j in judgments:
        scores = (j.metadata or {}).get("scores") or {}
        clean_label = j.clean_shown
        variant_label = "B" if clean_label == "A" else "A"
        if clean_label not in scores or variant_label not in scores:
            continue
        for dimension in DIMENSIONS:
            rows.append((
                control_case_key(j.variant), j.variant.kind, j.variant.target, j.order, dimension,
                scores[clean_label][dimension], scores[variant_label][dimension],
            ))
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def controls_report(
    *,
    benchmark: Benchmark,
    run: JudgeRun,
    structured_run: JudgeRun | None = None,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    sham_tolerance: float = 0.0,
) -> dict[str, Any]:
    """The controls document (``arena.stats.controls.controls_document``) of ``run``, with the runs it read."""
    _check_run(benchmark, run, "run")
    if structured_run is not None:
        _check_run(benchmark, structured_run, "structured run")
        if structured_run.run_type != "structured":
            raise ControlReportError(f"run {structured_run.pk} is a {structured_run.run_type} run; --structured-run needs a structured one")
    if replicates < 1:
        raise ControlReportError("replicates must be at least 1")
    judgments = _judgments(run)
    if not judgments:
        raise ControlReportError(f"run {run.pk} has no accepted control verdicts yet ({run.status}); wait for it or resume it")
    verdicts = verdicts_frame(judgments)
    scored_run = structured_run if structured_run is not None else (run if run.run_type == "structured" else None)
    scores = structured = None
    if scored_run is not None:
        scored = judgments if scored_run.pk == run.pk else _judgments(scored_run)
        scores = scores_frame(scored)
        # The audit compares a holistic run with a structured one: with only one run there is nothing to compare.
        structured = verdicts_frame(scored) if scored_run.pk != run.pk else None
    document = controls_document(
        verdicts, scores=scores if scores is not None and len(scores) else None, structured_verdicts=structured,
        replicates=replicates, seed=seed, sham_tolerance=sham_tolerance,
    )
    document["runs"] = {
        "run": _run_summary(run),
        "structured_run": _run_summary(scored_run) if scored_run is not None else None,
    }
    document["benchmark"] = {"id": benchmark.pk, "name": benchmark.name, "version": benchmark.version}
    return document


def _run_summary(run: JudgeRun) -> dict[str, Any]:
    return {"id": run.pk, "label": run.label, "judge_model": run.judge_model, "run_type": run.run_type, "status": run.status}


__all__ = ["DEFAULT_REPLICATES", "ControlReportError", "controls_report", "controls_runs", "scores_frame", "verdicts_frame"]
