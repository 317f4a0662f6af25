"""Intrinsic-scoring statistics: gold ranks (pessimistic ties), the listwise terminal rank, Hit@k, MRR, the beats
rate, paper-bootstrap CIs, paired differences, cross-model agreement, exclusions and validation.

References are hand-computed cases, an explicit per-replicate loop written here (ranks recomputed with plain
Python loops, resampling under the documented seed scheme) and ``scipy.stats.bootstrap``, which draws its
resamples as ``rng.integers(0, n, (n_resamples, n))`` like the module and takes numpy's linear quantiles, so on
the same Generator its percentile interval must equal ours; never values from the code under test.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import bootstrap

from arena.stats.intrinsic import (
    METRICS,
    gold_beats,
    gold_ranks,
    intrinsic_report,
    listwise_gold_ranks,
    model_agreement,
    paired_difference,
    paper_metrics,
    rank_distribution,
)


def scores_with_ranks(ranks: list[int], n: int, gold: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scores (lower is better) whose gold has exactly the given rank and no tie: rank−1 distractors score −1."""
    g = np.array(gold if gold is not None else [i % n for i in range(len(ranks))])
    s = np.ones((len(ranks), n))
    for i, (r, gi) in enumerate(zip(ranks, g, strict=True)):
        s[i, gi] = 0.0
        better = [j for j in range(n) if j != gi][: r - 1]
        s[i, better] = -1.0
    return s, g


def result(report: dict, discipline: str, scorer: str) -> dict:
    (r,) = [x for x in report["results"] if x["discipline"] == discipline and x["scorer"] == scorer]
    return r


def value(report: dict, discipline: str, scorer: str, metric: str) -> float | None:
    m = result(report, discipline, scorer)["metrics"][metric]
    return None if m is None else m["value"]


# ---------------------------------------------------------------- ranks


def test_the_gold_rank_is_pessimistic_under_ties_and_ties_and_nan_rows_are_counted():
    nan, inf = np.nan, np.inf
    scores = np.array(
        [
            [0.1, 0.5, 0.2, 0.9],  # gold 0 best: rank 1
            [0.3, 0.3, 0.1, 0.3],  # gold 1 ties two distractors and one is better: rank 4, 2 ties
            [1.0, 1.0, 1.0, 1.0],  # constant scorer: the gold is last, 3 ties
            [nan, 0.2, 0.3, 0.4],  # a candidate without a score: not ranked
            [inf, 0.5, 0.5, -inf],  # gold 1: -inf is better, 0.5 ties, +inf is worse: rank 3, 1 tie
        ]
    )
    gold = [0, 1, 2, 1, 1]
    r = gold_ranks(scores, gold)
    assert r.rank.tolist() == [1, 4, 4, 0, 3]
    assert r.ties.tolist() == [0, 2, 3, 0, 1]
    assert r.ranked.tolist() == [True, True, True, False, True]
    assert r.n_excluded == 1 and r.listwise_width is None
    beats = gold_beats(scores, gold)
    # strictly worse / 3 distractors (a tie is not a win): 3 worse; 0 (two ties, one better); 0 (constant); 1 (+inf)
    assert beats[[0, 1, 2, 4]].tolist() == pytest.approx([3 / 3, 0 / 3, 0 / 3, 1 / 3])
    assert np.isnan(beats[3])
    assert rank_distribution(r) == [1, 0, 1, 2]


def test_the_listwise_rank_is_the_list_position_or_the_terminal_rank_and_invalid_lists_are_excluded():
    top = [
        [2, 5, 1],  # gold 5 second
        [0, 1, 2],  # gold 7 unlisted: terminal rank 8, tied with the 4 other unlisted candidates
        [-1, -1, -1],  # invalid list
        [3, -1, -1],  # a short list is invalid too
        [4, 0, 6],  # gold 4 first
    ]
    r = listwise_gold_ranks(top, [5, 7, 0, 3, 4], n_candidates=8)
    assert r.rank.tolist() == [2, 8, 0, 0, 1]
    assert r.ties.tolist() == [0, 4, 0, 0, 0]
    assert r.ranked.tolist() == [True, True, False, False, True]
    assert r.n_excluded == 2 and r.listwise_width == 3
    assert rank_distribution(r) == [1, 1, 0, 0, 0, 0, 0, 1]
    values = paper_metrics(r)
    assert list(values) == ["hit_at_1", "hit_at_2", "hit_at_3", "beats"]  # no Hit@5 from a top-3 list, no MRR
    assert values["hit_at_2"][[0, 1, 4]].tolist() == [1.0, 0.0, 1.0]
    # beats: gold 2nd of a top-3 list over 8 candidates is above 1 listed + 5 unlisted = 6 of 7 distractors; an
    # unlisted gold shares the terminal rank with the other unlisted: above none; a gold listed first: above all 7
    assert values["beats"][[0, 1, 4]].tolist() == pytest.approx([6 / 7, 0 / 7, 7 / 7])
    assert np.isnan(values["hit_at_2"][[2, 3]]).all()


def test_hit_at_k_mrr_and_beats_by_hand_pooled_and_per_discipline():
    ranks = [1, 2, 3, 5, 6, 16, 1, 4]
    scores, gold = scores_with_ranks(ranks, 16)
    disciplines = ["bio", "bio", "bio", "bio", "phys", "phys", "phys", "phys"]
    rep = intrinsic_report(
        {"m-nll": {"model": "m", "criterion": "nll", "scores": scores}},
        gold=gold,
        disciplines=disciplines,
        n_candidates=16,
        replicates=50,
    )
    assert rep["disciplines"] == ["bio", "phys", "all"]
    assert rep["n_papers"] == {"bio": 4, "phys": 4, "all": 8}

    def expected(rs: list[int]) -> dict[str, Fraction]:
        n = len(rs)
        out = {f"hit_at_{k}": Fraction(sum(r <= k for r in rs), n) for k in (1, 2, 3, 5)}
        out["mrr"] = sum(Fraction(1, r) for r in rs) / n
        out["beats"] = sum(Fraction(16 - r, 15) for r in rs) / n  # no ties: distractors below the gold / 15
        return out

    # written out for the pooled scope: Hit@1 2/8, Hit@2 3/8, Hit@3 4/8, Hit@5 6/8
    assert expected(ranks)["hit_at_1"] == Fraction(2, 8) and expected(ranks)["hit_at_5"] == Fraction(6, 8)
    assert (
        expected(ranks)["mrr"]
        == (1 + Fraction(1, 2) + Fraction(1, 3) + Fraction(1, 5) + Fraction(1, 6) + Fraction(1, 16) + 1 + Fraction(1, 4)) / 8
    )
    for scope, rs in (("all", ranks), ("bio", ranks[:4]), ("phys", ranks[4:])):
        for metric, v in expected(rs).items():
            assert value(rep, scope, "m-nll", metric) == pytest.approx(float(v), abs=1e-12), (scope, metric)
    r = result(rep, "all", "m-nll")
    assert r["rank_distribution"] == [2, 1, 1, 1, 1, 1] + [0] * 9 + [1]
    assert (r["n_ranked"], r["n_excluded"], r["papers_with_ties"], r["tied_distractors"]) == (8, 0, 0, 0)
    assert r["not_reported"] == {}
    assert result(rep, "phys", "m-nll")["rank_distribution"] == [1, 0, 0, 1, 0, 1] + [0] * 9 + [1]


def test_a_constant_scorer_never_hits_and_its_ties_are_reported():
    rep = intrinsic_report(
        {"flat": {"model": "flat", "criterion": "energy", "scores": np.zeros((6, 16))}},
        gold=[0, 3, 5, 15, 8, 2],
        disciplines=["d"] * 6,
        n_candidates=16,
        replicates=20,
    )
    r = result(rep, "all", "flat")
    assert [r["metrics"][f"hit_at_{k}"]["value"] for k in (1, 2, 3, 5)] == [0.0, 0.0, 0.0, 0.0]
    assert r["metrics"]["mrr"]["value"] == pytest.approx(1 / 16)
    assert r["metrics"]["beats"]["value"] == 0.0  # ties are not wins: the constant scorer's gold beats nobody
    assert (r["papers_with_ties"], r["tied_distractors"]) == (6, 6 * 15)
    assert r["rank_distribution"] == [0] * 15 + [6]


def test_listwise_scorers_report_hit_at_1_to_5_only_with_the_reason_and_count_invalid_lists():
    n = 16
    gold = np.array([0, 1, 2, 3, 4, 5])
    top = np.array(
        [
            [0, 9, 8, 7, 6],  # rank 1
            [9, 8, 1, 7, 6],  # rank 3
            [9, 8, 7, 6, 2],  # rank 5
            [9, 8, 7, 6, 5],  # unlisted: rank 16
            [-1, -1, -1, -1, -1],  # invalid
            [5, 9, 8, 7, 6],  # rank 1
        ]
    )
    rep = intrinsic_report(
        {"judge": {"model": "judge-llm", "top": top}},
        gold=gold,
        disciplines=["a", "a", "a", "b", "b", "b"],
        n_candidates=n,
        replicates=20,
    )
    r = result(rep, "all", "judge")
    assert r["kind"] == "listwise" and rep["scorers"][0]["criterion"] == "listwise"
    assert (r["n_ranked"], r["n_excluded"]) == (5, 1)
    assert [r["metrics"][f"hit_at_{k}"]["value"] for k in (1, 2, 3, 5)] == pytest.approx([2 / 5, 2 / 5, 3 / 5, 4 / 5])
    assert r["metrics"]["mrr"] is None and list(r["not_reported"]) == ["mrr"] and "terminal rank" in r["not_reported"]["mrr"]
    # beats over 15 distractors: ranks 1, 3, 5, 16 (unlisted), 1 place the gold above 15, 13, 11, 0 and 15 of them
    assert r["metrics"]["beats"]["value"] == pytest.approx((15 + 13 + 11 + 0 + 15) / 15 / 5)
    assert r["papers_with_ties"] is None and r["tied_distractors"] is None
    assert r["rank_distribution"] == [2, 0, 1, 0, 1] + [0] * 10 + [1]
    b = result(rep, "b", "judge")
    assert (b["n_ranked"], b["n_excluded"], b["metrics"]["hit_at_1"]["value"]) == (2, 1, 0.5)
    # a top-3 list cannot say whether the gold is in the top 5
    rep3 = intrinsic_report(
        {"judge": {"model": "j", "top": top[:, :3]}}, gold=gold, disciplines=["a"] * 6, n_candidates=n, replicates=20
    )
    r3 = result(rep3, "all", "judge")
    assert r3["metrics"]["hit_at_5"] is None and "top 3" in r3["not_reported"]["hit_at_5"]
    assert r3["metrics"]["hit_at_3"]["value"] == pytest.approx(3 / 5)


# ---------------------------------------------------------------- agreement


def test_cross_model_agreement_counts_papers_where_every_model_ranks_the_gold_first_by_hand():
    n = 4
    #           paper: 0  1  2  3  4
    a_ranks = [1, 1, 1, 1, 2]
    b_ranks = [1, 1, 2, 1, 1]
    c_ranks = [1, 1, 1, 1, 1]
    a, gold = scores_with_ranks(a_ranks, n)
    b, _ = scores_with_ranks(b_ranks, n)
    c, _ = scores_with_ranks(c_ranks, n)
    c[1, 3] = np.nan  # model c did not score paper 1: it leaves the agreement's papers
    e1, _ = scores_with_ranks([1, 2, 1, 1, 1], n)
    e2, _ = scores_with_ranks([2, 1, 1, 3, 1], n)
    scorers = {
        "a-nll": {"model": "a", "criterion": "nll", "scores": a},
        "b-nll": {"model": "b", "criterion": "nll", "scores": b},
        "c-nll": {"model": "c", "criterion": "nll", "scores": c},
        "a-energy": {"model": "a", "criterion": "energy", "scores": e1},
        "b-energy": {"model": "b", "criterion": "energy", "scores": e2},
        "a-nll-sum": {"model": "a", "criterion": "nll", "aggregate": "sum", "scores": a},  # alone: no agreement row
    }
    rep = intrinsic_report(scorers, gold=gold, disciplines=["x", "x", "x", "y", "y"], n_candidates=n, replicates=30)
    rows = {(r["discipline"], r["criterion"], r["aggregate"]): r for r in rep["agreement"]}
    assert set(rows) == {(d, c, "mean") for d in ("x", "y", "all") for c in ("nll", "energy")}
    nll = rows[("all", "nll", "mean")]
    assert nll["models"] == ["a", "b", "c"] and nll["scorers"] == ["a-nll", "b-nll", "c-nll"]
    # papers ranked by all three: 0, 2, 3, 4; all first on 0 and 3
    assert (nll["n_papers"], nll["n_excluded"], nll["n_all_first"], nll["share"]) == (4, 1, 2, 0.5)
    x = rows[("x", "nll", "mean")]
    assert (x["n_papers"], x["n_excluded"], x["n_all_first"], x["share"]) == (2, 1, 1, 0.5)
    en = rows[("all", "energy", "mean")]
    assert (en["n_papers"], en["n_all_first"], en["share"]) == (5, 2, 0.4)  # papers 2 and 4
    assert en["ci"][0] <= 0.4 <= en["ci"][1]
    # the standalone helper agrees
    out = model_agreement([gold_ranks(a, gold), gold_ranks(b, gold), gold_ranks(c, gold)])
    assert out == {"n_papers": 4, "n_excluded": 1, "n_all_first": 2, "share": 0.5}


# ---------------------------------------------------------------- bootstrap against references


def test_the_percentile_interval_equals_scipy_bootstrap_on_the_same_generator():
    rng = np.random.default_rng(7)
    n_papers, n = 60, 16
    scores = rng.normal(size=(n_papers, n))
    gold = rng.integers(0, n, n_papers)
    scores[np.arange(n_papers), gold] -= 1.0
    disciplines = ["a"] * 25 + ["b"] * 35
    seed, reps, level = 123, 500, 0.9
    rep = intrinsic_report(
        {"s": {"model": "m", "criterion": "nll", "scores": scores}},
        gold=gold,
        disciplines=disciplines,
        n_candidates=n,
        replicates=reps,
        seed=seed,
        level=level,
    )
    # reference ranks by a plain loop
    rank = np.array([1 + sum(scores[i, j] <= scores[i, gold[i]] for j in range(n) if j != gold[i]) for i in range(n_papers)])
    streams = np.random.SeedSequence(seed).spawn(3)  # scopes: "a", "b", "all"
    for stream, scope, rows in (
        (streams[0], "a", slice(0, 25)),
        (streams[1], "b", slice(25, 60)),
        (streams[2], "all", slice(None)),
    ):
        for metric, per_paper in (("hit_at_1", (rank == 1) * 1.0), ("hit_at_3", (rank <= 3) * 1.0), ("mrr", 1.0 / rank)):
            ref = bootstrap(
                (per_paper[rows],),
                np.mean,
                n_resamples=reps,
                confidence_level=level,
                method="percentile",
                rng=np.random.default_rng(stream),
            )
            got = result(rep, scope, "s")["metrics"][metric]["ci"]
            assert got == pytest.approx([ref.confidence_interval.low, ref.confidence_interval.high], abs=1e-12), (scope, metric)


def test_paired_difference_equals_scipy_paired_bootstrap_on_the_same_generator():
    rng = np.random.default_rng(3)
    a = (rng.random(80) < 0.5) * 1.0
    b = (rng.random(80) < 0.35) * 1.0
    out = paired_difference(a, b, replicates=400, seed=5, level=0.95)
    ref = bootstrap(
        (a, b),
        lambda x, y, axis: x.mean(axis=axis) - y.mean(axis=axis),
        paired=True,
        n_resamples=400,
        method="percentile",
        rng=np.random.default_rng(5),
    )
    assert out["difference"] == pytest.approx(a.mean() - b.mean())
    assert out["ci"] == pytest.approx([ref.confidence_interval.low, ref.confidence_interval.high], abs=1e-12)
    assert (out["n_papers"], out["n_undefined"]) == (80, 0)


def simulated(n_papers: int = 30, n: int = 6, seed: int = 4) -> dict:
    """Three scoring scorers (one with NaN rows, one with ties) and a listwise one with invalid lists, 3 disciplines;
    the smallest discipline has 3 papers and its 'gappy' scorer ranks only one of them (undefined replicates)."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, n, n_papers)
    disciplines = ["tiny"] * 3 + ["bio"] * ((n_papers - 3) // 2) + ["chem"] * (n_papers - 3 - (n_papers - 3) // 2)
    good = rng.normal(size=(n_papers, n))
    good[np.arange(n_papers), gold] -= 1.5
    gappy = rng.normal(size=(n_papers, n))
    gappy[[0, 1, 5, 9], 2] = np.nan
    coarse = np.round(rng.normal(size=(n_papers, n)))  # many ties
    top = np.array([rng.permutation(n)[:3] for _ in range(n_papers)])
    top[[4, 11]] = -1
    top[7, 1:] = -1
    return {
        "gold": gold,
        "disciplines": disciplines,
        "n": n,
        "scorers": {
            "good": {"model": "m1", "criterion": "nll", "scores": good},
            "gappy": {"model": "m2", "criterion": "nll", "scores": gappy},
            "coarse": {"model": "m3", "criterion": "nll", "scores": coarse},
            "judge": {"model": "j", "top": top},
        },
    }


def slow_values(data: dict) -> dict[str, dict[str, np.ndarray]]:
    """Per scorer, per metric, per-paper values with NaN where not ranked, by plain Python loops."""
    n, gold = data["n"], data["gold"]
    out = {}
    for name, spec in data["scorers"].items():
        vals = {m: [] for m in METRICS}
        for i, g in enumerate(gold):
            if "scores" in spec:
                row = spec["scores"][i]
                if any(np.isnan(x) for x in row):
                    rank = beats = None
                else:
                    others = [row[j] for j in range(n) if j != g]
                    rank = 1 + sum(x <= row[g] for x in others)
                    beats = sum(x > row[g] for x in others) / (n - 1)  # strictly worse: a tie is not a win
            else:
                lst = list(spec["top"][i])
                rank = None if -1 in lst else (lst.index(g) + 1 if g in lst else n)
                # placed below a listed gold: the listed after it and every unlisted one; below an unlisted gold: none
                below = (len(lst) - lst.index(g) - 1) + (n - len(lst)) if g in lst else 0
                beats = None if rank is None else below / (n - 1)
            for k in (1, 2, 3, 5):
                k_ok = "scores" in spec or k <= len(spec["top"][i])
                vals[f"hit_at_{k}"].append(np.nan if rank is None or not k_ok else float(rank <= k))
            vals["mrr"].append(np.nan if rank is None or "top" in spec else 1.0 / rank)
            vals["beats"].append(np.nan if beats is None else beats)
        out[name] = {m: np.array(v) for m, v in vals.items()}
    return out


def slow_bootstrap(data: dict, replicates: int, seed: int, level: float) -> dict:
    """Resample papers per scope with an explicit loop over replicates under the documented seed scheme.

    Returns {(scope, what, metric): (lo, hi, n_undefined)} with what = a scorer name, ("pair", a, b) or
    ("agree", criterion)."""
    values = slow_values(data)
    disc = np.array(data["disciplines"])
    domains = sorted(set(data["disciplines"]))
    scopes = [(d, np.flatnonzero(disc == d)) for d in domains] + [("all", np.arange(len(disc)))]
    streams = np.random.SeedSequence(seed).spawn(len(scopes))
    alpha = (1 - level) / 2
    nll = ["good", "gappy", "coarse"]
    out = {}

    def interval(reps: list[float]) -> tuple:
        v = np.array(reps)
        ok = v[~np.isnan(v)]
        q = np.quantile(ok, [alpha, 1 - alpha]) if len(ok) else [np.nan, np.nan]
        return (float(q[0]), float(q[1]), int(np.isnan(v).sum()))

    for (scope, rows), stream in zip(scopes, streams, strict=True):
        idx = np.random.default_rng(stream).integers(0, len(rows), size=(replicates, len(rows)))
        series: dict = {}
        for r in range(replicates):
            sample = rows[idx[r]]
            for name, vals in values.items():
                for m, v in vals.items():
                    x = v[sample]
                    x = x[~np.isnan(x)]
                    series.setdefault((name, m), []).append(x.mean() if len(x) else np.nan)
            for a, b in (("good", "gappy"), ("good", "judge"), ("gappy", "coarse")):
                for m in METRICS:
                    xa, xb = values[a][m][sample], values[b][m][sample]
                    both = ~np.isnan(xa) & ~np.isnan(xb)
                    series.setdefault((("pair", a, b), m), []).append((xa[both] - xb[both]).mean() if both.any() else np.nan)
            firsts = np.array([values[s]["hit_at_1"][sample] for s in nll])
            ok = ~np.isnan(firsts).any(axis=0)
            series.setdefault((("agree", "nll"), "share"), []).append(
                (firsts[:, ok] == 1).all(axis=0).mean() if ok.any() else np.nan
            )
        for (what, m), reps in series.items():
            if not np.isnan(reps).all() or what in data["scorers"]:
                out[(scope, what, m)] = interval(reps)
    return out


def test_every_interval_equals_an_explicit_slow_bootstrap_under_the_documented_seed_scheme():
    data = simulated()
    reps, seed, level = 60, 17, 0.9
    rep = intrinsic_report(
        data["scorers"],
        gold=data["gold"],
        disciplines=data["disciplines"],
        n_candidates=data["n"],
        replicates=reps,
        seed=seed,
        level=level,
        pairs=[("good", "gappy"), ("good", "judge"), ("gappy", "coarse")],
        pairs_by_discipline=True,
    )
    slow = slow_bootstrap(data, reps, seed, level)
    checked = 0
    for (scope, what, metric), (lo, hi, und) in slow.items():
        if isinstance(what, str):
            got = result(rep, scope, what)["metrics"][metric]
            if got is None:
                assert lo != lo and und == reps  # a metric the scorer does not have: every replicate NaN
                continue
        elif what[0] == "pair":
            (row,) = [p for p in rep["pairs"] if (p["discipline"], p["a"], p["b"]) == (scope, what[1], what[2])]
            got = row["differences"][metric]
            if got is None:
                continue
        else:
            (row,) = [g for g in rep["agreement"] if (g["discipline"], g["criterion"]) == (scope, what[1])]
            got = {"ci": row["ci"], "n_undefined": row["n_undefined"]}
        assert got["n_undefined"] == und, (scope, what, metric)
        if und < reps:
            assert got["ci"] == pytest.approx([lo, hi], abs=1e-12), (scope, what, metric)
        else:
            assert got["ci"] == [None, None]
        checked += 1
    assert checked == 4 * (6 + 6 + 6 + 4) + 4 * (6 + 4 + 6) + 4  # scorer metrics, pair differences, agreement
    # the tiny discipline really exercises undefined replicates (gappy ranks 1 of its 3 papers)
    tiny = result(rep, "tiny", "gappy")
    assert tiny["n_ranked"] == 1 and 0 < tiny["metrics"]["hit_at_1"]["n_undefined"] < reps
    assert result(rep, "all", "gappy")["n_excluded"] == 4
    assert result(rep, "all", "judge")["n_excluded"] == 3


def test_bootstrap_properties_seed_level_determinism_and_json():
    data = simulated(n_papers=80, seed=9)
    kw = {"gold": data["gold"], "disciplines": data["disciplines"], "n_candidates": data["n"], "replicates": 300}
    rep = intrinsic_report(data["scorers"], seed=2, **kw)
    assert rep == intrinsic_report(data["scorers"], seed=2, **kw)
    assert rep["results"] != intrinsic_report(data["scorers"], seed=3, **kw)["results"]
    wide = intrinsic_report(data["scorers"], seed=2, level=0.99, **kw)
    for r, w in zip(rep["results"], wide["results"], strict=True):
        for m in METRICS:
            if r["metrics"][m] is None or r["metrics"][m]["n_undefined"]:
                continue
            lo, hi = r["metrics"][m]["ci"]
            assert lo <= r["metrics"][m]["value"] <= hi
            assert w["metrics"][m]["ci"][0] <= lo and hi <= w["metrics"][m]["ci"][1]
            assert 0.0 <= lo and hi <= 1.0
    json.dumps(rep, allow_nan=False)  # JSON-ready: plain types, no NaN
    assert rep["method"]["replicates"] == 300 and rep["method"]["pairs_scope"] == "pooled only"
    assert {(p["a"], p["b"]) for p in rep["pairs"]} == {
        ("good", "gappy"), ("good", "coarse"), ("good", "judge"), ("gappy", "coarse"), ("gappy", "judge"), ("coarse", "judge")
    }  # fmt: skip
    assert {p["discipline"] for p in rep["pairs"]} == {"all"}


def test_a_discipline_does_not_depend_on_the_other_disciplines_data():
    data = simulated(n_papers=40, seed=8)
    kw = {"gold": data["gold"], "disciplines": data["disciplines"], "n_candidates": data["n"], "replicates": 100}
    rep = intrinsic_report(data["scorers"], **kw)
    changed = {k: dict(v) for k, v in data["scorers"].items()}
    s = changed["good"]["scores"].copy()
    chem = np.array(data["disciplines"]) == "chem"
    s[chem] = -s[chem]
    changed["good"]["scores"] = s
    rep2 = intrinsic_report(changed, **kw)
    assert result(rep, "bio", "good") == result(rep2, "bio", "good")
    assert result(rep, "chem", "good") != result(rep2, "chem", "good")


# ---------------------------------------------------------------- paired differences


def test_paired_difference_is_zero_for_a_twin_antisymmetric_and_positive_for_a_dominating_scorer():
    rng = np.random.default_rng(1)
    a = (rng.random(50) < 0.6) * 1.0
    b = np.where(rng.random(50) < 0.5, 0.0, a)  # b never beats a on a paper
    same = paired_difference(a, a.copy(), replicates=200, seed=1)
    assert same["difference"] == 0.0 and same["ci"] == [0.0, 0.0]
    ab = paired_difference(a, b, replicates=200, seed=1)
    ba = paired_difference(b, a, replicates=200, seed=1)
    assert ab["difference"] == pytest.approx(-ba["difference"]) and ab["difference"] > 0
    assert ab["ci"] == pytest.approx([-ba["ci"][1], -ba["ci"][0]], abs=1e-12)
    assert ab["ci"][0] >= 0.0
    # papers either scorer did not rank are left out (both must be defined)
    a2, b2 = a.copy(), b.copy()
    a2[:5] = np.nan
    b2[5:8] = np.nan
    out = paired_difference(a2, b2, replicates=50, seed=1)
    assert out["n_papers"] == 42
    assert out["difference"] == pytest.approx(a[8:].mean() - b[8:].mean())


def test_report_pairs_are_exactly_zero_for_a_twin_and_negate_when_swapped():
    data = simulated(n_papers=40, seed=2)
    scorers = dict(data["scorers"])
    scorers["twin"] = {"model": "m9", "criterion": "nll", "scores": scorers["gappy"]["scores"].copy()}
    rep = intrinsic_report(
        scorers,
        gold=data["gold"],
        disciplines=data["disciplines"],
        n_candidates=data["n"],
        replicates=200,
        pairs=[("gappy", "twin"), ("good", "gappy"), ("gappy", "good"), ("good", "judge")],
        pairs_by_discipline=True,
    )
    pairs = {(p["discipline"], p["a"], p["b"]): p for p in rep["pairs"]}
    for scope in ("bio", "chem", "all"):
        twin = pairs[(scope, "gappy", "twin")]["differences"]
        assert all(twin[m]["value"] == 0.0 and twin[m]["ci"] == [0.0, 0.0] for m in METRICS)
        ab, ba = pairs[(scope, "good", "gappy")], pairs[(scope, "gappy", "good")]
        assert ab["n_papers"] == ba["n_papers"] == result(rep, scope, "gappy")["n_ranked"]
        for m in METRICS:
            x, y = ab["differences"][m], ba["differences"][m]
            assert x["value"] == pytest.approx(-y["value"], abs=1e-12)
            assert x["ci"] == pytest.approx([-y["ci"][1], -y["ci"][0]], abs=1e-12)
    judge = pairs[("all", "good", "judge")]
    assert judge["differences"]["mrr"] is None and judge["differences"]["hit_at_5"] is None  # a top-3 judge
    assert judge["n_papers"] == result(rep, "all", "judge")["n_ranked"]


# ---------------------------------------------------------------- alignment and validation


def test_a_scorer_naming_its_papers_is_realigned_and_a_different_paper_set_is_refused():
    scores, gold = scores_with_ranks([1, 2, 3, 4], 8)
    papers = ["p1", "p2", "p3", "p4"]
    order = [2, 0, 3, 1]
    base = {"gold": gold, "disciplines": ["d"] * 4, "n_candidates": 8, "papers": papers, "replicates": 30}
    aligned = intrinsic_report({"s": {"model": "m", "criterion": "nll", "scores": scores}}, **base)
    shuffled = intrinsic_report(
        {"s": {"model": "m", "criterion": "nll", "scores": scores[order], "papers": [papers[i] for i in order]}}, **base
    )
    assert aligned == shuffled
    with pytest.raises(ValueError, match=r"scorer 'b' covers a different paper set .*missing \['p4'\].*extra \['p9'\]"):
        intrinsic_report(
            {
                "a": {"model": "m", "criterion": "nll", "scores": scores, "papers": papers},
                "b": {"model": "m2", "criterion": "nll", "scores": scores, "papers": ["p1", "p2", "p3", "p9"]},
            },
            **base,
        )
    with pytest.raises(ValueError, match=r"scorer 'b': scores has shape \(3, 8\); expected \(papers, n_candidates\) = \(4, 8\)"):
        intrinsic_report(
            {
                "a": {"model": "m", "criterion": "nll", "scores": scores},
                "b": {"model": "m2", "criterion": "nll", "scores": scores[:3]},
            },
            **{k: v for k, v in base.items() if k != "papers"},
        )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gold": [0, 1, 2, 8]}, r"gold\[3\] = 8 is outside 0\.\.7 \(n_candidates = 8\)"),
        ({"gold": [0, 1.5, 2, 3]}, r"gold\[1\] = 1\.5 is not an integer candidate index"),
        ({"disciplines": ["d"] * 3}, r"disciplines has 3 entries but gold has 4"),
        ({"disciplines": ["d", "all", "d", "d"]}, r"'all' is reserved"),
        ({"replicates": 0}, r"replicates must be a whole number ≥ 1"),
        ({"level": 1.0}, r"level must be in \(0, 1\)"),
        ({"n_candidates": 9}, r"scorer 's': scores has shape \(4, 8\); expected \(papers, n_candidates\) = \(4, 9\)"),
        ({"pairs": [("s", "nobody")]}, r"pairs name unknown scorer\(s\) \['nobody'\]"),
        ({"scorers": {"s": {"model": "m", "criterion": "nll", "scores": np.zeros(4)}}}, r"scorer 's': scores has shape \(4,\)"),
        ({"scorers": {"s": {"model": "m", "scores": np.zeros((4, 8))}}}, r"scorer 's': a scoring scorer needs its 'criterion'"),
        ({"scorers": {"s": {"model": "m", "criterion": "nll"}}}, r"give exactly one of 'scores' .* or 'top'"),
        (
            {"scorers": {"s": {"model": "m", "criterion": "nll", "scores": np.zeros((4, 8)), "top": np.zeros((4, 5))}}},
            r"give exactly one of",
        ),
        (
            {"scorers": {"j": {"model": "m", "top": [[0, 1, 2, 3, 8]] * 4}}},
            r"scorer 'j': listwise_gold_ranks: top\[0\]\[4\] = 8 is outside 0\.\.7",
        ),
        ({"scorers": {"j": {"model": "m", "top": [[0, 1, 2, 1, 3]] * 4}}}, r"top row 0 lists candidate 1 twice"),
        ({"scorers": {"j": {"model": "m", "top": [[0, 1, 2]] * 3}}}, r"scorer 'j': top has shape \(3, 3\); expected \(4, w\)"),
        (
            {
                "scorers": {
                    "x": {"model": "m", "criterion": "nll", "scores": np.zeros((4, 8))},
                    "y": {"model": "m", "criterion": "nll", "scores": np.ones((4, 8))},
                }
            },
            r"scorers 'x' and 'y' are both \(model, criterion, aggregate\) = \('m', 'nll', 'mean'\)",
        ),
        (
            {"scorers": {"s": {"model": "m", "criterion": "nll", "scores": np.zeros((4, 8)), "papers": ["a", "b", "c", "d"]}}},
            r"names its papers; pass papers=",
        ),
    ],
)
def test_the_report_rejects_bad_input_naming_what_is_wrong(change, message):
    kw = {
        "scorers": {"s": {"model": "m", "criterion": "nll", "scores": np.zeros((4, 8))}},
        "gold": [0, 1, 2, 3],
        "disciplines": ["d"] * 4,
        "n_candidates": 8,
        "replicates": 10,
    }
    kw.update(change)
    scorers = kw.pop("scorers")
    with pytest.raises(ValueError, match=message):
        intrinsic_report(scorers, **kw)


def test_the_rank_helpers_and_paired_difference_reject_bad_shapes():
    with pytest.raises(ValueError, match=r"gold_ranks: scores has shape \(5,\); expected a 2-D"):
        gold_ranks(np.zeros(5), [0])
    with pytest.raises(ValueError, match=r"gold_ranks: gold has 2 papers but the scores have 3 rows"):
        gold_ranks(np.zeros((3, 4)), [0, 1])
    with pytest.raises(ValueError, match=r"gold_beats: gold\[0\] = -1 is outside 0\.\.3"):
        gold_beats(np.zeros((1, 4)), [-1])
    with pytest.raises(ValueError, match=r"ranking needs at least 2"):
        gold_ranks(np.zeros((3, 1)), [0, 0, 0])
    with pytest.raises(
        ValueError, match=r"listwise_gold_ranks: top has shape \(1, 9\); expected \(papers, w\) with 1 <= w <= n_candidates = 8"
    ):
        listwise_gold_ranks(np.zeros((1, 9), dtype=int), [0], 8)
    with pytest.raises(ValueError, match=r"paired_difference: a has shape \(3,\) and b \(4,\)"):
        paired_difference(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match=r"model_agreement: the scorers cover different numbers of papers \[2, 3\]"):
        model_agreement([gold_ranks(np.zeros((2, 4)), [0, 0]), gold_ranks(np.zeros((3, 4)), [0, 0, 0])])
