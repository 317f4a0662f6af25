"""Intrinsic-scoring ranks (PROTOCOL.md §4): the gold's rank per paper, per-paper metric values, rank
distributions and cross-model agreement, without any resampling.

Split from :mod:`arena.stats.intrinsic` (which re-exports every public name here; its docstring states the tie
and terminal-rank rules). These are the per-paper facts the paper bootstrap resamples, kept apart from the
bootstrap so that each can be checked on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Hit@k cut-offs reported (the published table's columns).
HIT_KS = (1, 2, 3, 5)
#: Metric names, in report order.
METRICS = (*(f"hit_at_{k}" for k in HIT_KS), "mrr", "beats")
#: Scope name of the pooled papers.
POOLED = "all"
#: Aggregate of a scoring scorer when its spec names none (the primary: mean over the hypothesis span).
DEFAULT_AGGREGATE = "mean"


@dataclass(frozen=True)
class GoldRanks:
    """The gold candidate's rank per paper for one scorer.

    Attributes:
        rank: int64 (P,), 1..n; 0 where the paper is not ranked.
        ties: int64 (P,), distractors tied with the gold (pessimistic rule; for a listwise scorer the unlisted
            candidates sharing the terminal rank with an unlisted gold); 0 where not ranked.
        ranked: bool (P,), the scorer ranked the paper (no NaN score; a valid top list).
        n_candidates: n, candidates per paper.
        listwise_width: w for a listwise scorer (its top-w list), None for a scoring scorer.
    """

    rank: np.ndarray
    ties: np.ndarray
    ranked: np.ndarray
    n_candidates: int
    listwise_width: int | None = None

    @property
    def n_papers(self) -> int:
        """Papers covered (ranked or not)."""
        return len(self.rank)

    @property
    def n_excluded(self) -> int:
        """Papers the scorer did not rank (NaN scores or an invalid/missing top list)."""
        return int(len(self.ranked) - self.ranked.sum())


# ---------------------------------------------------------------- validation


def _as_scores(scores: Any, where: str) -> np.ndarray:
    """Scores as a (P, n ≥ 2) float array, failing with the expected layout (scorers come from many runs)."""
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: scores must be numbers (NaN for a candidate not scored): {exc}.") from None
    if s.ndim != 2:
        raise ValueError(
            f"{where}: scores has shape {s.shape}; expected a 2-D (papers, candidates) array, one row per paper and "
            "one column per candidate in position order."
        )
    if s.shape[1] < 2:
        raise ValueError(f"{where}: scores has {s.shape[1]} candidate column(s); ranking needs at least 2.")
    return s


def _as_int_array(values: Any, what: str, where: str) -> np.ndarray:
    """Candidate indices as int64; a float array is accepted only when every value is whole, so no index is truncated."""
    a = np.asarray(values)
    if a.dtype == bool or a.dtype.kind not in "iuf":
        raise ValueError(f"{where}: {what} must hold integer candidate indices, got dtype {a.dtype}.")
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a != np.round(a))
        if bad.any():
            i = tuple(int(x) for x in np.argwhere(bad)[0])
            raise ValueError(f"{where}: {what}{list(i)} = {a[i].item()!r} is not an integer candidate index.")
    return a.astype(np.int64)


def _as_gold(gold: Any, n_papers: int | None, n_candidates: int, where: str) -> np.ndarray:
    """Gold columns as int64 (P,), one per paper and each in 0..n−1: a bad gold would silently rank the wrong candidate."""
    g = _as_int_array(gold, "gold", where)
    if g.ndim != 1:
        raise ValueError(f"{where}: gold has shape {g.shape}; expected one gold candidate column per paper (1-D).")
    if n_papers is not None and len(g) != n_papers:
        raise ValueError(f"{where}: gold has {len(g)} papers but the scores have {n_papers} rows; one gold per paper.")
    bad = (g < 0) | (g >= n_candidates)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{where}: gold[{i}] = {int(g[i])} is outside 0..{n_candidates - 1} (n_candidates = {n_candidates}); gold "
            "holds the column of each paper's gold candidate."
        )
    return g


# ---------------------------------------------------------------- ranks


def gold_ranks(scores: Any, gold: Any) -> GoldRanks:
    """The gold's rank per paper from a (P, n) score array (lower is better), under the pessimistic tie rule.

    rank = 1 + distractors scoring <= the gold; ties = distractors scoring == the gold. A row with any NaN is not
    ranked (rank 0, ``ranked`` False). ±inf are ordinary scores (an infinitely surprising candidate is last).
    Raises ValueError for a non-2-D array, fewer than 2 candidates, or a gold index that is not an integer in 0..n−1.
    """
    s = _as_scores(scores, "gold_ranks")
    n_papers, n = s.shape
    g = _as_gold(gold, n_papers, n, "gold_ranks")
    gs = s[np.arange(n_papers), g][:, None]
    ranked = ~np.isnan(s).any(axis=1)
    at_most = (s <= gs).sum(axis=1) - 1  # the gold compares equal to itself on a ranked row
    equal = (s == gs).sum(axis=1) - 1
    return GoldRanks(
        rank=np.where(ranked, 1 + at_most, 0).astype(np.int64),
        ties=np.where(ranked, equal, 0).astype(np.int64),
        ranked=ranked,
        n_candidates=n,
    )


def gold_beats(scores: Any, gold: Any) -> np.ndarray:
    """Per paper, the share of distractors the gold beats: (strictly worse + ½ × tied) / (n − 1); NaN if not ranked.

    Same preconditions as :func:`gold_ranks` (lower score is better; a row with a NaN is not ranked).
    """
    s = _as_scores(scores, "gold_beats")
    n_papers, n = s.shape
    g = _as_gold(gold, n_papers, n, "gold_beats")
    gs = s[np.arange(n_papers), g][:, None]
    worse = (s > gs).sum(axis=1)
    tied = (s == gs).sum(axis=1) - 1
    out = (worse + 0.5 * tied) / (n - 1)
    out[np.isnan(s).any(axis=1)] = np.nan
    return out


def listwise_gold_ranks(top: Any, gold: Any, n_candidates: int) -> GoldRanks:
    """The gold's rank per paper from a listwise judge's top lists, under the terminal-rank rule.

    ``top``: (P, w) candidate columns, best first, 1 <= w <= n; a row holding -1 (invalid or missing list) is not
    ranked. A gold at list position j has rank j; an unlisted gold has rank n and ``ties`` n − w − 1 (the other
    unlisted candidates). Raises ValueError for a bad shape, an index outside -1..n−1, or a candidate listed twice.
    """
    where = "listwise_gold_ranks"
    n = int(n_candidates)
    if n < 2:
        raise ValueError(f"{where}: n_candidates must be at least 2, got {n_candidates}.")
    t = _as_int_array(top, "top", where)
    if t.ndim != 2 or not 1 <= t.shape[1] <= n:
        raise ValueError(
            f"{where}: top has shape {t.shape}; expected (papers, w) with 1 <= w <= n_candidates = {n}: each row the "
            "judge's top-w candidate columns, best first (-1 for the whole row when the list is invalid)."
        )
    g = _as_gold(gold, len(t), n, where)
    bad = (t < -1) | (t >= n)
    if bad.any():
        i, j = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(
            f"{where}: top[{i}][{j}] = {int(t[i, j])} is outside 0..{n - 1}; use -1 to mark an invalid or missing list."
        )
    st = np.sort(t, axis=1)
    dup = (st[:, 1:] == st[:, :-1]) & (st[:, 1:] >= 0)
    if dup.any():
        i, j = (int(x) for x in np.argwhere(dup)[0])
        raise ValueError(
            f"{where}: top row {i} lists candidate {int(st[i, j + 1])} twice; a top list names distinct candidates "
            "(mark a list that stayed invalid after its retries with -1)."
        )
    w = t.shape[1]
    ranked = (t >= 0).all(axis=1)
    hit = t == g[:, None]
    listed = hit.any(axis=1)
    rank = np.where(listed, hit.argmax(axis=1) + 1, n)
    ties = np.where(listed, 0, n - w - 1)
    return GoldRanks(
        rank=np.where(ranked, rank, 0).astype(np.int64),
        ties=np.where(ranked, ties, 0).astype(np.int64),
        ranked=ranked,
        n_candidates=n,
        listwise_width=w,
    )


def available_metrics(ranks: GoldRanks) -> list[str]:
    """The metrics defined for a scorer: every one of :data:`METRICS` for a scoring scorer; Hit@k with k <= w only
    for a listwise one."""
    if ranks.listwise_width is None:
        return list(METRICS)
    return [f"hit_at_{k}" for k in HIT_KS if k <= ranks.listwise_width]


def paper_metrics(ranks: GoldRanks, beats: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per-paper metric values (float (P,), NaN where not ranked): the input of :func:`paired_difference`.

    Keys: the :func:`available_metrics` of the scorer; ``beats`` only when ``beats`` (from :func:`gold_beats`) is
    given. The mean of a value over its non-NaN papers is the scorer's metric.
    """
    out: dict[str, np.ndarray] = {}
    nan = np.where(ranks.ranked, 0.0, np.nan)
    for m in available_metrics(ranks):
        if m.startswith("hit_at_"):
            out[m] = (ranks.rank <= int(m.removeprefix("hit_at_"))).astype(np.float64) + nan
        elif m == "mrr":
            with np.errstate(divide="ignore"):
                out[m] = 1.0 / ranks.rank + nan
        elif m == "beats" and beats is not None:
            b = np.asarray(beats, dtype=np.float64)
            if b.shape != ranks.rank.shape:
                raise ValueError(f"paper_metrics: beats has shape {b.shape}; expected {ranks.rank.shape} (one per paper).")
            out[m] = b + nan
    return out


def rank_distribution(ranks: GoldRanks, papers: np.ndarray | None = None) -> list[int]:
    """Counts of ranked papers whose gold has rank 1, 2, ..., n (a list of n ints); ``papers``: a row subset."""
    r = ranks.rank if papers is None else ranks.rank[papers]
    ok = ranks.ranked if papers is None else ranks.ranked[papers]
    return [int(c) for c in np.bincount(r[ok], minlength=ranks.n_candidates + 1)[1:]]


def model_agreement(ranks: Sequence[GoldRanks]) -> dict[str, Any]:
    """Papers where every scorer ranks the gold first, among the papers every scorer ranked.

    Returns ``n_papers`` (ranked by all), ``n_excluded`` (the others), ``n_all_first`` and ``share`` (None if no
    paper is ranked by all). Raises ValueError if the scorers cover different numbers of papers.
    """
    if not ranks:
        raise ValueError("model_agreement: needs at least one scorer's ranks.")
    sizes = {r.n_papers for r in ranks}
    if len(sizes) != 1:
        raise ValueError(f"model_agreement: the scorers cover different numbers of papers {sorted(sizes)}; align them.")
    all_ranked = np.logical_and.reduce([r.ranked for r in ranks])
    all_first = all_ranked & np.logical_and.reduce([r.rank == 1 for r in ranks])
    n = int(all_ranked.sum())
    return {
        "n_papers": n,
        "n_excluded": int(len(all_ranked) - n),
        "n_all_first": int(all_first.sum()),
        "share": float(all_first.sum() / n) if n else None,
    }
