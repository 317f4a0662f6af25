"""HypoArena fit inputs: one domain's debiased matches encoded as per-case contribution tables, and case draws.

Split from :mod:`arena.stats.hypoarena` (see its docstring for the case bootstrap these serve). A replicate's
sufficient statistics are ``counts @ contrib``, so encoding is done once per domain and every replicate costs one
matrix product; :func:`draw_counts` draws the case counts. :func:`encode_domain`, :func:`pairs_from_features` and
:func:`draw_counts` are public because the HypoArena benchmark times them on their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .btd import share_to_outcome

#: Elements of one chunk of (replicates × cases) counts; bounds memory (and keeps the count array in cache).
_COUNT_ELEMENTS = 1_000_000
#: Largest value (in eighths) below which float32 products of counts and contributions are exact.
_F32_EXACT = 2**24


@dataclass
class DomainData:
    """One domain's matches encoded for the BTD fits (model indices are global, sorted by name).

    Attributes:
        name: the domain.
        models: global indices of the domain's models, sorted (local index = position here).
        cases: case ids, in row order of ``contrib``.
        point: (w_lo, w_hi, ties) of the whole domain, each (P_d,) over ``np.triu_indices(K_d, 1)``.
        contrib: (n_cases, F) distinct columns of the per-case contribution table (float32 when exact).
        expand: (3·P_d,) index of each [w_lo | ties | matches] column into ``contrib``'s columns.
        model_matches: (K_d,) number of matches of each model.
    """

    name: Any
    models: np.ndarray
    cases: np.ndarray
    point: tuple[np.ndarray, np.ndarray, np.ndarray]
    contrib: np.ndarray
    expand: np.ndarray
    model_matches: np.ndarray

    @property
    def k(self) -> int:
        """Number of the domain's models (the fits' K_d)."""
        return len(self.models)


def encode_domain(name: Any, frame: pd.DataFrame, models_all: list[Any], cases: np.ndarray | None = None) -> DomainData:
    """Encode one domain's debiased matches (``frame``: rows of :func:`debias` for that domain).

    ``cases`` optionally fixes the case list and order (two judges resampled with the same draw); cases
    absent from ``frame`` get an all-zero contribution row.
    """
    # Categorical codes: a hash lookup per row, far faster than mapping strings through a dict.
    g_first = pd.Categorical(frame["first"], categories=models_all).codes.astype(np.int64)
    g_second = pd.Categorical(frame["second"], categories=models_all).codes.astype(np.int64)
    if cases is None:
        case_codes, cases = pd.factorize(frame["case"], sort=False)
        cases = np.asarray(cases, dtype=object)
    else:
        case_codes = pd.Index(cases).get_indexer(frame["case"]).astype(np.int64)
    share = frame["share"].to_numpy(dtype=np.float64)
    return encode_codes(name, g_first, g_second, share, case_codes, cases, len(models_all))


def encode_codes(
    name: Any,
    g_first: np.ndarray,
    g_second: np.ndarray,
    share: np.ndarray,
    case_codes: np.ndarray,
    cases: np.ndarray,
    k_all: int,
) -> DomainData:
    """:func:`encode_domain` on codes: global model indices of each match's first and second (< ``k_all``), its
    share, and its case's row in ``cases``. The labels are hashed once by the caller, not again per domain."""
    both = np.concatenate([g_first, g_second])
    # The models present, sorted: a count per global index (np.unique sorted all 2·M codes).
    models = np.flatnonzero(np.bincount(both, minlength=k_all)) if both.min(initial=0) >= 0 else np.unique(both)
    k = len(models)
    local = np.full(k_all, -1, dtype=np.int64)
    local[models] = np.arange(k)
    a, b = local[g_first], local[g_second]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    # Pair index of (lo, hi) in np.triu_indices(k, 1) order.
    pair = lo * k - lo * (lo + 1) // 2 + (hi - lo - 1)
    n_pairs = k * (k - 1) // 2
    win, tie, loss = share_to_outcome(share)
    flipped = a > b
    w_lo = np.where(flipped, loss, win)
    n_cases = len(cases)
    n_cols = 3 * n_pairs
    # Per-case contributions: columns [wins of lo over hi | ties | matches], one block of P_d each.
    base = case_codes * n_cols + pair
    size = n_cases * n_cols
    flat = np.bincount(base, weights=w_lo, minlength=size)
    flat += np.bincount(base + n_pairs, weights=tie, minlength=size)
    flat += np.bincount(base + 2 * n_pairs, minlength=size)
    table = flat.reshape(n_cases, n_cols)
    # Identical columns (e.g. every case has every pair once: all "matches" columns are ones) are computed once.
    contrib, expand = _unique_columns(table)
    eighths = contrib * 8
    exact = bool(np.all(eighths == np.round(eighths))) and float(n_cases) * float(eighths.max(initial=0)) < _F32_EXACT
    # float32 products are then exact (every partial sum is a multiple of 1/8 below 2^21): same values, half the cost.
    contrib = np.ascontiguousarray(contrib, dtype=np.float32 if exact else np.float64)
    tot = table.sum(axis=0)
    w_lo_p, ties_p, n_p = tot[:n_pairs], tot[n_pairs : 2 * n_pairs], tot[2 * n_pairs :]
    w_hi_p = np.maximum(n_p - w_lo_p - ties_p, 0.0)
    model_matches = np.bincount(a, minlength=k) + np.bincount(b, minlength=k)
    return DomainData(name, models, cases, (w_lo_p, w_hi_p, ties_p), contrib, expand, model_matches)


def _unique_columns(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(table, axis=1, return_inverse=True)`` (inverse flattened): the distinct columns in lexicographic
    order (row 0 first) and each column's index among them.

    One ``np.lexsort`` of the columns with the rows as keys and a comparison of neighbours: numpy's axis-unique
    sorts a structured view of the columns field by field, twice as slow. Equal columns are equal as floats in
    both (a table of sums holds no -0.0 that could tell them apart bitwise).
    """
    n_rows, n_cols = table.shape
    if n_rows == 0 or n_cols == 0:
        uniq, inverse = np.unique(table, axis=1, return_inverse=True)
        return uniq, inverse.reshape(-1)
    order = np.lexsort(table[::-1])
    ordered = table[:, order]
    new = np.ones(n_cols, dtype=bool)
    new[1:] = (ordered[:, 1:] != ordered[:, :-1]).any(axis=0)
    inverse = np.empty(n_cols, dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return ordered[:, new], inverse


def pairs_from_features(d: DomainData, feats: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(w_lo, w_hi, ties), each (R, P_d), from replicate feature sums (R, F)."""
    full = np.asarray(feats, dtype=np.float64)[:, d.expand]
    p = d.k * (d.k - 1) // 2
    w_lo, ties, n = full[:, :p], full[:, p : 2 * p], full[:, 2 * p :]
    return w_lo, np.maximum(n - w_lo - ties, 0.0), ties


def _global_pair_index(models: np.ndarray, k_all: int) -> np.ndarray:
    """Index into ``np.triu_indices(k_all, 1)`` of each local pair of the sorted global ``models``."""
    ii, jj = np.triu_indices(len(models), 1)
    gi, gj = models[ii], models[jj]  # sorted models: gi < gj, orientation preserved
    return gi * k_all - gi * (gi + 1) // 2 + (gj - gi - 1)


def _chunk_size(n_cases: int) -> int:
    """Replicates per chunk so that a chunk's (replicates × cases) counts stay near :data:`_COUNT_ELEMENTS`."""
    return max(1, _COUNT_ELEMENTS // max(1, n_cases))


def draw_counts(rng: np.random.Generator, replicates: int, n_cases: int) -> np.ndarray:
    """Case counts (R, n) of ``replicates`` resamples of n cases with replacement (n uniform index draws each).

    The draws use the narrowest unsigned type that holds n (16-bit draws are about four times faster than
    64-bit ones); the type depends only on n, so a domain's stream is the same for any chunking.
    """
    dtype = np.uint16 if n_cases <= 2**16 else np.uint32 if n_cases <= 2**32 else np.uint64
    picks = rng.integers(0, n_cases, size=(replicates, n_cases), dtype=dtype)
    out = np.empty((replicates, n_cases), dtype=np.int64)
    for r in range(replicates):
        # One small bincount per replicate stays in cache; a flat bincount over R·n cells does not.
        out[r] = np.bincount(picks[r], minlength=n_cases)
    return out
