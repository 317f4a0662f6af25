"""HypoArena statistics: debiasing, BTD leaderboards with case-bootstrap intervals, rubric, inter-judge agreement.

References are hand-computed cases, an independent Davidson likelihood maximised by scipy in this file, scipy's
rank correlations, and the known truth of simulated data; never values from the code under test.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import kendalltau, spearmanr

from arena.stats.btd import btd_counts, elo_ratings, fit_btd, fit_btd_batch
from arena.stats.hypoarena import (
    VERDICT_COLUMNS,
    debias,
    hypoarena_bootstrap,
    hypoarena_leaderboard,
    inter_judge_agreement,
    pairwise_verdict_agreement,
    pooled_spearman_ci,
    rubric_scores,
    rubric_table,
)

LN10 = math.log(10.0)


def frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def davidson_verdicts(
    theta: dict[str, np.ndarray], nu: float, n_cases: int, seed: int, *, both_orders: bool = False, graded: bool = False
) -> pd.DataFrame:
    """Verdicts drawn from Davidson with known strengths: every pair of every case, ``first`` = lower index.

    One order only by default, with A>>B / A=B / B>>A, so that the (win, tie, loss) split is exactly Davidson's
    outcome; ``both_orders``/``graded`` add the reverse order and the A>B / B>A levels (data for the
    likelihood comparison, not from the model).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for dom, th in theta.items():
        k = len(th)
        for c in range(n_cases):
            for i, j in combinations(range(k), 2):
                orders = [("original", i, j)] + ([("reverse", j, i)] if both_orders else [])
                for order, a, b in orders:
                    pa, pb = math.exp(th[a]), math.exp(th[b])
                    pt = nu * math.sqrt(pa * pb)
                    u = rng.random() * (pa + pb + pt)
                    strong = not graded or rng.random() < 0.5
                    v = ("A>>B" if strong else "A>B") if u < pa else "A=B" if u < pa + pt else ("B>>A" if strong else "B>A")
                    rows.append((dom, f"{dom}-c{c}", f"m{i}", f"m{j}", order, v))
    return frame(rows)


# ---------------------------------------------------------------- debiasing and consistency


def test_debias_hand_computed_cases() -> None:
    v = frame(
        [
            # c1 (X, Y): X shown as A gets A>B (.75); reverse, Y shown as A gets B>>A (0) -> X gets 1. Share .875.
            ("d", "c1", "X", "Y", "original", "A>B"),
            ("d", "c1", "X", "Y", "reverse", "B>>A"),
            # c1 (X, Z): two exact ties -> .5, consistent (both ties).
            ("d", "c1", "X", "Z", "original", "A=B"),
            ("d", "c1", "X", "Z", "reverse", "A=B"),
            # c1 (Y, Z): each order favours the side shown as A -> Y .75 then .25: share .5, a conflict.
            ("d", "c1", "Y", "Z", "original", "A>B"),
            ("d", "c1", "Y", "Z", "reverse", "A>B"),
            # c2 (X, Y): tie, then Y (shown A) gets B>A = .25 -> X .75: share .625; a tie against a win: inconsistent.
            ("d", "c2", "X", "Y", "original", "A=B"),
            ("d", "c2", "X", "Y", "reverse", "B>A"),
            # c2 (X, Z): only the reverse order, Z (shown A) wins A>>B -> X 0; flagged one-order.
            ("d", "c2", "X", "Z", "reverse", "A>>B"),
        ]
    )
    m = debias(v.sample(frac=1.0, random_state=3))  # row order must not matter
    assert list(zip(m["case"], m["first"], m["second"], strict=True)) == [
        ("c1", "X", "Y"),
        ("c1", "X", "Z"),
        ("c1", "Y", "Z"),
        ("c2", "X", "Y"),
        ("c2", "X", "Z"),
    ]
    assert m["share"].tolist() == [0.875, 0.5, 0.5, 0.625, 0.0]
    assert m["orders"].tolist() == [2, 2, 2, 2, 1]
    assert m["one_order"].tolist() == [False, False, False, False, True]
    assert m["consistent"].tolist()[:4] == [True, True, False, False]
    assert m["consistent"].isna().tolist() == [False, False, False, False, True]
    assert m["conflict"].tolist()[:4] == [False, False, True, False]
    assert np.isnan(m["share_original"].iloc[4]) and m["share_reverse"].iloc[4] == 0.0


def test_debias_rejects_bad_input_with_a_useful_message() -> None:
    ok = ("d", "c1", "X", "Y", "original", "A>B")
    with pytest.raises(ValueError, match="unknown verdict 'A>>>B'"):
        debias(frame([ok, ("d", "c1", "X", "Y", "reverse", "A>>>B")]))
    with pytest.raises(ValueError, match="duplicate original verdict"):
        debias(frame([ok, ok]))
    with pytest.raises(ValueError, match="both orientations"):
        debias(frame([ok, ("d", "c1", "Y", "X", "reverse", "A>B")]))
    with pytest.raises(ValueError, match="unknown order"):
        debias(frame([("d", "c1", "X", "Y", "forward", "A>B")]))
    with pytest.raises(ValueError, match="with itself"):
        debias(frame([("d", "c1", "X", "X", "original", "A>B")]))


def test_leaderboard_wr_consistency_and_counts_by_hand() -> None:
    v = frame(
        [
            ("d", "c1", "X", "Y", "original", "A>B"),  # X: .75, .875 debiased with the next
            ("d", "c1", "X", "Y", "reverse", "B>>A"),
            ("d", "c1", "X", "Z", "original", "A=B"),  # .5
            ("d", "c1", "X", "Z", "reverse", "A=B"),
            ("d", "c1", "Y", "Z", "original", "A>B"),  # .5, conflict
            ("d", "c1", "Y", "Z", "reverse", "A>B"),
            ("d", "c2", "X", "Y", "original", "B>A"),  # X .25 one order
            ("d", "c2", "Y", "Z", "original", "A>>B"),  # Y 1
            ("d", "c2", "Y", "Z", "reverse", "B>A"),  # Z shown as A gets .25 -> Y .75: Y .875, consistent
            ("d", "c2", "X", "Z", "original", "B>>A"),  # X 0
            ("d", "c2", "X", "Z", "reverse", "A>>B"),  # Z 1 -> X 0: X 0, consistent
        ]
    )
    doc = hypoarena_leaderboard(v, replicates=20, seed=1)
    d = doc["domains"]["d"]
    # X: .875, .5, .25, 0 -> 1.625/4; Y: .125, .5, .75, .875 -> 2.25/4; Z: .5, .5, .125, 1 -> 2.125/4.
    assert d["models"]["X"]["wr"] == pytest.approx(1.625 / 4)
    assert d["models"]["Y"]["wr"] == pytest.approx(2.25 / 4)
    assert d["models"]["Z"]["wr"] == pytest.approx(2.125 / 4)
    assert [d["models"][m]["matches"] for m in "XYZ"] == [4, 4, 4]
    # Two-order matches: 5, consistent: c1 XY, c1 XZ, c2 YZ, c2 XZ -> 4/5; conflict: c1 YZ -> 1/5.
    assert d["consistency"] == pytest.approx(0.8)
    assert d["conflict_share"] == pytest.approx(0.2)
    assert (d["matches"], d["cases"], d["one_order_matches"]) == (6, 2, 1)
    assert doc["pooled"]["consistency"] == pytest.approx(0.8)
    assert sorted(d["modal_ranking"]) == ["X", "Y", "Z"]
    for m in "XYZ":
        lo, hi = d["models"][m]["ci"]
        assert lo <= d["models"][m]["rating"] <= hi or d["diverged_replicates"] > 0
        assert 1 <= d["models"][m]["rank_ci"][0] <= d["models"][m]["rank_ci"][1] <= 3


# ---------------------------------------------------------------- BTD: independent fit, recovery, batching


def independent_davidson_fit(matches: pd.DataFrame, models: list[str]) -> tuple[np.ndarray, float]:
    """Davidson MLE written here, match by match: θ_0 = 0, log ν free, BFGS with the analytic gradient.

    A match with first's share s counts as (win, tie, loss) = (max(0, 2s − 1), 1 − |2s − 1|, max(0, 1 − 2s)).
    """
    k = len(models)
    idx = {m: i for i, m in enumerate(models)}
    a = matches["first"].map(idx).to_numpy()
    b = matches["second"].map(idx).to_numpy()
    s = matches["share"].to_numpy()
    win, loss = np.maximum(0, 2 * s - 1), np.maximum(0, 1 - 2 * s)
    tie = 1 - win - loss

    def nll(x: np.ndarray) -> tuple[float, np.ndarray]:
        th = np.concatenate([[0.0], x[: k - 1]])
        lam = x[-1]
        ea, eb, et = np.exp(th[a]), np.exp(th[b]), np.exp(lam + (th[a] + th[b]) / 2)
        den = ea + eb + et
        pa, pb, pt = ea / den, eb / den, et / den
        ll = win * np.log(pa) + loss * np.log(pb) + tie * np.log(pt)
        tot = win + loss + tie
        ga = win + tie / 2 - tot * (pa + pt / 2)
        gb = loss + tie / 2 - tot * (pb + pt / 2)
        g = np.bincount(a, ga, k) + np.bincount(b, gb, k)
        glam = (tie - tot * pt).sum()
        return -ll.sum(), -np.concatenate([g[1:], [glam]])

    res = minimize(nll, np.zeros(k), jac=True, method="BFGS", options={"gtol": 1e-11, "maxiter": 10_000})
    th = np.concatenate([[0.0], res.x[: k - 1]])
    return th - th.mean(), math.exp(res.x[-1])


def test_btd_ratings_match_an_independent_scipy_fit_per_domain_and_pooled() -> None:
    theta = {"bio": np.array([0.6, 0.1, -0.2, -0.5]), "ml": np.array([-0.3, 0.4, 0.2, -0.3])}
    v = davidson_verdicts(theta, 0.7, 40, seed=5, both_orders=True, graded=True)
    v = v.drop(index=v.index[::17])  # some one-order matches
    matches = debias(v)
    doc = hypoarena_leaderboard(v, replicates=20, seed=0)
    models = ["m0", "m1", "m2", "m3"]
    for dom in theta:
        th, nu = independent_davidson_fit(matches[matches["domain"] == dom], models)
        ours = doc["domains"][dom]
        assert [ours["models"][m]["theta"] for m in models] == pytest.approx(th, abs=1e-6)
        assert [ours["models"][m]["rating"] for m in models] == pytest.approx(1500 + 400 * th / LN10, abs=1e-4)
        assert ours["nu"] == pytest.approx(nu, abs=1e-6)
    th, nu = independent_davidson_fit(matches, models)  # pooled: one fit over every domain's matches
    assert [doc["pooled"]["models"][m]["theta"] for m in models] == pytest.approx(th, abs=1e-6)
    assert doc["pooled"]["nu"] == pytest.approx(nu, abs=1e-6)
    # Avg: the mean of the domain ratings.
    for m in models:
        expected = np.mean([doc["domains"][d]["models"][m]["rating"] for d in theta])
        assert doc["pooled"]["models"][m]["avg_domain_rating"] == pytest.approx(expected)


def test_btd_recovers_known_strengths_and_tie_parameter() -> None:
    truth = np.array([0.8, 0.3, 0.0, -0.4, -0.7])
    v = davidson_verdicts({"d": truth}, 0.8, 600, seed=11)  # 6,000 single-order Davidson outcomes
    doc = hypoarena_leaderboard(v, replicates=200, seed=2)
    d = doc["domains"]["d"]
    est = np.array([d["models"][f"m{i}"]["theta"] for i in range(5)])
    # Standard errors here are about 0.035 in θ and 0.03 in ν.
    assert est == pytest.approx(truth - truth.mean(), abs=0.12)
    assert d["nu"] == pytest.approx(0.8, abs=0.1)
    assert [d["models"][f"m{i}"]["rank"] for i in range(5)] == [1, 2, 3, 4, 5]
    lo, hi = d["nu_ci"]
    assert lo < 0.8 < hi


def random_stack(seed: int, r: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 12, (r, k, k)).astype(float) * rng.choice([0.25, 0.5, 1.0], (r, k, k))
    t = rng.integers(0, 6, (r, k, k)).astype(float) / 2
    t = np.triu(t, 1) + np.triu(t, 1).transpose(0, 2, 1)
    w[0, 0, :] = 0  # model 0 never wins: the MLE does not exist (separation pseudo-count, flagged diverged)
    t[1] = 0  # no tie at all: plain BT, ν = 0 (fallback)
    return w, t


@pytest.mark.parametrize("k", [2, 4, 7])
def test_batched_btd_equals_fit_btd_problem_by_problem(k: int) -> None:
    w, t = random_stack(k, 12, k)
    batch = fit_btd_batch(w, t)
    warm = fit_btd_batch(w, t, init=fit_btd(w[2], t[2]).theta, init_nu=1.0)  # the chord path
    for i in range(len(w)):
        ref = fit_btd(w[i], t[i])
        for b in (batch, warm):
            assert b.diverged[i] == ref.diverged
            # A separated fit's maximum (with the separation pseudo-count) lies along a flat ridge, where L-BFGS-B
            # stops less precisely than Newton.
            tol = 1e-5 if ref.diverged else 1e-6
            assert b.theta[i] == pytest.approx(ref.theta, abs=tol)
            assert b.nu[i] == pytest.approx(ref.nu, rel=tol, abs=tol)
    # Separated replicates with ties stay on the batched Newton path: only the tie-free ones (plain BT) leave it.
    assert batch.diverged[0]
    assert batch.fallback.tolist() == (t.sum(axis=(1, 2)) == 0).tolist()
    assert batch.fallback[1] and batch.nu[1] == 0.0


def replicate_fit(
    matches: pd.DataFrame, cases: np.ndarray, counts: np.ndarray, models: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """A bootstrap replicate the obvious way: copy each case ``count`` times, count wins and ties."""
    copies = dict(zip(cases, counts, strict=True))
    rep = matches.loc[matches.index.repeat(matches["case"].map(copies).fillna(0).astype(int))]
    idx = {m: i for i, m in enumerate(models)}
    return btd_counts(rep["first"].map(idx).to_numpy(), rep["second"].map(idx).to_numpy(), rep["share"].to_numpy(), len(models))


def test_bootstrap_replicates_equal_fit_btd_on_resampled_cases() -> None:
    theta = {"a": np.array([0.5, 0.0, -0.5]), "b": np.array([0.2, 0.1, -0.3])}
    v = davidson_verdicts(theta, 0.5, 15, seed=8, both_orders=True, graded=True)
    boot = hypoarena_bootstrap(v, replicates=6, seed=4, keep_counts=True)
    matches = boot.matches
    for r in range(6):
        pooled_w, pooled_t = 0, 0
        for di, dom in enumerate(boot.domains):
            counts = boot.fits[di].counts[r]
            assert counts.sum() == 15  # n cases with replacement
            w, t = replicate_fit(matches[matches["domain"] == dom], boot.cases[di], counts, boot.models)
            pooled_w, pooled_t = pooled_w + w, pooled_t + t
            ref = fit_btd(w, t)
            assert boot.fits[di].theta[r] == pytest.approx(ref.theta, abs=1e-6)
            assert boot.fits[di].nu[r] == pytest.approx(ref.nu, abs=1e-6)
        ref = fit_btd(pooled_w, pooled_t)
        assert boot.pooled.theta[r] == pytest.approx(ref.theta, abs=1e-6)


def test_bootstrap_is_seeded_and_chunking_changes_nothing() -> None:
    v = davidson_verdicts({"a": np.array([0.3, 0.0, -0.3]), "b": np.array([0.0, 0.2, -0.2])}, 0.6, 12, seed=2)
    one = hypoarena_bootstrap(v, replicates=40, seed=9)
    chunked = hypoarena_bootstrap(v, replicates=40, seed=9, chunk=7)
    for f1, f2 in zip([*one.fits, one.pooled], [*chunked.fits, chunked.pooled], strict=True):
        # The same case draws and fits; only BLAS summation order may differ with the batch width.
        np.testing.assert_allclose(f1.theta, f2.theta, rtol=0, atol=1e-13)
        np.testing.assert_allclose(f1.nu, f2.nu, rtol=1e-13)
        np.testing.assert_array_equal(f1.wr, f2.wr)
    other = hypoarena_bootstrap(v, replicates=40, seed=10)
    assert not np.array_equal(one.fits[0].theta, other.fits[0].theta)


def test_rating_intervals_cover_the_truth_in_a_small_simulation() -> None:
    truth = np.array([0.5, 0.0, -0.5])
    truth_rating = elo_ratings(truth - truth.mean())
    hits, total = 0, 0
    for rep in range(40):
        v = davidson_verdicts({"d": truth}, 0.6, 60, seed=100 + rep)
        doc = hypoarena_leaderboard(v, replicates=200, seed=rep)
        for i in range(3):
            lo, hi = doc["domains"]["d"]["models"][f"m{i}"]["ci"]
            hits += lo <= truth_rating[i] <= hi
            total += 1
    # Nominal 95%; 120 (correlated) intervals, so a wide band around it.
    assert 0.85 <= hits / total <= 1.0


# ---------------------------------------------------------------- rubric


def rubric_rows() -> pd.DataFrame:
    nan = float("nan")
    return pd.DataFrame(
        [
            # K = 2, multi-pair: q = (5+4+3)/3 = 4, (4+4+5)/3 = 13/3; Q_pair = 25/6; Q_set = (4+3+5)/3 = 4; S = 49/12.
            {"domain": "bio", "case": "c1", "model": "A", "g": [5, 4], "l": [4, 4], "j": [3, 5], "b": 4, "d": 3, "u": 5},
            # K = 1 in a multi-pair domain: q = 4; Q_set = (b + u)/2 = 3 (d not applicable); S = 3.5.
            {"domain": "bio", "case": "c1", "model": "B", "g": [3], "l": [4], "j": [5], "b": 2, "d": nan, "u": 4},
            # Singleton domain: S = q_1 = (2+3+4)/3 = 3; the set scores do not enter.
            {"domain": "it", "case": "c9", "model": "A", "g": [2], "l": [3], "j": [4], "b": nan, "d": nan, "u": nan},
            {"domain": "it", "case": "c9", "model": "B", "g": [5], "l": [5], "j": [2], "b": 1, "d": nan, "u": 1},
        ]
    )


def test_rubric_formulas_by_hand() -> None:
    out = rubric_scores(rubric_rows(), singleton_domains=["it"])
    assert out["q"].iloc[0] == pytest.approx([4.0, 13 / 3])
    assert out["Q_pair"].tolist()[:2] == pytest.approx([25 / 6, 4.0])
    assert out["Q_set"].tolist()[:2] == pytest.approx([4.0, 3.0])
    assert out["S"].tolist() == pytest.approx([49 / 12, 3.5, 3.0, 4.0])
    assert out["Q_set"].iloc[2:].isna().all()
    assert out["K"].tolist() == [2, 1, 1, 1]


def test_rubric_rejects_inconsistent_rows() -> None:
    rows = rubric_rows()
    with pytest.raises(ValueError, match="singleton domain takes exactly one pair"):
        rubric_scores(rows, singleton_domains=["bio"])
    bad = rows.copy()
    bad.at[0, "d"] = float("nan")
    with pytest.raises(ValueError, match="d of domain 'bio', case 'c1', model 'A' is missing"):
        rubric_scores(bad, singleton_domains=["it"])
    bad = rows.copy()
    bad.at[0, "g"] = [5, 6]
    with pytest.raises(ValueError, match="outside 1–5"):
        rubric_scores(bad, singleton_domains=["it"])
    bad = rows.copy()
    bad.at[0, "l"] = [4]
    with pytest.raises(ValueError, match="same length"):
        rubric_scores(bad, singleton_domains=["it"])


def test_rubric_table_ranks_and_delta_by_hand() -> None:
    scores = rubric_scores(rubric_rows(), singleton_domains=["it"])
    extra = scores.iloc[[1]].assign(case="c2", S=4.5)  # B gets a second bio submission: mean (3.5 + 4.5)/2 = 4
    scores = pd.concat([scores, extra], ignore_index=True)
    table = rubric_table(scores, {"bio": {"A": 2, "B": 1}, "it": {"A": 1}, "pooled": {"A": 1, "B": 2}})
    bio = table["domains"]["bio"]["models"]
    # bio: A 49/12 ≈ 4.083 > B 4.0 -> rubric ranks A 1, B 2; arena A 2, B 1 -> Δ = -1, +1.
    assert bio["A"]["mean_s"] == pytest.approx(49 / 12) and bio["B"]["mean_s"] == pytest.approx(4.0)
    assert (bio["A"]["rubric_rank"], bio["A"]["arena_rank"], bio["A"]["delta"]) == (1.0, 2.0, -1.0)
    assert (bio["B"]["rubric_rank"], bio["B"]["delta"]) == (2.0, 1.0)
    it = table["domains"]["it"]["models"]
    assert it["B"]["rubric_rank"] == 1.0 and it["B"]["arena_rank"] is None and it["B"]["delta"] is None
    pooled = table["pooled"]["models"]
    # Pooled over submissions: A (49/12 + 3)/2 = 85/24 ≈ 3.54; B (3.5 + 4 + 4.5)/3 = 4 -> B first.
    assert pooled["A"]["mean_s"] == pytest.approx(85 / 24) and pooled["B"]["mean_s"] == pytest.approx(4.0)
    assert (pooled["A"]["rubric_rank"], pooled["A"]["delta"]) == (2.0, 1.0)
    assert pooled["B"]["mean_s_domains"] == pytest.approx((4.0 + 4.0) / 2)
    # Tied means share the mean of their positions.
    tied = rubric_table(pd.DataFrame({"domain": "x", "model": ["P", "Q", "R"], "S": [3.0, 4.0, 4.0]}), {})
    assert [tied["domains"]["x"]["models"][m]["rubric_rank"] for m in "PQR"] == [3.0, 1.5, 1.5]


# ---------------------------------------------------------------- inter-judge agreement


def test_inter_judge_agreement_against_scipy_and_hand_counts() -> None:
    a = {"d1": {"A": 1600, "B": 1550, "C": 1500, "D": 1450, "E": 1400}, "d2": {"A": 1500, "B": 1510, "C": 1490, "D": 1480}}
    b = {"d1": {"A": 1580, "B": 1590, "C": 1400, "D": 1450, "E": 1450}, "d2": {"A": 1520, "B": 1500, "C": 1490, "D": 1400}}
    out = inter_judge_agreement(a, b, top_k=2)
    for d in a:
        models = sorted(a[d])
        x, y = [a[d][m] for m in models], [b[d][m] for m in models]
        assert out["domains"][d]["spearman"] == pytest.approx(spearmanr(x, y).statistic)
        assert out["domains"][d]["kendall"] == pytest.approx(kendalltau(x, y).statistic)
    # d1 ranks: a A1 B2 C3 D4 E5; b B1 A2 D3.5 E3.5 (tie) C5 -> |Δ| 1, 1, 2, .5, 1.5 -> mean 6/5.
    assert out["domains"]["d1"]["rank_shift"] == pytest.approx(6 / 5)
    # d2 ranks: a B1 A2 C3 D4; b A1 B2 C3 D4 -> |Δ| 1, 1, 0, 0 -> mean 1/2.
    assert out["domains"]["d2"]["rank_shift"] == pytest.approx(0.5)
    # top-2: d1 {A, B} vs {B, A} -> both 2 models in common (share 1); d2 {B, A} vs {A, B} -> 2 (share 1).
    for d in ("d1", "d2"):
        block = out["domains"][d]
        assert (block["top_k_overlap"], block["top_k_overlap_share"], block["k"]) == (2, 1.0, 2)
    cells = [(d, m) for d in a for m in sorted(a[d])]
    x, y = [a[d][m] for d, m in cells], [b[d][m] for d, m in cells]
    assert out["pooled"]["spearman"] == pytest.approx(spearmanr(x, y).statistic)
    assert out["pooled"]["kendall"] == pytest.approx(kendalltau(x, y).statistic)
    assert out["pooled"]["rank_shift"] == pytest.approx((6 + 2) / 9)  # over all 9 cells
    assert (out["pooled"]["top_k_overlap"], out["pooled"]["top_k_overlap_share"], out["pooled"]["cells"]) == (2.0, 1.0, 9)
    # top-3 in d1: a {A, B, C}; b {B, A} + the D/E tie broken by name -> D: 2 models in common, a share 2/3.
    # d2: a {B, A, C}, b {A, B, C} -> 3. Pooled: the mean count (2 + 3) / 2 = 2.5, the mean share (2/3 + 1) / 2 = 5/6.
    top3 = inter_judge_agreement(a, b, top_k=3)
    assert (top3["domains"]["d1"]["top_k_overlap"], top3["domains"]["d2"]["top_k_overlap"]) == (2, 3)
    assert top3["domains"]["d1"]["top_k_overlap_share"] == pytest.approx(2 / 3)
    assert top3["pooled"]["top_k_overlap"] == 2.5 and top3["pooled"]["top_k_overlap_share"] == pytest.approx(5 / 6)
    # top-5 with 4 models in d2: k = 4, all of them in common.
    top5 = inter_judge_agreement(a, b, top_k=5)["domains"]["d2"]
    assert (top5["top_k_overlap"], top5["top_k_overlap_share"], top5["k"]) == (4, 1.0, 4)


def test_pairwise_verdict_agreement_hand_counted() -> None:
    a = frame(
        [
            ("d", "c1", "X", "Y", "original", "A>>B"),
            ("d", "c1", "X", "Y", "reverse", "A>>B"),  # reverse orders do not count
            ("d", "c1", "X", "Z", "original", "A=B"),
            ("d", "c2", "X", "Y", "original", "B>A"),
            ("e", "c3", "X", "Y", "original", "A>B"),
            ("e", "c3", "Y", "Z", "original", "A>B"),  # not judged by b: not shared
        ]
    )
    b = frame(
        [
            ("d", "c1", "X", "Y", "original", "A>B"),  # A vs A: agree (strength does not matter)
            ("d", "c1", "X", "Z", "original", "A>B"),  # tie vs A: disagree
            ("d", "c2", "X", "Y", "original", "B>>A"),  # B vs B: agree
            ("e", "c3", "X", "Y", "original", "B>A"),  # A vs B: disagree
            ("e", "c3", "Y", "Z", "reverse", "A>B"),
        ]
    )
    out = pairwise_verdict_agreement(a, b)
    assert (out["domains"]["d"]["shared"], out["domains"]["d"]["agree"]) == (3, 2)
    assert out["domains"]["d"]["agreement"] == pytest.approx(2 / 3)
    assert (out["domains"]["e"]["shared"], out["domains"]["e"]["agree"]) == (1, 0)
    assert (out["pooled"]["shared"], out["pooled"]["agree"]) == (4, 2)
    assert out["pooled"]["confusion"]["tie"]["A"] == 1 and out["pooled"]["confusion"]["A"]["B"] == 1


def test_pooled_spearman_ci() -> None:
    theta = {"a": np.array([0.6, 0.2, -0.1, -0.7]), "b": np.array([0.4, -0.2, 0.1, -0.3])}
    va = davidson_verdicts(theta, 0.5, 30, seed=1, both_orders=True, graded=True)
    same = pooled_spearman_ci(va, va, replicates=100, seed=0)
    assert same["spearman"] == pytest.approx(1.0) and same["ci"] == pytest.approx([1.0, 1.0])
    vb = davidson_verdicts(theta, 0.5, 30, seed=2, both_orders=True, graded=True)
    vb["case"] = vb["case"]  # same case ids: a second judge on the same matches
    out = pooled_spearman_ci(va, vb, replicates=300, seed=0)
    assert out["cells"] == 8
    lo, hi = out["ci"]
    assert -1.0 <= lo <= hi <= 1.0 and lo <= out["spearman"] + 1e-12
    # The point value is inter_judge_agreement's pooled ρ on the two judges' point ratings.
    docs = [hypoarena_leaderboard(v, replicates=10) for v in (va, vb)]
    ratings = [{d: {m: e["rating"] for m, e in doc["domains"][d]["models"].items()} for d in theta} for doc in docs]
    assert out["spearman"] == pytest.approx(inter_judge_agreement(*ratings)["pooled"]["spearman"])
    assert pooled_spearman_ci(va, vb, replicates=300, seed=0)["ci"] == out["ci"]  # seeded
