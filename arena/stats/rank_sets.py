"""Simultaneous rank confidence sets from bootstrap replicates, by max-t over pairwise differences (issue 26).

Method (Mogstad, Romano, Shaikh and Wilhelm, "Inference for ranks with applications to mobility across
neighbourhoods and academic achievement across countries", Review of Economic Studies 91(1), 2024, §3):

1. For every pair i < j the difference D_ij = θ_i − θ_j, its estimate D̂_ij and its bootstrap standard
   deviation s_ij.
2. The critical value c is the ``level`` quantile over replicates of max_{i<j} |D*_ij − D̂_ij| / s_ij. Then the
   intervals D̂_ij ± c·s_ij hold for all pairs at once with probability ≈ ``level``.
3. Model k is *surely better* than i when D̂_ki − c·s_ki > 0. When every interval holds, the true strengths
   obey each such relation, so the true order is a linear extension of the surely-better relation. The rank
   set of i is [1 + #models surely above i, K − #models surely below i] (Mogstad et al.'s projection).
   The relation is transitive here: D*_ki = D*_kj + D*_ji in every replicate, so s_ki ≤ s_kj + s_ji and
   D̂_kj > c·s_kj, D̂_ji > c·s_ji give D̂_ki > c·s_ki. Hence the count-based set is exactly the range of
   positions of i over all orders consistent with the decided pairs (put everything above i first, or
   everything not below it): the tests check this against enumeration of all permutations.

So with probability ≥ ``level`` (asymptotically) every model's true rank lies in its set, simultaneously.

Cost: O(R·K²) time for the max-t (pairs of models, not of judgments), memory bounded by chunking replicates;
O(K²) for the sets. Nothing depends on the number of judgments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Elements (R·P) of one chunk of pairwise bootstrap differences.
_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class RankSets:
    """Simultaneous rank confidence sets.

    Attributes:
        lo, hi: (K,) int arrays, best rank 1: with the stated confidence, model i's true rank is in [lo[i], hi[i]]
            for every i at once.
        above: (K, K) bool, ``above[k, i]``: k is surely better than i.
        critical_value: the max-t critical value c.
        level: the confidence level.
    """

    lo: np.ndarray
    hi: np.ndarray
    above: np.ndarray
    critical_value: float
    level: float


def _pair_sd(boot: np.ndarray, ii: np.ndarray, jj: np.ndarray, chunk: int) -> np.ndarray:
    """Bootstrap standard deviation of θ_i − θ_j for each pair (P,), accumulated chunk by chunk (two passes)."""
    r = boot.shape[0]
    total = np.zeros(len(ii))
    for s in range(0, r, chunk):
        part = boot[s : s + chunk]
        total += (part[:, ii] - part[:, jj]).sum(axis=0)
    mean = total / r
    sq = np.zeros(len(ii))
    for s in range(0, r, chunk):
        part = boot[s : s + chunk]
        sq += ((part[:, ii] - part[:, jj] - mean) ** 2).sum(axis=0)
    return np.sqrt(sq / max(r - 1, 1))


def max_t_critical_value(theta: np.ndarray, boot: np.ndarray, level: float = 0.95) -> tuple[float, np.ndarray]:
    """The max-t critical value c over all pairs, and the pairs' bootstrap SDs as a (K, K) symmetric matrix.

    A pair whose difference never varies (SD 0) is left out of the maximum; its interval is the point D̂.
    The quantile uses the "higher" order statistic (conservative).
    """
    theta = np.asarray(theta, dtype=np.float64)
    boot = np.asarray(boot, dtype=np.float64)
    k = len(theta)
    ii, jj = np.triu_indices(k, 1)
    if len(ii) == 0:
        return 0.0, np.zeros((k, k))
    chunk = max(1, _CHUNK_ELEMENTS // len(ii))
    sd = _pair_sd(boot, ii, jj, chunk)
    d_hat = theta[ii] - theta[jj]
    varies = sd > 0
    inv = np.where(varies, 1.0 / np.where(varies, sd, 1.0), 0.0)
    tmax = np.empty(boot.shape[0])
    for s in range(0, boot.shape[0], chunk):
        part = boot[s : s + chunk]
        tmax[s : s + chunk] = (np.abs(part[:, ii] - part[:, jj] - d_hat) * inv).max(axis=1)
    c = float(np.quantile(tmax, level, method="higher"))
    sd_mat = np.zeros((k, k))
    sd_mat[ii, jj] = sd
    sd_mat[jj, ii] = sd
    return c, sd_mat


def rank_confidence_sets(theta: np.ndarray, boot: np.ndarray, level: float = 0.95) -> RankSets:
    """Simultaneous rank confidence sets of the models from point strengths ``theta`` (K,) and replicates ``boot`` (R, K).

    Preconditions:
        ``boot`` are bootstrap replicates of ``theta`` (e.g. the context bootstrap's ordered fit), R ≥ 1,
        ``0 < level < 1``.
    Returns:
        :class:`RankSets` (ranks 1 = best). See the module docstring for the guarantee.
    """
    theta = np.asarray(theta, dtype=np.float64)
    boot = np.asarray(boot, dtype=np.float64)
    if boot.ndim != 2 or boot.shape[1] != len(theta):
        raise ValueError(f"rank_confidence_sets: boot must have shape (R, {len(theta)}), got {boot.shape}")
    if not 0 < level < 1:
        raise ValueError(f"rank_confidence_sets: level must be in (0, 1), got {level}")
    k = len(theta)
    c, sd = max_t_critical_value(theta, boot, level)
    diff = theta[:, None] - theta[None, :]  # diff[k, i] = θ_k − θ_i
    above = (diff - c * sd) > 0
    np.fill_diagonal(above, False)
    lo = 1 + above.sum(axis=0)
    hi = k - above.sum(axis=1)
    return RankSets(lo=lo.astype(np.int64), hi=hi.astype(np.int64), above=above, critical_value=c, level=level)
