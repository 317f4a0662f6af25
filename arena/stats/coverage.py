"""Do the leaderboard's 95% intervals cover? A parametric bootstrap from the fitted strengths (issue 26).

Nobody reports whether their intervals cover; here we estimate it on the data's own design:

1. take the fitted strengths θ̂ (with the leaderboard's pseudo-count) as the truth;
2. S times, simulate every judgment of the design again (same pairs, same clusters) from BT at θ̂;
3. on each simulated data set compute the intervals the leaderboard shows — the percentile interval of a
   ``replicates``-replicate cluster bootstrap of the BT fit with the same pseudo-count — and the cluster-robust
   Wald interval θ̂* ± z·SE (:mod:`arena.stats.sandwich`);
4. count, per model, how often the interval contains θ̂.

Ties: a judgment is simulated as a tie with the data's tie share t and otherwise as a win of a with probability
(σ(θ_a − θ_b) − t/2)/(1 − t) (clipped to [0, 1]), which keeps E[y] = σ(θ_a − θ_b) (the BT mean) and the data's
share of ties. With no ties it is a plain Bernoulli draw.

Cost: per simulation O(n) to draw and aggregate, O(R·C + nnz) for the bootstrap's win matrices and one batched
fit of R matrices (:func:`arena.stats.bt.fit_bt_batch`); O(S·(n + R·(C + K²·iters))) in all. The simulated
data are never held all at once and nothing is quadratic in judgments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from .bootstrap import as_generator, percentile_ci
from .bt import fit_bt, fit_bt_batch
from .pairwise import PairJudgments, cluster_bootstrap_fits
from .sandwich import cluster_robust_se


@dataclass(frozen=True)
class Coverage:
    """Estimated coverage of the intervals, per model and overall.

    Attributes:
        truth: the strengths the data were simulated from (K,).
        bootstrap: per-model coverage of the percentile cluster-bootstrap interval (K,).
        sandwich: per-model coverage of the cluster-robust Wald interval (K,).
        bootstrap_overall, sandwich_overall: the mean over models.
        mc_se: Monte Carlo standard error of a per-model coverage near ``level`` (sqrt(level(1 − level)/S)).
        simulations, replicates, level, pseudo_count: the settings.
    """

    truth: np.ndarray
    bootstrap: np.ndarray
    sandwich: np.ndarray
    bootstrap_overall: float
    sandwich_overall: float
    mc_se: float
    simulations: int
    replicates: int
    level: float
    pseudo_count: float


def simulate_outcomes(j: PairJudgments, theta: np.ndarray, rng: np.random.Generator, tie_share: float = 0.0) -> np.ndarray:
    """One simulated score vector (n,) for the judgments of ``j`` from BT at ``theta`` (see module docstring)."""
    p = expit(np.asarray(theta)[j.a] - np.asarray(theta)[j.b])
    u = rng.random(j.n)
    if tie_share <= 0:
        return (u < p).astype(np.float64)
    win_p = np.clip((p - tie_share / 2.0) / (1.0 - tie_share), 0.0, 1.0)
    tie = rng.random(j.n) < tie_share
    return np.where(tie, 0.5, (u < win_p).astype(np.float64))


def ci_coverage(
    j: PairJudgments,
    theta: np.ndarray | None = None,
    *,
    pseudo_count: float = 0.5,
    simulations: int = 200,
    replicates: int = 200,
    level: float = 0.95,
    seed: int | np.random.Generator | None = 0,
) -> Coverage:
    """Coverage of the cluster-bootstrap and sandwich intervals of the BT strengths, by a parametric bootstrap.

    Preconditions:
        ``j`` has ≥ 2 models and ≥ 2 clusters; ``theta`` (optional) the truth to simulate from, by default the
        fit of ``j`` with ``pseudo_count``; ``simulations``, ``replicates`` ≥ 1.
    Returns:
        :class:`Coverage`. The Monte Carlo error of each coverage is about ``mc_se``.
    """
    if simulations < 1 or replicates < 1:
        raise ValueError("ci_coverage: simulations and replicates must be >= 1")
    rng = as_generator(seed)
    if theta is None:
        theta = fit_bt(j.win_matrix(), pseudo_count=pseudo_count).theta
    truth = np.asarray(theta, dtype=np.float64)
    truth = truth - truth.mean()
    tie_share = float(np.mean(j.y == 0.5)) if j.n else 0.0
    z = float(norm.ppf(0.5 + level / 2.0))
    k = j.n_models
    hit_boot = np.zeros(k)
    hit_sand = np.zeros(k)
    for _ in range(simulations):
        sim = PairJudgments(j.n_models, j.a, j.b, simulate_outcomes(j, truth, rng, tie_share), j.cluster, j.n_clusters)
        point = fit_bt_batch(sim.win_matrix()[None], pseudo_count=pseudo_count).theta[0]
        boot = cluster_bootstrap_fits(sim, replicates=replicates, seed=rng, pseudo_count=pseudo_count, init=point)
        ci = percentile_ci(boot.theta, level)
        hit_boot += (ci[:, 0] <= truth) & (truth <= ci[:, 1])
        se = cluster_robust_se(sim, point, pseudo_count=pseudo_count).se
        hit_sand += np.abs(point - truth) <= z * se
    cov_b = hit_boot / simulations
    cov_s = hit_sand / simulations
    return Coverage(
        truth=truth,
        bootstrap=cov_b,
        sandwich=cov_s,
        bootstrap_overall=float(cov_b.mean()),
        sandwich_overall=float(cov_s.mean()),
        mc_se=float(np.sqrt(level * (1 - level) / simulations)),
        simulations=simulations,
        replicates=replicates,
        level=level,
        pseudo_count=float(pseudo_count),
    )
