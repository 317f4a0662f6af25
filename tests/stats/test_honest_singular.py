"""The honest-intervals section's coverage simulation at pseudo-count 0: a simulated set whose judgments separate
the models has no finite fit, hence no Wald interval (its information underflows, to exactly singular or not
depending on the pair's orientation). It is left out of the Wald coverage (and counted, with the reason) instead of
failing the whole leaderboard document.

The expected values come from the definitions written out here: which simulated sets separate the models is read
off the judgments :func:`arena.stats.coverage.simulate_outcomes` draws (the simulation's stated random stream), and
the Wald interval of each other set from the per-judgment CR1 sandwich; never from the aggregated code under test.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from arena.stats import encode_cases, fit_bt, judgments_from_cases
from arena.stats.bt import fit_bt_batch
from arena.stats.coverage import simulate_outcomes
from arena.stats.honest import (
    COVERAGE_REPLICATES,
    COVERAGE_SIMULATIONS,
    all_case_types,
    case_bootstrap_counts,
    honest_intervals_section,
    wald_coverage,
)
from arena.stats.pairwise import CHUNK_ELEMENTS, cluster_bootstrap_fits

COLUMNS = ["case", "context", "batch", "model_1", "model_2", "original", "reverse"]
Z95 = 1.959963984540054


def _two_models():
    """Two contexts, one case each: m0 wins both orders of the first, the orders of the second split. m0 wins 3 of
    the 4 judgments, so the MLE without a prior exists: θ0 − θ1 = ln 3."""
    rows = [("k0", "c0", "b", "m0", "m1", "m0", "m0"), ("k1", "c1", "b", "m0", "m1", "m1", "m0")]
    return encode_cases(pd.DataFrame(rows, columns=COLUMNS))


def _cr1_se(j, y: np.ndarray, theta: np.ndarray) -> np.ndarray | None:
    """CR1 standard errors of the centered strengths, judgment by judgment, without a prior; None when the
    information is singular (no Wald interval)."""
    k, n, g = len(theta), j.n, j.n_clusters
    p = expit(theta[j.a] - theta[j.b])
    info = np.zeros((k, k))
    np.add.at(info, (j.a, j.a), p * (1 - p))
    np.add.at(info, (j.b, j.b), p * (1 - p))
    np.add.at(info, (j.a, j.b), -p * (1 - p))
    np.add.at(info, (j.b, j.a), -p * (1 - p))
    try:
        bread = np.linalg.inv(info[1:, 1:])
    except np.linalg.LinAlgError:
        return None
    s = np.zeros((g, k))
    np.add.at(s, (j.cluster, j.a), y - p)
    np.add.at(s, (j.cluster, j.b), -(y - p))
    v = g / (g - 1) * (n - 1) / (n - (k - 1)) * bread @ (s[:, 1:].T @ s[:, 1:]) @ bread
    m = np.vstack([np.zeros((1, k - 1)), np.eye(k - 1)])
    m -= m.mean(axis=0)
    return np.sqrt(np.diag(m @ v @ m.T))


def _simulated_sets(enc, truth: np.ndarray, seed: int) -> list[np.ndarray]:
    """Every simulated set's judgments, drawn as the section draws them: a group of sets, then each set's case
    bootstrap (which takes its own numbers from the same stream before the next group)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 26]))
    j = judgments_from_cases(enc)
    complete = enc.subset(enc.complete)
    keys, _ = all_case_types(complete)
    k = enc.n_models
    tie_share = float(np.mean(j.y == 0.5))
    group = max(1, CHUNK_ELEMENTS // max(j.n, COVERAGE_REPLICATES * max(k * k, len(keys))))
    out = []
    for start in range(0, COVERAGE_SIMULATIONS, group):
        ys = [simulate_outcomes(j, truth, rng, tie_share) for _ in range(min(group, COVERAGE_SIMULATIONS - start))]
        for y in ys:
            codes = np.where(y == 1.0, 0, np.where(y == 0.0, 1, 2))
            half = len(y) // 2
            counts = np.zeros(len(keys), dtype=np.int64)
            for lo, hi, c1, c2 in zip(complete.lo, complete.hi, codes[:half], codes[half:], strict=True):
                counts[list(keys).index(((int(lo) * k + int(hi)) * 3 + min(c1, c2)) * 3 + max(c1, c2))] += 1
            case_bootstrap_counts(counts, COVERAGE_REPLICATES, rng)
        out += ys
    return out


def test_a_simulated_set_that_separates_the_models_is_left_out_of_the_wald_coverage() -> None:
    enc = _two_models()
    j = judgments_from_cases(enc)
    theta = fit_bt(j.win_matrix(), pseudo_count=0.0).theta
    assert theta[0] - theta[1] == pytest.approx(math.log(3))  # the MLE exists (hand-computed)
    reps = cluster_bootstrap_fits(j, replicates=50, seed=1, pseudo_count=0.0, init=theta).theta

    section = honest_intervals_section(enc, theta, reps, [0, 1], pseudo_count=0.0, level=0.95, seed=4)

    # Separated: one model wins all four judgments (a winner is a when y = 1, b when y = 0; no ties here).
    sets = _simulated_sets(enc, theta, seed=4)
    separated = [len(set(np.where(y == 1.0, j.a, j.b).tolist())) == 1 for y in sets]
    hits, used = np.zeros(2), 0
    for y, sep in zip(sets, separated, strict=True):
        point = fit_bt_batch(replace(j, y=y).win_matrix()[None], pseudo_count=0.0, init=theta).theta[0]
        if sep:  # no finite fit, hence no Wald interval (its information may or may not underflow to singular)
            continue
        se = _cr1_se(j, y, point)
        assert se is not None
        hits += np.abs(point - theta) <= Z95 * se
        used += 1
    coverage = section["coverage"]
    assert section["unavailable"] is None and coverage["simulations"] == COVERAGE_SIMULATIONS
    assert 0 < sum(separated) < COVERAGE_SIMULATIONS  # P(separated) = 0.75⁴ + 0.25⁴ ≈ 0.32 per set
    assert coverage["sandwich_simulations"] == used == COVERAGE_SIMULATIONS - sum(separated)
    assert coverage["sandwich"] == {"m0": float(hits[0] / used), "m1": float(hits[1] / used)}
    assert coverage["sandwich_overall"] == pytest.approx(hits.mean() / used)
    assert coverage["sandwich_skipped"].startswith(f"{sum(separated)} of the {COVERAGE_SIMULATIONS} simulated data sets")
    assert len(coverage["bootstrap"]) == 2  # the case bootstrap's coverage still counts every set


def test_with_a_prior_no_set_is_left_out() -> None:
    # With the protocol's pseudo-count every fit is finite: the Wald coverage is over every simulated set.
    enc = _two_models()
    j = judgments_from_cases(enc)
    theta = fit_bt(j.win_matrix(), pseudo_count=0.5).theta
    reps = cluster_bootstrap_fits(j, replicates=50, seed=1, pseudo_count=0.5, init=theta).theta

    coverage = honest_intervals_section(enc, theta, reps, [0, 1], pseudo_count=0.5, level=0.95, seed=4)["coverage"]

    assert coverage["sandwich_simulations"] == COVERAGE_SIMULATIONS and coverage["sandwich_skipped"] is None


def test_no_wald_coverage_when_every_set_is_left_out() -> None:
    # Out of reach of real data (the data are one of the sets the simulation can draw): the block's own helper.
    out = wald_coverage(np.zeros(2), COVERAGE_SIMULATIONS, ["m0", "m1"], [0, 1])

    assert out["sandwich"] is None and out["sandwich_overall"] is None and out["sandwich_simulations"] == 0
    assert "no Wald coverage" in out["sandwich_skipped"] and "pseudo-count" in out["sandwich_skipped"]
