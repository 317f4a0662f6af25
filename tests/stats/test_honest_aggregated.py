"""The honest-intervals section on aggregated counts (issue 25 item 1) gives what the per-judgment definitions give.

Each expected value comes from the per-judgment definition written out here (loops or ``np.add.at`` over the
judgments, refits of explicit subsets) or from :func:`arena.stats.coverage.simulate_outcomes`, the simulation's
stated random stream; never from the aggregated code under test.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from arena.stats import encode_cases, fit_bt, judgments_from_cases, pair_judgments
from arena.stats.bootstrap import percentile_ci
from arena.stats.bt import fit_bt_batch
from arena.stats.coverage import CaseSimulation, ClusterScoreSums, simulate_outcomes
from arena.stats.drop_k import OVERTAKE_TOL, first_change, prefix_sums
from arena.stats.honest import (
    COVERAGE_REPLICATES,
    COVERAGE_SIMULATIONS,
    all_case_types,
    case_bootstrap_counts,
    honest_intervals_section,
)
from arena.stats.matrices import win_matrices_from_type_matrix, win_matrix
from arena.stats.pairwise import CHUNK_ELEMENTS, cluster_bootstrap_fits

# --- per-judgment definitions (the references) ---------------------------------------------------------------


def _information(a, b, theta, pc: float) -> np.ndarray:
    """Negative Hessian of the BT log-likelihood, judgment by judgment, plus the prior's 2c·p(1 − p) per pair."""
    k = len(theta)
    info = np.zeros((k, k))
    p = expit(theta[a] - theta[b])
    w = p * (1 - p)
    np.add.at(info, (a, a), w)
    np.add.at(info, (b, b), w)
    np.add.at(info, (a, b), -w)
    np.add.at(info, (b, a), -w)
    for i in range(k):
        for j in range(k):
            if i != j and pc:
                q = expit(theta[i] - theta[j])
                info[i, i] += 2 * pc * q * (1 - q)
                info[i, j] -= 2 * pc * q * (1 - q)
    return info


def _scores(a, b, y, cluster, n_clusters: int, theta) -> np.ndarray:
    """Per-cluster score Σ (y − p)(e_a − e_b), judgment by judgment (C, K)."""
    s = np.zeros((n_clusters, len(theta)))
    r = y - expit(theta[a] - theta[b])
    np.add.at(s, (cluster, a), r)
    np.add.at(s, (cluster, b), -r)
    return s


def _sandwich_se(a, b, y, cluster, n_clusters: int, theta, pc: float) -> np.ndarray:
    """CR1 standard errors of the centered strengths from the per-judgment information and scores."""
    k, n = len(theta), len(a)
    bread = np.linalg.inv(_information(a, b, theta, pc)[1:, 1:])
    s = _scores(a, b, y, cluster, n_clusters, theta)[:, 1:]
    v = n_clusters / (n_clusters - 1) * (n - 1) / (n - (k - 1)) * bread @ (s.T @ s) @ bread
    m = np.vstack([np.zeros((1, k - 1)), np.eye(k - 1)])
    m -= m.mean(axis=0)
    return np.sqrt(np.diag(m @ v @ m.T))


def _design(n_contexts: int, *, ties: float, missing: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """Every pair of 4 models in every context, both orders drawn from BT; contexts named so that string order
    differs from creation order (``c10`` sorts before ``c2``)."""
    rng = np.random.default_rng(seed)
    theta = np.array([0.5, 0.2, -0.1, -0.6])
    rows = []
    for c in range(n_contexts):
        for i in range(4):
            for j in range(i + 1, 4):
                first, second = (i, j) if rng.random() < 0.5 else (j, i)
                verdicts = []
                for x, z in ((first, second), (second, first)):
                    u = rng.random()
                    v = "TIE" if u < ties else (f"m{x}" if rng.random() < expit(theta[x] - theta[z]) else f"m{z}")
                    verdicts.append(None if rng.random() < missing else v)
                rows.append((f"k{len(rows)}", f"c{c}", "b", f"m{first}", f"m{second}", *verdicts))
    return pd.DataFrame(rows, columns=["case", "context", "batch", "model_1", "model_2", "original", "reverse"])


def _codes_of(y: np.ndarray) -> np.ndarray:
    """Each case's verdict pair code (original·3 + reverse; LO 0, HI 1, TIE 2) from per-judgment scores."""
    c = np.where(y == 1.0, 0, np.where(y == 0.0, 1, 2))
    half = len(y) // 2
    return c[:half] * 3 + c[half:]


# --- judgments and cells ---------------------------------------------------------------------------------------


def test_judgments_of_cases_code_contexts_in_the_sorted_order_of_their_labels() -> None:
    enc = encode_cases(_design(12, ties=0.1, missing=0.1, seed=3))
    j = judgments_from_cases(enc)
    complete = enc.complete
    labels = sorted({str(c) for c in enc.context[complete]})
    assert j.clusters == tuple(labels) and j.n_clusters == len(labels)
    expected = np.array([labels.index(str(c)) for c in enc.context[complete]] * 2)
    np.testing.assert_array_equal(j.cluster, expected)
    np.testing.assert_array_equal(j.win_matrix(), win_matrix(enc, "ordered"))


@pytest.mark.parametrize("n_clusters", [5, 400])  # few clusters: dense bincount; many: the np.unique path
def test_cells_give_the_per_judgment_information_scores_and_cluster_table(n_clusters: int) -> None:
    rng = np.random.default_rng(n_clusters)
    k, n = 6, 300
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k  # both orientations of a pair occur
    y = rng.choice([0.0, 0.5, 1.0, 0.3], n)  # a fractional score too
    j = pair_judgments(a, b, y, cluster=rng.integers(0, n_clusters, n) * 7, n_models=k)
    theta = rng.normal(0, 1, k)
    cells = j.cells()
    assert cells.count.sum() == n and cells.ysum.sum() == pytest.approx(y.sum())
    np.testing.assert_allclose(
        cells.information(theta, pseudo_count=0.7), _information(j.a, j.b, theta, 0.7), rtol=1e-12, atol=1e-12
    )
    expected = _scores(j.a, j.b, j.y, j.cluster, j.n_clusters, theta)
    np.testing.assert_allclose(cells.scores(theta), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cells.meat(theta), expected.T @ expected, rtol=1e-12, atol=1e-12)
    table = np.zeros((j.n_clusters, k * k))
    for c, x, z, v in zip(j.cluster, j.a, j.b, j.y, strict=True):
        table[c, x * k + z] += v
        table[c, z * k + x] += 1 - v
    np.testing.assert_allclose(j.cluster_table().toarray(), table, rtol=1e-12, atol=1e-12)


def test_cells_sandwich_needs_no_refit_of_the_judgments() -> None:
    # cluster_robust_se (now on cells) against the per-judgment CR1 written out above, with ties and a prior.
    from arena.stats import cluster_robust_se

    enc = encode_cases(_design(15, ties=0.15, seed=4))
    j = judgments_from_cases(enc)
    theta = fit_bt(j.win_matrix(), pseudo_count=0.5).theta
    ours = cluster_robust_se(j, theta, pseudo_count=0.5).se
    np.testing.assert_allclose(ours, _sandwich_se(j.a, j.b, j.y, j.cluster, j.n_clusters, theta, 0.5), rtol=1e-10)


# --- the coverage simulation ----------------------------------------------------------------------------------


@pytest.mark.parametrize("tie_share", [0.0, 0.15])
def test_case_simulation_consumes_the_stream_of_simulate_outcomes(tie_share: float) -> None:
    enc = encode_cases(_design(10, ties=0.1, missing=0.1, seed=5))
    complete = enc.subset(enc.complete)
    j = judgments_from_cases(enc)
    truth = np.array([0.4, 0.1, -0.2, -0.3])
    sim = CaseSimulation(j, complete.lo.astype(np.int64) * 4 + complete.hi, truth, tie_share)
    ours, ref = np.random.default_rng(9), np.random.default_rng(9)
    for _ in range(5):
        codes = sim.draw(ours)
        y = simulate_outcomes(j, truth, ref, tie_share)
        np.testing.assert_array_equal(codes, _codes_of(y))
        # The simulated set's win matrix, bit for bit, from the counts per pair.
        np.testing.assert_array_equal(sim.win_matrix(sim.pair_counts(codes)), replace(j, y=y).win_matrix())
    assert ours.random() == ref.random()  # the same number of draws taken


def test_cluster_score_sums_give_the_sandwich_of_each_simulated_set() -> None:
    enc = encode_cases(_design(14, ties=0.1, seed=6))
    complete = enc.subset(enc.complete)
    j = judgments_from_cases(enc)
    truth = fit_bt(j.win_matrix(), pseudo_count=0.5).theta
    sim = CaseSimulation(j, complete.lo.astype(np.int64) * 4 + complete.hi, truth, 0.1)
    sums = ClusterScoreSums(j.cluster[: j.n // 2], j.n_clusters, sim)
    rng, ref = np.random.default_rng(2), np.random.default_rng(2)
    codes = [sim.draw(rng) for _ in range(3)]
    ys = [simulate_outcomes(j, truth, ref, 0.1) for _ in range(3)]
    thetas = np.stack([fit_bt(replace(j, y=y).win_matrix(), pseudo_count=0.5).theta for y in ys])
    for (info, meat), y, theta in zip(sums.parts(codes, thetas, 0.5), ys, thetas, strict=True):
        s = _scores(j.a, j.b, y, j.cluster, j.n_clusters, theta)
        np.testing.assert_allclose(info, _information(j.a, j.b, theta, 0.5), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(meat, s.T @ s, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def small_release():
    enc = encode_cases(_design(12, ties=0.1, missing=0.05, seed=7))
    theta = fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5).theta
    reps = cluster_bootstrap_fits(judgments_from_cases(enc), replicates=300, seed=1, pseudo_count=0.5, init=theta).theta
    return enc, theta, reps


def _plain_coverage(enc, theta: np.ndarray, pc: float, level: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The coverage estimate judgment by judgment: simulate_outcomes per set, the per-judgment win matrix and CR1
    sandwich; the case bootstrap of each set's case types (drawn after each group of sets, as the stream says)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 26]))
    j = judgments_from_cases(enc)
    complete = enc.subset(enc.complete)
    tie_share = float(np.mean(j.y == 0.5))
    z = 1.959963984540054 if level == 0.95 else None
    keys, matrix = all_case_types(complete)
    k = enc.n_models
    group = max(1, CHUNK_ELEMENTS // max(j.n, COVERAGE_REPLICATES * max(k * k, len(keys))))
    hit_boot, hit_sand = np.zeros(k), np.zeros(k)
    for start in range(0, COVERAGE_SIMULATIONS, group):
        ys = [simulate_outcomes(j, theta, rng, tie_share) for _ in range(min(group, COVERAGE_SIMULATIONS - start))]
        for y in ys:
            counts = np.zeros(len(keys), dtype=np.int64)
            codes = np.where(y == 1.0, 0, np.where(y == 0.0, 1, 2))
            half = len(y) // 2
            for lo, hi, c1, c2 in zip(complete.lo, complete.hi, codes[:half], codes[half:], strict=True):
                key = ((int(lo) * k + int(hi)) * 3 + min(c1, c2)) * 3 + max(c1, c2)
                counts[list(keys).index(key)] += 1
            y_counts = case_bootstrap_counts(counts, COVERAGE_REPLICATES, rng)
            boot = fit_bt_batch(win_matrices_from_type_matrix(matrix, y_counts, k), pseudo_count=pc, init=theta).theta
            ci = percentile_ci(boot, level)
            hit_boot += (ci[:, 0] <= theta) & (theta <= ci[:, 1])
            point = fit_bt_batch(replace(j, y=y).win_matrix()[None], pseudo_count=pc, init=theta).theta[0]
            se = _sandwich_se(j.a, j.b, y, j.cluster, j.n_clusters, point, pc)
            hit_sand += np.abs(point - theta) <= z * se
    return hit_boot / COVERAGE_SIMULATIONS, hit_sand / COVERAGE_SIMULATIONS


def test_the_sections_coverage_is_the_plain_per_judgment_simulation(small_release) -> None:
    enc, theta, reps = small_release
    order = [int(i) for i in np.argsort(-theta)]
    section = honest_intervals_section(enc, theta, reps, order, pseudo_count=0.5, level=0.95, seed=4)
    boot, sand = _plain_coverage(enc, theta, 0.5, 0.95, 4)
    names = list(enc.models)
    assert section["coverage"]["bootstrap"] == {names[i]: float(boot[i]) for i in order}
    assert section["coverage"]["sandwich"] == {names[i]: float(sand[i]) for i in order}
    j = judgments_from_cases(enc)
    se = _sandwich_se(j.a, j.b, j.y, j.cluster, j.n_clusters, theta, 0.5)
    assert [section["sandwich"]["se"][names[i]] for i in order] == pytest.approx([se[i] for i in order], rel=1e-10)


# --- drop-k -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [1, 3, 1000])
def test_prefix_sums_are_the_sums_of_the_ordered_rows(block: int) -> None:
    rng = np.random.default_rng(block)
    dense = rng.choice([0.0, 0.5, 1.0, 2.0], size=(23, 9), p=[0.5, 0.2, 0.2, 0.1])
    from scipy import sparse

    order = rng.permutation(23)
    sizes = np.array([1, 2, 5, 6, 7, 17, 23])
    out = prefix_sums(sparse.csr_matrix(dense), order, sizes, block=block)
    for row, m in zip(out, sizes, strict=True):
        np.testing.assert_array_equal(row, dense[order[:m]].sum(axis=0))


def test_first_change_is_the_smallest_prefix_whose_refit_changes_the_leader() -> None:
    enc = encode_cases(_design(40, ties=0.05, seed=8))
    j = judgments_from_cases(enc)
    full = j.win_matrix()
    theta = fit_bt(full, pseudo_count=0.5).theta
    top = int(np.argmax(theta))
    order = np.argsort(-j.cells().scores(theta)[:, top], kind="stable")  # the leader's best contexts first
    sizes = np.arange(1, j.n_clusters + 1)

    def overtaken(m: int) -> int | None:
        keep = ~np.isin(j.cluster, order[:m])
        th = fit_bt(
            replace(j, a=j.a[keep], b=j.b[keep], y=j.y[keep], cluster=j.cluster[keep]).win_matrix(), pseudo_count=0.5
        ).theta
        rival = int(np.argmax(np.where(np.arange(len(th)) == top, -np.inf, th)))
        return rival if th[rival] > th[top] + OVERTAKE_TOL else None

    expected = next(((m, overtaken(m)) for m in sizes if overtaken(m) is not None), (None, None))
    assert expected[0] is not None, "the design should let some prefix change the leader"
    assert first_change(full, j.cluster_table(), order, sizes, top, 0.5, theta) == expected
    # Only the sizes asked are tried: above the first change, the next size asked is reported.
    coarse = sizes[sizes % 4 == 0]
    assert first_change(full, j.cluster_table(), order, coarse, top, 0.5, theta)[0] == int(math.ceil(expected[0] / 4) * 4)
