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
        rank: int64 (P,), 1..n_p; 0 where the paper is not ranked.
        ties: int64 (P,), distractors tied with the gold (pessimistic rule; for a listwise scorer the unlisted
            candidates sharing the terminal rank with an unlisted gold); 0 where not ranked.
        ranked: bool (P,), the scorer ranked the paper (no NaN score; a valid top list).
        n_candidates: n, candidates per paper; with mixed counts the largest (the width of the score array).
        listwise_width: w for a listwise scorer (its top-w list), None for a scoring scorer.
        sizes: int64 (P,), each paper's candidate count n_p when the counts are mixed; None when every paper has
            ``n_candidates``.
    """

    rank: np.ndarray
    ties: np.ndarray
    ranked: np.ndarray
    n_candidates: int
    listwise_width: int | None = None
    sizes: np.ndarray | None = None

    @property
    def n_papers(self) -> int:
        """Papers covered (ranked or not)."""
        return len(self.rank)

    @property
    def candidates(self) -> np.ndarray:
        """Each paper's candidate count n_p (int64 (P,)), mixed or not."""
        return self.sizes if self.sizes is not None else np.full(len(self.rank), self.n_candidates, dtype=np.int64)

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


def _as_gold(gold: Any, n_papers: int | None, n_candidates: int, where: str, sizes: np.ndarray | None = None) -> np.ndarray:
    """Gold columns as int64 (P,), one per paper and each in 0..n_p−1 (``sizes``: per-paper counts when mixed): a bad
    gold would silently rank the wrong candidate."""
    g = _as_int_array(gold, "gold", where)
    if g.ndim != 1:
        raise ValueError(f"{where}: gold has shape {g.shape}; expected one gold candidate column per paper (1-D).")
    if n_papers is not None and len(g) != n_papers:
        raise ValueError(f"{where}: gold has {len(g)} papers but the scores have {n_papers} rows; one gold per paper.")
    bad = (g < 0) | (g >= (n_candidates if sizes is None else sizes))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        n_i = n_candidates if sizes is None else int(sizes[i])
        why = f"n_candidates = {n_i}" if sizes is None else f"paper {i} has {n_i} candidates"
        raise ValueError(
            f"{where}: gold[{i}] = {int(g[i])} is outside 0..{n_i - 1} ({why}); gold holds the column of each paper's "
            "gold candidate."
        )
    return g


def candidate_counts(n_candidates: Any, n_papers: int, where: str, columns: int | None = None) -> tuple[int, np.ndarray | None]:
    """``n_candidates`` as (n, sizes): an int n for every paper (sizes None), or one count per paper (sizes int64
    (P,), n their largest; a sequence whose counts are all equal is the int). Each count is a whole number ≥ 2 and, when
    ``columns`` (the score array's width) is given, at most ``columns``.

    Mixed counts are allowed because every metric is defined per paper (see :mod:`arena.stats.intrinsic`)."""
    if np.ndim(n_candidates) == 0:
        n = int(n_candidates)
        if n < 2:
            raise ValueError(f"{where}: n_candidates must be at least 2, got {n_candidates}.")
        return n, None
    sizes = _as_int_array(n_candidates, "n_candidates", where)
    if sizes.ndim != 1 or len(sizes) != n_papers:
        raise ValueError(
            f"{where}: n_candidates has shape {sizes.shape}; give one int for every paper or one count per paper ({n_papers})."
        )
    if n_papers == 0:
        raise ValueError(f"{where}: n_candidates lists no paper; give one count per paper.")
    small = np.flatnonzero(sizes < 2)
    if len(small):
        i = int(small[0])
        raise ValueError(f"{where}: n_candidates[{i}] = {int(sizes[i])}; ranking needs at least 2 candidates per paper.")
    if columns is not None and sizes.max() > columns:
        i = int(np.argmax(sizes))
        raise ValueError(
            f"{where}: n_candidates[{i}] = {int(sizes[i])} but the array has {columns} candidate columns; pad every paper's "
            "row to the largest count."
        )
    if (sizes == sizes[0]).all():
        return int(sizes[0]), None
    return int(sizes.max()), sizes


def _padding_problem(values: np.ndarray, sizes: np.ndarray, empty: Any, what: str, where: str) -> None:
    """Refuse a value in a column past its paper's candidate count: it would mean the columns are misaligned."""
    beyond = np.arange(values.shape[1])[None, :] >= sizes[:, None]
    bad = beyond & ~(np.isnan(values) if empty is None else values == empty)
    if bad.any():
        i, j = (int(x) for x in np.argwhere(bad)[0])
        pad = "NaN" if empty is None else str(empty)
        raise ValueError(
            f"{where}: {what}[{i}][{j}] = {values[i, j].item()!r} but paper {i} has {int(sizes[i])} candidates; columns "
            f"past a paper's own count must be {pad} (padding to the largest count)."
        )


# ---------------------------------------------------------------- ranks


def gold_ranks(scores: Any, gold: Any, n_candidates: Any = None) -> GoldRanks:
    """The gold's rank per paper from a (P, n) score array (lower is better), under the pessimistic tie rule.

    rank = 1 + distractors scoring <= the gold; ties = distractors scoring == the gold. A row with any NaN is not
    ranked (rank 0, ``ranked`` False). ±inf are ordinary scores (an infinitely surprising candidate is last).
    ``n_candidates``: None (every paper has n = the array's width) or one count per paper (mixed counts: paper i's
    candidates are its first n_i columns; the others must be NaN and are not candidates).
    Raises ValueError for a non-2-D array, fewer than 2 candidates, a gold index that is not an integer in 0..n_i−1,
    or a number in a padding column.
    """
    where = "gold_ranks"
    s, g, valid, n, sizes = _scoring_inputs(scores, gold, n_candidates, where)
    gs = s[np.arange(len(s)), g][:, None]
    ranked = ~(np.isnan(s) & valid).any(axis=1)
    at_most = ((s <= gs) & valid).sum(axis=1) - 1  # the gold compares equal to itself on a ranked row
    equal = ((s == gs) & valid).sum(axis=1) - 1
    return GoldRanks(
        rank=np.where(ranked, 1 + at_most, 0).astype(np.int64),
        ties=np.where(ranked, equal, 0).astype(np.int64),
        ranked=ranked,
        n_candidates=n,
        sizes=sizes,
    )


def _scoring_inputs(
    scores: Any, gold: Any, n_candidates: Any, where: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray | None]:
    """Validated (scores, gold, candidate-column mask (P, n), n, sizes or None) of a scoring scorer."""
    s = _as_scores(scores, where)
    n_papers, n = s.shape
    sizes = None
    if n_candidates is not None:
        width, sizes = candidate_counts(n_candidates, n_papers, where, columns=n)
        if sizes is None and width != n:
            raise ValueError(f"{where}: scores has {n} candidate columns but n_candidates = {width}; they must agree.")
    g = _as_gold(gold, n_papers, n, where, sizes)
    if sizes is None:
        return s, g, np.ones_like(s, dtype=bool), n, None
    _padding_problem(s, sizes, None, "scores", where)
    return s, g, np.arange(n)[None, :] < sizes[:, None], n, sizes


def gold_beats(scores: Any, gold: Any, n_candidates: Any = None) -> np.ndarray:
    """Per paper, the share of distractors the gold beats: distractors scoring **strictly** worse / (n_i − 1); NaN if
    not ranked. A tie is not a win (the paper counts a distractor the gold is "placed higher" than; the pessimistic
    rank puts a tied distractor above the gold), so this is (n_i − rank) / (n_i − 1) of :func:`gold_ranks`.

    Same preconditions as :func:`gold_ranks` (lower score is better; a row with a NaN is not ranked).
    """
    s, g, valid, _, sizes = _scoring_inputs(scores, gold, n_candidates, "gold_beats")
    gs = s[np.arange(len(s)), g][:, None]
    worse = ((s > gs) & valid).sum(axis=1)
    n_i = np.full(len(s), s.shape[1]) if sizes is None else sizes
    out = worse / (n_i - 1)
    out[(np.isnan(s) & valid).any(axis=1)] = np.nan
    return out


def listwise_gold_ranks(top: Any, gold: Any, n_candidates: Any) -> GoldRanks:
    """The gold's rank per paper from a listwise judge's top lists, under the terminal-rank rule.

    ``top``: (P, w) candidate columns, best first, 1 <= w <= n. ``n_candidates``: n, or one count n_i per paper
    (mixed counts): paper i's list has w_i = min(w, n_i) entries, then -1 padding. A row with -1 among its first w_i
    entries (invalid or missing list) is not ranked. A gold at list position j has rank j; an unlisted gold has rank
    n_i and ``ties`` n_i − w_i − 1 (the other unlisted candidates). Raises ValueError for a bad shape, an index outside
    -1..n_i−1, a candidate listed twice or past a paper's count.
    """
    where = "listwise_gold_ranks"
    t = _as_int_array(top, "top", where)
    n, sizes = candidate_counts(n_candidates, len(t) if t.ndim else 0, where)
    if t.ndim != 2 or not 1 <= t.shape[1] <= n:
        raise ValueError(
            f"{where}: top has shape {t.shape}; expected (papers, w) with 1 <= w <= n_candidates = {n}: each row the "
            "judge's top-w candidate columns, best first (-1 for the whole row when the list is invalid)."
        )
    g = _as_gold(gold, len(t), n, where, sizes)
    n_i = np.full(len(t), n, dtype=np.int64) if sizes is None else sizes
    bad = (t < -1) | (t >= n_i[:, None])
    if bad.any():
        i, j = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(
            f"{where}: top[{i}][{j}] = {int(t[i, j])} is outside 0..{int(n_i[i]) - 1}; use -1 to mark an invalid or missing list."
        )
    w = t.shape[1]
    w_i = np.minimum(w, n_i)
    if sizes is not None:
        _padding_problem(t, w_i, -1, "top", where)
    st = np.sort(t, axis=1)
    dup = (st[:, 1:] == st[:, :-1]) & (st[:, 1:] >= 0)
    if dup.any():
        i, j = (int(x) for x in np.argwhere(dup)[0])
        raise ValueError(
            f"{where}: top row {i} lists candidate {int(st[i, j + 1])} twice; a top list names distinct candidates "
            "(mark a list that stayed invalid after its retries with -1)."
        )
    ranked = ((t >= 0) | (np.arange(w)[None, :] >= w_i[:, None])).all(axis=1)
    hit = t == g[:, None]
    listed = hit.any(axis=1)
    rank = np.where(listed, hit.argmax(axis=1) + 1, n_i)
    ties = np.where(listed, 0, n_i - w_i - 1)
    return GoldRanks(
        rank=np.where(ranked, rank, 0).astype(np.int64),
        ties=np.where(ranked, ties, 0).astype(np.int64),
        ranked=ranked,
        n_candidates=n,
        listwise_width=w,
        sizes=sizes,
    )


def available_metrics(ranks: GoldRanks) -> list[str]:
    """The metrics defined for a scorer: every one of :data:`METRICS` for a scoring scorer; Hit@k with k <= w (every k
    when the lists hold every candidate, a complete ranking) and the beats rate for a listwise one (no MRR: see
    :mod:`arena.stats.intrinsic`)."""
    w = ranks.listwise_width
    if w is None:
        return list(METRICS)
    return [*(f"hit_at_{k}" for k in HIT_KS if k <= w or w >= ranks.n_candidates), "beats"]


def paper_metrics(ranks: GoldRanks, beats: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per-paper metric values (float (P,), NaN where not ranked): the input of :func:`paired_difference`.

    Keys: the :func:`available_metrics` of the scorer. ``beats`` is (n_i − rank) / (n_i − 1), the strict count of
    distractors placed below the gold, unless given (from :func:`gold_beats`, which is the same for a scoring scorer).
    The mean of a value over its non-NaN papers is the scorer's metric.
    """
    out: dict[str, np.ndarray] = {}
    nan = np.where(ranks.ranked, 0.0, np.nan)
    for m in available_metrics(ranks):
        if m.startswith("hit_at_"):
            out[m] = (ranks.rank <= int(m.removeprefix("hit_at_"))).astype(np.float64) + nan
        elif m == "mrr":
            with np.errstate(divide="ignore"):
                out[m] = 1.0 / ranks.rank + nan
        elif m == "beats" and beats is None:
            n_i = ranks.candidates
            out[m] = (n_i - ranks.rank) / (n_i - 1) + nan
        elif m == "beats":
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
