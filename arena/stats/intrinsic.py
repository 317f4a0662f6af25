"""Intrinsic-scoring statistics (PROTOCOL.md §4): gold ranks, Hit@k, MRR, gold-beats rate, paper-bootstrap CIs,
paired differences, cross-model agreement and gold-rank distributions. Pure numpy; no Django.

Data contract (the app builds these arrays from its tables). A benchmark has P papers, each with the same
n candidates (16 in the release) in a fixed column order (the candidates' ``position``); ``gold`` holds, per paper,
the column of its one gold candidate. Every array is in one paper order, the caller's (the app passes papers
ordered by external id); the bootstrap draws depend on that order, so keep it stable.

A *scorer* is (model, criterion[, aggregate]), e.g. ("llama-1b", "energy", "mean"). Two kinds:

* scoring (intrinsic) scorers give ``scores``, a (P, n) float array, **lower is better** (mean NLL or mean raw
  target-logit energy over the hypothesis span). A paper with any NaN score (a candidate the run could not score)
  is **not ranked** by that scorer: it is left out of that scorer's metrics and counted (``n_excluded``).
* listwise scorers give ``top``, a (P, w) int array (w = 5 in the protocol): the judge's top-w candidate columns in
  order, best first; a row holding -1 (the list was invalid after its retries, or missing) is not ranked, counted.

Tie rule (PESSIMISTIC), used everywhere: the gold's rank is 1 + the number of distractors whose score is <= the
gold's. A tie counts against the gold, so a constant scorer never gets Hit@1 (its gold is always last); the number
of distractors tied with the gold is counted per paper (``ties``) and reported per scope.

Terminal-rank rule (listwise): a gold in the top-w list at position j (1-based) has rank j; any other gold shares
the terminal rank n with every other unlisted candidate. Only Hit@k for k <= w are reported for listwise scorers:
MRR would conflate "just outside the list" with "last", and there are no scores to compare for the beats rate.

Metrics per scorer, over the papers it ranked (each paper weighs 1):

* ``hit_at_k`` (k in :data:`HIT_KS`) = share of papers whose gold rank is <= k;
* ``mrr`` = mean of 1 / gold rank (scoring scorers only);
* ``beats`` = mean over papers of the gold-beats-distractor share: (distractors scoring strictly worse than the
  gold + ½ × distractors tied with it) / (n − 1) (scoring scorers only).

Scopes: each discipline (sorted by name) and the pooled ``"all"`` (a ratio of sums over every paper, not a mean of
the disciplines).

Paper-level bootstrap. A scope holds P_s papers in the caller's order. Each replicate draws P_s paper indices
uniformly with replacement, ``rng.integers(0, P_s, size=(R, P_s))`` (drawn in chunks of replicates, which consumes
the stream exactly as one draw would). **Per discipline, papers are resampled within the discipline; the pooled
scope resamples all papers (not stratified by discipline).** A drawn paper brings its values for every scorer, so
every scorer, pair and agreement share of a scope uses the same draws (differences are paired). Each scope has its
own stream ``numpy.random.default_rng(SeedSequence(seed).spawn(D + 1)[i])``, i = the scope's index in sorted
disciplines followed by ``"all"``: a discipline's intervals depend only on its own papers. A replicate's metric is
(sum of drawn papers' values) / (number of drawn papers the scorer ranked); the per-paper values are computed once
and every replicate's sums for all scorers are one product ``counts @ values`` (counts = how often each paper was
drawn). Intervals are percentile intervals (numpy's ``"linear"`` quantiles, as ``scipy.stats.bootstrap(...,
method="percentile")``) at ``level``; a replicate that drew no paper the scorer ranked is undefined, left out of
the interval and counted (``n_undefined``).

Paired difference of scorers a and b: metric(a) − metric(b) over the papers *both* ranked, bootstrapped on the
scope's draws. Cross-model agreement: per (criterion, aggregate) with at least two models, the share of papers
(ranked by every one of those models) where every model ranks the gold first.

API: :func:`gold_ranks`, :func:`gold_beats`, :func:`listwise_gold_ranks` (→ :class:`GoldRanks`),
:func:`paper_metrics`, :func:`rank_distribution`, :func:`model_agreement`, :func:`paired_difference` and the
entry point :func:`intrinsic_report` (a JSON-ready document; its shape is in its docstring).

Cost (issue 14: every metric with 10,000 replicates for 14 scorers × 1,323 papers × 16 candidates in under 1 s;
bench/bench_intrinsic.py): integer-valued per-paper columns (Hit@k, ranked, beats × 2(n − 1), agreement) are
multiplied in float32, exact below 2**24; an interval whose numerator is an integer and whose denominator is the
same in every replicate is found by counting instead of partitioning; quantities are processed in blocks in
reused buffers; BLAS runs on one thread (as the Bradley–Terry fits: extra threads only wait on a busy machine).
None of this changes a value beyond floating-point rounding (tests/stats/test_stats_intrinsic.py compares with
``scipy.stats.bootstrap`` and a per-replicate loop to 1e-12).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from .bt import blas_single_threaded_call

#: Hit@k cut-offs reported (the published table's columns).
HIT_KS = (1, 2, 3, 5)
#: Metric names, in report order.
METRICS = (*(f"hit_at_{k}" for k in HIT_KS), "mrr", "beats")
#: Scope name of the pooled papers.
POOLED = "all"
#: Aggregate of a scoring scorer when its spec names none (the primary: mean over the hypothesis span).
DEFAULT_AGGREGATE = "mean"
#: Elements (replicates × papers) of one chunk of drawn paper indices: small enough to stay in cache (drawing and
#: counting 13 M indices in one piece is several times slower); never changes a value.
_DRAW_ELEMENTS = 1 << 19
#: Quantities whose replicates are gathered, divided and partitioned at a time (64 × 10,000 doubles = 5 MB).
_BLOCK_ROWS = 64
_LISTWISE_ONLY_HITS = "the listwise judge returns only its top {w}: Hit@{k} is not defined"
_NOT_FOR_LISTWISE = {
    "mrr": "not reported for a listwise scorer: every unlisted candidate shares the terminal rank, so MRR would "
    "conflate 'just outside the list' with 'last'",
    "beats": "not reported for a listwise scorer: it gives no score to compare the gold with each distractor",
}


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
        return len(self.rank)

    @property
    def n_excluded(self) -> int:
        """Papers the scorer did not rank (NaN scores or an invalid/missing top list)."""
        return int(len(self.ranked) - self.ranked.sum())


# ---------------------------------------------------------------- validation


def _as_scores(scores: Any, where: str) -> np.ndarray:
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


# ---------------------------------------------------------------- bootstrap machinery


def _draw_totals(
    n_papers: int,
    parts: Sequence[tuple[np.ndarray | None, np.ndarray, np.ndarray]],
    out: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Fill ``out`` (C, R) with the sums of the drawn papers' values: one draw of paper counts for every part.

    Each replicate draws ``n_papers`` indices with replacement: ``rng.integers(0, P, size=(R, P))`` in chunks of
    replicates (the same stream as one draw), counted with one offset bincount per chunk. A part is ``(rows, matrix,
    targets)``: ``matrix`` holds per-paper values (one row per paper of ``rows``, or of all P papers when ``rows`` is
    None); ``out[targets]`` receives ``matrix.T @ counts[:, rows].T``, computed in the matrix's dtype (float32 only for
    integer values whose totals stay below 2**24, where it is exact: :func:`_exact_parts`). Replicates run along the
    last axis so that gathering a quantity's row and partitioning it are contiguous.
    """
    replicates = out.shape[1]
    if n_papers == 0:
        out[:] = 0.0
        return out
    mats = [np.ascontiguousarray(m.T) for _, m, _ in parts]
    chunk = max(1, _DRAW_ELEMENTS // n_papers)
    for start in range(0, replicates, chunk):
        r = min(chunk, replicates - start)
        idx = rng.integers(0, n_papers, size=(r, n_papers))
        idx += (np.arange(r) * n_papers)[:, None]
        counts = np.bincount(idx.ravel(), minlength=r * n_papers).reshape(r, n_papers)
        typed: dict[Any, np.ndarray] = {}
        for (rows, _, targets), mt in zip(parts, mats, strict=True):
            if mt.dtype not in typed:
                typed[mt.dtype] = counts.astype(mt.dtype)
            c = typed[mt.dtype]
            out[targets, start : start + r] = mt @ (c if rows is None else c[:, rows]).T
    return out


def _exact_parts(
    rows: np.ndarray | None, matrix: np.ndarray, integer: np.ndarray, n_draws: int, offset: int = 0
) -> list[tuple[np.ndarray | None, np.ndarray, np.ndarray]]:
    """Split a (P, C) float64 matrix into a float32 part (integer-valued columns) and a float64 part (the others).

    Single-precision products are twice as fast and exact for integers as long as every partial sum stays below
    2**24; a replicate's total is at most ``n_draws`` × max |value|, so the float32 part is used only then. Returns
    parts for :func:`_draw_totals` whose targets are the column indices plus ``offset``.
    """
    fits = n_draws * (float(np.abs(matrix).max()) if matrix.size else 0.0) < 2**24
    ints = np.flatnonzero(integer) if fits else np.zeros(0, dtype=np.int64)
    reals = np.setdiff1d(np.arange(matrix.shape[1]), ints)
    return [
        (rows, matrix[:, sel].astype(dtype), sel + offset) for sel, dtype in ((ints, np.float32), (reals, np.float64)) if len(sel)
    ]


def _block_intervals(
    totals: np.ndarray,
    num: Sequence[int],
    sub: Sequence[int] | None,
    den: Sequence[int],
    integer: Sequence[bool],
    level: float,
    scratch: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile intervals of the replicate quantities (totals[num] − totals[sub]) / totals[den] (no ``sub``: a
    plain ratio), a block of rows at a time in two reused scratch buffers: the (Q, R) matrix of every quantity is
    never built, so a report touches the same few megabytes instead of hundreds (whose page faults cost more than
    the arithmetic).

    A quantity whose numerator is integer-valued (``integer``: Hit@k, beats × 2(n − 1), agreement counts and their
    differences) and whose denominator is the same positive number in every replicate (a scorer that ranked every
    paper of the scope: each replicate draws as many papers as the scope has) has the interval of its numerator
    divided by that number, and the numerator's order statistics are counted (:func:`_integer_percentiles`);
    every other quantity is divided and partitioned (:func:`_percentiles`).
    """
    a, b = scratch
    block, r = a.shape
    q = len(num)
    lo, hi, und = np.empty(q), np.empty(q), np.zeros(q, dtype=np.int64)
    num_a, den_a = np.asarray(num, dtype=np.int64), np.asarray(den, dtype=np.int64)
    sub_a = None if sub is None else np.asarray(sub, dtype=np.int64)
    int_a = np.asarray(integer, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for start in range(0, q, block):
            stop = min(q, start + block)
            k = stop - start
            np.take(totals, num_a[start:stop], axis=0, out=a[:k])
            if sub_a is not None:
                np.take(totals, sub_a[start:stop], axis=0, out=b[:k])
                np.subtract(a[:k], b[:k], out=a[:k])
            np.take(totals, den_a[start:stop], axis=0, out=b[:k])
            d0 = b[:k, 0].copy()
            fast = int_a[start:stop] & (d0 > 0)
            fast[fast] = (b[:k][fast] == d0[fast, None]).all(axis=1)
            f = np.flatnonzero(fast)
            if len(f):
                vals = a[:k][f]
                low = vals.min(axis=1)
                span = vals.max(axis=1) - low + 1
                ok = span <= r
                if not ok.all():
                    fast[f[~ok]] = False
                    f, vals, low, span = f[ok], vals[ok], low[ok], span[ok]
                if len(f):
                    flo, fhi = _integer_percentiles(vals, low, int(span.max()), level)
                    lo[start + f] = flo / d0[f]
                    hi[start + f] = fhi / d0[f]
            slow = np.flatnonzero(~fast)
            if len(slow):
                if len(slow) == k:
                    np.divide(a[:k], b[:k], out=a[:k])
                    x = a[:k]
                else:
                    x = a[:k][slow] / b[:k][slow]
                lo[start + slow], hi[start + slow], und[start + slow] = _percentiles(x, level)
    return lo, hi, und


def _bounds(m: int, level: float) -> list[tuple[int, int, float]]:
    """numpy "linear" quantile positions over m sorted values: per bound (⌊h⌋, ⌊h⌋ + 1 capped, frac), h = (m − 1)q."""
    alpha = (1.0 - level) / 2.0
    out = []
    for p in (alpha, 1.0 - alpha):
        h = (m - 1) * p
        i = int(math.floor(h))
        out.append((i, min(i + 1, m - 1), h - i))
    return out


def _interp(a: np.ndarray, b: np.ndarray, frac: float) -> np.ndarray:
    return np.where((a == b) | (frac == 0), a, a + (b - a) * frac)


def _percentiles(reps: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile interval of every row of a (Q, R) replicate matrix: (lo, hi, n_undefined), NaN replicates left out.

    numpy "linear" quantiles: h = (m − 1)q over the m defined replicates, v[⌊h⌋] + (v[⌊h⌋+1] − v[⌊h⌋])·frac. Rows
    without NaN (nearly all) share one ``np.partition`` at the four order statistics needed; a row with NaN is
    sorted alone. A row with no defined replicate gets NaN bounds. Reorders ``reps`` along its rows in place.
    """
    q, r = reps.shape
    lo = np.full(q, np.nan)
    hi = np.full(q, np.nan)
    nan = np.isnan(reps)
    n_undef = nan.sum(axis=1)
    clean = n_undef == 0
    if clean.any() and r:
        bs = _bounds(r, level)
        kth = sorted({k for i, j, _ in bs for k in (i, j)})
        part = reps if clean.all() else reps[clean]
        part.partition(kth, axis=1)
        (i0, j0, f0), (i1, j1, f1) = bs
        lo[clean] = _interp(part[:, i0], part[:, j0], f0)
        hi[clean] = _interp(part[:, i1], part[:, j1], f1)
    for row in np.flatnonzero(~clean):
        v = np.sort(reps[row][~nan[row]])
        if len(v) == 0:
            continue
        (i0, j0, f0), (i1, j1, f1) = _bounds(len(v), level)
        lo[row] = _interp(v[i0 : i0 + 1], v[j0 : j0 + 1], f0)[0]
        hi[row] = _interp(v[i1 : i1 + 1], v[j1 : j1 + 1], f1)[0]
    return lo, hi, n_undef


def _integer_percentiles(values: np.ndarray, low: np.ndarray, width: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The same interval as :func:`_percentiles` for rows of integers (held as floats, no NaN) in [low, low + width).

    Order statistics by counting instead of selection: one offset bincount of every row's values, a cumulative
    sum per row, and the k-th smallest value is low + (number of bins whose cumulative count is <= k). About four
    times cheaper than ``np.partition`` when the width is below the number of replicates (Hit@k totals).
    """
    k, r = values.shape
    shifted = (values - low[:, None]).astype(np.int64) + (np.arange(k) * width)[:, None]
    cum = np.bincount(shifted.ravel(), minlength=k * width).reshape(k, width).cumsum(axis=1)
    (i0, j0, f0), (i1, j1, f1) = _bounds(r, level)
    stats = {t: low + (cum <= t).sum(axis=1) for t in {i0, j0, i1, j1}}
    return _interp(stats[i0], stats[j0], f0), _interp(stats[i1], stats[j1], f1)


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _interval(value: float, lo: float, hi: float, n_undefined: int) -> dict[str, Any]:
    return {"value": _num(value), "ci": [_num(lo), _num(hi)], "n_undefined": int(n_undefined)}


def _check_bootstrap_args(where: str, replicates: int, level: float) -> None:
    if int(replicates) != replicates or replicates < 1:
        raise ValueError(f"{where}: replicates must be a whole number ≥ 1, got {replicates}.")
    if not 0.0 < level < 1.0:
        raise ValueError(f"{where}: level must be in (0, 1), got {level}.")


@blas_single_threaded_call
def paired_difference(a: Any, b: Any, *, replicates: int = 2000, seed: int = 0, level: float = 0.95) -> dict[str, Any]:
    """Paired paper bootstrap of mean(a) − mean(b) over the papers where both are defined (not NaN).

    ``a``, ``b``: per-paper values of the same papers in the same order (e.g. ``paper_metrics(...)["hit_at_1"]`` of
    two scorers; NaN = not ranked). Each replicate draws all P papers with replacement from
    ``numpy.random.default_rng(seed)`` (``integers(0, P, size=(R, P))``) and takes the difference on the drawn papers
    both ranked (the same draw for a and b, hence paired); a replicate drawing none is undefined (left out, counted).
    Returns ``difference`` (None if no common paper), ``ci`` (percentile, numpy linear), ``n_papers`` (both
    defined), ``n_undefined``, ``replicates``, ``level``, ``seed``.
    """
    where = "paired_difference"
    _check_bootstrap_args(where, replicates, level)
    va = np.asarray(a, dtype=np.float64)
    vb = np.asarray(b, dtype=np.float64)
    if va.ndim != 1 or va.shape != vb.shape:
        raise ValueError(
            f"{where}: a has shape {va.shape} and b {vb.shape}; pass two 1-D arrays of per-paper values over the same "
            "papers in the same order (NaN where a scorer did not rank the paper)."
        )
    if len(va) == 0:
        raise ValueError(f"{where}: no papers; pass at least one paper's values.")
    both = ~np.isnan(va) & ~np.isnan(vb)
    cols = np.column_stack([both, np.where(both, va, 0.0), np.where(both, vb, 0.0)]).astype(np.float64)
    tot = _draw_totals(len(cols), [(None, cols, np.arange(3))], np.empty((3, int(replicates))), np.random.default_rng(seed))
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = (tot[1] - tot[2]) / tot[0]
        point = (cols[:, 1].sum() - cols[:, 2].sum()) / cols[:, 0].sum()
    lo, hi, und = _percentiles(reps[None, :], level)
    return {
        "difference": _num(point),
        "ci": [_num(lo[0]), _num(hi[0])],
        "n_papers": int(both.sum()),
        "n_undefined": int(und[0]),
        "replicates": int(replicates),
        "level": level,
        "seed": seed,
    }


# ---------------------------------------------------------------- report


@dataclass
class _Scorer:
    name: str
    model: str
    criterion: str
    aggregate: str | None
    ranks: GoldRanks
    values: dict[str, np.ndarray]  # metric -> per-paper value × _metric_divisor, 0 where not ranked

    @property
    def kind(self) -> str:
        return "scoring" if self.ranks.listwise_width is None else "listwise"


def _aligned_rows(name: str, spec_papers: Any, papers: list[str] | None) -> np.ndarray | None:
    """Row order that puts a scorer's own ``papers`` in the report's order (None when the scorer names none)."""
    if spec_papers is None:
        return None
    where = f"intrinsic_report: scorer {name!r}"
    if papers is None:
        raise ValueError(f"{where} names its papers; pass papers= (the order of gold and disciplines) to align them.")
    own = [str(p) for p in spec_papers]
    if len(set(own)) != len(own):
        raise ValueError(f"{where} lists a paper twice in its papers; one row per paper.")
    missing = [p for p in papers if p not in set(own)]
    extra = [p for p in own if p not in set(papers)]
    if missing or extra:
        raise ValueError(
            f"{where} covers a different paper set from the report's papers: missing {missing[:5]}"
            f"{' …' if len(missing) > 5 else ''} ({len(missing)}), extra {extra[:5]}{' …' if len(extra) > 5 else ''} "
            f"({len(extra)}). Every scorer covers every benchmark paper: give NaN scores or a -1 top list for a paper "
            "it could not rank."
        )
    pos = {p: i for i, p in enumerate(own)}
    return np.array([pos[p] for p in papers], dtype=np.int64)


def _build_scorer(name: str, spec: Mapping[str, Any], gold: np.ndarray, n: int, papers: list[str] | None) -> _Scorer:
    where = f"intrinsic_report: scorer {name!r}"
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where}: expected a dict with 'model', 'criterion' and 'scores' or 'top', got {type(spec).__name__}.")
    kinds = [k for k in ("scores", "top") if spec.get(k) is not None]
    if len(kinds) != 1:
        raise ValueError(f"{where}: give exactly one of 'scores' (a scoring scorer) or 'top' (a listwise scorer), got {kinds}.")
    rows = _aligned_rows(name, spec.get("papers"), papers)
    model = str(spec.get("model") or name)
    beats = None
    if kinds == ["scores"]:
        s = _as_scores(spec["scores"], where)
        if rows is not None:
            s = s[rows] if len(rows) == len(s) else s
        if s.shape != (len(gold), n):
            raise ValueError(
                f"{where}: scores has shape {s.shape}; expected (papers, n_candidates) = ({len(gold)}, {n}): one row per "
                "paper in the report's order (NaN scores for a paper it did not score), one column per candidate."
            )
        ranks = gold_ranks(s, gold)
        beats = gold_beats(s, gold)
        criterion = spec.get("criterion")
        if not criterion:
            raise ValueError(f"{where}: a scoring scorer needs its 'criterion' (e.g. 'nll' or 'energy').")
        aggregate = str(spec.get("aggregate") or DEFAULT_AGGREGATE)
    else:
        t = np.asarray(spec["top"])
        if rows is not None and t.ndim == 2 and len(rows) == len(t):
            t = t[rows]
        if t.ndim != 2 or len(t) != len(gold):
            raise ValueError(
                f"{where}: top has shape {t.shape}; expected ({len(gold)}, w): one top list per paper in the report's "
                "order (-1 for the whole row when the list is invalid or missing)."
            )
        try:
            ranks = listwise_gold_ranks(t, gold, n)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        criterion = str(spec.get("criterion") or "listwise")
        aggregate = None
    values = {m: np.nan_to_num(v, nan=0.0) for m, v in paper_metrics(ranks, beats).items()}
    if "beats" in values:  # integer numerators: 2 × strictly worse + tied (see _metric_divisor)
        values["beats"] = np.rint(values["beats"] * _metric_divisor("beats", n))
    return _Scorer(name=name, model=model, criterion=str(criterion), aggregate=aggregate, ranks=ranks, values=values)


def _metric_divisor(metric: str, n_candidates: int) -> int:
    """The report keeps per-paper ``beats`` as the integer 2 × (strictly worse) + tied = beats × 2(n − 1), so that
    its sums are exact in single precision; its totals are divided by this after the bootstrap."""
    return 2 * (n_candidates - 1) if metric == "beats" else 1


class _Columns:
    """Registry of per-paper value columns (the matrix every replicate multiplies), deduplicated by key."""

    def __init__(self) -> None:
        self.keys: dict[Any, int] = {}
        self.columns: list[np.ndarray] = []

    def add(self, key: Any, column: np.ndarray) -> int:
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


@blas_single_threaded_call
def intrinsic_report(
    scorers: Mapping[str, Mapping[str, Any]],
    *,
    gold: Any,
    disciplines: Sequence[Any],
    n_candidates: int,
    papers: Sequence[Any] | None = None,
    replicates: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    pairs: Sequence[tuple[str, str]] | None = None,
    pairs_by_discipline: bool = False,
) -> dict[str, Any]:
    """Every metric of an intrinsic-scoring benchmark with paper-bootstrap CIs (rules in the module docstring).

    Arguments:
        scorers: ``{name: spec}`` in display order. A spec holds ``model`` (default: the name), ``criterion``
            (required for scoring scorers, e.g. ``"nll"``/``"energy"``; default ``"listwise"`` for listwise ones),
            ``aggregate`` (scoring only; default ``"mean"``), exactly one of ``scores`` ((P, n) floats, lower is
            better, NaN = candidate not scored) or ``top`` ((P, w) ints, -1 = invalid list), and optionally
            ``papers`` (the ids of its rows, realigned to ``papers``; it must cover the same papers).
        gold: (P,) column of each paper's gold candidate. disciplines: (P,) discipline of each paper.
        n_candidates: n, candidates per paper. papers: (P,) paper ids (needed only when specs name theirs).
        replicates, seed, level: the bootstrap (defaults 2,000 replicates, seed 0, 95% percentile intervals).
        pairs: (a, b) scorer pairs for paired differences a − b; default every unordered pair in ``scorers`` order.
        pairs_by_discipline: also bootstrap the pairs per discipline (default pooled only: with 15 scorers the 105
            pairs × 13 scopes are ~8 k intervals, most of them noise).

    Returns a JSON-ready dict:

    * ``method``: replicates, seed, level and the rules in words; ``metrics``, ``hit_ks``, ``n_candidates``;
    * ``scorers``: ``[{name, model, criterion, aggregate, kind ("scoring"|"listwise"), listwise_width}]``;
    * ``disciplines``: sorted disciplines then ``"all"``; ``n_papers``: ``{scope: papers}``;
    * ``results``: one row per (scope, scorer): ``discipline, scorer, kind, n_papers, n_ranked, n_excluded,
      excluded_reason, papers_with_ties, tied_distractors`` (None for listwise), ``metrics`` = ``{metric: {value,
      ci: [lo, hi], n_undefined} | None}`` for every name in :data:`METRICS`, ``not_reported`` = ``{metric: why}``
      for the None ones, ``rank_distribution`` (counts of ranked papers with gold rank 1..n);
    * ``pairs``: one row per (scope, a, b): ``discipline, a, b, n_papers`` (both ranked), ``differences`` =
      ``{metric: {value, ci, n_undefined} | None}`` (None when either scorer lacks the metric);
    * ``agreement``: one row per (scope, criterion, aggregate) with ≥ 2 models: ``discipline, criterion,
      aggregate, models, scorers, n_papers`` (ranked by all), ``n_excluded, n_all_first, share, ci, n_undefined``.

    Cost: the per-scorer columns are shared by all pairs whose two scorers ranked the same papers; a pair whose
    scorers excluded different papers adds masked columns of its own (correct, but slower when many differ).
    Raises ValueError naming the scorer and what to fix for bad shapes, gold out of range, a listed candidate out of
    range or repeated, differing paper sets, duplicate (model, criterion, aggregate), unknown pair names.
    """
    where = "intrinsic_report"
    _check_bootstrap_args(where, replicates, level)
    replicates = int(replicates)
    n = int(n_candidates)
    if n < 2:
        raise ValueError(f"{where}: n_candidates must be at least 2, got {n_candidates}.")
    if not isinstance(scorers, Mapping) or not scorers:
        raise ValueError(f"{where}: scorers must be a non-empty {{name: spec}} dict.")
    g = _as_gold(gold, None, n, where)
    n_papers = len(g)
    if n_papers == 0:
        raise ValueError(f"{where}: no papers (gold is empty).")
    disc = [str(d) for d in disciplines]
    if len(disc) != n_papers:
        raise ValueError(f"{where}: disciplines has {len(disc)} entries but gold has {n_papers}; one per paper.")
    if POOLED in disc:
        raise ValueError(f"{where}: discipline name {POOLED!r} is reserved for the pooled scope; rename it.")
    paper_ids = None
    if papers is not None:
        paper_ids = [str(p) for p in papers]
        if len(paper_ids) != n_papers or len(set(paper_ids)) != n_papers:
            raise ValueError(f"{where}: papers must list {n_papers} distinct ids (one per gold entry), got {len(paper_ids)}.")
    built = [_build_scorer(str(name), spec, g, n, paper_ids) for name, spec in scorers.items()]
    by_name = {s.name: s for s in built}
    seen: dict[tuple[str, str, str | None], str] = {}
    for s in built:
        key = (s.model, s.criterion, s.aggregate)
        if key in seen:
            raise ValueError(
                f"{where}: scorers {seen[key]!r} and {s.name!r} are both (model, criterion, aggregate) = {key}; keep one."
            )
        seen[key] = s.name

    if pairs is None:
        pair_list = list(combinations([s.name for s in built], 2))
    else:
        pair_list = [(str(a), str(b)) for a, b in pairs]
        unknown = sorted({x for p in pair_list for x in p} - set(by_name))
        if unknown:
            raise ValueError(f"{where}: pairs name unknown scorer(s) {unknown}; known: {list(by_name)}.")

    # Per-paper columns. "base": each scorer's ranked mask and metric values, then the agreement columns; every
    # replicate multiplies all of them by the draw counts. "corr": for a pair whose scorers ranked different papers,
    # a total over the papers both ranked = the scorer's own total − its values on the papers only it ranked; those
    # are nonzero on few papers (``support``), so their products use only those papers' counts.
    base = _Columns()
    for s in built:
        base.add(("ranked", s.name), s.ranks.ranked)
        for m, v in s.values.items():
            base.add((m, s.name), v)
    groups: dict[tuple[str, str | None], list[_Scorer]] = {}
    for s in built:
        groups.setdefault((s.criterion, s.aggregate), []).append(s)
    agreement_groups = [(k, v) for k, v in groups.items() if len(v) >= 2]
    agree_cols = []
    for (crit, agg), members in agreement_groups:
        all_ranked = np.logical_and.reduce([m.ranks.ranked for m in members])
        all_first = all_ranked & np.logical_and.reduce([m.ranks.rank == 1 for m in members])
        agree_cols.append((base.add(("agree_first", crit, agg), all_first), base.add(("agree_ranked", crit, agg), all_ranked)))
    n_base = len(base.columns)
    corr = _Columns()
    corr_base: list[int] = []  # the base column each correction is subtracted from
    support = np.zeros(n_papers, dtype=bool)

    def adjusted(key: Any, base_key: Any, only: np.ndarray, column: np.ndarray) -> int:
        """Index of a total over the papers both ranked: a base column (< n_base) or a corrected one (>= n_base)."""
        if not only.any():
            return base.keys[base_key]
        known = len(corr.columns)
        j = corr.add(key, column)
        if j == known:
            corr_base.append(base.keys[base_key])
        return n_base + j

    pair_specs = []  # (a, b, den, {metric: (a's numerator, b's numerator)}), as indices of adjusted totals
    for a, b in pair_list:
        sa, sb = by_name[a], by_name[b]
        only_a = sa.ranks.ranked & ~sb.ranks.ranked
        only_b = sb.ranks.ranked & ~sa.ranks.ranked
        support |= only_a | only_b
        den = adjusted(("only", a, b), ("ranked", a), only_a, only_a)
        nums = {
            m: (
                adjusted((m, a, b), (m, a), only_a, np.where(only_a, sa.values[m], 0.0)),
                adjusted((m, b, a), (m, b), only_b, np.where(only_b, sb.values[m], 0.0)),
            )
            for m in METRICS
            if m in sa.values and m in sb.values
        }
        pair_specs.append((a, b, den, nums))
    base_matrix, base_int = base.matrix(n_papers)
    corr_matrix, corr_int = corr.matrix(n_papers)

    disc_arr = np.array(disc, dtype=object)
    domains = sorted(set(disc))
    scopes: list[tuple[str, np.ndarray]] = [(d, np.flatnonzero(disc_arr == d)) for d in domains]
    scopes.append((POOLED, np.arange(n_papers)))
    streams = np.random.SeedSequence(seed).spawn(len(scopes))

    # buffers reused by every scope (see _block_intervals)
    totals_buffer = np.empty((n_base + len(corr.columns), replicates))
    scratch = (np.empty((_BLOCK_ROWS, replicates)), np.empty((_BLOCK_ROWS, replicates)))
    results: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    agree_rows: list[dict[str, Any]] = []
    for (scope, rows), stream in zip(scopes, streams, strict=True):
        with_pairs = bool(pair_specs) and (scope == POOLED or pairs_by_discipline)
        values = base_matrix[rows]
        local = np.flatnonzero(support[rows])
        parts = _exact_parts(None, values, base_int, len(rows))
        n_corr = 0
        if with_pairs and corr.columns:
            parts += _exact_parts(local, corr_matrix[rows[local]], corr_int, len(rows), offset=n_base)
            n_corr = len(corr.columns)
        totals = _draw_totals(len(rows), parts, totals_buffer[: n_base + n_corr], np.random.default_rng(stream))
        point = values.sum(axis=0)
        integer = base_int if not n_corr else np.concatenate([base_int, base_int[corr_base] & corr_int])
        if n_corr:  # adjusted totals: base rows, then base − correction rows
            totals[n_base:] = totals[corr_base] - totals[n_base:]
            point = np.concatenate([point, point[corr_base] - corr_matrix[rows[local]].sum(axis=0)])
        # every interval of the scope: ratios num/den, then pair differences (num_a − num_b)/den
        ratio_num: list[int] = []
        ratio_den: list[int] = []
        divisor: list[int] = []
        for s in built:
            den = base.keys[("ranked", s.name)]
            for m in s.values:
                ratio_num.append(base.keys[(m, s.name)])
                ratio_den.append(den)
                divisor.append(_metric_divisor(m, n))
        for first, ranked in agree_cols:
            ratio_num.append(first)
            ratio_den.append(ranked)
            divisor.append(1)
        ia: list[int] = []
        ib: list[int] = []
        idn: list[int] = []
        if with_pairs:
            for _a, _b, den, nums in pair_specs:
                for m, (na, nb) in nums.items():
                    ia.append(na)
                    ib.append(nb)
                    idn.append(den)
                    divisor.append(_metric_divisor(m, n))
        with np.errstate(divide="ignore", invalid="ignore"):
            points = np.concatenate([point[ratio_num] / point[ratio_den], (point[ia] - point[ib]) / point[idn]])
        intervals = [_block_intervals(totals, ratio_num, None, ratio_den, integer[ratio_num], level, scratch)]
        if ia:
            intervals.append(_block_intervals(totals, ia, ib, idn, integer[ia] & integer[ib], level, scratch))
        lo, hi, und = (np.concatenate(x) for x in zip(*intervals, strict=True))
        scale = 1.0 / np.array(divisor, dtype=np.float64)
        lo, hi, points = lo * scale, hi * scale, points * scale
        q = 0
        for s in built:
            metrics: dict[str, Any] = {}
            for m in s.values:
                metrics[m] = _interval(points[q], lo[q], hi[q], und[q])
                q += 1
            not_reported = {}
            for m in METRICS:
                if m in metrics:
                    continue
                metrics[m] = None
                if m in _NOT_FOR_LISTWISE and s.kind == "listwise":
                    not_reported[m] = _NOT_FOR_LISTWISE[m]
                else:
                    not_reported[m] = _LISTWISE_ONLY_HITS.format(w=s.ranks.listwise_width, k=m.removeprefix("hit_at_"))
            ranked = s.ranks.ranked[rows]
            scoring = s.kind == "scoring"
            results.append(
                {
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
            )
        for ((crit, agg), members), (first, ranked_col) in zip(agreement_groups, agree_cols, strict=True):
            n_all = int(point[ranked_col])
            agree_rows.append(
                {
                    "discipline": scope,
                    "criterion": crit,
                    "aggregate": agg,
                    "models": [m.model for m in members],
                    "scorers": [m.name for m in members],
                    "n_papers": n_all,
                    "n_excluded": len(rows) - n_all,
                    "n_all_first": int(point[first]),
                    "share": _num(points[q]),
                    "ci": [_num(lo[q]), _num(hi[q])],
                    "n_undefined": int(und[q]),
                }
            )
            q += 1
        if with_pairs:
            for a, b, den, nums in pair_specs:
                diffs: dict[str, Any] = {}
                for m in nums:
                    diffs[m] = _interval(points[q], lo[q], hi[q], und[q])
                    q += 1
                pair_rows.append(
                    {
                        "discipline": scope,
                        "a": a,
                        "b": b,
                        "n_papers": int(round(point[den])),
                        "differences": {m: diffs.get(m) for m in METRICS},
                    }
                )
        assert q == len(points)
    return {
        "method": {
            "replicates": replicates,
            "seed": seed,
            "level": level,
            "interval": "percentile (numpy linear quantiles), undefined replicates left out and counted",
            "resampling": "papers with replacement: within each discipline; pooled: all papers (not stratified); the "
            "same draw for every scorer, pair and agreement share of a scope",
            "pairs_scope": "every discipline and pooled" if pairs_by_discipline else "pooled only",
            "tie_rule": "pessimistic: gold rank = 1 + distractors scoring <= the gold (lower is better); ties counted",
            "listwise_rule": "gold in the top list at position j has rank j; otherwise the terminal rank n shared by "
            "every unlisted candidate; Hit@k for k <= list width only",
            "beats": "share of distractors scoring strictly worse than the gold, a tie counting 1/2, averaged over papers",
            "agreement": "per (criterion, aggregate) with at least two models: papers ranked by every model where every "
            "model ranks the gold first",
            "metrics": list(METRICS),
            "hit_ks": list(HIT_KS),
            "n_candidates": n,
        },
        "scorers": [
            {
                "name": s.name,
                "model": s.model,
                "criterion": s.criterion,
                "aggregate": s.aggregate,
                "kind": s.kind,
                "listwise_width": s.ranks.listwise_width,
            }
            for s in built
        ],
        "disciplines": [*domains, POOLED],
        "n_papers": {scope: len(rows) for scope, rows in scopes},
        "results": results,
        "pairs": pair_rows,
        "agreement": agree_rows,
    }
