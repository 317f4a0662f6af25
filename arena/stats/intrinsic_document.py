"""The intrinsic-scoring report: every metric of a benchmark with paper-bootstrap CIs, as one JSON-ready dict.

Split from :mod:`arena.stats.intrinsic` (which re-exports :func:`intrinsic_report`; its docstring states the
rules). The report is built in steps: validate the inputs, build the scorers, plan the per-paper columns every
replicate multiplies (:class:`_ColumnPlan`), then per scope draw the totals, take the intervals and lay out the
rows of results, agreement and pairs in that order. The arithmetic and its order are those of the single
function this replaced, so every value is unchanged bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from .bt import blas_single_threaded_call
from .intrinsic_bootstrap import (
    _BLOCK_ROWS,
    _block_intervals,
    _check_bootstrap_args,
    _draw_totals,
    _exact_parts,
    _interval,
    _num,
)
from .intrinsic_pooled import EVERY_CRITERION, _Group, group_columns, group_row, model_groups
from .intrinsic_ranks import HIT_KS, METRICS, POOLED, _as_gold, candidate_counts, rank_distribution
from .intrinsic_scorers import _build_scorer, _Scorer

_WHERE = "intrinsic_report"
_LISTWISE_ONLY_HITS = "the listwise judge returns only its top {w}: Hit@{k} is not defined"
_NOT_FOR_LISTWISE = {
    "mrr": "not reported for a listwise scorer: every unlisted candidate shares the terminal rank, so MRR would "
    "conflate 'just outside the list' with 'last'",
}


# ---------------------------------------------------------------- inputs


def _report_inputs(
    scorers: Any, gold: Any, disciplines: Sequence[Any], n_candidates: Any, papers: Sequence[Any] | None
) -> tuple[int, np.ndarray | None, np.ndarray, list[str], list[str] | None]:
    """Validated (n, sizes or None, gold, disciplines as str, paper ids or None), failing in the order the arguments
    are documented (``sizes``: each paper's candidate count when they are mixed; n is then the largest)."""
    n, sizes = candidate_counts(n_candidates, np.shape(gold)[0] if np.ndim(gold) else 0, _WHERE)
    if not isinstance(scorers, Mapping) or not scorers:
        raise ValueError(f"{_WHERE}: scorers must be a non-empty {{name: spec}} dict.")
    g = _as_gold(gold, None if sizes is None else len(sizes), n, _WHERE, sizes)
    n_papers = len(g)
    if n_papers == 0:
        raise ValueError(f"{_WHERE}: no papers (gold is empty).")
    disc = [str(d) for d in disciplines]
    if len(disc) != n_papers:
        raise ValueError(f"{_WHERE}: disciplines has {len(disc)} entries but gold has {n_papers}; one per paper.")
    if POOLED in disc:
        raise ValueError(f"{_WHERE}: discipline name {POOLED!r} is reserved for the pooled scope; rename it.")
    paper_ids = None
    if papers is not None:
        paper_ids = [str(p) for p in papers]
        if len(paper_ids) != n_papers or len(set(paper_ids)) != n_papers:
            raise ValueError(f"{_WHERE}: papers must list {n_papers} distinct ids (one per gold entry), got {len(paper_ids)}.")
    return n, sizes, g, disc, paper_ids


def _check_distinct_scorers(built: list[_Scorer]) -> None:
    """Two scorers with the same (model, criterion, aggregate) would be counted twice in agreement and pairs."""
    seen: dict[tuple[str, str, str | None], str] = {}
    for s in built:
        key = (s.model, s.criterion, s.aggregate)
        if key in seen:
            raise ValueError(
                f"{_WHERE}: scorers {seen[key]!r} and {s.name!r} are both (model, criterion, aggregate) = {key}; keep one."
            )
        seen[key] = s.name


def _pair_list(
    pairs: Sequence[tuple[str, str]] | None, built: list[_Scorer], by_name: Mapping[str, _Scorer]
) -> list[tuple[str, str]]:
    """The (a, b) pairs to difference: the given ones (names checked) or every unordered pair in display order."""
    if pairs is None:
        return list(combinations([s.name for s in built], 2))
    pair_list = [(str(a), str(b)) for a, b in pairs]
    unknown = sorted({x for p in pair_list for x in p} - set(by_name))
    if unknown:
        raise ValueError(f"{_WHERE}: pairs name unknown scorer(s) {unknown}; known: {list(by_name)}.")
    return pair_list


# ---------------------------------------------------------------- per-paper columns


class _Columns:
    """Registry of per-paper value columns (the matrix every replicate multiplies), deduplicated by key."""

    def __init__(self) -> None:
        self.keys: dict[Any, int] = {}
        self.columns: list[np.ndarray] = []

    def add(self, key: Any, column: np.ndarray) -> int:
        """Index of the column under ``key``, adding it (as float64) the first time: shared totals are drawn once."""
        if key not in self.keys:
            self.keys[key] = len(self.columns)
            self.columns.append(column.astype(np.float64))
        return self.keys[key]

    def matrix(self, n_papers: int) -> tuple[np.ndarray, np.ndarray]:
        """The (P, C) float64 matrix and, per column, whether every value is an integer."""
        if not self.columns:
            return np.zeros((n_papers, 0)), np.zeros(0, dtype=bool)
        m = np.column_stack(self.columns)
        return m, (m == np.rint(m)).all(axis=0)


#: A pair's difference spec: (a, b, den, {metric: (a's numerator, b's numerator)}), as indices of adjusted totals.
_PairSpec = tuple[str, str, int, dict[str, tuple[int, int]]]


class _ColumnPlan:
    """Every per-paper column of a report and which totals each interval divides.

    "base": each scorer's ranked mask and metric values, then the agreement columns; every replicate multiplies
    all of them by the draw counts. "corr": for a pair whose scorers ranked different papers, a total over the
    papers both ranked = the scorer's own total − its values on the papers only it ranked; those are nonzero on
    few papers (``support``), so their products use only those papers' counts.
    """

    def __init__(
        self, built: list[_Scorer], by_name: Mapping[str, _Scorer], pair_list: list[tuple[str, str]], n_papers: int
    ) -> None:
        self.base = _Columns()
        for s in built:
            self.base.add(("ranked", s.name), s.ranks.ranked)
            for m, v in s.values.items():
                self.base.add((m, s.name), v)
        self.agreement_groups, self.agree_cols = self._agreement_columns(built)
        self.groups = model_groups(built)
        self.group_cols = [self._group_columns(g) for g in self.groups]
        self.n_base = len(self.base.columns)
        self.corr = _Columns()
        self.corr_base: list[int] = []  # the base column each correction is subtracted from
        self.support = np.zeros(n_papers, dtype=bool)
        self.pair_specs: list[_PairSpec] = [self._pair_spec(a, b, by_name[a], by_name[b]) for a, b in pair_list]
        self.divisors = {s.name: s.divisors for s in built}
        self.base_matrix, self.base_int = self.base.matrix(n_papers)
        self.corr_matrix, self.corr_int = self.corr.matrix(n_papers)

    def _agreement_columns(
        self, built: list[_Scorer]
    ) -> tuple[list[tuple[tuple[str, str | None], list[_Scorer]]], list[tuple[int, int]]]:
        """Per (criterion, aggregate) with at least two models: the all-first and all-ranked columns."""
        groups: dict[tuple[str, str | None], list[_Scorer]] = {}
        for s in built:
            groups.setdefault((s.criterion, s.aggregate), []).append(s)
        agreement_groups = [(k, v) for k, v in groups.items() if len(v) >= 2]
        agree_cols = []
        for (crit, agg), members in agreement_groups:
            all_ranked = np.logical_and.reduce([m.ranks.ranked for m in members])
            all_first = all_ranked & np.logical_and.reduce([m.ranks.rank == 1 for m in members])
            agree_cols.append(
                (self.base.add(("agree_first", crit, agg), all_first), self.base.add(("agree_ranked", crit, agg), all_ranked))
            )
        return agreement_groups, agree_cols

    def _group_columns(self, group: _Group) -> tuple[int, dict[str, int]]:
        """A group's ranked-pairs column and its per-metric sum columns (indices into the base columns)."""
        key = (group.kind, group.criterion, group.aggregate)
        ranked, sums = group_columns(group)
        return self.base.add(("group_ranked", key), ranked), {m: self.base.add(("group", m, key), v) for m, v in sums.items()}

    def _adjusted(self, key: Any, base_key: Any, only: np.ndarray, column: np.ndarray) -> int:
        """Index of a total over the papers both ranked: a base column (< n_base) or a corrected one (>= n_base)."""
        if not only.any():
            return self.base.keys[base_key]
        known = len(self.corr.columns)
        j = self.corr.add(key, column)
        if j == known:
            self.corr_base.append(self.base.keys[base_key])
        return self.n_base + j

    def _pair_spec(self, a: str, b: str, sa: _Scorer, sb: _Scorer) -> _PairSpec:
        """The totals of a − b over the papers both ranked, adding correction columns where they differ."""
        only_a = sa.ranks.ranked & ~sb.ranks.ranked
        only_b = sb.ranks.ranked & ~sa.ranks.ranked
        self.support |= only_a | only_b
        den = self._adjusted(("only", a, b), ("ranked", a), only_a, only_a)
        nums = {
            m: (
                self._adjusted((m, a, b), (m, a), only_a, np.where(only_a, sa.values[m], 0.0)),
                self._adjusted((m, b, a), (m, b), only_b, np.where(only_b, sb.values[m], 0.0)),
            )
            for m in METRICS
            if m in sa.values and m in sb.values
        }
        return (a, b, den, nums)


# ---------------------------------------------------------------- one scope


@dataclass(frozen=True)
class _Indices:
    """The totals each interval of a scope divides: ratios num/den, then pair differences (num_a − num_b)/den."""

    ratio_num: list[int]
    ratio_den: list[int]
    ia: list[int]
    ib: list[int]
    idn: list[int]
    divisor: list[int]


@dataclass(frozen=True)
class _Estimates:
    """Point values and interval bounds of every quantity of a scope, in :class:`_Indices` order."""

    points: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    und: np.ndarray

    def interval(self, q: int) -> dict[str, Any]:
        """The JSON block of quantity ``q``."""
        return _interval(self.points[q], self.lo[q], self.hi[q], self.und[q])


def _scope_totals(
    plan: _ColumnPlan, rows: np.ndarray, with_pairs: bool, rng: np.random.Generator, totals_buffer: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replicate totals (C, R), point totals (C,) and integer flags (C,) of a scope's papers ``rows``.

    With pairs, the correction columns are drawn too and turned into adjusted totals: base rows, then base −
    correction rows.
    """
    values = plan.base_matrix[rows]
    local = np.flatnonzero(plan.support[rows])
    parts = _exact_parts(None, values, plan.base_int, len(rows))
    n_corr = 0
    if with_pairs and plan.corr.columns:
        parts += _exact_parts(local, plan.corr_matrix[rows[local]], plan.corr_int, len(rows), offset=plan.n_base)
        n_corr = len(plan.corr.columns)
    totals = _draw_totals(len(rows), parts, totals_buffer[: plan.n_base + n_corr], rng)
    point = values.sum(axis=0)
    integer = plan.base_int if not n_corr else np.concatenate([plan.base_int, plan.base_int[plan.corr_base] & plan.corr_int])
    if n_corr:  # adjusted totals: base rows, then base − correction rows
        totals[plan.n_base :] = totals[plan.corr_base] - totals[plan.n_base :]
        point = np.concatenate([point, point[plan.corr_base] - plan.corr_matrix[rows[local]].sum(axis=0)])
    return totals, point, integer


def _interval_indices(plan: _ColumnPlan, built: list[_Scorer], with_pairs: bool) -> _Indices:
    """Every interval of a scope: each scorer's metrics, the agreement shares, the groups' pooled metrics, then (with
    pairs) the differences."""
    ratio_num: list[int] = []
    ratio_den: list[int] = []
    divisor: list[int] = []
    for s in built:
        den = plan.base.keys[("ranked", s.name)]
        for m in s.values:
            ratio_num.append(plan.base.keys[(m, s.name)])
            ratio_den.append(den)
            divisor.append(s.divisors[m])
    for first, ranked in plan.agree_cols:
        ratio_num.append(first)
        ratio_den.append(ranked)
        divisor.append(1)
    for group, (ranked, sums) in zip(plan.groups, plan.group_cols, strict=True):
        for m, col in sums.items():
            ratio_num.append(col)
            ratio_den.append(ranked)
            divisor.append(group.members[0].divisors[m])
    ia: list[int] = []
    ib: list[int] = []
    idn: list[int] = []
    if with_pairs:
        for a, _b, den, nums in plan.pair_specs:
            for m, (na, nb) in nums.items():
                ia.append(na)
                ib.append(nb)
                idn.append(den)
                divisor.append(plan.divisors[a][m])
    return _Indices(ratio_num, ratio_den, ia, ib, idn, divisor)


def _scope_estimates(
    totals: np.ndarray,
    point: np.ndarray,
    integer: np.ndarray,
    idx: _Indices,
    level: float,
    scratch: tuple[np.ndarray, np.ndarray],
) -> _Estimates:
    """Point values and percentile intervals of every quantity of ``idx``, scaled back by their divisors."""
    with np.errstate(divide="ignore", invalid="ignore"):
        points = np.concatenate([point[idx.ratio_num] / point[idx.ratio_den], (point[idx.ia] - point[idx.ib]) / point[idx.idn]])
    intervals = [_block_intervals(totals, idx.ratio_num, None, idx.ratio_den, integer[idx.ratio_num], level, scratch)]
    if idx.ia:
        intervals.append(_block_intervals(totals, idx.ia, idx.ib, idx.idn, integer[idx.ia] & integer[idx.ib], level, scratch))
    lo, hi, und = (np.concatenate(x) for x in zip(*intervals, strict=True))
    scale = 1.0 / np.array(idx.divisor, dtype=np.float64)
    lo, hi, points = lo * scale, hi * scale, points * scale
    return _Estimates(points, lo, hi, und)


# ---------------------------------------------------------------- rows of a scope


def _not_reported(s: _Scorer, metrics: dict[str, Any]) -> dict[str, str]:
    """Set the metrics a scorer lacks to None in ``metrics`` and say why each is not reported."""
    not_reported = {}
    for m in METRICS:
        if m in metrics:
            continue
        metrics[m] = None
        if m in _NOT_FOR_LISTWISE and s.kind == "listwise":
            not_reported[m] = _NOT_FOR_LISTWISE[m]
        else:
            not_reported[m] = _LISTWISE_ONLY_HITS.format(w=s.ranks.listwise_width, k=m.removeprefix("hit_at_"))
    return not_reported


def _scorer_row(s: _Scorer, scope: str, rows: np.ndarray, metrics: dict[str, Any]) -> dict[str, Any]:
    """One ``results`` row: a scorer's metrics in a scope, with its exclusions and ties."""
    not_reported = _not_reported(s, metrics)
    ranked = s.ranks.ranked[rows]
    scoring = s.kind == "scoring"
    return {
        "discipline": scope,
        "scorer": s.name,
        "kind": s.kind,
        "n_papers": len(rows),
        "n_ranked": int(ranked.sum()),
        "n_excluded": int(len(rows) - ranked.sum()),
        "excluded_reason": "a candidate without a score (NaN)" if scoring else "an invalid or missing top list",
        "papers_with_ties": int((s.ranks.ties[rows] > 0).sum()) if scoring else None,
        "tied_distractors": int(s.ranks.ties[rows].sum()) if scoring else None,
        "metrics": {m: metrics[m] for m in METRICS},
        "not_reported": not_reported,
        "rank_distribution": rank_distribution(s.ranks, rows),
    }


def _scorer_rows(built: list[_Scorer], scope: str, rows: np.ndarray, est: _Estimates, q: int) -> tuple[list[dict[str, Any]], int]:
    """The ``results`` rows of a scope, reading quantities from ``q`` on; returns them and the next ``q``."""
    out = []
    for s in built:
        metrics: dict[str, Any] = {}
        for m in s.values:
            metrics[m] = est.interval(q)
            q += 1
        out.append(_scorer_row(s, scope, rows, metrics))
    return out, q


def _agreement_rows(
    plan: _ColumnPlan, scope: str, rows: np.ndarray, point: np.ndarray, est: _Estimates, q: int
) -> tuple[list[dict[str, Any]], int]:
    """The ``agreement`` rows of a scope, reading quantities from ``q`` on; returns them and the next ``q``."""
    out = []
    for ((crit, agg), members), (first, ranked_col) in zip(plan.agreement_groups, plan.agree_cols, strict=True):
        n_all = int(point[ranked_col])
        out.append(
            {
                "discipline": scope,
                "criterion": crit,
                "aggregate": agg,
                "models": [m.model for m in members],
                "scorers": [m.name for m in members],
                "n_papers": n_all,
                "n_excluded": len(rows) - n_all,
                "n_all_first": int(point[first]),
                "share": _num(est.points[q]),
                "ci": [_num(est.lo[q]), _num(est.hi[q])],
                "n_undefined": int(est.und[q]),
            }
        )
        q += 1
    return out, q


def _group_rows(
    plan: _ColumnPlan, scope: str, rows: np.ndarray, point: np.ndarray, est: _Estimates, q: int
) -> tuple[list[dict[str, Any]], int]:
    """The ``all_models`` rows of a scope, reading quantities from ``q`` on; returns them and the next ``q``."""
    out = []
    for group, (ranked, sums) in zip(plan.groups, plan.group_cols, strict=True):
        metrics: dict[str, Any] = {}
        for m in sums:
            metrics[m] = est.interval(q)
            q += 1
        out.append(group_row(group, scope, rows, int(round(point[ranked])), metrics))
    return out, q


def _pair_rows(plan: _ColumnPlan, scope: str, point: np.ndarray, est: _Estimates, q: int) -> tuple[list[dict[str, Any]], int]:
    """The ``pairs`` rows of a scope, reading quantities from ``q`` on; returns them and the next ``q``."""
    out = []
    for a, b, den, nums in plan.pair_specs:
        diffs: dict[str, Any] = {}
        for m in nums:
            diffs[m] = est.interval(q)
            q += 1
        out.append(
            {
                "discipline": scope,
                "a": a,
                "b": b,
                "n_papers": int(round(point[den])),
                "differences": {m: diffs.get(m) for m in METRICS},
            }
        )
    return out, q


# ---------------------------------------------------------------- the document


def _candidate_counts(n: int, sizes: np.ndarray | None, n_papers: int) -> list[dict[str, int]]:
    """``[{candidates, papers}]``: how many papers have each candidate count, smallest count first."""
    if sizes is None:
        return [{"candidates": n, "papers": n_papers}]
    counts, papers = np.unique(sizes, return_counts=True)
    return [{"candidates": int(c), "papers": int(k)} for c, k in zip(counts, papers, strict=True)]


#: The rules in force, by name (``method.rules``); each is stated in words in the ``method`` block beside it.
RULES = {
    "tie_rule": "pessimistic",
    "beats": "strict",
    "listwise_rank": "terminal",
    "listwise_beats": "placed higher under the terminal rank",
    "paper_weight": "each paper weighs 1",
    "all_models": "pooled over (model, paper) pairs",
    "candidate_counts": "per paper (mixed counts allowed)",
}


def _method(
    replicates: int, seed: int, level: float, pairs_by_discipline: bool, n: int, sizes: np.ndarray | None, n_papers: int
) -> dict[str, Any]:
    """The report's ``method`` block: its parameters and the rules in words."""
    return {
        "replicates": replicates,
        "seed": seed,
        "level": level,
        "rules": dict(RULES),
        "interval": "percentile (numpy linear quantiles), undefined replicates left out and counted",
        "resampling": "papers with replacement: within each discipline; pooled: all papers (not stratified); the "
        "same draw for every scorer, pair, agreement share and all-models row of a scope",
        "pairs_scope": "every discipline and pooled" if pairs_by_discipline else "pooled only",
        "tie_rule": "pessimistic: gold rank = 1 + distractors scoring <= the gold (lower is better); ties counted",
        "listwise_rule": "gold in the top list at position j has rank j; otherwise the terminal rank n (the paper's "
        "candidate count) shared by every unlisted candidate; Hit@k for k <= list width only (every k when the "
        "lists hold every candidate); no MRR",
        "beats": "strict (the paper's 'placed higher'): the share of a paper's distractors placed strictly below the "
        "gold, averaged over papers. Scoring: distractors scoring strictly worse; a tie is not a win (the pessimistic "
        "rank puts a tied distractor above the gold), so beats = (n - rank) / (n - 1). Listwise: the candidates listed "
        "below the gold and, when the gold is listed, every unlisted one; an unlisted gold beats none (the unlisted "
        "share the terminal rank), so beats = (n - rank) / (n - 1) under the terminal rank too",
        "agreement": "per (criterion, aggregate) with at least two models: papers ranked by every model where every "
        "model ranks the gold first",
        "all_models": "per criterion (and across criteria, '" + EVERY_CRITERION + "', when the scoring scorers use "
        "several), every model's (model, paper) pairs pooled: the sum of the members' per-paper values over the pairs "
        "ranked, each ranked pair weighing 1 (the mean of the models' figures when none is excluded); the metrics every "
        "member has; intervals on the same paper draws (a drawn paper brings every model's values)",
        "candidates": "every figure is defined per paper over that paper's own candidates (Hit@k, 1 / rank, beats over "
        "its n - 1 distractors, the listwise terminal rank n and list width min(5, n)) and each paper weighs 1; with "
        "mixed counts a paper of k or fewer candidates always counts at Hit@k, chance levels differ by paper, and a "
        "rank distribution pools ranks of papers of different sizes",
        "metrics": list(METRICS),
        "hit_ks": list(HIT_KS),
        "n_candidates": n if sizes is None else None,
        "candidate_counts": _candidate_counts(n, sizes, n_papers),
    }


def _scorer_entries(built: list[_Scorer]) -> list[dict[str, Any]]:
    """The report's ``scorers`` list, in display order."""
    return [
        {
            "name": s.name,
            "model": s.model,
            "criterion": s.criterion,
            "aggregate": s.aggregate,
            "kind": s.kind,
            "listwise_width": s.ranks.listwise_width,
        }
        for s in built
    ]


@blas_single_threaded_call
def intrinsic_report(
    scorers: Mapping[str, Mapping[str, Any]],
    *,
    gold: Any,
    disciplines: Sequence[Any],
    n_candidates: int | Sequence[int],
    papers: Sequence[Any] | None = None,
    replicates: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    pairs: Sequence[tuple[str, str]] | None = None,
    pairs_by_discipline: bool = False,
) -> dict[str, Any]:
    """Every metric of an intrinsic-scoring benchmark with paper-bootstrap CIs (rules: :mod:`arena.stats.intrinsic`).

    Arguments:
        scorers: ``{name: spec}`` in display order. A spec holds ``model`` (default: the name), ``criterion``
            (required for scoring scorers, e.g. ``"nll"``/``"energy"``; default ``"listwise"`` for listwise ones),
            ``aggregate`` (scoring only; default ``"mean"``), exactly one of ``scores`` ((P, n) floats, lower is
            better, NaN = candidate not scored) or ``top`` ((P, w) ints, -1 = invalid list), and optionally
            ``papers`` (the ids of its rows, realigned to ``papers``; it must cover the same papers). With mixed
            candidate counts, ``scores`` has as many columns as the largest count and NaN past a paper's own count,
            and a paper's list has min(w, n_i) entries then -1 padding.
        gold: (P,) column of each paper's gold candidate. disciplines: (P,) discipline of each paper.
        n_candidates: n, candidates per paper, or (P,) one count per paper (mixed counts: every metric is defined
            per paper; see ``method.candidates``). papers: (P,) paper ids (needed only when specs name theirs).
        replicates, seed, level: the bootstrap (defaults 2,000 replicates, seed 0, 95% percentile intervals).
        pairs: (a, b) scorer pairs for paired differences a − b; default every unordered pair in ``scorers`` order.
        pairs_by_discipline: also bootstrap the pairs per discipline (default pooled only: with 15 scorers the 105
            pairs × 13 scopes are ~8 k intervals, most of them noise).

    Returns a JSON-ready dict:

    * ``method``: replicates, seed, level, ``rules`` (the rules in force by name: :data:`RULES`) and each rule in
      words; ``metrics``, ``hit_ks``, ``n_candidates`` (None when mixed) and ``candidate_counts`` (``[{candidates,
      papers}]``);
    * ``scorers``: ``[{name, model, criterion, aggregate, kind ("scoring"|"listwise"), listwise_width}]``;
    * ``disciplines``: sorted disciplines then ``"all"``; ``n_papers``: ``{scope: papers}``;
    * ``results``: one row per (scope, scorer): ``discipline, scorer, kind, n_papers, n_ranked, n_excluded,
      excluded_reason, papers_with_ties, tied_distractors`` (None for listwise), ``metrics`` = ``{metric: {value,
      ci: [lo, hi], n_undefined} | None}`` for every name in :data:`METRICS`, ``not_reported`` = ``{metric: why}``
      for the None ones, ``rank_distribution`` (counts of ranked papers with gold rank 1..n, n the largest count);
    * ``pairs``: one row per (scope, a, b): ``discipline, a, b, n_papers`` (both ranked), ``differences`` =
      ``{metric: {value, ci, n_undefined} | None}`` (None when either scorer lacks the metric);
    * ``agreement``: one row per (scope, criterion, aggregate) with ≥ 2 models: ``discipline, criterion,
      aggregate, models, scorers, n_papers`` (ranked by all), ``n_excluded, n_all_first, share, ci, n_undefined``;
    * ``all_models``: one row per (scope, group) (:mod:`arena.stats.intrinsic_pooled`: every model of a criterion,
      and every scoring scorer when they use several criteria): ``discipline, label, kind, criterion`` (None for
      every criterion), ``aggregate, models, scorers, n_papers, n_ranked`` and ``n_excluded`` ((model, paper) pairs
      ranked and not), ``metrics``, ``not_reported`` and ``rank_distribution`` (summed over the models) as in
      ``results``.

    Cost: the per-scorer columns are shared by all pairs whose two scorers ranked the same papers; a pair whose
    scorers excluded different papers adds masked columns of its own (correct, but slower when many differ).
    Raises ValueError naming the scorer and what to fix for bad shapes, gold out of range, a listed candidate out of
    range or repeated, differing paper sets, duplicate (model, criterion, aggregate), unknown pair names.
    """
    _check_bootstrap_args(_WHERE, replicates, level)
    replicates = int(replicates)
    n, sizes, g, disc, paper_ids = _report_inputs(scorers, gold, disciplines, n_candidates, papers)
    built = [_build_scorer(str(name), spec, g, n, paper_ids, sizes) for name, spec in scorers.items()]
    by_name = {s.name: s for s in built}
    _check_distinct_scorers(built)
    plan = _ColumnPlan(built, by_name, _pair_list(pairs, built, by_name), len(g))

    disc_arr = np.array(disc, dtype=object)
    domains = sorted(set(disc))
    scopes: list[tuple[str, np.ndarray]] = [(d, np.flatnonzero(disc_arr == d)) for d in domains]
    scopes.append((POOLED, np.arange(len(g))))
    streams = np.random.SeedSequence(seed).spawn(len(scopes))

    # buffers reused by every scope (see _block_intervals)
    totals_buffer = np.empty((plan.n_base + len(plan.corr.columns), replicates))
    scratch = (np.empty((_BLOCK_ROWS, replicates)), np.empty((_BLOCK_ROWS, replicates)))
    results: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    agree_rows: list[dict[str, Any]] = []
    group_rows: list[dict[str, Any]] = []
    for (scope, rows), stream in zip(scopes, streams, strict=True):
        with_pairs = bool(plan.pair_specs) and (scope == POOLED or pairs_by_discipline)
        totals, point, integer = _scope_totals(plan, rows, with_pairs, np.random.default_rng(stream), totals_buffer)
        est = _scope_estimates(totals, point, integer, _interval_indices(plan, built, with_pairs), level, scratch)
        scope_results, q = _scorer_rows(built, scope, rows, est, 0)
        results.extend(scope_results)
        scope_agreement, q = _agreement_rows(plan, scope, rows, point, est, q)
        agree_rows.extend(scope_agreement)
        scope_groups, q = _group_rows(plan, scope, rows, point, est, q)
        group_rows.extend(scope_groups)
        if with_pairs:
            scope_pairs, q = _pair_rows(plan, scope, point, est, q)
            pair_rows.extend(scope_pairs)
        assert q == len(est.points)
    return {
        "method": _method(replicates, seed, level, pairs_by_discipline, n, sizes, len(g)),
        "scorers": _scorer_entries(built),
        "disciplines": [*domains, POOLED],
        "n_papers": {scope: len(rows) for scope, rows in scopes},
        "results": results,
        "pairs": pair_rows,
        "agreement": agree_rows,
        "all_models": group_rows,
    }
