"""Case-level and context-cluster bootstraps of the Bradley–Terry fits, vectorised over replicates.

Resampling n cases with replacement and counting how many copies of each distinct case type were drawn
gives type counts distributed Multinomial(n, type frequencies / n). Drawing those counts directly is the
same bootstrap distribution, without materialising any resampled case: every replicate's win matrix is
``counts @ M`` (see :mod:`arena.stats.matrices`), all replicates form one (R, K, K) tensor, and the MM
algorithm runs on the whole tensor at once (:func:`arena.stats.bt.fit_bt_batch`).

The context-cluster bootstrap resamples whole contexts (the pairs of a context share proposals, so they
are not independent). Contexts with the same multiset of case types are interchangeable, so it draws a
multinomial over distinct context compositions, then turns context counts into case-type counts.

Randomness comes only from a seeded ``numpy.random.Generator``: equal seeds give equal results. (The
stream differs from a resample-the-rows implementation, so values match other tools only up to Monte
Carlo error.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .bt import fit_bt_batch, ranking_from_theta
from .folding import EncodedCases
from .matrices import FIT_KINDS, CaseTypes, case_types, win_matrices_from_counts

#: Elements (R·K·K) of one chunk of win matrices; larger problems are fitted chunk by chunk to bound memory.
_CHUNK_ELEMENTS = 4_000_000


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


def context_type_table(enc: EncodedCases, types: CaseTypes) -> tuple[np.ndarray, np.ndarray]:
    """Distinct context compositions over the complete cases.

    Returns:
        ``(table, freq)``: ``table`` (C, T) holds the case-type counts of each distinct composition,
        ``freq`` (C,) how many contexts have it. Contexts without a complete case are left out.
    """
    ctx = enc.context[enc.complete]
    _, ctx_idx = np.unique(ctx.astype(str), return_inverse=True)
    n_ctx = int(ctx_idx.max()) + 1 if len(ctx_idx) else 0
    t = types.n_types
    per_ctx = np.bincount(ctx_idx.reshape(-1) * t + types.of_case, minlength=n_ctx * t).reshape(n_ctx, t)
    table, freq = np.unique(per_ctx, axis=0, return_counts=True)
    return table, freq


def draw_context_counts(enc: EncodedCases, types: CaseTypes, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Type counts (R, T) of ``replicates`` context-cluster bootstrap resamples (contexts with replacement)."""
    table, freq = context_type_table(enc, types)
    n_ctx = int(freq.sum())
    if n_ctx == 0:
        return np.zeros((replicates, types.n_types), dtype=np.int64)
    ctx_counts = rng.multinomial(n_ctx, freq / n_ctx, size=replicates)
    return ctx_counts @ table


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
        counts = draw_case_counts(types, replicates, rng)
    elif unit == "context":
        counts = draw_context_counts(enc, types, replicates, rng)
    else:
        raise ValueError("unit must be 'case' or 'context'")
    k = enc.n_models
    chunk = max(1, _CHUNK_ELEMENTS // max(1, k * k))
    out = BootstrapFits(unit=unit, replicates=replicates)
    for kind in kinds:
        extra = {"reference_rank": reference_rank} if kind == "scheme_b" else {}
        thetas, divs, convs = [], [], []
        for start in range(0, replicates, chunk):
            w = win_matrices_from_counts(types, counts[start : start + chunk], kind, **extra)
            fit = fit_bt_batch(w, pseudo_count=pseudo_count, init=None if init is None else init.get(kind))
            thetas.append(fit.theta)
            divs.append(fit.diverged)
            convs.append(fit.converged)
        out.theta[kind] = np.concatenate(thetas)
        out.diverged[kind] = np.concatenate(divs)
        out.converged[kind] = np.concatenate(convs)
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
