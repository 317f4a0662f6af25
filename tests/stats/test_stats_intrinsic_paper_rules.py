"""Intrinsic scoring's definitions as the logit-energy paper states them (issue 23): the strict "gold beats distractor"
count (a tie is not a win), the beats rate of a listwise ranking under the terminal rank, the "All models" rows pooled
across models (pooled and per discipline, with paper-bootstrap intervals), papers with different candidate counts, and
the ``method`` block naming the rules in force.

Expected values are worked out by hand in the comments, or computed here independently: the "All models" rows by a
pandas pooling of a long (scorer, paper) table whose ranks and beats counts come from plain Python loops, and their
intervals by an explicit replicate loop under the documented seed scheme; never by the code under test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.stats.intrinsic import (
    gold_beats,
    gold_ranks,
    intrinsic_report,
    listwise_gold_ranks,
    paper_metrics,
)


def result(report: dict, discipline: str, scorer: str) -> dict:
    (r,) = [x for x in report["results"] if x["discipline"] == discipline and x["scorer"] == scorer]
    return r


def group(report: dict, discipline: str, criterion: str | None) -> dict:
    (r,) = [x for x in report["all_models"] if x["discipline"] == discipline and x["criterion"] == criterion]
    return r


def values(row: dict) -> dict[str, float | None]:
    return {m: (None if v is None else v["value"]) for m, v in row["metrics"].items()}


# ---------------------------------------------------------------- gold beats distractor: strict


def test_a_tie_with_the_gold_is_not_a_win_and_beats_agrees_with_the_pessimistic_rank():
    # 5 candidates, gold in column 0 (lower is better).
    scores = np.array(
        [
            [0.5, 0.5, 0.9, 0.1, 0.5],  # 0.9 worse; two ties; 0.1 better: 1 of 4 strictly worse; rank 1 + 3 = 4
            [0.2, 0.2, 0.2, 0.2, 0.2],  # constant: nothing strictly worse; rank 5
            [0.1, 0.2, 0.3, 0.4, 0.5],  # every distractor worse: 4 of 4; rank 1
            [0.3, 0.3, 0.4, 0.4, 0.4],  # one tie, three worse: 3 of 4; rank 2
        ]
    )
    gold = [0, 0, 0, 0]
    # The app used to count a tie as ½: row 0 would be (1 + ½·2) / 4 = 0.5, row 1 (½·4) / 4 = 0.5, row 3 3.5 / 4.
    assert gold_beats(scores, gold).tolist() == pytest.approx([1 / 4, 0 / 4, 4 / 4, 3 / 4])
    ranks = gold_ranks(scores, gold)
    assert ranks.rank.tolist() == [4, 5, 1, 2]
    # (n − rank) / (n − 1): every distractor the pessimistic rank puts at or above the gold is not beaten
    assert paper_metrics(ranks)["beats"].tolist() == pytest.approx([1 / 4, 0 / 4, 4 / 4, 3 / 4])
    rep = intrinsic_report(
        {"s": {"model": "m", "criterion": "energy", "scores": scores}},
        gold=gold,
        disciplines=["d"] * 4,
        n_candidates=5,
        replicates=20,
    )
    r = result(rep, "all", "s")
    assert r["metrics"]["beats"]["value"] == pytest.approx((1 + 0 + 4 + 3) / 4 / 4)  # 0.5 (the ½ rule gave 0.6875)
    assert (r["papers_with_ties"], r["tied_distractors"]) == (3, 2 + 4 + 1)


def test_a_listwise_ranking_has_a_beats_rate_under_the_terminal_rank():
    # 7 candidates, top-3 lists. Beats counts the candidates placed strictly below the gold: the listed ones after it
    # and, when the gold is listed, the 4 unlisted ones; an unlisted gold shares the terminal rank 7 with the 3 other
    # unlisted candidates and is above none of them.
    top = [
        [4, 1, 2],  # gold 4 first: above 2 listed + 4 unlisted = 6 of 6
        [1, 2, 4],  # gold 4 third: above 0 listed + 4 unlisted = 4 of 6
        [0, 1, 2],  # gold 4 unlisted: rank 7, above none
        [-1, -1, -1],  # invalid list: not ranked
        [5, 4, 0],  # gold 4 second: above 1 listed + 4 unlisted = 5 of 6
    ]
    gold = [4, 4, 4, 4, 4]
    ranks = listwise_gold_ranks(top, gold, 7)
    assert ranks.rank.tolist() == [1, 3, 7, 0, 2]
    beats = paper_metrics(ranks)["beats"]
    assert beats[[0, 1, 2, 4]].tolist() == pytest.approx([6 / 6, 4 / 6, 0 / 6, 5 / 6]) and np.isnan(beats[3])
    rep = intrinsic_report({"j": {"model": "judge", "top": top}}, gold=gold, disciplines=["d"] * 5, n_candidates=7, replicates=20)
    r = result(rep, "all", "j")
    assert r["metrics"]["beats"]["value"] == pytest.approx((6 + 4 + 0 + 5) / 6 / 4)
    assert r["metrics"]["mrr"] is None and list(r["not_reported"]) == ["hit_at_5", "mrr"]


def test_the_method_names_the_rules_in_force():
    scores = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 2.0]])
    rep = intrinsic_report(
        {"s": {"model": "m", "criterion": "nll", "scores": scores}},
        gold=[0, 0],
        disciplines=["d", "d"],
        n_candidates=3,
        replicates=5,
    )
    method = rep["method"]
    assert method["rules"] == {
        "tie_rule": "pessimistic",
        "beats": "strict",
        "listwise_rank": "terminal",
        "listwise_beats": "placed higher under the terminal rank",
        "paper_weight": "each paper weighs 1",
        "all_models": "pooled over (model, paper) pairs",
        "candidate_counts": "per paper (mixed counts allowed)",
    }
    assert "strict" in method["beats"] and "a tie is not a win" in method["beats"] and "1/2" not in method["beats"]
    assert "(model, paper) pairs" in method["all_models"] and "per paper" in method["candidates"]
    assert (method["n_candidates"], method["candidate_counts"]) == (3, [{"candidates": 3, "papers": 2}])


# ---------------------------------------------------------------- All models, against pandas


def pooled_data(seed: int = 5, n_papers: int = 24, n: int = 6) -> dict:
    """Three NLL models (one leaving papers out, one with ties), two energy models, two listwise judges (top 4 and
    top 3, invalid lists) over three disciplines."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, n, n_papers)
    disciplines = ["bio"] * 9 + ["chem"] * 8 + ["phys"] * 7
    scorers: dict[str, dict] = {}
    for name, model, criterion in (
        ("a-nll", "a", "nll"),
        ("b-nll", "b", "nll"),
        ("c-nll", "c", "nll"),
        ("a-energy", "a", "energy"),
        ("b-energy", "b", "energy"),
    ):
        s = rng.normal(size=(n_papers, n))
        s[np.arange(n_papers), gold] -= 1.0
        if name == "b-nll":
            s[[1, 10, 11, 20], 3] = np.nan  # four papers not ranked by b
        if name == "c-nll":
            s = np.round(s)  # many ties with the gold
        scorers[name] = {"model": model, "criterion": criterion, "scores": s}
    for name, width in (("j1", 4), ("j2", 3)):
        top = np.array([rng.permutation(n)[:width] for _ in range(n_papers)])
        top[rng.random(n_papers) < 0.15] = -1
        scorers[name] = {"model": name, "top": top}
    return {"gold": gold, "disciplines": disciplines, "n": n, "scorers": scorers}


def long_table(data: dict) -> pd.DataFrame:
    """One row per (scorer, paper) the scorer ranked: rank and strictly-beaten distractors by plain loops."""
    rows = []
    n = data["n"]
    for name, spec in data["scorers"].items():
        for i, g in enumerate(data["gold"]):
            if "scores" in spec:
                row = list(spec["scores"][i])
                if any(np.isnan(x) for x in row):
                    continue
                others = [row[j] for j in range(n) if j != g]
                rank = 1 + sum(x <= row[g] for x in others)
                below = sum(x > row[g] for x in others)
                kind, criterion = "scoring", spec["criterion"]
            else:
                lst = [int(x) for x in spec["top"][i]]
                if -1 in lst:
                    continue
                rank = lst.index(g) + 1 if g in lst else n
                below = (len(lst) - lst.index(g) - 1) + (n - len(lst)) if g in lst else 0
                kind, criterion = "listwise", "listwise"
            rows.append(
                {
                    "scorer": name,
                    "kind": kind,
                    "criterion": criterion,
                    "paper": i,
                    "discipline": data["disciplines"][i],
                    "rank": rank,
                    "below": below,
                }
            )
    df = pd.DataFrame(rows)
    for k in (1, 2, 3, 5):
        df[f"hit_at_{k}"] = (df["rank"] <= k).astype(float)
    df["mrr"] = 1.0 / df["rank"]
    df["beats"] = df["below"] / (n - 1)
    return df


GROUPS = {
    "nll": ("criterion", "nll"),
    "energy": ("criterion", "energy"),
    "listwise": ("criterion", "listwise"),
    None: ("kind", "scoring"),
}
GROUP_METRICS = {
    "nll": ["hit_at_1", "hit_at_2", "hit_at_3", "hit_at_5", "mrr", "beats"],
    "energy": ["hit_at_1", "hit_at_2", "hit_at_3", "hit_at_5", "mrr", "beats"],
    None: ["hit_at_1", "hit_at_2", "hit_at_3", "hit_at_5", "mrr", "beats"],
    "listwise": ["hit_at_1", "hit_at_2", "hit_at_3", "beats"],  # no MRR; j2 lists 3, so no Hit@5
}


def test_all_models_rows_pool_every_model_s_ranked_papers_as_pandas_does():
    data = pooled_data()
    reps, seed, level = 150, 29, 0.9
    rep = intrinsic_report(
        data["scorers"],
        gold=data["gold"],
        disciplines=data["disciplines"],
        n_candidates=data["n"],
        replicates=reps,
        seed=seed,
        level=level,
    )
    df = long_table(data)
    scopes = [("bio", "bio"), ("chem", "chem"), ("phys", "phys"), ("all", None)]
    # every criterion, the scoring scorers across criteria, then listwise: in each scope
    assert [(g["discipline"], g["criterion"]) for g in rep["all_models"]] == [
        (s, c) for s, _ in scopes for c in ("nll", "energy", None, "listwise")
    ]
    members = {"nll": 3, "energy": 2, None: 5, "listwise": 2}
    for scope, disc in scopes:
        sub = df if disc is None else df[df["discipline"] == disc]
        n_papers = len(sub["paper"].unique()) if disc is None else data["disciplines"].count(disc)
        for crit, (column, value) in GROUPS.items():
            mine = sub[sub[column] == value]
            row = group(rep, scope, crit)
            assert row["n_ranked"] == len(mine) and row["n_papers"] == n_papers
            assert row["n_excluded"] == n_papers * members[crit] - len(mine)
            expected = mine[GROUP_METRICS[crit]].mean()  # each ranked (model, paper) pair weighs 1
            got = values(row)
            for m in GROUP_METRICS[crit]:
                assert got[m] == pytest.approx(expected[m], abs=1e-12), (scope, crit, m)
            assert [m for m, v in got.items() if v is None] == [m for m in ("hit_at_5", "mrr") if m not in GROUP_METRICS[crit]]
            assert row["rank_distribution"] == [int((mine["rank"] == r).sum()) for r in range(1, data["n"] + 1)]
    # The pooled rows by hand from the per-scorer rows when nobody is excluded: energy's two models rank every paper,
    # so its pooled Hit@1 is the mean of the two models' Hit@1.
    a, b = (result(rep, "all", s)["metrics"]["hit_at_1"]["value"] for s in ("a-energy", "b-energy"))
    assert group(rep, "all", "energy")["metrics"]["hit_at_1"]["value"] == pytest.approx((a + b) / 2)
    assert group(rep, "all", "listwise")["not_reported"]["hit_at_5"].startswith("j1: the listwise judge returns only its top 4")
    _check_group_intervals(rep, df, data, reps, seed, level)


def _check_group_intervals(rep: dict, df: pd.DataFrame, data: dict, reps: int, seed: int, level: float) -> None:
    """Each group's interval by an explicit replicate loop: per scope the documented stream, P_s papers drawn with
    replacement, a drawn paper bringing every member's (model, paper) values; the figure is the ratio of the drawn
    sums."""
    disc = np.array(data["disciplines"])
    domains = sorted(set(data["disciplines"]))
    scopes = [(d, np.flatnonzero(disc == d)) for d in domains] + [("all", np.arange(len(disc)))]
    streams = np.random.SeedSequence(seed).spawn(len(scopes))
    alpha = (1 - level) / 2
    checked = 0
    for (scope, rows), stream in zip(scopes, streams, strict=True):
        draws = np.random.default_rng(stream).integers(0, len(rows), size=(reps, len(rows)))
        for crit, (column, value) in GROUPS.items():
            mine = df[df[column] == value]
            per_paper = mine.groupby("paper")[GROUP_METRICS[crit]].sum().reindex(range(len(disc)), fill_value=0.0)
            ranked = mine.groupby("paper").size().reindex(range(len(disc)), fill_value=0)
            for m in GROUP_METRICS[crit]:
                series = []
                for r in range(reps):
                    drawn = rows[draws[r]]
                    series.append(per_paper[m].to_numpy()[drawn].sum() / ranked.to_numpy()[drawn].sum())
                lo, hi = np.quantile(series, [alpha, 1 - alpha])
                got = group(rep, scope, crit)["metrics"][m]
                assert got["ci"] == pytest.approx([lo, hi], abs=1e-12), (scope, crit, m)
                assert got["n_undefined"] == 0
                checked += 1
    assert checked == 4 * (6 + 6 + 6 + 4)


def test_one_model_s_all_models_row_repeats_its_own_and_pairs_stay_per_scorer():
    scores = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 2.0], [2.0, 1.0, 0.0]])
    rep = intrinsic_report(
        {"s": {"model": "m", "criterion": "nll", "scores": scores}},
        gold=[0, 0, 0],
        disciplines=["x", "x", "y"],
        n_candidates=3,
        replicates=40,
    )
    for scope in ("x", "y", "all"):
        row, own = group(rep, scope, "nll"), result(rep, scope, "s")
        assert row["metrics"] == own["metrics"] and row["label"] == "All models, nll" and row["models"] == ["m"]
    assert [g["criterion"] for g in rep["all_models"]] == ["nll"] * 3  # one criterion: no across-criteria row


# ---------------------------------------------------------------- mixed candidate counts


MIXED_SCORES = np.array(
    [
        [0.2, 0.5, 0.1, np.nan],  # 3 candidates, gold 0: 0.1 better, 0.5 worse: rank 2, beats 1 of 2
        [0.9, 0.8, 0.1, 0.7],  # 4 candidates, gold 2: best: rank 1, beats 3 of 3
        [0.3, 0.3, np.nan, np.nan],  # 2 candidates, gold 1: tied: rank 2 (pessimistic), beats 0 of 1
        [0.1, 0.2, 0.3, 0.4],  # 4 candidates, gold 3: worst: rank 4, beats 0 of 3
    ]
)
MIXED_TOP = [
    [1, 0, 2],  # 3 candidates, all listed: gold 0 second: rank 2, above 1 of 2
    [0, 1, 3],  # 4 candidates, gold 2 unlisted: terminal rank 4, above none
    [1, 0, -1],  # 2 candidates, both listed then padding: gold 1 first: rank 1, above 1 of 1
    [-1, -1, -1],  # invalid
]
MIXED = {"gold": [0, 2, 1, 3], "disciplines": ["a", "a", "b", "b"], "n_candidates": [3, 4, 2, 4]}


def test_papers_with_different_candidate_counts_are_ranked_each_over_its_own_candidates():
    rep = intrinsic_report(
        {"s": {"model": "m", "criterion": "nll", "scores": MIXED_SCORES}, "j": {"model": "judge", "top": MIXED_TOP}},
        **MIXED,
        replicates=60,
    )
    s = result(rep, "all", "s")  # ranks 2, 1, 2, 4
    assert values(s) == pytest.approx(
        {
            "hit_at_1": 1 / 4,
            "hit_at_2": 3 / 4,
            "hit_at_3": 3 / 4,
            "hit_at_5": 4 / 4,
            "mrr": (1 / 2 + 1 + 1 / 2 + 1 / 4) / 4,
            "beats": (1 / 2 + 3 / 3 + 0 / 1 + 0 / 3) / 4,  # each paper's share weighs 1 (not each (gold, distractor) pair)
        }
    )
    assert (s["n_ranked"], s["papers_with_ties"], s["tied_distractors"]) == (4, 1, 1)
    assert s["rank_distribution"] == [1, 2, 0, 1]
    j = result(rep, "all", "j")  # ranks 2, 4 (terminal), 1; one invalid
    assert (j["n_ranked"], j["n_excluded"]) == (3, 1)
    assert values(j) == pytest.approx(
        {"hit_at_1": 1 / 3, "hit_at_2": 2 / 3, "hit_at_3": 2 / 3, "hit_at_5": None, "mrr": None, "beats": (1 / 2 + 0 + 1) / 3}
    )
    assert values(result(rep, "a", "s"))["beats"] == pytest.approx((1 / 2 + 1) / 2)
    assert values(result(rep, "b", "s"))["mrr"] == pytest.approx((1 / 2 + 1 / 4) / 2)
    (pair,) = rep["pairs"]  # s − j over papers 0..2: beats 1/2 + 1 + 0 against 1/2 + 0 + 1
    assert pair["n_papers"] == 3 and pair["differences"]["beats"]["value"] == pytest.approx(0.0)
    assert pair["differences"]["hit_at_1"]["value"] == pytest.approx(1 / 3 - 1 / 3)
    assert rep["method"]["n_candidates"] is None
    assert rep["method"]["candidate_counts"] == [
        {"candidates": 2, "papers": 1},
        {"candidates": 3, "papers": 1},
        {"candidates": 4, "papers": 2},
    ]
    for m, v in s["metrics"].items():  # intervals of a scorer that ranked every paper still hold its value
        assert v["ci"][0] <= v["value"] <= v["ci"][1], m


def test_counts_given_per_paper_but_all_equal_make_the_same_report_as_one_count():
    scores = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 2.0], [2.0, 1.0, 1.0]])
    spec = {
        "s": {"model": "m", "criterion": "energy", "scores": scores},
        "j": {"model": "j", "top": [[0, 1, 2], [2, 1, 0], [1, 2, 0]]},
    }
    kw = {"gold": [1, 0, 2], "disciplines": ["x", "x", "y"], "replicates": 50}
    assert intrinsic_report(spec, n_candidates=[3, 3, 3], **kw) == intrinsic_report(spec, n_candidates=3, **kw)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"n_candidates": [3, 4, 2]},
            r"n_candidates has shape \(3,\); give one int for every paper or one count per paper \(4\)",
        ),
        ({"n_candidates": [3, 4, 1, 4]}, r"n_candidates\[2\] = 1; ranking needs at least 2 candidates per paper"),
        ({"n_candidates": [3, 5, 2, 4]}, r"scorer 's': scores has shape \(4, 4\); expected \(papers, n_candidates\) = \(4, 5\)"),
        ({"gold": [0, 2, 2, 3]}, r"gold\[2\] = 2 is outside 0\.\.1 \(paper 2 has 2 candidates\)"),
    ],
)
def test_mixed_counts_refuse_inputs_that_do_not_fit_naming_the_paper(change, message):
    kw = {**MIXED, "replicates": 5} | change
    with pytest.raises(ValueError, match=message):
        intrinsic_report({"s": {"model": "m", "criterion": "nll", "scores": MIXED_SCORES}}, **kw)


def test_a_value_past_a_paper_s_own_count_is_refused_as_misaligned():
    scores = MIXED_SCORES.copy()
    scores[2, 3] = 0.5
    with pytest.raises(ValueError, match=r"scorer 's': gold_ranks: scores\[2\]\[3\] = 0\.5 but paper 2 has 2 candidates"):
        intrinsic_report({"s": {"model": "m", "criterion": "nll", "scores": scores}}, **MIXED, replicates=5)
    top = [list(r) for r in MIXED_TOP]
    top[2] = [1, 0, 1]
    with pytest.raises(
        ValueError, match=r"top\[2\]\[2\] = 1 but paper 2 has 2 candidates; columns past a paper's own count must be -1"
    ):
        intrinsic_report({"j": {"model": "j", "top": top}}, **MIXED, replicates=5)
    top[2] = [1, 0, 2]
    with pytest.raises(ValueError, match=r"top\[2\]\[2\] = 2 is outside 0\.\.1"):
        intrinsic_report({"j": {"model": "j", "top": top}}, **MIXED, replicates=5)
