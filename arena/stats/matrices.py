"""Win matrices of the three Bradley–Terry fits, and the compression of cases into distinct case types.

Fits (PROTOCOL.md section 1, "Aggregation"):

* ``ordered``: each ordered judgment is one edge (two per case); an ordered TIE is half a win to each side.
* ``folded``: a stable case is one win for its winner; a sensitive case is half a win to each side.
* ``stable``: stable cases only (sensitive cases dropped).
* ``scheme_b`` (tie sensitivity): stable cases as in ``folded``; every sensitive case is a full win for
  the lower-ranked model of the pair under a reference ordering.

A case only adds weight to the two cells ``W[lo, hi]`` and ``W[hi, lo]`` of its pair, and its contribution
depends only on (pair, unordered pair of ordered verdicts). Cases that agree on these are interchangeable
for every fit, so a data set is summarised by the counts of its distinct *case types* (18 in the release:
6 pairs × {stable for one, stable for the other, sensitive}). Bootstraps then draw counts over types
instead of copying cases.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .folding import HI, LO, TIE_CODE, EncodedCases

FIT_KINDS = ("ordered", "folded", "stable")
_ALL_KINDS = (*FIT_KINDS, "scheme_b")


def contributions(
    o1: np.ndarray,
    o2: np.ndarray,
    kind: str,
    *,
    lo: np.ndarray | None = None,
    hi: np.ndarray | None = None,
    reference_rank: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Weights a case adds to ``W[lo, hi]`` (first array) and ``W[hi, lo]`` (second array).

    Preconditions:
        ``o1``/``o2`` the two ordered verdict codes of complete cases (LO/HI/TIE_CODE, any order);
        for ``kind="scheme_b"`` also ``lo``, ``hi`` and ``reference_rank`` (position of each model index in the
        reference ordering, 0 = best).
    """
    o1 = np.asarray(o1)
    o2 = np.asarray(o2)
    stable = (o1 == o2) & (o1 != TIE_CODE)
    if kind == "ordered":
        # Booleans are cast to float first: numpy's bool + bool is a logical OR, not a count.
        ties = (o1 == TIE_CODE).astype(np.float64) + (o2 == TIE_CODE)
        to_lo = (o1 == LO).astype(np.float64) + (o2 == LO) + 0.5 * ties
        to_hi = (o1 == HI).astype(np.float64) + (o2 == HI) + 0.5 * ties
    elif kind == "folded":
        to_lo = np.where(stable, (o1 == LO) * 1.0, 0.5)
        to_hi = np.where(stable, (o1 == HI) * 1.0, 0.5)
    elif kind == "stable":
        to_lo = (stable & (o1 == LO)) * 1.0
        to_hi = (stable & (o1 == HI)) * 1.0
    elif kind == "scheme_b":
        if lo is None or hi is None or reference_rank is None:
            raise ValueError("scheme_b needs lo, hi and reference_rank")
        rank = np.asarray(reference_rank)
        lo_is_lower = rank[np.asarray(lo)] > rank[np.asarray(hi)]  # lo ranked below hi in the reference
        to_lo = np.where(stable, (o1 == LO) * 1.0, lo_is_lower * 1.0)
        to_hi = np.where(stable, (o1 == HI) * 1.0, (~lo_is_lower) * 1.0)
    else:
        raise ValueError(f"unknown fit kind {kind!r}; expected one of {_ALL_KINDS}")
    return np.asarray(to_lo, dtype=np.float64), np.asarray(to_hi, dtype=np.float64)


def win_matrix(enc: EncodedCases, kind: str, *, reference_rank: np.ndarray | None = None) -> np.ndarray:
    """Win matrix (K, K) of fit ``kind`` over the complete cases of ``enc``."""
    c = enc.complete
    lo, hi = enc.lo[c], enc.hi[c]
    a, b = contributions(enc.original[c], enc.reverse[c], kind, lo=lo, hi=hi, reference_rank=reference_rank)
    k = enc.n_models
    flat = np.bincount(lo * k + hi, weights=a, minlength=k * k) + np.bincount(hi * k + lo, weights=b, minlength=k * k)
    return flat.reshape(k, k)


@dataclass(frozen=True)
class CaseTypes:
    """Distinct case types of the complete cases of an :class:`EncodedCases`.

    Attributes:
        n_models: K.
        lo, hi: pair of each type.
        o1, o2: the type's two ordered verdict codes, sorted (``o1 <= o2``): original vs reverse does not
            matter to any fit.
        counts: number of complete cases of each type.
        of_case: type index of each complete case (in the order of ``enc.complete``'s True entries).
    """

    n_models: int
    lo: np.ndarray
    hi: np.ndarray
    o1: np.ndarray
    o2: np.ndarray
    counts: np.ndarray
    of_case: np.ndarray

    @property
    def n_types(self) -> int:
        """Number of distinct types."""
        return len(self.lo)


def case_types(enc: EncodedCases) -> CaseTypes:
    """Group the complete cases of ``enc`` into distinct types (see module docstring)."""
    c = enc.complete
    lo, hi = enc.lo[c], enc.hi[c]
    a, b = enc.original[c].astype(np.int64), enc.reverse[c].astype(np.int64)
    o1, o2 = np.minimum(a, b), np.maximum(a, b)
    k = enc.n_models
    key = ((lo * k + hi) * 3 + o1) * 3 + o2
    uniq, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    t_o2 = uniq % 3
    t_o1 = (uniq // 3) % 3
    pair = uniq // 9
    return CaseTypes(
        n_models=k,
        lo=pair // k,
        hi=pair % k,
        o1=t_o1,
        o2=t_o2,
        counts=counts.astype(np.int64),
        of_case=inverse.reshape(-1),
    )


def type_matrix(types: CaseTypes, kind: str, *, reference_rank: np.ndarray | None = None) -> np.ndarray | sparse.csr_matrix:
    """Matrix M (T, K·K) such that ``counts @ M`` is the flattened win matrix for type counts ``counts``.

    Dense when small (the release: 18 × 16); a CSR sparse matrix otherwise (each row has ≤ 2 non-zeros).
    """
    k = types.n_models
    a, b = contributions(types.o1, types.o2, kind, lo=types.lo, hi=types.hi, reference_rank=reference_rank)
    t = types.n_types
    rows = np.concatenate([np.arange(t), np.arange(t)])
    cols = np.concatenate([types.lo * k + types.hi, types.hi * k + types.lo])
    vals = np.concatenate([a, b])
    m = sparse.csr_matrix((vals, (rows, cols)), shape=(t, k * k))
    # Dense (one BLAS product for all replicates) only while it is cheaper than the sparse products: each row has at
    # most 2 non-zeros of K·K columns, so the dense product's work grows K²/2 times faster. 10,000 replicates,
    # one BLAS thread: 2,000 contexts × 8 models (T·K² = 10,240) dense 7.6 ms, sparse 8.5 ms; × 16 models (152,320)
    # dense 67 ms, sparse 28 ms; 50,000 × 20 (452,000; 1,000 replicates) dense 23 ms, sparse 2.9 ms (issue 25: the
    # limit was 4,000,000). The sums are exact either way (whole and half counts in float64): the same values.
    if t * k * k <= 20_000:
        return m.toarray()
    return m


def win_matrices_from_type_matrix(m: np.ndarray | sparse.csr_matrix, counts: np.ndarray, n_models: int) -> np.ndarray:
    """Stack of win matrices (R, K, K) for a (R, T) array of type counts and a :func:`type_matrix` ``m``."""
    counts = np.asarray(counts, dtype=np.float64)
    if isinstance(m, np.ndarray):
        return (counts @ m).reshape(len(counts), n_models, n_models)
    # Sparse: blocks of 16 replicates, each transposed to (T, 16) and multiplied at once. ``(m.T @ counts.T).T``
    # made scipy copy all (R, T) counts into (T, R) order first, which at 200 models (54,000 types) cost more
    # than the products (issue 25). Every sum is of a few whole or half counts, exact in float64, so the
    # order of the additions changes nothing.
    by_cell = sparse.csr_matrix(m.T)
    flat = np.empty((len(counts), by_cell.shape[0]))
    for s in range(0, len(counts), 16):
        flat[s : s + 16] = (by_cell @ np.ascontiguousarray(counts[s : s + 16].T)).T
    return flat.reshape(len(counts), n_models, n_models)


def win_matrices_from_counts(types: CaseTypes, counts: np.ndarray, kind: str, **kw: np.ndarray) -> np.ndarray:
    """Stack of win matrices (R, K, K) for a (R, T) array of type counts (one row per replicate)."""
    return win_matrices_from_type_matrix(type_matrix(types, kind, **kw), counts, types.n_models)
