"""Case-level and context-cluster bootstraps of the Bradley–Terry fits, vectorised over replicates.

Resampling n cases with replacement and counting how many copies of each distinct case type were drawn
gives type counts distributed Multinomial(n, type frequencies / n). Drawing those counts directly is the
same bootstrap distribution, without materialising any resampled case: every replicate's win matrix is
``counts @ M`` (see :mod:`arena.stats.matrices`), all replicates form one (R, K, K) tensor, and the MM
algorithm runs on the whole tensor at once (:func:`arena.stats.bt.fit_bt_batch`).

The context-cluster bootstrap resamples whole contexts (the pairs of a context share proposals, so they
are not independent): it draws C context indices per replicate, counts them, and turns context counts into
case-type counts through a sparse (C, T) table (each context holds a handful of the T case types). Until
issue 10 it drew a multinomial over distinct context compositions and multiplied a dense table in int64:
the same bootstrap distribution, but 655 s and 20 GiB at 50,000 contexts; the random stream changed then,
so cluster values match that version only up to Monte Carlo error (tests/stats/test_stats_bootstrap.py).

Replicates are drawn and fitted in chunks, so memory is bounded; chunks consume the random stream as
one big draw would, so the chunk size never changes a value.

Randomness comes only from a seeded ``numpy.random.Generator``: equal seeds give equal results. (The
stream differs from a resample-the-rows implementation, so values match other tools only up to Monte
Carlo error.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from .bt import fit_bt_batch, ranking_from_theta
from .folding import EncodedCases
from .matrices import FIT_KINDS, CaseTypes, case_types, type_matrix, win_matrices_from_type_matrix

#: Elements (R·K·K) of one chunk of win matrices; larger problems are fitted chunk by chunk to bound memory.
_CHUNK_ELEMENTS = 4_000_000
#: Elements (R·T or R·C) of one chunk of type or context counts.
_COUNT_ELEMENTS = 16_000_000


def as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A numpy Generator from a seed (or the generator itself)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def draw_case_counts(types: CaseTypes, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Type counts (R, T) of ``replicates`` case-level bootstrap resamples (n cases with replacement each)."""
    n = int(types.counts.sum())
    if n == 0:
        return np.zeros((replicates, types.n_types), dtype=np.int64)
    return rng.multinomial(n, types.counts / n, size=replicates)


def context_type_table(enc: EncodedCases, types: CaseTypes) -> sparse.csr_matrix:
    """Case-type counts of each context, as a sparse (C, T) matrix over the contexts with a complete case.

    Rows follow the sorted context ids. Sparse because a context holds a handful of case types (6 pairs at
    most in the release's design) among T, which grows with models² (about 120,000 at 200 models).
    """
    ctx = enc.context[enc.complete]
    _, ctx_idx = np.unique(ctx.astype(str), return_inverse=True)
    ctx_idx = ctx_idx.reshape(-1)
    n_ctx = int(ctx_idx.max()) + 1 if len(ctx_idx) else 0
    ones = np.ones(len(ctx_idx), dtype=np.int64)
    # Duplicate (context, type) entries are summed by the conversion to CSR.
    return sparse.csr_matrix((ones, (ctx_idx, types.of_case)), shape=(n_ctx, types.n_types))


def draw_context_counts(table: sparse.csr_matrix, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Type counts (R, T) of ``replicates`` context-cluster bootstrap resamples (C contexts with replacement).

    Each replicate draws C context indices uniformly (``rng.integers``), counts them, and turns context
    counts into type counts with one sparse product. Drawing a chunk of replicates after another consumes
    the stream exactly like one larger draw, so chunking does not change the values.
    """
    n_ctx, t = table.shape
    if n_ctx == 0:
        return np.zeros((replicates, t), dtype=np.int64)
    idx_type = np.int32 if n_ctx < 2**31 else np.int64  # 32-bit draws are about twice as fast
    picks = rng.integers(0, n_ctx, size=(replicates, n_ctx), dtype=idx_type)
    # Per replicate: count the drawn contexts, then one sparse mat-vec (T, C) @ (C,) in CSC form, which walks
    # the contexts in order and adds into the small T-vector. Batching the replicates instead needs a (C, R)
    # transpose that costs more than the products.
    by_type = sparse.csc_matrix(table.T, dtype=np.float64)
    out = np.empty((replicates, t), dtype=np.int64)
    for r in range(replicates):
        out[r] = np.rint(by_type @ np.bincount(picks[r], minlength=n_ctx).astype(np.float64))
    return out


def _chunk_replicates(n_models: int, n_types: int, n_contexts: int) -> int:
    """Replicates per chunk: (R, K, K) win matrices, (R, T) type counts and (R, C) context counts stay bounded."""
    return max(1, min(_CHUNK_ELEMENTS // max(1, n_models * n_models), _COUNT_ELEMENTS // max(1, n_types, n_contexts)))


@dataclass(frozen=True)
class BootstrapFits:
    """Bootstrap replicates of one or more BT fits.

    Attributes:
        unit: ``"case"`` or ``"context"``.
        replicates: R.
        theta: fit kind → (R, K) centered log-abilities.
        diverged, converged: fit kind → (R,) flags (diverged replicates only arise with pseudo-count 0).
    """

    unit: str
    replicates: int
    theta: dict[str, np.ndarray] = field(default_factory=dict)
    diverged: dict[str, np.ndarray] = field(default_factory=dict)
    converged: dict[str, np.ndarray] = field(default_factory=dict)


def bootstrap_fits(
    enc: EncodedCases,
    *,
    unit: str = "case",
    kinds: Sequence[str] = FIT_KINDS,
    replicates: int = 10_000,
    seed: int | np.random.Generator | None = 0,
    pseudo_count: float = 0.5,
    init: dict[str, np.ndarray] | None = None,
    reference_rank: np.ndarray | None = None,
) -> BootstrapFits:
    """Bootstrap the BT fits ``kinds`` of the complete cases of ``enc``.

    Preconditions:
        ``unit`` is ``"case"`` (resample canonical pairs; both orders travel together) or ``"context"``
        (resample whole contexts); ``replicates >= 1``; ``init`` optionally maps a kind to a warm-start
        θ (K,) such as its point estimate; ``reference_rank`` is needed only for kind ``"scheme_b"``.
        All kinds are fitted on the same resamples.
    Returns:
        :class:`BootstrapFits`.
    """
    if replicates < 1:
        raise ValueError("replicates must be >= 1")
    rng = as_generator(seed)
    types = case_types(enc)
    if unit == "case":
        n_ctx = 0

        def draw(m: int) -> np.ndarray:
            return draw_case_counts(types, m, rng)

    elif unit == "context":
        table = context_type_table(enc, types)
        n_ctx = table.shape[0]

        def draw(m: int) -> np.ndarray:
            return draw_context_counts(table, m, rng)

    else:
        raise ValueError("unit must be 'case' or 'context'")
    k = enc.n_models
    # Replicates are drawn and fitted chunk by chunk, so memory stays bounded whatever R, K, T and C are;
    # the chunks consume the random stream exactly as one draw of all R would.
    chunk = _chunk_replicates(k, types.n_types, n_ctx)
    mats = {}
    for kind in kinds:
        extra = {"reference_rank": reference_rank} if kind == "scheme_b" else {}
        mats[kind] = type_matrix(types, kind, **extra)
    parts: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {kind: [] for kind in kinds}
    for start in range(0, replicates, chunk):
        counts = draw(min(chunk, replicates - start))
        for kind in kinds:
            w = win_matrices_from_type_matrix(mats[kind], counts, k)
            fit = fit_bt_batch(w, pseudo_count=pseudo_count, init=None if init is None else init.get(kind))
            parts[kind].append((fit.theta, fit.diverged, fit.converged))
    out = BootstrapFits(unit=unit, replicates=replicates)
    for kind in kinds:
        out.theta[kind] = np.concatenate([p[0] for p in parts[kind]])
        out.diverged[kind] = np.concatenate([p[1] for p in parts[kind]])
        out.converged[kind] = np.concatenate([p[2] for p in parts[kind]])
    return out


def percentile_ci(theta: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Percentile interval per column of a (R, K) array: shape (K, 2), linear interpolation between order statistics."""
    alpha = (1.0 - level) / 2.0
    return np.percentile(theta, [100 * alpha, 100 * (1 - alpha)], axis=0).T


@dataclass(frozen=True)
class RankingSummary:
    """Distribution of full rankings over replicates.

    Attributes:
        rankings: distinct rankings (tuples of model indices, best first), most frequent first
            (equal counts: lexicographic order of the index tuples, so the result is deterministic).
        counts: replicate count of each.
        top1: (K,) fraction of replicates where each model ranks first.
        rank_probabilities: (K, K) fraction of replicates where model i has rank position r.
    """

    rankings: list[tuple[int, ...]]
    counts: np.ndarray
    top1: np.ndarray
    rank_probabilities: np.ndarray

    @property
    def modal(self) -> tuple[int, ...]:
        """The most frequent ranking."""
        return self.rankings[0]

    @property
    def modal_fraction(self) -> float:
        """Fraction of replicates giving the modal ranking."""
        return float(self.counts[0] / self.counts.sum())


def ranking_summary(theta: np.ndarray) -> RankingSummary:
    """Summarise the rankings implied by replicate strengths ``theta`` (R, K)."""
    ranks = ranking_from_theta(theta)
    r, k = ranks.shape
    uniq, counts = np.unique(ranks, axis=0, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    positions = np.empty_like(ranks)
    np.put_along_axis(positions, ranks, np.broadcast_to(np.arange(k), ranks.shape), axis=1)
    rank_prob = np.stack([np.bincount(positions[:, i], minlength=k) for i in range(k)]) / r
    return RankingSummary(
        rankings=[tuple(int(x) for x in uniq[i]) for i in order],
        counts=counts[order],
        top1=np.bincount(ranks[:, 0], minlength=k) / r,
        rank_probabilities=rank_prob,
    )
