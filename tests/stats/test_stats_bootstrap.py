"""Bootstraps: counting distinct case types is the same distribution as resampling cases; determinism."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.stats import bootstrap_fits, encode_cases, fit_bt, percentile_ci, ranking_summary, win_matrix
from arena.stats.bootstrap import context_type_table, draw_case_counts
from arena.stats.matrices import case_types


def synthetic_cases(n_contexts: int = 30, seed: int = 0) -> pd.DataFrame:
    """All 3 pairs of models P, Q, R per context, verdicts from a BT model with strengths 1, 0, −1."""
    rng = np.random.default_rng(seed)
    strength = {"P": 1.0, "Q": 0.0, "R": -1.0}
    rows = []
    for c in range(n_contexts):
        for a, b in (("P", "Q"), ("P", "R"), ("Q", "R")):
            p = 1 / (1 + np.exp(strength[b] - strength[a]))
            o = a if rng.random() < p else b
            r = a if rng.random() < p else b
            rows.append((f"{c}-{a}{b}", f"ctx{c}", f"batch{c % 2}", a, b, o, r))
    return pd.DataFrame(rows, columns=["case", "context", "batch", "model_1", "model_2", "original", "reverse"])


def test_case_types_hand() -> None:
    df = pd.DataFrame(
        [
            ("1", "x", "b", "P", "Q", "P", "P"),  # type (P,Q) stable P
            ("2", "x", "b", "P", "Q", "P", "Q"),  # type (P,Q) flip
            ("3", "y", "b", "Q", "P", "Q", "P"),  # same flip type (original/reverse order does not matter)
            ("4", "y", "b", "P", "Q", "P", "P"),  # stable P again
            ("5", "z", "b", "P", "R", "TIE", "R"),  # (P,R) tie+R
        ],
        columns=["case", "context", "batch", "model_1", "model_2", "original", "reverse"],
    )
    enc = encode_cases(df)
    t = case_types(enc)
    assert t.n_types == 3
    assert sorted(t.counts.tolist()) == [1, 2, 2]
    # Contexts: x = {stable P, flip}, y = {flip, stable P} (same composition), z = {tie+R}.
    table = context_type_table(enc, t).toarray()  # rows: contexts x, y, z (sorted ids)
    assert table.sum(axis=1).tolist() == [2, 2, 1]
    assert np.array_equal(table[0], table[1])
    assert table[2].sum() == table[2].max() == 1


def test_multinomial_counts_match_case_resampling_moments() -> None:
    # Resampling n cases with replacement gives type counts with mean n·p and covariance n(diag p − p pᵀ).
    enc = encode_cases(synthetic_cases())
    t = case_types(enc)
    n = t.counts.sum()
    p = t.counts / n
    draws = draw_case_counts(t, 40_000, np.random.default_rng(1))
    assert draws.sum(axis=1).tolist() == [n] * 40_000
    assert draws.mean(axis=0) == pytest.approx(n * p, abs=0.1)
    cov = np.cov(draws.T)
    assert cov == pytest.approx(n * (np.diag(p) - np.outer(p, p)), abs=0.25)


def test_bootstrap_matches_naive_case_resampling() -> None:
    # A plain loop that resamples case rows and refits agrees with the multinomial/vectorised bootstrap
    # up to Monte Carlo error.
    df = synthetic_cases(40, seed=2)
    enc = encode_cases(df)
    ours = bootstrap_fits(enc, kinds=("ordered",), replicates=4000, seed=0, pseudo_count=0.5)
    rng = np.random.default_rng(123)
    naive = []
    for _ in range(1500):
        sample = df.iloc[rng.integers(0, len(df), len(df))].assign(case=[str(i) for i in range(len(df))])
        naive.append(fit_bt(win_matrix(encode_cases(sample, models=enc.models), "ordered"), pseudo_count=0.5).theta)
    naive_arr = np.array(naive)
    assert ours.theta["ordered"].std(axis=0) == pytest.approx(naive_arr.std(axis=0), rel=0.12)
    assert percentile_ci(ours.theta["ordered"]) == pytest.approx(percentile_ci(naive_arr), abs=0.08)


def test_seeded_bootstrap_is_deterministic() -> None:
    enc = encode_cases(synthetic_cases())
    for unit in ("case", "context"):
        a = bootstrap_fits(enc, unit=unit, replicates=300, seed=42)
        b = bootstrap_fits(enc, unit=unit, replicates=300, seed=42)
        c = bootstrap_fits(enc, unit=unit, replicates=300, seed=43)
        for kind in a.theta:
            assert np.array_equal(a.theta[kind], b.theta[kind])
            assert not np.array_equal(a.theta[kind], c.theta[kind])


def test_warm_start_does_not_change_results() -> None:
    enc = encode_cases(synthetic_cases())
    point = fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5).theta
    cold = bootstrap_fits(enc, kinds=("ordered",), replicates=200, seed=1)
    warm = bootstrap_fits(enc, kinds=("ordered",), replicates=200, seed=1, init={"ordered": point})
    assert warm.theta["ordered"] == pytest.approx(cold.theta["ordered"], abs=1e-8)


def test_cluster_bootstrap_keeps_contexts_whole() -> None:
    # With one context type only, every resample is that context repeated: all replicates are identical.
    df = synthetic_cases(1)
    df = pd.concat([df.assign(case=df["case"] + f"#{i}", context=f"c{i}") for i in range(5)], ignore_index=True)
    boot = bootstrap_fits(encode_cases(df), unit="context", kinds=("ordered",), replicates=50, seed=0)
    assert np.ptp(boot.theta["ordered"], axis=0) == pytest.approx(0.0, abs=1e-12)


def test_ranking_summary_hand() -> None:
    theta = np.array([[2.0, 1.0, 0.0], [2.0, 1.0, 0.0], [0.0, 1.0, 2.0], [1.0, 2.0, 0.0]])
    rs = ranking_summary(theta)
    assert rs.modal == (0, 1, 2)
    assert rs.modal_fraction == 0.5
    assert rs.top1.tolist() == [0.5, 0.25, 0.25]
    # Model 0 ranks first in 2 replicates, second in 1, third in 1.
    assert rs.rank_probabilities[0].tolist() == [0.5, 0.25, 0.25]


def test_percentile_ci_hand() -> None:
    theta = np.arange(101, dtype=float)[:, None]
    # numpy's linear interpolation: 2.5th percentile of 0..100 is 2.5, 97.5th is 97.5.
    assert percentile_ci(theta) == pytest.approx(np.array([[2.5, 97.5]]), abs=1e-12)
