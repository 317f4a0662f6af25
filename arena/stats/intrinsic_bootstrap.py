"""Intrinsic-scoring paper bootstrap: drawn-paper totals, percentile intervals and the paired difference.

Split from :mod:`arena.stats.intrinsic` (its docstring states the resampling scheme and the cost tricks: float32
products of integer columns, intervals by counting, blocks in reused buffers). This module is the numeric
machinery; :mod:`arena.stats.intrinsic_document` decides which quantities a report bootstraps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .bt import blas_single_threaded_call

#: Elements (replicates × papers) of one chunk of drawn paper indices: small enough to stay in cache (drawing and
#: counting 13 M indices in one piece is several times slower); never changes a value.
_DRAW_ELEMENTS = 1 << 19
#: Counts (replicates × papers) per product: enough replicates that a product reuses each loaded block of the
#: per-paper matrix (a product over 3 replicates at 132,000 papers is bound by memory, not arithmetic); never
#: changes a draw.
_PRODUCT_ELEMENTS = 1 << 23
#: Quantities whose replicates are gathered, divided and partitioned at a time (64 × 10,000 doubles = 5 MB).
_BLOCK_ROWS = 64


#: A part of :func:`_draw_totals`: (rows, matrix, targets, exact).
_Part = tuple[np.ndarray | None, np.ndarray, np.ndarray, bool]


def _draw_totals(n_papers: int, parts: Sequence[_Part], out: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Fill ``out`` (C, R) with the sums of the drawn papers' values: one draw of paper counts for every part.

    Each replicate draws ``n_papers`` indices with replacement: ``rng.integers(0, P, size=(R, P))`` in chunks of
    replicates (the same stream as one draw), counted with one offset bincount per chunk. A part is ``(rows, matrix,
    targets, exact)``: ``matrix`` holds per-paper values (one row per paper of ``rows``, or of all P papers when
    ``rows`` is None); ``out[targets]`` receives ``matrix.T @ counts[:, rows].T``, computed in the matrix's dtype
    (float32 only for integer values whose totals stay below 2**24, where it is exact: :func:`_exact_parts`).
    Replicates run along the last axis so that gathering a quantity's row and partitioning it are contiguous.

    The draw chunk shrinks as P grows (it must stay in cache), but the products of ``exact`` parts (integer values
    whose totals are exact in the matrix's dtype) are taken over a batch of whole chunks of about
    :data:`_PRODUCT_ELEMENTS` counts: a product over a few replicates streams the whole (C, P) matrix from memory
    for each of them, which made the cost per paper grow with P. Exact sums do not depend on the order of
    summation, so the batch changes no value; the other parts (few columns: MRR) keep the chunk's products and so
    the unbatched loop's rounding. Chunk boundaries, and so the stream, are unchanged.
    """
    replicates = out.shape[1]
    if n_papers == 0:
        out[:] = 0.0
        return out
    mats = [np.ascontiguousarray(m.T) for _, m, _, _ in parts]
    chunk = max(1, _DRAW_ELEMENTS // n_papers)
    exact_types = {mt.dtype for mt, (*_, ex) in zip(mats, parts, strict=True) if ex}
    batch = min(replicates, chunk * max(1, _PRODUCT_ELEMENTS // (chunk * n_papers))) if exact_types else chunk
    # The counts of a batch per exact dtype, in buffers reused by every batch.
    buffers = {t: np.empty((batch, n_papers), dtype=t) for t in exact_types}
    for b0 in range(0, replicates, batch):
        nb = min(batch, replicates - b0)
        for start in range(0, nb, chunk):
            r = min(chunk, nb - start)
            idx = rng.integers(0, n_papers, size=(r, n_papers))
            idx += (np.arange(r) * n_papers)[:, None]
            counts = np.bincount(idx.ravel(), minlength=r * n_papers).reshape(r, n_papers)
            for buf in buffers.values():
                buf[start : start + r] = counts
            typed: dict[Any, np.ndarray] = {}
            for (rows, _, targets, ex), mt in zip(parts, mats, strict=True):
                if not ex:
                    c = typed.setdefault(mt.dtype, counts.astype(mt.dtype))
                    out[targets, b0 + start : b0 + start + r] = mt @ (c if rows is None else c[:, rows]).T
        for (rows, _, targets, ex), mt in zip(parts, mats, strict=True):
            if ex:
                c = buffers[mt.dtype][:nb]
                out[targets, b0 : b0 + nb] = mt @ (c if rows is None else c[:, rows]).T
    return out


def _exact_parts(rows: np.ndarray | None, matrix: np.ndarray, integer: np.ndarray, n_draws: int, offset: int = 0) -> list[_Part]:
    """Split a (P, C) float64 matrix into a float32 part (integer-valued columns) and a float64 part (the others).

    Single-precision products are twice as fast and exact for integers as long as every partial sum stays below
    2**24; a replicate's total is at most ``n_draws`` × max |value|, so the float32 part is used only then. Integer
    columns beyond that stay float64, in a part of their own that is still exact (below 2**53). Returns parts for
    :func:`_draw_totals` whose targets are the column indices plus ``offset``.
    """
    bound = n_draws * (float(np.abs(matrix).max()) if matrix.size else 0.0)
    all_ints = np.flatnonzero(integer)
    ints = all_ints if bound < 2**24 else np.zeros(0, dtype=np.int64)
    wide = all_ints if 2**24 <= bound < 2**53 else np.zeros(0, dtype=np.int64)
    reals = np.setdiff1d(np.arange(matrix.shape[1]), np.concatenate([ints, wide]))
    groups = ((ints, np.float32, True), (wide, np.float64, True), (reals, np.float64, False))
    return [(rows, matrix[:, sel].astype(dtype), sel + offset, ex) for sel, dtype, ex in groups if len(sel)]


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
    """Linear interpolation a + (b − a)·frac that returns ``a`` exactly when it equals ``b`` or ``frac`` is 0 (as numpy)."""
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
    """JSON-friendly float: None for NaN (an undefined value or bound)."""
    return None if math.isnan(x) else float(x)


def _interval(value: float, lo: float, hi: float, n_undefined: int) -> dict[str, Any]:
    """The JSON block of one bootstrapped quantity: value, percentile interval and undefined replicates."""
    return {"value": _num(value), "ci": [_num(lo), _num(hi)], "n_undefined": int(n_undefined)}


def _check_bootstrap_args(where: str, replicates: int, level: float) -> None:
    """Refuse a replicate count or level that would make the percentile interval meaningless, naming the caller."""
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
    tot = _draw_totals(
        len(cols), [(None, cols, np.arange(3), False)], np.empty((3, int(replicates))), np.random.default_rng(seed)
    )
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
