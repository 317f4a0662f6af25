"""Issue 10 (items 2, 3, 5, 8): the faster statistics give the results of the code they replaced.

References: the code before issue 10, kept verbatim in bench/bench_scale_stats.py (row-by-row
``encode_cases``, MM, the old cluster draw); scipy's L-BFGS on the BT log-likelihood and choix's I-LSR as
independent fits; hand-computed values; and known truth in a coverage simulation (bench/synthetic.py).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import choix
import numpy as np
import pandas as pd
import pytest

from arena.stats import bootstrap as bootstrap_module
from arena.stats import (
    bootstrap_fits,
    encode_cases,
    fit_bt,
    fit_bt_batch,
    load_release_cases,
    percentile_ci,
    prior_weight,
    win_matrix,
)
from arena.stats.bootstrap import draw_case_counts
from arena.stats.matrices import case_types, win_matrices_from_counts
from bench.bench_scale_stats import (
    cluster_counts_reference,
    encode_cases_reference,
    fit_bt_batch_reference,
    scipy_fit,
)
from bench.synthetic import synthetic_cases

_DATA = os.environ.get("LIT2TEST_DATA")
PAIRS = (Path(_DATA) if _DATA else Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "lit2test") / (
    "corrected_folded_pairs.jsonl"
)

FIELDS = ("case", "context", "batch", "lo", "hi", "original", "reverse", "shown_a")


def assert_same_encoding(a: object, b: object) -> None:
    assert a.models == b.models  # type: ignore[attr-defined]
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype, f
        assert np.array_equal(x, y), f


# ----------------------------------------------------------------------------- encode_cases (item 5)


@pytest.mark.skipif(not PAIRS.exists(), reason="release data not found")
def test_encode_matches_row_by_row_on_release() -> None:
    cases = load_release_cases(PAIRS)
    assert_same_encoding(encode_cases(cases), encode_cases_reference(cases))


@pytest.mark.parametrize("seed", range(3))
def test_encode_matches_row_by_row_on_synthetic_edge_cases(seed: int) -> None:
    df = synthetic_cases(60, 9, tie_prob=0.1, missing_prob=0.1, order_bias=0.5, seed=seed).cases.copy()
    # Every kind of missing value, a missing A side, non-string ids and verdict dtypes.
    df["original"] = df["original"].astype(object)
    df.loc[df.index % 7 == 0, "original"] = np.nan
    df.loc[df.index % 11 == 0, "reverse"] = pd.NA
    df.loc[df.index % 5 == 0, "shown_a_original"] = None
    df["batch"] = df.index % 3  # integers become strings
    rng = np.random.default_rng(seed)
    df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
    assert_same_encoding(encode_cases(df), encode_cases_reference(df))
    models = [f"m{k:03d}" for k in range(12)][::-1]  # a given, larger model list in another order
    assert_same_encoding(encode_cases(df, models=models), encode_cases_reference(df, models=models))
    no_side = df.drop(columns=["shown_a_original"])
    assert_same_encoding(encode_cases(no_side), encode_cases_reference(no_side))


def test_encode_empty_frame() -> None:
    df = synthetic_cases(2, 4, seed=0).cases.iloc[:0]
    assert_same_encoding(encode_cases(df), encode_cases_reference(df))


@pytest.mark.parametrize(
    ("row", "column", "value"),
    [
        (3, "original", "INVALID"),  # an INVALID-like code is neither model nor TIE
        (3, "reverse", "m999"),  # a model outside the pair
        (4, "shown_a_original", "TIE"),  # TIE cannot be a side
        (5, "model_2", None),  # becomes the model name "None" in both versions, not in the pair's verdicts
    ],
)
def test_encode_errors_match_row_by_row(row: int, column: str, value: object) -> None:
    df = synthetic_cases(10, 5, seed=1).cases.copy()
    df.loc[row, column] = value
    df.loc[8, "original"] = "also bad"  # a later bad row: the first one must be reported
    with pytest.raises(ValueError) as old:
        encode_cases_reference(df)
    with pytest.raises(ValueError, match=re.escape(str(old.value))):
        encode_cases(df)


def test_encode_same_model_error_matches() -> None:
    df = synthetic_cases(5, 5, seed=2).cases.copy()
    df.loc[2, "model_2"] = df.loc[2, "model_1"]
    with pytest.raises(ValueError) as old:
        encode_cases_reference(df)
    assert "both" in str(old.value)
    with pytest.raises(ValueError, match=re.escape(str(old.value))):
        encode_cases(df)


# ----------------------------------------------------------------------------- BT fits (item 3)


def _release_replicates(r: int) -> tuple[np.ndarray, np.ndarray]:
    enc = encode_cases(load_release_cases(PAIRS))
    types = case_types(enc)
    w = win_matrices_from_counts(types, draw_case_counts(types, r, np.random.default_rng(4)), "ordered")
    return w, fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5).theta


@pytest.mark.skipif(not PAIRS.exists(), reason="release data not found")
def test_fits_agree_with_old_mm_and_scipy_on_release() -> None:
    w, point = _release_replicates(400)
    new = fit_bt_batch(w, pseudo_count=0.5, init=point)
    assert new.converged.all()
    old = fit_bt_batch_reference(w, pseudo_count=0.5, init=point, tol=1e-13)
    assert np.abs(new.theta - old).max() < 1e-8
    for r in range(3):
        assert new.theta[r] == pytest.approx(scipy_fit(w[r], 0.5), abs=1e-6)


@pytest.mark.parametrize(("k", "contexts"), [(6, 300), (30, 2000)])
def test_fits_agree_with_old_mm_and_scipy_on_synthetic(k: int, contexts: int) -> None:
    enc = encode_cases(synthetic_cases(contexts, k, theta_sd=1.5, tie_prob=0.05, seed=k).cases)
    types = case_types(enc)
    w = win_matrices_from_counts(types, draw_case_counts(types, 60, np.random.default_rng(0)), "ordered")
    for init in (None, fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5).theta):
        new = fit_bt_batch(w, pseudo_count=0.5, init=init)
        assert new.converged.all()
        old = fit_bt_batch_reference(w, pseudo_count=0.5, init=init, tol=1e-13)
        assert np.abs(new.theta - old).max() < 1e-8
    assert new.theta[0] == pytest.approx(scipy_fit(w[0], 0.5), abs=1e-6)


def test_bipartite_graph_converges() -> None:
    # A star (0 meets 1, 2 and 3; they never meet each other) is bipartite: plain Newman updates oscillate
    # there; the fit must still converge to the MLE (choix's I-LSR as the independent reference).
    w = np.zeros((4, 4))
    w[0, 1], w[1, 0], w[0, 2], w[2, 0], w[0, 3], w[3, 0] = 5, 2, 3, 4, 1, 6
    fit = fit_bt(w)
    assert fit.converged and not fit.diverged
    ref = choix.ilsr_pairwise_dense(w, alpha=0.0, max_iter=10_000, tol=1e-13)
    assert fit.theta == pytest.approx(ref - ref.mean(), abs=1e-7)
    # Hand check: in a star each leaf's odds against the hub are its own data: θ_leaf − θ_hub = ln(w_l0/w_0l).
    assert fit.theta[1] - fit.theta[0] == pytest.approx(math.log(2 / 5), abs=1e-8)


def test_many_models_batch_with_divergent_replicate_equals_single_fits() -> None:
    rng = np.random.default_rng(8)
    k = 12
    ws = rng.integers(0, 15, size=(6, k, k)).astype(float)
    ws[3, :, 0] = 0  # model 0 never loses in replicate 3: no MLE (MM path, flagged)
    batch = fit_bt_batch(ws)
    assert batch.diverged.tolist() == [False, False, False, True, False, False]
    for r in range(len(ws)):
        single = fit_bt(ws[r])
        assert batch.converged[r] == single.converged
        assert batch.theta[r] == pytest.approx(single.theta, abs=1e-12)
    assert np.isfinite(batch.theta).all() and batch.theta[3, 0] == batch.theta[3].max()


# ----------------------------------------------------------------------------- cluster bootstrap (item 2)


def test_chunking_does_not_change_values(monkeypatch: pytest.MonkeyPatch) -> None:
    enc = encode_cases(synthetic_cases(40, 5, tie_prob=0.1, seed=3).cases)
    whole = {u: bootstrap_fits(enc, unit=u, replicates=300, seed=9) for u in ("case", "context")}
    monkeypatch.setattr(bootstrap_module, "_CHUNK_ELEMENTS", 7 * 25)  # 7 replicates per chunk
    for unit, ref in whole.items():
        chunked = bootstrap_fits(enc, unit=unit, replicates=300, seed=9)
        for kind in ref.theta:
            assert np.array_equal(chunked.theta[kind], ref.theta[kind])


def test_cluster_bootstrap_agrees_with_old_draw_within_monte_carlo_error() -> None:
    # The context draw changed from a multinomial over compositions to uniform context indices (a different
    # stream, the same distribution): the CIs agree within Monte Carlo error. Uneven context sizes on purpose.
    full = synthetic_cases(80, 5, tie_prob=0.05, seed=6).cases
    keep = full.index % 10 < np.where(full["context"].str[3:].astype(int) % 2 == 0, 10, 6)
    enc = encode_cases(full[keep])
    r = 4000
    new = bootstrap_fits(enc, unit="context", kinds=("ordered",), replicates=r, seed=1)
    types = case_types(enc)
    counts = cluster_counts_reference(enc, types, r, np.random.default_rng(2))
    old = fit_bt_batch(win_matrices_from_counts(types, counts, "ordered"), pseudo_count=0.5).theta
    sd = old.std(axis=0)
    assert new.theta["ordered"].std(axis=0) == pytest.approx(sd, rel=0.08)
    # Percentile endpoints at R = 4000 move by roughly 0.05 SD between streams; allow 0.15 SD.
    assert np.abs(percentile_ci(new.theta["ordered"]) - percentile_ci(old)).max() < 0.15 * sd.max()


# ----------------------------------------------------------------------------- prior weight (item 8)


def test_prior_weight_hand() -> None:
    w = np.array([[0.0, 3.0], [1.0, 0.0]])
    ci = np.array([[0.0, 0.4], [-0.4, 0.0]])  # half-width 0.2
    pw = prior_weight(w, 0.5, ci=ci)
    assert pw["prior_share"] == pytest.approx(1.0 / 5.0)  # 2 × 0.5 of 4 + 1
    assert pw["cell_share_max"] == pytest.approx(0.5 / 1.5)
    assert pw["cell_share_median"] == pytest.approx((0.5 / 1.5 + 0.5 / 3.5) / 2)
    shift = 0.5 * (math.log(3) - math.log(7 / 3))  # ±½ ln 3 without the prior, ±½ ln(7/3) with it
    assert pw["max_shift"] == pytest.approx(shift, abs=1e-9)
    assert pw["max_shift_ratio"] == pytest.approx(shift / 0.2, abs=1e-8)
    assert pw["median_shift_ratio"] == pytest.approx(shift / 0.2, abs=1e-8)
    assert pw["mle_exists"] and pw["large"]  # 0.63 > 0.35
    assert prior_weight(w, 0.5, ci=ci * 10)["large"] is False  # the same shift against wide intervals
    separated = prior_weight(np.array([[0.0, 3.0], [0.0, 0.0]]), 0.5)
    assert separated["mle_exists"] is False and separated["large"] is True


def _coverage(pseudo_count: float, datasets: int) -> tuple[float, float]:
    covered, flagged = [], []
    for s in range(datasets):
        data = synthetic_cases(50, 8, theta_sd=1.0, seed=1000 + s)  # 300 cases, ~11 per pair
        enc = encode_cases(data.cases)
        w = win_matrix(enc, "ordered")
        point = fit_bt(w, pseudo_count=pseudo_count).theta
        boot = bootstrap_fits(enc, kinds=("ordered",), replicates=200, seed=s, pseudo_count=pseudo_count, init={"ordered": point})
        ci = percentile_ci(boot.theta["ordered"])
        covered.append((ci[:, 0] <= data.theta) & (data.theta <= ci[:, 1]))
        flagged.append(prior_weight(w, pseudo_count, theta=point, ci=ci)["large"])
    return float(np.concatenate(covered).mean()), float(np.mean(flagged))


def test_coverage_of_case_ci_with_release_prior() -> None:
    # 40 simulated data sets × 8 models = 320 intervals against the known truth. Nominal 0.95; the
    # percentile bootstrap with ~11 cases per pair runs under it (0.89-0.91 in trial runs). Binomial SE ≈ 0.013.
    cov, flagged = _coverage(0.5, 40)
    assert 0.85 <= cov <= 0.99, cov
    assert flagged <= 0.25


def test_coverage_collapses_under_a_heavy_prior_and_is_flagged() -> None:
    # The same simulation with a pseudo-count of 5 per cell (about a third of a cell's data): strengths
    # shrink, intervals miss the truth, and the diagnostic says so. Shows the coverage test can fail.
    cov, flagged = _coverage(5.0, 20)
    assert cov < 0.8, cov
    assert flagged >= 0.9
