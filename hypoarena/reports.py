"""The HypoArena leaderboard document: what ``manage.py hypoarena_leaderboard --json`` prints and
``/api/benchmarks/<id>/hypoarena/`` returns. The figures come from the pure statistics (``arena.stats.hypoarena``);
this module only reads the runs' rows (``selectors``) and passes them in."""

from __future__ import annotations

from typing import Any

import pandas as pd

from arena.models import Benchmark, JudgeRun
from arena.stats.hypoarena import hypoarena_leaderboard, rubric_scores, rubric_table

from .selectors import rubric_rows, singleton_domains, verdict_frame
from .services import ARENA_RUN, RUBRIC_RUN


class ReportError(Exception):
    """No leaderboard can be made as asked (no run, no verdicts); the message says what to do."""


def arena_runs(*, benchmark: Benchmark) -> list[JudgeRun]:
    return list(benchmark.runs.filter(subjects=JudgeRun.Subjects.HYPOARENA, run_type=ARENA_RUN).order_by("created_at", "id"))


def arena_run_pick(*, benchmark: Benchmark, run_id: int | None) -> JudgeRun:
    """The arena run asked for, else the benchmark's first arena run. Raises :class:`ReportError` naming the runs."""
    runs = arena_runs(benchmark=benchmark)
    if run_id is None:
        if not runs:
            raise ReportError(f"{benchmark} has no arena run yet; import verdicts with import_hypoarena")
        return runs[0]
    for run in runs:
        if run.pk == run_id:
            return run
    listed = ", ".join(f"{r.pk} ({r.judge_model}, {r.label})" for r in runs) or "none"
    raise ReportError(f"run {run_id} is not an arena run of {benchmark}; its arena runs are: {listed}")


def hypoarena_report(*, benchmark: Benchmark, run: JudgeRun, replicates: int, seed: int, level: float = 0.95) -> dict[str, Any]:
    """Per-domain and pooled BTD ratings with case-bootstrap intervals, WR, consistency and ν of one arena run, with
    the rubric scores and ranks of the benchmark's first rubric run beside them (Δ = rubric rank − arena rank).

    The Reference is named in ``reference_models``: this document is for researchers (the API is researcher-only)."""
    verdicts = verdict_frame(run=run)
    if verdicts.empty:
        raise ReportError(f"run {run.pk} ({run.judge_model}, {run.label}) has no accepted verdict yet")
    singles = singleton_domains(benchmark=benchmark)
    board = hypoarena_leaderboard(verdicts, replicates=replicates, seed=seed, level=level, singleton_domains=singles)
    rubric: dict[str, Any] | None = None
    rubric_run = benchmark.runs.filter(subjects=JudgeRun.Subjects.HYPOARENA, run_type=RUBRIC_RUN).order_by("created_at", "id").first()
    rows = rubric_rows(run=rubric_run) if rubric_run is not None else []
    if rows:
        scores = rubric_scores(pd.DataFrame(rows), singleton_domains=singles)
        ranks = {d: {m: e["rank"] for m, e in block["models"].items()} for d, block in board["domains"].items()}
        pooled = {m: e["rank"] for m, e in board["pooled"]["models"].items()}
        rubric = {"run": _run(rubric_run)} | rubric_table(scores, ranks, pooled_arena_ranks=pooled)
    references = sorted(
        set(benchmark.participants.filter(hypoarena_submissions__is_reference=True).values_list("name", flat=True))
    )
    return {
        "benchmark": {"id": benchmark.pk, "name": benchmark.name, "version": benchmark.version, "protocol": benchmark.protocol},
        "run": _run(run),
        "reference_models": references,
        "singleton_domains": list(singles),
        "leaderboard": board,
        "rubric": rubric,
    }


def _run(run: JudgeRun) -> dict[str, Any]:
    return {"id": run.pk, "judge": run.judge_model, "label": run.label, "provider": run.provider, "status": run.status}
