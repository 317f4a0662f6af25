"""Honest intervals (issue 26): sandwich SEs, rank confidence sets, drop-k robustness, coverage, prior influence.

Expected values come from hand computation, statsmodels, or brute force written here (plain loops over
replicates, permutations and subsets), never from the functions under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from arena.stats import (
    ci_coverage,
    cluster_robust_se,
    drop_k_robustness,
    encode_cases,
    fit_bt,
    judgments_from_cases,
    pair_judgments,
    prior_influence,
    rank_confidence_sets,
    win_matrix,
)
from arena.stats.coverage import simulate_outcomes
from arena.stats.pairwise import cluster_bootstrap_fits


def _simulate(theta: np.ndarray, n_clusters: int, seed: int, *, ties: float = 0.0) -> tuple:
    """All K(K-1)/2 pairs judged once per cluster, outcomes from BT at ``theta`` (a tie with probability ``ties``)."""
    rng = np.random.default_rng(seed)
    k = len(theta)
    ii, jj = np.triu_indices(k, 1)
    a, b = np.tile(ii, n_clusters), np.tile(jj, n_clusters)
    y = (rng.random(len(a)) < 1 / (1 + np.exp(-(theta[a] - theta[b])))).astype(float)
    y[rng.random(len(a)) < ties] = 0.5
    return a, b, y, np.repeat(np.arange(n_clusters), len(ii))


# --- judgments ---------------------------------------------------------------------------------------------


def test_judgments_of_cases_give_the_ordered_win_matrix() -> None:
    cases = pd.DataFrame(
        {
            "case": ["c1", "c2", "c3", "c4"],
            "context": ["x", "x", "y", "y"],
            "batch": ["b"] * 4,
            "model_1": ["A", "B", "A", "C"],
            "model_2": ["B", "C", "C", "A"],
            "original": ["A", "TIE", "C", "A"],
            "reverse": ["A", "B", "A", None],
        }
    )
    enc = encode_cases(cases)
    j = judgments_from_cases(enc)
    assert j.n == 6  # three complete cases, two orders each
    assert j.n_clusters == 2
    np.testing.assert_allclose(j.win_matrix(), win_matrix(enc, "ordered"))


def test_pair_judgments_names_the_bad_input() -> None:
    with pytest.raises(ValueError, match=r"judgment 1 compares model 2 with itself"):
        pair_judgments([0, 2], [1, 2], [1, 0])
    with pytest.raises(ValueError, match=r"y\[0\] = 2.0 is not a score"):
        pair_judgments([0], [1], [2.0])
    with pytest.raises(ValueError, match=r"b\[0\] = 5 is not a model index in \[0, 3\)"):
        pair_judgments([0], [5], [1.0], n_models=3)


# --- sandwich -----------------------------------------------------------------------------------------------


def test_sandwich_matches_a_hand_worked_two_model_case() -> None:
    # Model 0 against model 1 in three clusters: (win, win), (win, loss), (loss, win): 4 wins in 6, p̂ = 2/3,
    # δ = θ0 − θ1 = ln 2. Information for δ: 6·p(1−p) = 4/3. Cluster scores Σ(y − p): 2/3, −1/3, −1/3, so the
    # meat is 4/9 + 1/9 + 1/9 = 2/3 and Var(δ) = (3/4)² · 2/3 = 3/8 (CR0); CR1 multiplies by G/(G−1)·(N−1)/(N−p)
    # = 3/2 · 5/5. Centered θ0 = δ/2 has a quarter of that variance. The model-based Var(δ) is 3/4.
    j = pair_judgments([0] * 6, [1] * 6, [1, 1, 1, 0, 0, 1], cluster=[1, 1, 2, 2, 3, 3])
    cr0 = cluster_robust_se(j, small_sample=False)
    assert cr0.theta == pytest.approx([math.log(2) / 2, -math.log(2) / 2], abs=1e-9)
    assert cr0.se == pytest.approx([math.sqrt(3 / 32)] * 2, rel=1e-9)
    assert cr0.cov[0, 1] == pytest.approx(-3 / 32, rel=1e-9)
    assert cr0.model_se == pytest.approx([math.sqrt(3 / 16)] * 2, rel=1e-9)
    assert cr0.se_difference()[0, 1] == pytest.approx(math.sqrt(3 / 8), rel=1e-9)
    cr1 = cluster_robust_se(j)
    assert cr1.correction == pytest.approx(1.5)
    assert cr1.se == pytest.approx([math.sqrt(9 / 64)] * 2, rel=1e-9)


@pytest.mark.parametrize("use_correction", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sandwich_matches_statsmodels_cluster_robust_logit(seed: int, use_correction: bool) -> None:
    rng = np.random.default_rng(seed)
    k, n = 5, 500
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    theta = rng.normal(0, 1, k)
    y = (rng.random(n) < 1 / (1 + np.exp(-(theta[a] - theta[b])))).astype(float)
    y[rng.random(n) < 0.1] = 0.5  # ties: a fractional (quasi-likelihood) outcome in both
    groups = rng.integers(0, 40, n)
    x = np.zeros((n, k))
    x[np.arange(n), a] += 1
    x[np.arange(n), b] -= 1
    res = sm.Logit(y, x[:, 1:]).fit(
        disp=0, method="newton", tol=1e-12, cov_type="cluster", cov_kwds={"groups": groups, "use_correction": use_correction}
    )
    ours = cluster_robust_se(pair_judgments(a, b, y, cluster=groups), small_sample=use_correction)
    # statsmodels fixes θ0 = 0; map its parameters and covariance to centered strengths.
    m = np.vstack([np.zeros((1, k - 1)), np.eye(k - 1)])
    m -= m.mean(axis=0)
    np.testing.assert_allclose(ours.theta, m @ res.params, atol=1e-8)
    np.testing.assert_allclose(ours.cov, m @ res.cov_params() @ m.T, rtol=1e-6, atol=1e-12)
    # θ_i − θ_0 are statsmodels' own parameters: their SEs are its bse.
    se_vs_ref = ours.se_difference()[0, 1:]
    np.testing.assert_allclose(se_vs_ref, res.bse, rtol=1e-6)


def test_sandwich_without_an_mle_says_so() -> None:
    j = pair_judgments([0, 0], [1, 1], [1, 1], cluster=[0, 1])
    with pytest.raises(ValueError, match="plain MLE does not exist"):
        cluster_robust_se(j)


# --- rank confidence sets ---------------------------------------------------------------------------------


def _brute_force_rank_sets(theta: np.ndarray, boot: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Max-t over pairs with plain loops, then every permutation consistent with the confident pairs."""
    k, r = len(theta), len(boot)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    sd = {}
    for i, j in pairs:
        d = [boot[s, i] - boot[s, j] for s in range(r)]
        mu = sum(d) / r
        sd[i, j] = math.sqrt(sum((x - mu) ** 2 for x in d) / (r - 1))
    tmax = sorted(max(abs(boot[s, i] - boot[s, j] - (theta[i] - theta[j])) / sd[i, j] for i, j in pairs) for s in range(r))
    c = tmax[math.ceil(level * (r - 1))]  # the "higher" order statistic at position level·(R−1)
    sure = set()  # (better, worse)
    for i, j in pairs:
        lo, hi = theta[i] - theta[j] - c * sd[i, j], theta[i] - theta[j] + c * sd[i, j]
        if lo > 0:
            sure.add((i, j))
        elif hi < 0:
            sure.add((j, i))
    positions: dict[int, list[int]] = {i: [] for i in range(k)}
    for perm in itertools.permutations(range(k)):
        pos = {m: p + 1 for p, m in enumerate(perm)}
        if all(pos[u] < pos[v] for u, v in sure):
            for m in range(k):
                positions[m].append(pos[m])
    return np.array([min(positions[m]) for m in range(k)]), np.array([max(positions[m]) for m in range(k)])


@pytest.mark.parametrize("seed", range(8))
def test_rank_sets_equal_brute_force_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 7))
    theta = np.sort(rng.normal(0, 1, k))[::-1] * rng.choice([0.3, 1.0, 3.0])
    # Correlated replicates with unequal spreads, so some pairs are decided and others not.
    noise = rng.normal(0, 1, (150, k)) @ np.diag(rng.uniform(0.1, 0.6, k))
    boot = theta + noise + rng.normal(0, 0.2, (150, 1))
    sets = rank_confidence_sets(theta, boot, 0.95)
    lo, hi = _brute_force_rank_sets(theta, boot, 0.95)
    np.testing.assert_array_equal(sets.lo, lo)
    np.testing.assert_array_equal(sets.hi, hi)


def test_true_ranks_fall_in_the_simultaneous_sets_in_95_percent_of_seeds() -> None:
    theta = np.array([0.45, 0.15, -0.15, -0.45])
    hits = 0
    seeds = 200
    for seed in range(seeds):
        a, b, y, cl = _simulate(theta, 40, seed)
        j = pair_judgments(a, b, y, cluster=cl)
        point = fit_bt(j.win_matrix(), pseudo_count=0.5).theta
        boot = cluster_bootstrap_fits(j, replicates=200, seed=seed, pseudo_count=0.5, init=point).theta
        sets = rank_confidence_sets(point, boot)
        true_rank = np.arange(1, 5)  # theta is sorted best first
        hits += bool(((sets.lo <= true_rank) & (true_rank <= sets.hi)).all())
    assert hits / seeds >= 0.95


# --- drop-k -------------------------------------------------------------------------------------------------


def _overtaken(j, removed: tuple[int, ...], top: int, pc: float) -> bool:
    keep = ~np.isin(j.cluster, removed)
    w = np.zeros((j.n_models, j.n_models))
    for a, b, y in zip(j.a[keep], j.b[keep], j.y[keep], strict=True):
        w[a, b] += y
        w[b, a] += 1 - y
    th = fit_bt(w, pseudo_count=pc).theta
    return bool(np.delete(th, top).max() > th[top] + 1e-8)


def _brute_force_k(j, pc: float) -> int | None:
    top = int(np.argmax(fit_bt(j.win_matrix(), pseudo_count=pc).theta))
    for m in range(1, j.n_clusters + 1):
        if any(_overtaken(j, s, top, pc) for s in itertools.combinations(range(j.n_clusters), m)):
            return m
    return None


@pytest.mark.parametrize("seed", range(6))
def test_drop_k_exhaustive_equals_brute_force(seed: int) -> None:
    theta = np.array([0.4, 0.25, 0.0])
    a, b, y, cl = _simulate(theta, 7, seed)
    j = pair_judgments(a, b, y, cluster=cl)
    res = drop_k_robustness(j, pseudo_count=0.5)
    assert res.method == "exhaustive" and res.exact
    assert res.k == _brute_force_k(j, 0.5)
    if res.k is not None:
        assert _overtaken(j, res.removed, res.top, 0.5)
        assert res.holds_up_to == res.k - 1


@pytest.mark.parametrize("seed", range(6))
def test_drop_k_greedy_gives_a_verified_upper_bound(seed: int) -> None:
    theta = np.array([0.5, 0.3, 0.0, -0.3])
    a, b, y, cl = _simulate(theta, 9, seed)
    j = pair_judgments(a, b, y, cluster=cl)
    exact = _brute_force_k(j, 0.5)
    res = drop_k_robustness(j, pseudo_count=0.5, exhaustive_fits=0)
    assert res.method == "influence-greedy"
    assert res.lower_bound == 1
    assert res.k is not None and exact is not None and res.k >= exact
    assert len(res.removed) == res.k and _overtaken(j, res.removed, res.top, 0.5)
    assert res.exact == (res.k == 1)


def test_drop_k_reports_the_exhaustive_bound_when_the_budget_runs_out() -> None:
    theta = np.array([0.6, 0.1, -0.7])
    a, b, y, cl = _simulate(theta, 30, 3)
    j = pair_judgments(a, b, y, cluster=cl)
    res = drop_k_robustness(j, pseudo_count=0.5, exhaustive_fits=30 + math.comb(30, 2))
    assert res.lower_bound >= 3  # sizes 1 and 2 were all tried
    assert res.k is not None and res.k >= res.lower_bound
    assert _overtaken(j, res.removed, res.top, 0.5)
    # No removal of lower_bound − 1 clusters overtakes (spot-check every single and pair removal).
    for s in itertools.chain(itertools.combinations(range(30), 1), itertools.combinations(range(30), 2)):
        assert not _overtaken(j, s, res.top, 0.5)


# --- coverage -----------------------------------------------------------------------------------------------


def test_simulated_outcomes_keep_the_bt_mean_and_the_tie_share() -> None:
    j = pair_judgments(np.zeros(200_000, int), np.ones(200_000, int), np.zeros(200_000), n_models=2)
    y = simulate_outcomes(j, np.array([0.4, -0.4]), np.random.default_rng(0), tie_share=0.2)
    p = 1 / (1 + math.exp(-0.8))
    se = math.sqrt(0.25 / len(y))
    assert abs(y.mean() - p) < 4 * se
    assert abs((y == 0.5).mean() - 0.2) < 4 * math.sqrt(0.16 / len(y))


@pytest.fixture(scope="module")
def coverage_design():
    a, b, y, cl = _simulate(np.array([0.5, 0.2, -0.1, -0.6]), 60, 11)
    return pair_judgments(a, b, y, cluster=cl)


def test_coverage_is_near_nominal_on_a_well_posed_design(coverage_design) -> None:
    cov = ci_coverage(coverage_design, pseudo_count=0.0, simulations=120, replicates=150, seed=1)
    assert cov.simulations == 120
    # 4 models x 120 simulations: the overall coverage has Monte Carlo SE ≈ 1%.
    assert 0.89 <= cov.bootstrap_overall <= 0.99
    assert 0.89 <= cov.sandwich_overall <= 0.99


def test_coverage_exposes_a_prior_that_biases_the_intervals(coverage_design) -> None:
    # A heavy prior (20 pseudo-wins each way per pair against ~60 real comparisons) shrinks every fit to 0;
    # the truth is the unshrunk fit, so the shrunken intervals miss the outer models.
    truth = fit_bt(coverage_design.win_matrix()).theta
    cov = ci_coverage(coverage_design, truth, pseudo_count=20.0, simulations=60, replicates=100, seed=2)
    outer = [int(np.argmax(truth)), int(np.argmin(truth))]
    assert cov.bootstrap[outer].max() < 0.6
    assert cov.sandwich[outer].max() < 0.6


# --- prior influence ----------------------------------------------------------------------------------------


def test_prior_influence_flags_strengths_moved_by_more_than_their_se() -> None:
    # Few comparisons per pair and a strong prior: the prior moves the outer models by more than an SE.
    a, b, y, cl = _simulate(np.array([1.2, 0.4, -0.4, -1.2]), 6, 5)
    j = pair_judgments(a, b, y, cluster=cl, models=["m0", "m1", "m2", "m3"])
    out = prior_influence(j, pseudo_count=3.0)
    mle = fit_bt(j.win_matrix()).theta
    prior = fit_bt(j.win_matrix(), pseudo_count=3.0).theta
    assert out["mle_exists"]
    assert out["shift"]["m0"] == pytest.approx(prior[0] - mle[0], abs=1e-9)
    se = cluster_robust_se(j, mle).se
    expected = [f"m{i}" for i in range(4) if abs(prior[i] - mle[i]) > se[i]]
    assert expected and sorted(out["flagged"]) == sorted(expected) and out["warning"]


def test_prior_influence_is_quiet_on_plenty_of_data() -> None:
    a, b, y, cl = _simulate(np.array([0.6, 0.2, -0.2, -0.6]), 400, 6)
    out = prior_influence(pair_judgments(a, b, y, cluster=cl), pseudo_count=0.5)
    assert out["flagged"] == [] and not out["warning"]
    assert max(out["ratio"].values()) < 0.2


def test_prior_influence_without_an_mle_flags_every_model() -> None:
    j = pair_judgments([0, 0, 1], [1, 2, 2], [1, 1, 1], cluster=[0, 1, 2], models=["a", "b", "c"])
    out = prior_influence(j, pseudo_count=0.5)
    assert not out["mle_exists"] and out["warning"] and out["flagged"] == ["a", "b", "c"]
