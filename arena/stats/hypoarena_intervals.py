"""HypoArena ranks and percentile intervals, shared by the leaderboard, the rubric table and the agreement.

Split from :mod:`arena.stats.hypoarena`: ratings, ν and win rates get percentile intervals (linear
interpolation); rank intervals use order statistics (``inverted_cdf``) so that they are whole ranks.
"""

from __future__ import annotations

import math

import numpy as np

from .rank_intervals import replicate_ranks


def _ranks(theta: np.ndarray, *, replicates: bool = True) -> np.ndarray:
    """Rank of each model (1 = best) per row of (R, K): over bootstrap replicates, tied strengths in random order
    (a tie spans its ranks); for a point estimate (``replicates=False``), equal strengths keep index (sorted-name)
    order."""
    return replicate_ranks(theta, break_ties=replicates)


def _pct(x: np.ndarray, level: float) -> np.ndarray:
    """Percentile interval per column of (R, K) (or of (R,)), linear interpolation; NaNs ignored."""
    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        return np.nanpercentile(x, [100 * a, 100 * (1 - a)], axis=0)


def _rank_ci(ranks: np.ndarray, level: float) -> np.ndarray:
    """Rank interval per column of (R, K) by order statistics (``inverted_cdf``), so both bounds are whole ranks."""
    a = (1.0 - level) / 2.0
    return np.quantile(ranks, [a, 1 - a], axis=0, method="inverted_cdf")


def _f(x: float) -> float | None:
    """JSON-friendly float (None for NaN)."""
    x = float(x)
    return None if math.isnan(x) else x


def _average_ranks_desc(values: np.ndarray) -> np.ndarray:
    """Ranks 1 = highest; tied values share the mean of the positions they span (scipy's "average")."""
    from scipy.stats import rankdata

    return rankdata(-np.asarray(values, dtype=np.float64), method="average")
