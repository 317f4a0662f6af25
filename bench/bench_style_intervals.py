"""Benchmark and fuller simulations: style control and honest intervals (issue 26).

Run from the repository root (``--quick`` shrinks every size, for a smoke run):

    .venv/bin/python bench/bench_style_intervals.py [--quick] [--seeds N] [--judgments N]

On synthetic judgments with planted effects (known strengths, a judge that rewards length, verbose models):

1. time of the style-controlled fit (``fit_style_bt``, 3 covariates) on 112,000 judgments, cold, beside
   statsmodels' ``Logit`` on the same design (the peer; also the accuracy check: max |Δ| of the coefficients),
   and the final gradient norm against the stated tolerance; target < 2 s;
2. time of the cluster-robust SEs (``cluster_robust_se``) on the same judgments beside statsmodels'
   ``cov_type="cluster"`` Logit (max |Δ| of the SEs);
3. time of ``drop_k_robustness`` on them (greedy path) and the k it finds;
4. coverage over ``--seeds`` seeds (default 1,000) of the 95% bootstrap CI of the length coefficient (600
   judgments, 200 replicates each; target 90–98%), and the mean absolute error of the style-controlled and of
   the plain strengths against the planted ones;
5. over the same number of seeds, how often the simultaneous rank sets contain every true rank (target ≥ 95%);
6. ``ci_coverage`` of the leaderboard's intervals on a 4-model, 60-context design, with the prior 0.5 and 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.stats import (  # noqa: E402
    ci_coverage,
    cluster_robust_se,
    drop_k_robustness,
    fit_bt,
    fit_style_bt,
    pair_judgments,
    rank_confidence_sets,
    style_bootstrap,
)
from arena.stats.pairwise import cluster_bootstrap_fits  # noqa: E402
from arena.stats.style import DEFAULT_GRAD_TOL  # noqa: E402

GAMMA_PER_WORD = 0.004


def planted(n: int, k: int, seed: int, *, per_cluster: int = 4):
    """Judgments of random pairs: β evenly spread, length reward ``GAMMA_PER_WORD``, two noise covariates."""
    rng = np.random.default_rng(seed)
    beta = np.linspace(0.5, -0.5, k)
    verbosity = rng.uniform(150, 450, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    diff_words = rng.normal(verbosity[a], 60) - rng.normal(verbosity[b], 60)
    noise = rng.integers(-3, 4, (n, 2)).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(beta[a] - beta[b] + GAMMA_PER_WORD * diff_words)))).astype(float)
    j = pair_judgments(a, b, y, cluster=np.arange(n) // per_cluster, n_models=k)
    return j, np.column_stack([diff_words, noise]), beta - beta.mean()


def _design(j, diffs):
    x = np.zeros((j.n, j.n_models))
    x[np.arange(j.n), j.a] += 1
    x[np.arange(j.n), j.b] -= 1
    return np.column_stack([x[:, 1:], diffs])


def bench_fits(n: int, k: int) -> None:
    j, diffs, _ = planted(n, k, 0)
    t0 = time.perf_counter()
    fit = fit_style_bt(j, diffs, features=["words", "x1", "x2"], pseudo_count=0.0)
    t_ours = time.perf_counter() - t0
    print(
        f"style fit, {n:,} judgments x {k} models x 3 covariates: {t_ours:.3f} s cold, {fit.iterations} Newton steps, "
        f"gradient {fit.grad_norm:.1e} (tol {DEFAULT_GRAD_TOL:.0e}), converged={fit.converged}"
    )
    try:
        import statsmodels.api as sm
    except ImportError:  # a dev dependency; the bench still runs without the peer
        sm = None
    if sm is not None:
        x = _design(j, diffs)
        t0 = time.perf_counter()
        res = sm.Logit(j.y, x).fit(disp=0, method="newton", tol=1e-12)
        t_sm = time.perf_counter() - t0
        beta = np.concatenate([[0.0], res.params[: k - 1]])
        err = max(np.abs(fit.beta - (beta - beta.mean())).max(), np.abs(fit.gamma_raw - res.params[k - 1 :]).max())
        print(f"  statsmodels Logit: {t_sm:.3f} s (ratio {t_sm / t_ours:.1f}x); max |coef diff| {err:.1e}")
    t0 = time.perf_counter()
    se = cluster_robust_se(j)
    t_se = time.perf_counter() - t0
    print(f"cluster-robust SEs, {j.n_clusters:,} clusters: {t_se:.3f} s")
    if sm is not None:
        x = _design(j, np.zeros((j.n, 0)))
        t0 = time.perf_counter()
        res = sm.Logit(j.y, x).fit(disp=0, method="newton", tol=1e-12, cov_type="cluster", cov_kwds={"groups": j.cluster})
        t_sm = time.perf_counter() - t0
        print(
            f"  statsmodels cluster Logit: {t_sm:.3f} s (ratio {t_sm / t_se:.1f}x); "
            f"max |SE(θi−θ0) diff| {np.abs(se.se_difference()[0, 1:] - res.bse).max():.1e}"
        )
    t0 = time.perf_counter()
    dk = drop_k_robustness(j, pseudo_count=0.5, exhaustive_fits=2_000)
    print(
        f"drop-k: {time.perf_counter() - t0:.3f} s; k={dk.k} ({dk.method}, exact={dk.exact}, proven lower bound {dk.lower_bound})"
    )


def simulate_coverage(seeds: int) -> None:
    covered, err_style, err_plain, rank_hits = 0, [], [], 0
    t0 = time.perf_counter()
    for seed in range(seeds):
        j, diffs, truth = planted(600, 6, 10_000 + seed)
        fit = fit_style_bt(j, diffs[:, :1], features=["words"], pseudo_count=0.5)
        boot = style_bootstrap(j, diffs[:, :1], fit, replicates=200, seed=seed)
        lo, hi = np.percentile(boot.gamma[:, 0] / fit.scale[0], [2.5, 97.5])
        covered += bool(lo <= GAMMA_PER_WORD <= hi)
        err_style.append(np.abs(fit.beta - truth).mean())
        err_plain.append(np.abs(fit_bt(j.win_matrix(), pseudo_count=0.5).theta - truth).mean())
        # Rank sets of the plain BT fit on judgments without a style effect.
        jr, _, truth_r = planted(600, 6, 20_000 + seed)
        jr = pair_judgments(jr.a, jr.b, _plain_outcomes(jr, truth_r, seed), cluster=jr.cluster, n_models=6)
        point = fit_bt(jr.win_matrix(), pseudo_count=0.5).theta
        sets = rank_confidence_sets(point, cluster_bootstrap_fits(jr, replicates=200, seed=seed, init=point).theta)
        true_rank = np.arange(1, 7)
        rank_hits += bool(((sets.lo <= true_rank) & (true_rank <= sets.hi)).all())
    print(
        f"{seeds} seeds ({time.perf_counter() - t0:.1f} s): length-coefficient 95% CI coverage {covered / seeds:.3f} "
        f"(target 0.90-0.98); mean |β − truth| style {np.mean(err_style):.3f}, plain {np.mean(err_plain):.3f}; "
        f"rank sets hold {rank_hits / seeds:.3f} (target >= 0.95)"
    )


def _plain_outcomes(j, truth, seed):
    rng = np.random.default_rng(seed)
    return (rng.random(j.n) < 1 / (1 + np.exp(-(truth[j.a] - truth[j.b])))).astype(float)


def bench_ci_coverage(simulations: int) -> None:
    rng = np.random.default_rng(3)
    theta = np.array([0.5, 0.2, -0.1, -0.6])
    ii, jj = np.triu_indices(4, 1)
    a, b = np.tile(ii, 60), np.tile(jj, 60)
    y = (rng.random(len(a)) < 1 / (1 + np.exp(-(theta[a] - theta[b])))).astype(float)
    j = pair_judgments(a, b, y, cluster=np.repeat(np.arange(60), 6))
    for pc in (0.5, 0.0):
        t0 = time.perf_counter()
        cov = ci_coverage(j, pseudo_count=pc, simulations=simulations, replicates=200, seed=0)
        print(
            f"ci_coverage pc={pc}: bootstrap {np.round(cov.bootstrap, 3).tolist()} sandwich "
            f"{np.round(cov.sandwich, 3).tolist()} (MC se {cov.mc_se:.3f}; {time.perf_counter() - t0:.1f} s)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--judgments", type=int, default=112_000)
    args, _ = ap.parse_known_args()  # run_all.py forwards every script the same arguments
    n = 5_000 if args.quick else args.judgments
    seeds = 20 if args.quick else args.seeds
    bench_fits(n, 20)
    simulate_coverage(seeds)
    bench_ci_coverage(40 if args.quick else 400)


if __name__ == "__main__":
    main()
