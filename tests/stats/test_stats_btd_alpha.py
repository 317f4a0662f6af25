"""Bradley–Terry–Davidson (hand case, independent scipy fit, evalica) and Krippendorff's alpha."""

from __future__ import annotations

import math
from itertools import combinations

import krippendorff
import numpy as np
import pytest
from scipy.optimize import minimize

from arena.stats import (
    FIVE_LEVEL_SHARES,
    btd_counts,
    debiased_share,
    elo_ratings,
    fit_bt,
    fit_btd,
    krippendorff_alpha,
    share_to_outcome,
    shares_from_verdicts,
)
from arena.stats.alpha import reliability_matrix

# ---------------------------------------------------------------- BTD


def test_btd_two_models_closed_form() -> None:
    # Two models are saturated (3 outcomes, 2 parameters): the MLE reproduces the observed shares.
    # 4 wins, 1 loss, 2 ties: π1/π2 = 4/1 -> θ = ±ln 2; ν √(π1π2)/π1 = 2/4 -> ν = ½·√(π1/π2) = ½·2 = 1.
    # Check: π = (2, ½): D = 2 + ½ + 1 = 3.5; P(win) = 4/7, P(loss) = 1/7, P(tie) = 2/7. ✓
    fit = fit_btd(np.array([[0, 4], [1, 0]]), np.array([[0, 2], [2, 0]]))
    assert fit.converged and not fit.diverged
    assert fit.theta == pytest.approx([math.log(2), -math.log(2)], abs=1e-6)
    assert fit.nu == pytest.approx(1.0, abs=1e-6)
    # Elo-like: 1500 ± 400·ln2/ln10 = 1500 ± 120.41
    assert fit.ratings == pytest.approx([1500 + 400 * math.log10(2), 1500 - 400 * math.log10(2)], abs=1e-3)


def test_elo_scale() -> None:
    assert elo_ratings(np.array([math.log(10), 0.0, -math.log(10)])) == pytest.approx([1900, 1500, 1100])


def test_btd_without_ties_is_bt() -> None:
    w = np.array([[0, 3, 2], [1, 0, 4], [2, 1, 0]], dtype=float)
    fit = fit_btd(w, np.zeros((3, 3)))
    assert fit.nu == 0.0
    assert fit.theta == pytest.approx(fit_bt(w).theta, abs=1e-9)


def random_btd_data(seed: int, k: int = 4, m: int = 500) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    true, nu = rng.normal(0, 1, k), 0.3 + rng.random()
    xs = rng.integers(0, k, m)
    ys = (xs + rng.integers(1, k, m)) % k
    pi = np.exp(true)
    d = pi[xs] + pi[ys] + nu * np.sqrt(pi[xs] * pi[ys])
    u = rng.random(m)
    p_x = pi[xs] / d
    p_t = nu * np.sqrt(pi[xs] * pi[ys]) / d
    out = np.where(u < p_x, 1, np.where(u < p_x + p_t, 0, 2))  # 1: x wins, 0: tie, 2: y wins
    w = np.zeros((k, k))
    t = np.zeros((k, k))
    for x, y, o in zip(xs, ys, out, strict=True):
        if o == 1:
            w[x, y] += 1
        elif o == 2:
            w[y, x] += 1
        else:
            t[x, y] += 1
            t[y, x] += 1
    return w, t, xs, ys, out


@pytest.mark.parametrize("seed", range(3))
def test_btd_matches_independent_scipy_fit(seed: int) -> None:
    w, t, *_ = random_btd_data(seed)
    k = len(w)

    # Independent likelihood: θ_0 fixed at 0, ν on a log scale, probabilities computed directly, derivative-free.
    def nll(x: np.ndarray) -> float:
        th = np.concatenate([[0.0], x[: k - 1]])
        nu = math.exp(x[-1])
        total = 0.0
        for i, j in combinations(range(k), 2):
            pi, pj = math.exp(th[i]), math.exp(th[j])
            d = pi + pj + nu * math.sqrt(pi * pj)
            total += w[i, j] * math.log(pi / d) + w[j, i] * math.log(pj / d) + t[i, j] * math.log(nu * math.sqrt(pi * pj) / d)
        return -total

    res = minimize(
        nll, np.zeros(k), method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 20_000, "maxfev": 40_000}
    )
    ref = np.concatenate([[0.0], res.x[: k - 1]])
    ours = fit_btd(w, t)
    assert ours.theta == pytest.approx(ref - ref.mean(), abs=1e-4)
    assert ours.nu == pytest.approx(math.exp(res.x[-1]), abs=1e-4)
    assert ours.log_likelihood == pytest.approx(-res.fun, abs=1e-6)


def test_btd_matches_evalica_newman() -> None:
    evalica = pytest.importorskip("evalica")
    w, t, xs, ys, out = random_btd_data(7)
    k = len(w)
    winners = [evalica.Winner.X if o == 1 else evalica.Winner.Y if o == 2 else evalica.Winner.Draw for o in out]
    res = evalica.newman(xs.tolist(), ys.tolist(), winners, tolerance=1e-13, limit=100_000)
    ev = np.log(res.scores.reindex(range(k)).to_numpy())
    ours = fit_btd(w, t)
    # Newman (2023) writes the tie probability with 2v where Davidson has ν: ν = 2v.
    assert ours.theta == pytest.approx(ev - ev.mean(), abs=1e-6)
    assert ours.nu == pytest.approx(2 * res.v, abs=1e-6)


def test_five_level_mapping() -> None:
    assert shares_from_verdicts(["A>>B", "A>B", "A=B", "B>A", "B>>A"]).tolist() == [1.0, 0.75, 0.5, 0.25, 0.0]
    win, tie, loss = share_to_outcome(np.array([1.0, 0.75, 0.5, 0.25, 0.0]))
    assert win.tolist() == [1.0, 0.5, 0.0, 0.0, 0.0]
    assert tie.tolist() == [0.0, 0.5, 1.0, 0.5, 0.0]
    assert loss.tolist() == [0.0, 0.0, 0.0, 0.5, 1.0]
    # The expected score win + tie/2 is the share.
    assert (win + tie / 2).tolist() == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert FIVE_LEVEL_SHARES["A>B"] == 0.75
    # A custom scale is just another dict.
    assert shares_from_verdicts(["yes", "no"], {"yes": 1.0, "no": 0.0}).tolist() == [1.0, 0.0]


def test_btd_counts_and_debiasing() -> None:
    # Model 0 shown as A gets "A>B" (0.75); in the reverse order model 1 is A and gets "B>>A" (0.0), i.e. model 0
    # wins fully there: debiased share of model 0 = (0.75 + 1 − 0)/2 = 0.875 -> win 0.75, tie 0.25.
    s = debiased_share(0.75, 0.0)
    assert float(s) == 0.875
    w, t = btd_counts(np.array([0, 1]), np.array([1, 2]), np.array([0.875, 0.5]), 3)
    assert w.tolist() == [[0, 0.75, 0], [0, 0, 0], [0, 0, 0]]
    assert t.tolist() == [[0, 0.25, 0], [0.25, 0, 1.0], [0, 1.0, 0]]


def test_btd_divergence_flagged() -> None:
    # Model 1 never wins (only a tie): the likelihood keeps growing as θ1 → −∞ with ν → ∞.
    fit = fit_btd(np.array([[0, 3], [0, 0]]), np.array([[0, 1], [1, 0]]))
    assert fit.diverged
    assert np.isfinite(fit.theta).all() and np.isfinite(fit.nu)


def test_btd_rejects_asymmetric_ties() -> None:
    with pytest.raises(ValueError, match="symmetric"):
        fit_btd(np.zeros((2, 2)), np.array([[0, 1], [0, 0]]))


# ---------------------------------------------------------------- Krippendorff's alpha

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers × 12 units,
# values 1–5, with missing values. Published: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def nominal_alpha_by_hand(data: list[list[float]]) -> float:
    """Independent coincidence-matrix computation: α = 1 − (n−1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k."""
    values = sorted({v for row in data for v in row if v == v})
    idx = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for u in range(len(data[0])):
        col = [row[u] for row in data if row[u] == row[u]]
        m = len(col)
        if m < 2:
            continue  # unpairable
        for a in range(m):
            for b in range(m):
                if a != b:
                    o[idx[col[a]], idx[col[b]]] += 1 / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    off = ~np.eye(len(values), dtype=bool)
    return 1 - (n - 1) * o[off].sum() / np.outer(n_c, n_c)[off].sum()


def test_alpha_published_example() -> None:
    assert round(krippendorff_alpha(K2011, "nominal"), 3) == 0.743
    assert round(krippendorff_alpha(K2011, "ordinal"), 3) == 0.815
    assert round(krippendorff_alpha(K2011, "interval"), 3) == 0.849
    assert round(krippendorff_alpha(K2011, "ratio"), 3) == 0.797
    assert krippendorff_alpha(K2011, "nominal") == pytest.approx(nominal_alpha_by_hand(K2011), abs=1e-12)


def test_alpha_small_hand_case() -> None:
    # Coders [1,1,2,2] and [1,2,2,2]: coincidences o11 = 2, o12 = o21 = 1, o22 = 4; n1 = 3, n2 = 5, n = 8.
    # α = 1 − 7·2 / (2·3·5) = 1 − 14/30 = 8/15.
    assert krippendorff_alpha([[1, 1, 2, 2], [1, 2, 2, 2]], "nominal") == pytest.approx(8 / 15)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_matches_package_with_missing(level: str) -> None:
    rng = np.random.default_rng(0)
    data = rng.integers(1, 6, size=(3, 25)).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    assert krippendorff_alpha(data, level) == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def test_alpha_string_labels_and_none() -> None:
    labels = [["A", "B", "TIE", None], ["A", "B", "A", "B"], ["A", None, "TIE", "B"]]
    coded = [[{"A": 0, "B": 1, "TIE": 2}.get(v, NAN) if v is not None else NAN for v in row] for row in labels]
    assert krippendorff_alpha(labels, "nominal") == pytest.approx(
        krippendorff.alpha(reliability_data=coded, level_of_measurement="nominal")
    )
    ordinal = [["low", "mid", "high"], ["low", "high", "high"]]
    expected = krippendorff.alpha(reliability_data=[[0, 1, 2], [0, 2, 2]], level_of_measurement="ordinal", value_domain=[0, 1, 2])
    assert krippendorff_alpha(ordinal, "ordinal", value_domain=["low", "mid", "high"]) == pytest.approx(expected)
    with pytest.raises(ValueError):
        krippendorff_alpha(ordinal, "ordinal")


def test_alpha_needs_two_values() -> None:
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, 1], [1, 1]], "nominal")


def test_reliability_matrix() -> None:
    import pandas as pd

    frame = pd.DataFrame({"unit": ["u1", "u1", "u2"], "coder": ["c1", "c2", "c1"], "label": ["A", "B", "A"]})
    table, coders, units = reliability_matrix(frame, unit="unit", coder="coder", value="label")
    assert coders == ["c1", "c2"] and units == ["u1", "u2"]
    assert table == [["A", "A"], ["B", None]]


def test_tie_free_replicates_are_fitted_together_as_fit_btd_fits_them_one_by_one():
    """Replicates without a tie (ν = 0: plain Bradley–Terry) are fitted in one batch, not one by one; each must
    still equal fit_btd's own fit of that replicate — connected ones and fully separated (diverged) ones alike."""
    from arena.stats.btd import fit_btd_pairs, pairs_to_matrices

    rng = np.random.default_rng(7)
    k = 4
    p = k * (k - 1) // 2
    w_lo = rng.integers(0, 4, size=(12, p)).astype(float)
    w_hi = rng.integers(0, 4, size=(12, p)).astype(float)
    w_lo[:4], w_hi[:4] = 3.0, 0.0  # the lower index always wins: fully separated, no MLE
    ties = np.zeros((12, p))
    batch = fit_btd_pairs(w_lo, w_hi, ties, k)
    assert batch.fallback.all() and (batch.nu == 0).all()
    assert batch.diverged[:4].all()
    for i in range(12):
        w_m, t_m = pairs_to_matrices(w_lo[i : i + 1], w_hi[i : i + 1], ties[i : i + 1], k)
        one = fit_btd(w_m[0], t_m[0])
        assert one.nu == 0.0
        assert bool(batch.diverged[i]) == one.diverged
        if not one.diverged:
            assert np.allclose(batch.theta[i], one.theta, atol=1e-6)
        else:  # both push the separated order to the cap: the order of strengths is what they share
            assert list(np.argsort(-batch.theta[i], kind="stable")) == list(np.argsort(-one.theta, kind="stable"))
