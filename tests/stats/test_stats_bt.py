"""Bradley–Terry MM: hand-computed cases, independent libraries (choix, evalica), divergence handling."""

from __future__ import annotations

import math

import choix
import numpy as np
import pytest

from arena.stats import fit_bt, fit_bt_batch, strongly_connected, win_matrix_from_judgments


def test_two_models_closed_form() -> None:
    # Two models: the MLE solves π1/(π1+π2) = w12/n, so θ1 − θ2 = ln(w12/w21) and centering gives ±½ ln 3.
    fit = fit_bt(np.array([[0.0, 3.0], [1.0, 0.0]]))
    assert fit.converged and not fit.diverged
    assert fit.theta == pytest.approx([0.5 * math.log(3), -0.5 * math.log(3)], abs=1e-9)


def test_two_models_pseudo_count() -> None:
    # Pseudo-count 0.5 in each off-diagonal cell: 3.5 vs 1.5 -> ±½ ln(7/3).
    fit = fit_bt(np.array([[0.0, 3.0], [1.0, 0.0]]), pseudo_count=0.5)
    assert fit.theta == pytest.approx([0.5 * math.log(7 / 3), -0.5 * math.log(7 / 3)], abs=1e-9)


def test_fractional_wins() -> None:
    # 1.5 vs 0.5 is the same ratio as 3 vs 1.
    fit = fit_bt(np.array([[0.0, 1.5], [0.5, 0.0]]))
    assert fit.theta == pytest.approx([0.5 * math.log(3), -0.5 * math.log(3)], abs=1e-9)


def test_diagonal_ignored() -> None:
    fit = fit_bt(np.array([[7.0, 3.0], [1.0, 9.0]]))
    assert fit.theta == pytest.approx([0.5 * math.log(3), -0.5 * math.log(3)], abs=1e-9)


def test_symmetric_cycle_is_all_equal() -> None:
    # Each model beats the next 2–1: by symmetry every strength is 0.
    w = np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 2.0], [2.0, 1.0, 0.0]])
    fit = fit_bt(w)
    assert fit.theta == pytest.approx([0.0, 0.0, 0.0], abs=1e-9)


def test_three_models_hand_solution() -> None:
    # Chain with π = (4, 2, 1) exactly reproduced by expected counts: for a pair the wins split in the
    # ratio of the strengths. A vs B 4:2 (n=6), B vs C 2:1 (n=3), A vs C 4:1 (n=5) give W below, whose MLE
    # is π ∝ (4, 2, 1): θ = ln π − mean ln π = (ln 4, ln 2, 0) − ln 2 = (ln 2, 0, −ln 2).
    w = np.array([[0.0, 4.0, 4.0], [2.0, 0.0, 2.0], [1.0, 1.0, 0.0]])
    fit = fit_bt(w)
    assert fit.theta == pytest.approx([math.log(2), 0.0, -math.log(2)], abs=1e-9)


def test_mean_zero_and_score_equations() -> None:
    rng = np.random.default_rng(3)
    w = rng.integers(1, 30, size=(6, 6)).astype(float)
    fit = fit_bt(w)
    assert abs(fit.theta.sum()) < 1e-9
    # The MLE satisfies the likelihood equations w_i = Σ_j N_ij π_i / (π_i + π_j).
    np.fill_diagonal(w, 0)
    p = np.exp(fit.theta)
    n = w + w.T
    expected = (n * p[:, None] / (p[:, None] + p[None, :])).sum(axis=1)
    assert expected == pytest.approx(w.sum(axis=1), rel=1e-8)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("pseudo", [0.0, 0.5])
def test_matches_choix(seed: int, pseudo: float) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 9))
    true = rng.normal(0, 1, k)
    # Random comparisons from a BT model, aggregated into a dense count matrix.
    n = rng.integers(5, 40, size=(k, k))
    n = np.triu(n, 1)
    p = 1 / (1 + np.exp(-(true[:, None] - true[None, :])))
    wins = rng.binomial(n, p)
    w = (wins + (n - wins).T).astype(float)
    w[np.triu_indices(k, 1)] = wins[np.triu_indices(k, 1)]
    w[np.tril_indices(k, -1)] = (n - wins).T[np.tril_indices(k, -1)]
    if not strongly_connected(w):
        pytest.skip("random draw without an MLE")
    ours = fit_bt(w, pseudo_count=pseudo)
    comp = w + pseudo * (1 - np.eye(k))
    # choix's I-LSR (a spectral method, independent of MM) on the same dense counts; centered log params.
    ref = choix.ilsr_pairwise_dense(comp, alpha=0.0, max_iter=10_000, tol=1e-13)
    assert ours.theta == pytest.approx(ref - ref.mean(), abs=1e-6)


def test_matches_evalica() -> None:
    evalica = pytest.importorskip("evalica")
    rng = np.random.default_rng(11)
    k, m = 5, 400
    true = rng.normal(0, 1, k)
    xs = rng.integers(0, k, m)
    ys = (xs + rng.integers(1, k, m)) % k
    p = 1 / (1 + np.exp(-(true[xs] - true[ys])))
    x_wins = rng.random(m) < p
    winners = [evalica.Winner.X if t else evalica.Winner.Y for t in x_wins]
    res = evalica.bradley_terry(xs.tolist(), ys.tolist(), winners, index=None, tolerance=1e-12, limit=100_000)
    ev = np.log(res.scores.reindex(range(k)).to_numpy())
    w = win_matrix_from_judgments(np.where(x_wins, xs, ys), np.where(x_wins, ys, xs), k)
    ours = fit_bt(w)
    assert ours.theta == pytest.approx(ev - ev.mean(), abs=1e-6)


def test_win_matrix_from_judgments() -> None:
    # 0 beats 1 twice, 1 beats 2 once, one tie 0–2 (half each), weights on the last judgment 3.
    w = win_matrix_from_judgments(
        np.array([0, 0, 1, 2, 0]),
        np.array([1, 1, 2, 0, 1]),
        3,
        ties=np.array([False, False, False, True, False]),
        weights=np.array([1, 1, 1, 1, 3.0]),
    )
    expected = np.array([[0, 5, 0.5], [0, 0, 1], [0.5, 0, 0]])
    assert np.array_equal(w, expected)


def test_plain_mle_divergence_terminates_and_flags() -> None:
    # Model 0 won every comparison: the MLE does not exist (θ0 → +∞).
    w = np.array([[0.0, 3.0, 2.0], [0.0, 0.0, 4.0], [0.0, 1.0, 0.0]])
    fit = fit_bt(w)
    assert fit.iterations <= 20_000  # stopped by its bound, not by luck
    assert fit.diverged and not fit.converged
    assert np.isfinite(fit.theta).all()
    assert fit.theta[0] == fit.theta.max()
    # With the release's pseudo-count the same data has a proper estimate.
    fixed = fit_bt(w, pseudo_count=0.5)
    assert fixed.converged and not fixed.diverged


def test_divergence_zero_wins_and_isolated_model() -> None:
    # Model 2 never played and model 1 never won: both make the MLE undefined; values stay finite.
    w = np.array([[0.0, 5.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    fit = fit_bt(w)
    assert fit.diverged and np.isfinite(fit.theta).all()
    assert (np.abs(fit.theta) <= 30).all()


def test_batch_equals_single_fits() -> None:
    rng = np.random.default_rng(5)
    ws = rng.integers(0, 20, size=(7, 4, 4)).astype(float)
    ws[2] = np.array([[0, 3, 3, 3], [0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 1, 0]])  # a divergent one in the batch
    batch = fit_bt_batch(ws)
    for r in range(len(ws)):
        single = fit_bt(ws[r])
        assert batch.diverged[r] == single.diverged
        assert batch.converged[r] == single.converged
        assert batch.theta[r] == pytest.approx(single.theta, abs=1e-12)
    assert batch.diverged[2]


def test_many_models_dense_path() -> None:
    # K > 8 takes the dense (K, K) branch; compare with choix again.
    rng = np.random.default_rng(9)
    k = 20
    w = rng.integers(1, 10, size=(k, k)).astype(float)
    np.fill_diagonal(w, 0)
    ours = fit_bt(w)
    ref = choix.ilsr_pairwise_dense(w, alpha=0.0, max_iter=10_000, tol=1e-13)
    assert ours.converged
    assert ours.theta == pytest.approx(ref - ref.mean(), abs=1e-6)


def test_negative_counts_rejected() -> None:
    with pytest.raises(ValueError):
        fit_bt(np.array([[0.0, -1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError):
        fit_bt(np.array([[0.0, 1.0], [1.0, 0.0]]), pseudo_count=-1)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_count_weight_or_pseudo_count_that_is_not_a_finite_number_is_refused_by_name(bad: float) -> None:
    """A NaN or inf count ran 20,000 iterations and gave NaN strengths, flagged neither diverged nor failed (a
    statistics review of 2026-12-06)."""
    from arena.stats.btd import fit_btd

    w = np.array([[0.0, 3.0], [bad, 0.0]])
    with pytest.raises(ValueError, match="win counts must be finite and non-negative"):
        fit_bt(w)
    with pytest.raises(ValueError, match="win counts must be finite and non-negative"):
        fit_bt_batch(w[None])
    with pytest.raises(ValueError, match="counts must be finite and non-negative"):
        fit_btd(w, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="weights must be finite and non-negative"):
        win_matrix_from_judgments([0, 1], [1, 0], 2, weights=[1.0, bad])
    with pytest.raises(ValueError, match="pseudo_count must be a finite number >= 0"):
        fit_bt(np.array([[0.0, 3.0], [1.0, 0.0]]), pseudo_count=bad)
