"""Benchmark: 10,000-replicate case bootstrap of the ordered Bradley–Terry fit on the Lit2Test release.

Run from the repository root:

    .venv/bin/python bench/bench_bootstrap.py [--replicates N] [--skip-evalica] [--skip-sklearn]

Times, on the 1,200 release cases (2,400 ordered judgments):

* ours: ``arena.stats.bootstrap_fits`` (multinomial counts over the 18 distinct case types, one (R, K, K)
  tensor, Newman's BT iteration vectorised over replicates; MM before issue 10), always with 10,000 replicates;
* evalica 0.4.2: ``evalica.bootstrap(evalica.bradley_terry, ...)`` (scipy.stats.bootstrap over rows, one BT
  fit per replicate, percentile intervals), fed one weighted row per case so that it resamples cases too;
* the common LMSYS-arena recipe: a per-replicate scikit-learn ``LogisticRegression`` (design matrix +1/−1
  per ordered battle, ``fit_intercept=False``, large C) on resampled cases (both orders travel together).

``--replicates N`` (< 10,000) shortens only the two peers: their time is then measured on N replicates and
extrapolated linearly to 10,000, and the output says so. Also timed: the whole ``leaderboard_document``
(both 10,000-replicate bootstraps) and a synthetic 100-model × 1,000,000-judgment fit.

Data: ``$LIT2TEST_DATA`` or ``<repo>/../shared/data/lit2test``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.stats import (  # noqa: E402
    bootstrap_fits,
    encode_cases,
    fit_bt,
    leaderboard_document,
    load_release_cases,
    percentile_ci,
    win_matrix,
    win_matrix_from_judgments,
)
from arena.stats.folding import HI, LO  # noqa: E402

FULL = 10_000


def data_path() -> Path:
    env = os.environ.get("LIT2TEST_DATA")
    base = Path(env) if env else ROOT / ".." / "shared" / "data" / "lit2test"
    return base / "corrected_folded_pairs.jsonl"


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    """Median wall time over ``repeat`` runs and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def ours(enc, replicates: int) -> np.ndarray:
    point = fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5).theta
    boot = bootstrap_fits(
        enc, unit="case", kinds=("ordered",), replicates=replicates, seed=0, pseudo_count=0.5, init={"ordered": point}
    )
    return boot.theta["ordered"]


def ordered_rows(enc) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(case index, first model, second model, first won) for the 2 ordered judgments of every complete case."""
    c = np.flatnonzero(enc.complete)
    case = np.concatenate([c, c])
    lo = enc.lo[case]
    hi = enc.hi[case]
    verdict = np.concatenate([enc.original[c], enc.reverse[c]])
    if not np.isin(verdict, [LO, HI]).all():
        raise SystemExit("ordered ties present: the peers below are set up for decisive verdicts only")
    return case, lo, hi, verdict == LO


def evalica_bootstrap(enc, replicates: int) -> np.ndarray:
    import evalica

    # One weighted row per case, so that scipy's row bootstrap inside evalica resamples cases (both orders
    # together) like ours: with win_weight 1 and tie_weight 0.5, a stable case is a win of weight 2 (two
    # ordered wins) and a flipped case a draw of weight 2 (one ordered win each).
    ordered_rows(enc)  # raises on ordered ties, which one row per case cannot express
    c = enc.complete
    names = np.array(enc.models, dtype=object)
    xs, ys = names[enc.lo[c]].tolist(), names[enc.hi[c]].tolist()
    o, r = enc.original[c], enc.reverse[c]
    winners = [
        evalica.Winner.X if a == b == LO else evalica.Winner.Y if a == b == HI else evalica.Winner.Draw
        for a, b in zip(o, r, strict=True)
    ]
    weights = [2.0] * len(winners)
    res = evalica.bootstrap(
        evalica.bradley_terry,
        xs,
        ys,
        winners,
        weights=weights,
        n_resamples=replicates,
        bootstrap_method="percentile",
        random_state=0,
    )
    # evalica reports π scores; turn into centered log-abilities for comparison.
    dist = np.log(res.distribution[list(enc.models)].to_numpy())
    return dist - dist.mean(axis=1, keepdims=True)


def sklearn_bootstrap(enc, replicates: int) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    case, lo, hi, lo_won = ordered_rows(enc)
    k = enc.n_models
    n_cases = int(enc.complete.sum())
    # Rows of each case (its two ordered judgments) so that a resampled case brings both orders.
    order = np.argsort(case, kind="stable")
    rows_of = order.reshape(n_cases, 2)
    x_all = np.zeros((len(case), k))
    x_all[np.arange(len(case)), lo] = 1.0
    x_all[np.arange(len(case)), hi] = -1.0
    y_all = lo_won.astype(int)
    rng = np.random.default_rng(0)
    out = np.empty((replicates, k))
    model = LogisticRegression(fit_intercept=False, C=1e6, tol=1e-6, max_iter=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(replicates):
            pick = rows_of[rng.integers(0, n_cases, n_cases)].ravel()
            model.fit(x_all[pick], y_all[pick])
            coef = model.coef_[0]
            out[r] = coef - coef.mean()
    return out


def synthetic_fit() -> tuple[float, float, object, float]:
    rng = np.random.default_rng(0)
    k, n = 100, 1_000_000
    true = rng.normal(0, 1, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    a_won = rng.random(n) < 1 / (1 + np.exp(-(true[a] - true[b])))
    winners, losers = np.where(a_won, a, b), np.where(a_won, b, a)

    def run():
        w = win_matrix_from_judgments(winners, losers, k)
        return fit_bt(w)

    t_agg, _ = timed(lambda: win_matrix_from_judgments(winners, losers, k), repeat=3)
    t_all, fit = timed(run, repeat=3)
    err = float(np.abs(fit.theta - (true - true.mean())).max())
    return t_all, t_agg, fit, err


def fmt_ci(ci: np.ndarray, names: list[str]) -> str:
    """Intervals best first (by interval midpoint)."""
    order = np.argsort(-(ci[:, 0] + ci[:, 1]), kind="stable")
    return ", ".join(f"{names[i]} [{ci[i, 0]:.2f}, {ci[i, 1]:.2f}]" for i in order)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--replicates",
        type=int,
        default=FULL,
        help="replicates for the slow peers (evalica, sklearn); < 10000 is extrapolated linearly",
    )
    parser.add_argument("--skip-evalica", action="store_true")
    parser.add_argument("--skip-sklearn", action="store_true")
    args = parser.parse_args()
    n_peer = max(1, min(args.replicates, FULL))

    path = data_path()
    if not path.exists():
        raise SystemExit(f"release data not found: {path} (set LIT2TEST_DATA)")
    cases = load_release_cases(path)
    enc = encode_cases(cases)
    names = list(enc.models)
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} cores,"
        f" OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')!r}"
    )
    print(f"data: {path.resolve()}  ({len(cases)} cases, {2 * int(enc.complete.sum())} ordered judgments)")
    print()

    ours(enc, 200)  # warm-up (imports, allocator)
    t_ours, theta = timed(lambda: ours(enc, FULL), repeat=5)
    print(f"ours      10,000-replicate case bootstrap, ordered BT (pc 0.5): {t_ours:8.3f} s  (median of 5)")
    print(f"          95% CI: {fmt_ci(percentile_ci(theta), names)}")

    results: dict[str, float] = {}
    for label, fn, skip in (("evalica", evalica_bootstrap, args.skip_evalica), ("sklearn", sklearn_bootstrap, args.skip_sklearn)):
        if skip:
            continue
        t, dist = timed(lambda fn=fn: fn(enc, n_peer))
        t_full = t * FULL / n_peer
        results[label] = t_full
        note = "measured" if n_peer == FULL else f"EXTRAPOLATED linearly from {n_peer} replicates ({t:.3f} s)"
        print(f"{label:9s} 10,000-replicate case bootstrap:                        {t_full:8.3f} s  ({note})")
        print(f"          95% CI: {fmt_ci(percentile_ci(dist), names)}")
    print()
    for label, t in results.items():
        print(f"ratio {label}/ours: {t / t_ours:10.1f}x")
    if results:
        print(
            "(all three resample cases; the peers fit plain BT without the 0.5 pseudo-count, evalica with its default"
            " tolerance 1e-6 / 100 iterations, sklearn with C=1e6: their intervals differ slightly for those reasons)"
        )
    print()

    leaderboard_document(cases, replicates=200, seed=0)  # warm-up
    t_doc, _ = timed(lambda: leaderboard_document(cases, replicates=FULL, seed=0), repeat=3)
    print(f"leaderboard_document, both bootstraps at 10,000 replicates:  {t_doc:8.3f} s  (median of 3)")

    t_syn, t_agg, fit, err = synthetic_fit()
    print(
        f"synthetic 100 models x 1,000,000 ordered judgments:          {t_syn:8.3f} s  "
        f"(aggregation {t_agg:.3f} s; {fit.iterations} iterations, converged={fit.converged}, "
        f"max |θ − true| = {err:.3f})"
    )


if __name__ == "__main__":
    main()
