"""Intrinsic-report "All models" rows: each criterion's figures pooled across models, as the logit-energy paper's
headline rows and per-discipline figures are.

Split from :mod:`arena.stats.intrinsic_document`, which draws and lays out these rows beside the per-scorer ones.

A *group* is every scorer of one (kind, criterion, aggregate), e.g. every model read by NLL; and, when the scoring
scorers of one aggregate use more than one criterion, every scoring scorer of it ("every intrinsic criterion": the
paper's pooled intrinsic figure beside the pooled listwise one). A group is reported whatever its number of models (with
one model its row repeats that model's). Its metric in a scope is pooled over (model, paper) pairs: the sum of every
member's per-paper values over the scope's papers it ranked, divided by the number of (model, paper) pairs ranked, so
each ranked pair weighs 1 (with no exclusion this is the mean of the members' figures). Its metrics are those every
member has (a listwise group: Hit@k for k up to the narrowest list, and beats).

Intervals are the paper bootstrap of the per-scorer figures, on the same draws: a drawn paper brings every member's
values, so the models' correlation through shared papers is kept (resampling (model, paper) pairs independently would
understate the interval). The group's columns are the sums of its members' columns, so a replicate's figure is one more
ratio of drawn totals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .intrinsic_ranks import DEFAULT_AGGREGATE, METRICS, rank_distribution
from .intrinsic_scorers import _Scorer

#: Label of the group of every scoring scorer of an aggregate (across criteria).
EVERY_CRITERION = "every intrinsic criterion"


@dataclass(frozen=True)
class _Group:
    """Every scorer of one (kind, criterion, aggregate), or (criterion None) every scoring scorer of one aggregate."""

    kind: str
    criterion: str | None
    aggregate: str | None
    members: list[_Scorer]

    @property
    def metrics(self) -> list[str]:
        """The metrics every member has, in :data:`METRICS` order."""
        return [m for m in METRICS if all(m in s.values for s in self.members)]

    @property
    def label(self) -> str:
        """``All models, nll`` or ``All models, every intrinsic criterion`` (the aggregate added when not the mean)."""
        what = EVERY_CRITERION if self.criterion is None else self.criterion
        extra = f" ({self.aggregate})" if self.aggregate not in (None, DEFAULT_AGGREGATE) else ""
        return f"All models, {what}{extra}"


def model_groups(built: list[_Scorer]) -> list[_Group]:
    """The groups of a report: per (kind, criterion, aggregate) in the scorers' order, the every-criterion group of each
    aggregate whose scoring scorers use two criteria or more after its criteria, listwise groups last."""
    by_key: dict[tuple[str, str, str | None], list[_Scorer]] = {}
    for s in built:
        by_key.setdefault((s.kind, s.criterion, s.aggregate), []).append(s)
    groups = [_Group(kind, crit, agg, members) for (kind, crit, agg), members in by_key.items()]
    scoring: dict[str | None, list[_Scorer]] = {}
    for s in built:
        if s.kind == "scoring":
            scoring.setdefault(s.aggregate, []).append(s)
    for agg, members in scoring.items():
        if len({s.criterion for s in members}) >= 2:
            groups.append(_Group("scoring", None, agg, members))
    return sorted(groups, key=lambda g: (g.kind == "listwise", g.criterion is None))


def group_columns(group: _Group) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per paper: how many members ranked it, and per metric the sum of the members' values (each scaled as the
    members' are: they share the papers, so their divisors agree)."""
    ranked = np.sum([s.ranks.ranked for s in group.members], axis=0, dtype=np.float64)
    return ranked, {m: np.sum([s.values[m] for s in group.members], axis=0) for m in group.metrics}


def group_row(group: _Group, scope: str, rows: np.ndarray, n_ranked: int, metrics: dict[str, Any]) -> dict[str, Any]:
    """One ``all_models`` row: a group's pooled metrics in a scope (``metrics``: its intervals by metric)."""
    not_reported = {}
    for m in METRICS:
        if m not in metrics:
            metrics[m] = None
            lacking = next(s for s in group.members if m not in s.values)
            not_reported[m] = f"{lacking.name}: {_why_missing(lacking, m)}"
    counts = np.sum([rank_distribution(s.ranks, rows) for s in group.members], axis=0)
    return {
        "discipline": scope,
        "label": group.label,
        "kind": group.kind,
        "criterion": group.criterion,
        "aggregate": group.aggregate,
        "models": [s.model for s in group.members],
        "scorers": [s.name for s in group.members],
        "n_papers": len(rows),
        "n_ranked": n_ranked,
        "n_excluded": len(rows) * len(group.members) - n_ranked,
        "metrics": {m: metrics[m] for m in METRICS},
        "not_reported": not_reported,
        "rank_distribution": [int(c) for c in counts],
    }


def _why_missing(s: _Scorer, metric: str) -> str:
    """Why a listwise member lacks a metric (the only kind that lacks any)."""
    if metric == "mrr":
        return "MRR is not reported for a listwise scorer (every unlisted candidate shares the terminal rank)"
    return (
        f"the listwise judge returns only its top {s.ranks.listwise_width}: Hit@{metric.removeprefix('hit_at_')} is not defined"
    )
