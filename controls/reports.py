"""The controls report of a judge run: its control verdicts and scores read into the frames of
``arena.stats.controls``, and the document the command, the API and the page all show.

A run's verdicts are the verdicts of a *controls* run (``JudgeRun.subjects == "controls"``). The 0-4 scores
and the structured overall verdicts come from ``structured_run`` (a structured controls run on the same
variants) or, when the run itself is structured and no other is named, from the run. ``target_drop`` and
``nontarget_drift`` are null without scores, and the dimension audit's agreement needs a holistic run and a
structured one.

Cases. The statistics resample *cases* (``control_case_key``: a source proposal and its target, or its kind), and a
case holds at most one variant of each kind. A benchmark may hold two variants of one kind for the same source and
target (a template rendering and a model-written one, or an imported set beside a generated one): the second and
later ones, in control-id order, become cases of their own (``<key>#2``, ...), and the n-th subtle variant of a
source and target shares its case with the n-th sham. The rank is taken over the variants of both runs read, so a
holistic and a structured run name a variant's case alike.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from arena.errors import AppError
from arena.models import Benchmark, JudgeRun
from arena.schemas import JUDGE_DIMENSIONS as DIMENSIONS

from .models import CONTROLS, ControlJudgment, ControlVariant
from .selectors import control_case_key

if TYPE_CHECKING:
    import pandas as pd


VERDICT_COLUMNS = ["case", "kind", "target", "order", "winner"]
SCORE_COLUMNS = ["case", "kind", "target", "order", "dimension", "clean", "variant"]


#: Case-bootstrap replicates of a report when none are asked for (the command's, the API's and the page's default).
DEFAULT_REPLICATES = 2000


class ControlReportError(AppError, ValueError):
    """The runs asked for cannot make a controls report; the message says why and what to pass instead."""


def controls_runs(*, benchmark: Benchmark) -> list[JudgeRun]:
    """The benchmark's controls runs, newest first."""
    return list(benchmark.runs.filter(subjects=CONTROLS).order_by("-created_at", "-id"))


def controls_run_default(*, benchmark: Benchmark, run_type: str = "holistic") -> JudgeRun | None:
    """The run a report reads when none is named: the benchmark's newest *completed* controls run of ``run_type``
    (a running one may still change, a failed one may be partial), or None."""
    found = benchmark.runs.filter(subjects=CONTROLS, run_type=run_type, status=JudgeRun.Status.COMPLETED)
    return found.order_by("-created_at", "-id").first()


def controls_run_missing(benchmark: Benchmark) -> str:
    """Why there is no default controls run, and what to do about it."""
    runs = controls_runs(benchmark=benchmark)
    if not runs:
        return (
            f"{benchmark} has no diagnostic controls run; launch one with run_judge {benchmark.name} --model M --base-url URL "
            "--pairs controls"
        )
    listed = ", ".join(f"{r.pk} ({r.run_type}, {r.status})" for r in runs[:10])
    return f"{benchmark} has no completed holistic controls run; name one of its controls runs ({listed}) with --run / ?run="


def _check_run(benchmark: Benchmark, run: JudgeRun, what: str) -> None:
    if run.benchmark_id != benchmark.pk:
        raise ControlReportError(f"{what} {run.pk} is not a run of {benchmark}")
    if run.subjects != CONTROLS:
        raise ControlReportError(
            f"{what} {run.pk} judged the leaderboard's pairs, not diagnostic controls; launch one with run_judge {benchmark.name} "
            "--pairs controls, or pick one of the benchmark's controls runs"
        )


def _judgments(run: JudgeRun) -> list[ControlJudgment]:
    return list(
        ControlJudgment.objects.filter(run=run, status="accepted").select_related("variant").order_by("variant_id", "order")
    )


def case_keys(variants: Iterable[ControlVariant]) -> dict[int, str]:
    """Each variant's case (by variant id): ``control_case_key``, ranked within its kind (see the module docstring)."""
    groups: dict[tuple[str, str], dict[int, ControlVariant]] = defaultdict(dict)
    for variant in variants:
        groups[(control_case_key(variant), variant.kind)][variant.pk] = variant
    keys = {}
    for (base, _), members in groups.items():
        for rank, variant in enumerate(sorted(members.values(), key=lambda v: (v.control_id, v.pk)), start=1):
            keys[variant.pk] = base if rank == 1 else f"{base}#{rank}"
    return keys


def _keys_of(judgments: list[ControlJudgment], keys: dict[int, str] | None) -> dict[int, str]:
    return keys if keys is not None else case_keys(j.variant for j in judgments)


def verdicts_frame(judgments: list[ControlJudgment], keys: dict[int, str] | None = None) -> pd.DataFrame:
    """One row per accepted ordered judgment, in ``arena.stats.controls``' verdict shape; ``keys`` (``case_keys``) name
    the cases (default: the keys of these judgments' variants)."""
    import pandas as pd

    keys = _keys_of(judgments, keys)
    rows = [(keys[j.variant_id], j.variant.kind, j.variant.target, j.order, j.winner) for j in judgments]
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def scores_frame(judgments: list[ControlJudgment], keys: dict[int, str] | None = None) -> pd.DataFrame:
    """One row per (ordered judgment, dimension): the clean side's and the variant's 0-4 scores in that judgment.
    A judgment without both sides' scores (a holistic one, or a replayed verdict without them) gives no row."""
    import pandas as pd

    keys = _keys_of(judgments, keys)
    rows = []
    for j in judgments:
        scores = (j.metadata or {}).get("scores") or {}
        clean_label = j.clean_shown
        variant_label = "B" if clean_label == "A" else "A"
        if not all(
            isinstance(scores.get(label), dict) and set(DIMENSIONS) <= set(scores[label])
            for label in (clean_label, variant_label)
        ):
            continue
        for dimension in DIMENSIONS:
            rows.append(
                (
                    keys[j.variant_id],
                    j.variant.kind,
                    j.variant.target,
                    j.order,
                    dimension,
                    scores[clean_label][dimension],
                    scores[variant_label][dimension],
                )
            )
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
    """The controls document (``arena.stats.controls.controls_document``) of ``run``, with the runs it read.

    ``run`` and ``structured_run`` must be controls runs of ``benchmark``, the latter structured; ``replicates`` at
    least 1; ``sham_tolerance`` a share in [0, 1]. Raises :class:`ControlReportError` saying which is wrong, or that
    ``run`` has no accepted verdict yet.
    """
    from arena.stats.controls import controls_document

    _check_run(benchmark, run, "run")
    if structured_run is not None:
        _check_run(benchmark, structured_run, "structured run")
        if structured_run.run_type != "structured":
            raise ControlReportError(
                f"run {structured_run.pk} is a {structured_run.run_type} run; --structured-run needs a structured one "
                f"(launch one with run_judge {benchmark.name} --pairs controls --run-type structured)"
            )
    if replicates < 1:
        raise ControlReportError("replicates must be at least 1")
    if not (math.isfinite(sham_tolerance) and 0.0 <= sham_tolerance <= 1.0):
        raise ControlReportError(f"sham tolerance {sham_tolerance} is not a share from 0 to 1 (of the clean-vs-sham judgments)")
    judgments = _judgments(run)
    if not judgments:
        raise ControlReportError(f"run {run.pk} has no accepted control verdicts yet ({run.status}); wait for it or resume it")
    scored_run = structured_run if structured_run is not None else (run if run.run_type == "structured" else None)
    scored = [] if scored_run is None else judgments if scored_run.pk == run.pk else _judgments(scored_run)
    keys = case_keys(j.variant for j in [*judgments, *scored])
    verdicts = verdicts_frame(judgments, keys)
    scores = structured = None
    if scored_run is not None:
        scores = scores_frame(scored, keys)
        # The audit compares a holistic run with a structured one: with only one run there is nothing to compare.
        structured = verdicts_frame(scored, keys) if scored_run.pk != run.pk and scored else None
    document = controls_document(
        verdicts,
        scores=scores if scores is not None and len(scores) else None,
        structured_verdicts=structured,
        replicates=replicates,
        seed=seed,
        sham_tolerance=sham_tolerance,
    )
    document["runs"] = {
        "run": _run_summary(run),
        "structured_run": _run_summary(scored_run) if scored_run is not None else None,
    }
    document["benchmark"] = {"id": benchmark.pk, "name": benchmark.name, "version": benchmark.version}
    return document


def _run_summary(run: JudgeRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "label": run.label,
        "judge_model": run.judge_model,
        "run_type": run.run_type,
        "status": run.status,
        "replay": run.is_replay,
    }


__all__ = [
    "DEFAULT_REPLICATES",
    "ControlReportError",
    "case_keys",
    "controls_report",
    "controls_run_default",
    "controls_run_missing",
    "controls_runs",
    "scores_frame",
    "verdicts_frame",
]
