"""Style control (issue 26): BT with standardised style differences, its convergence, bootstrap and rank Δ.

Expected values come from statsmodels, from the plain BT fit of :mod:`arena.stats.bt` (existing, separately
tested code), from a gradient written here with plain loops, or from the planted truth of a simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm

from arena.stats import (
    fit_bt,
    fit_style_bt,
    pair_judgments,
    style_bootstrap,
    style_control,
    style_differences,
    style_features,
)
from arena.stats.style import DEFAULT_GRAD_TOL

#: Planted truth: strengths, each model's typical answer length (words) and the judge's reward per word.
BETA = np.array([0.5, 0.3, 0.1, -0.1, -0.3, -0.5])
VERBOSITY = np.array([150.0, 200.0, 420.0, 180.0, 430.0, 160.0])
GAMMA_PER_WORD = 0.004


def _planted(n: int, seed: int, *, ties: float = 0.0):
    """Judgments of random pairs whose winner depends on β and on the length difference (raw words)."""
    rng = np.random.default_rng(seed)
    k = len(BETA)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    words_a = rng.normal(VERBOSITY[a], 60.0)
    words_b = rng.normal(VERBOSITY[b], 60.0)
    diff = words_a - words_b
    y = (rng.random(n) < 1 / (1 + np.exp(-(BETA[a] - BETA[b] + GAMMA_PER_WORD * diff)))).astype(float)
    y[rng.random(n) < ties] = 0.5
    cluster = rng.integers(0, max(2, n // 4), n)
    return pair_judgments(a, b, y, cluster=cluster, n_models=k), diff[:, None]


def _gradient_by_loops(j, diffs: np.ndarray, fit) -> np.ndarray:
    """∂ℓ/∂(β, γ) of the mean log-likelihood (data + pseudo-count prior), one judgment at a time."""
    k, p = j.n_models, diffs.shape[1]
    z = diffs / fit.scale
    g = np.zeros(k + p)
    for i in range(j.n):
        eta = fit.beta[j.a[i]] - fit.beta[j.b[i]] + float(z[i] @ fit.gamma)
        r = j.y[i] - 1 / (1 + math.exp(-eta))
        g[j.a[i]] += r
        g[j.b[i]] -= r
        g[k:] += r * z[i]
    c = fit.pseudo_count
    for u in range(k):
        for v in range(k):
            if u != v:  # c wins of u over v: score c·(1 − σ(β_u − β_v)) for u, minus that for v
                r = c * (1 - 1 / (1 + math.exp(-(fit.beta[u] - fit.beta[v]))))
                g[u] += r
                g[v] -= r
    return g / j.n


def test_without_covariates_it_is_the_plain_bt_fit_with_the_same_prior() -> None:
    j, _ = _planted(800, 0, ties=0.1)
    for pc in (0.0, 0.5, 2.0):
        fit = fit_style_bt(j, np.zeros((j.n, 0)), pseudo_count=pc)
        np.testing.assert_allclose(fit.beta, fit_bt(j.win_matrix(), pseudo_count=pc).theta, atol=1e-8)


@pytest.mark.parametrize("seed", [1, 2])
def test_it_matches_statsmodels_logit_on_the_same_design(seed: int) -> None:
    j, diff = _planted(1500, seed, ties=0.1)
    rng = np.random.default_rng(seed)
    diffs = np.column_stack([diff[:, 0], rng.integers(-3, 4, j.n)])  # a second, discrete covariate
    fit = fit_style_bt(j, diffs, features=["words", "citations"], pseudo_count=0.0)
    k = j.n_models
    x = np.zeros((j.n, k))
    x[np.arange(j.n), j.a] += 1
    x[np.arange(j.n), j.b] -= 1
    res = sm.Logit(j.y, np.column_stack([x[:, 1:], diffs])).fit(disp=0, method="newton", tol=1e-12)
    beta = np.concatenate([[0.0], res.params[: k - 1]])
    np.testing.assert_allclose(fit.beta, beta - beta.mean(), atol=1e-7)
    np.testing.assert_allclose(fit.gamma_raw, res.params[k - 1 :], rtol=1e-7)
    np.testing.assert_allclose(fit.gamma, res.params[k - 1 :] * fit.scale, rtol=1e-7)
    # The scale is the root mean square of each difference column.
    np.testing.assert_allclose(fit.scale, np.sqrt((diffs**2).mean(axis=0)))


def test_it_converges_on_the_gradient_norm_to_the_stated_tolerance() -> None:
    assert DEFAULT_GRAD_TOL == 1e-9
    j, diff = _planted(600, 3, ties=0.05)
    fit = fit_style_bt(j, diff, features=["words"], pseudo_count=0.5)
    assert fit.converged and fit.tol == DEFAULT_GRAD_TOL
    grad = _gradient_by_loops(j, diff, fit)
    assert np.abs(grad).max() <= DEFAULT_GRAD_TOL
    # One Newton step from zero is not enough: the fit then says it did not converge.
    early = fit_style_bt(j, diff, features=["words"], pseudo_count=0.5, max_iter=1)
    assert not early.converged
    assert np.abs(_gradient_by_loops(j, diff, early)).max() > DEFAULT_GRAD_TOL


def test_style_controlled_strengths_recover_the_planted_ones_where_the_plain_fit_is_biased() -> None:
    j, diff = _planted(20_000, 4)
    fit = fit_style_bt(j, diff, features=["words"], pseudo_count=0.5)
    plain = fit_bt(j.win_matrix(), pseudo_count=0.5).theta
    truth = BETA - BETA.mean()
    style_err = np.abs(fit.beta - truth)
    plain_err = np.abs(plain - truth)
    # With 20,000 judgments a strength's SE is about 0.03: the style fit is within ~3 SE everywhere, while the
    # plain fit credits the verbose models (2 and 4) with the judge's length reward, by 10+ SE.
    assert style_err.max() < 0.1
    assert plain_err[[2, 4]].min() > 0.3
    assert plain[4] > plain[1]  # the plain ranking puts a weak verbose model above a stronger concise one
    assert fit.gamma_raw[0] == pytest.approx(GAMMA_PER_WORD, rel=0.1)


def test_length_coefficient_cis_cover_the_planted_value_in_90_to_98_percent_of_seeds() -> None:
    seeds = 200
    covered = 0
    for seed in range(seeds):
        j, diff = _planted(600, 1000 + seed)
        fit = fit_style_bt(j, diff, features=["words"], pseudo_count=0.5)
        boot = style_bootstrap(j, diff, fit, replicates=200, seed=seed)
        lo, hi = np.percentile(boot.gamma[:, 0] / fit.scale[0], [2.5, 97.5])
        covered += bool(lo <= GAMMA_PER_WORD <= hi)
    assert 0.90 <= covered / seeds <= 0.98


def test_style_control_document_ranks_and_rank_delta() -> None:
    j, diff = _planted(4000, 5)
    j = pair_judgments(j.a, j.b, j.y, cluster=j.cluster, models=[f"m{i}" for i in range(6)])
    doc = style_control(j, diff, features=["words"], replicates=100, seed=0)
    assert doc["fit"]["converged"] and doc["fit"]["unconverged_replicates"] == 0
    rows = {r["model"]: r for r in doc["models"]}
    assert [r["rank"] for r in doc["models"]] == list(range(1, 7))
    strengths = [r["strength"] for r in doc["models"]]
    assert strengths == sorted(strengths, reverse=True)
    plain = fit_bt(j.win_matrix(), pseudo_count=0.5).theta
    plain_rank = {f"m{i}": 1 + int((plain > plain[i]).sum()) for i in range(6)}
    for name, row in rows.items():
        assert row["plain_rank"] == plain_rank[name]
        assert row["rank_delta"] == row["plain_rank"] - row["rank"]
        assert row["ci"][0] <= row["strength"] <= row["ci"][1]
    # The verbose, weak m4 falls once the length reward is controlled.
    assert rows["m4"]["rank_delta"] < 0
    coef = doc["coefficients"]["words"]
    assert coef["ci_raw"][0] < GAMMA_PER_WORD < coef["ci_raw"][1]
    assert coef["gamma_raw"] == pytest.approx(coef["gamma"] / coef["scale"])


def test_bad_style_input_is_named() -> None:
    j, diff = _planted(50, 6)
    with pytest.raises(ValueError, match="diffs has 49 rows, expected one per judgment"):
        fit_style_bt(j, diff[:-1])
    with pytest.raises(ValueError, match="feature column 1 never differs"):
        fit_style_bt(j, np.column_stack([diff[:, 0], np.zeros(j.n)]))


def test_style_features_count_words_citations_and_structure() -> None:
    texts = [
        "# Aim\n\nWe test **one** claim from HaX48yksVL and 2m5XI3nM46.\n- step one\n- step two\n1. then this",
        "Plain text citing [1] and [Smith 2020] and [1] again.",
    ]
    f = style_features(texts, paper_ids=[["HaX48yksVL", "2m5XI3nM46", "absent0000"], None])
    assert f["words"].tolist() == [19.0, 10.0]
    assert f["citations"].tolist() == [2.0, 2.0]
    assert f["headers"].tolist() == [1.0, 0.0]
    assert f["lists"].tolist() == [3.0, 0.0]
    assert f["bold"].tolist() == [1.0, 0.0]
    assert f["structure"].tolist() == [5.0, 0.0]
    d = style_differences(f, style_features(texts[::-1]), ["words", "structure"])
    assert d.tolist() == [[9.0, 5.0], [-9.0, -5.0]]


def test_the_batched_bootstrap_is_one_fit_per_replicate_on_the_resampled_judgments() -> None:
    # Both presentation orders of each case share their style difference (aggregated into one row by the batch);
    # the reference refits each replicate on the judgments written out again, cluster c repeated counts[r, c] times.
    j0, diff0 = _planted(300, 7, ties=0.1)
    rng = np.random.default_rng(7)
    flip = rng.random(j0.n) < 0.3  # the second order's verdict differs from the first's for some cases
    y2 = np.where(flip, 1.0 - j0.y, j0.y)
    j = pair_judgments(
        np.concatenate([j0.a, j0.a]),
        np.concatenate([j0.b, j0.b]),
        np.concatenate([j0.y, y2]),
        cluster=np.concatenate([j0.cluster, j0.cluster]),
        n_models=j0.n_models,
    )
    diffs = np.column_stack([np.concatenate([diff0[:, 0], diff0[:, 0]]), np.tile(rng.integers(-2, 3, j0.n), 2)])
    fit = fit_style_bt(j, diffs, features=["words", "citations"], pseudo_count=0.5)
    counts = rng.multinomial(j.n_clusters, np.full(j.n_clusters, 1.0 / j.n_clusters), size=4)
    boot = style_bootstrap(j, diffs, fit, counts=counts)
    assert boot.converged.all()
    for r in range(len(counts)):
        rows = np.concatenate([np.flatnonzero(j.cluster == c).repeat(int(counts[r, c])) for c in range(j.n_clusters)])
        jr = pair_judgments(j.a[rows], j.b[rows], j.y[rows], cluster=j.cluster[rows], n_models=j.n_models)
        ref = fit_style_bt(jr, diffs[rows], pseudo_count=0.5)
        np.testing.assert_allclose(boot.beta[r], ref.beta, atol=1e-8)
        # γ per unit does not depend on the scale each fit standardised by.
        np.testing.assert_allclose(boot.gamma[r] / fit.scale, ref.gamma_raw, atol=1e-8)
