"""Reconstruction statistics: recusal, majority labels, rates, paper bootstrap, ratios, sign tests, controls, and the
paper's own rules (fraction labels, paper-mean rates, the pipeline against the best single model per paper).

References are hand-computed cases, an explicit slow bootstrap written here with pandas, and scipy's binomtest;
never values from the code under test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from arena.stats.reconstruction import LABEL_COLUMNS, hypothesis_labels, reconstruction_report


def judgments(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=LABEL_COLUMNS)


def label_frame(rows: list[tuple]) -> pd.DataFrame:
    """Hypothesis labels (domain, paper, system, slot, label); None = unlabelled."""
    f = pd.DataFrame(rows, columns=["domain", "paper", "system", "slot", "label"])
    f["unlabelled"] = f["label"].isna()
    f["tie"] = False
    return f


def row(report: dict, domain: str, system: str) -> dict:
    (r,) = [x for x in report["rates"] if x["domain"] == domain and x["system"] == system]
    return r


def pair(report: dict, domain: str, a: str, b: str) -> dict:
    (r,) = [x for x in report["pairs"] if x["domain"] == domain and x["a"] == a and x["b"] == b]
    return r


# ---------------------------------------------------------------- recusal and majority


def test_a_judge_never_labels_its_own_familys_hypothesis_and_recusal_is_missing_not_no_match():
    out = hypothesis_labels(
        judgments(
            [
                # gpt's hypothesis: the gpt judge says match but is recused; claude says no_match → no_match (1 judge)
                ("bio", "p1", "gpt-x", 1, "j-gpt", "gpt", ("gpt",), "match"),
                ("bio", "p1", "gpt-x", 1, "j-claude", "claude", ("gpt",), "no_match"),
                # claude's hypothesis judged only by claude: unlabelled (missing), not no_match
                ("bio", "p1", "claude-y", 1, "j-claude", "claude", ("claude",), "no_match"),
                # a hypothesis listing two families (accepted; a pipeline's champion lists its origin's only): only the
                # gemini judge counts
                ("bio", "p1", "pipeline", 1, "j-gpt", "gpt", ("gpt", "claude"), "no_match"),
                ("bio", "p1", "pipeline", 1, "j-claude", "claude", ("gpt", "claude"), "no_match"),
                ("bio", "p1", "pipeline", 1, "j-gem", "gemini", ("gpt", "claude"), "match"),
                # a single family given as a plain string
                ("bio", "p1", "gem-z", 1, "j-gem", "gemini", "gemini", "match"),
                ("bio", "p1", "gem-z", 1, "j-gpt", "gpt", "gemini", "match"),
            ]
        )
    ).set_index("system")
    assert out.loc["gpt-x", "label"] == "no_match"
    assert (out.loc["gpt-x", "n_judges"], out.loc["gpt-x", "n_recused"]) == (1, 1)
    assert pd.isna(out.loc["claude-y", "label"])
    assert bool(out.loc["claude-y", "unlabelled"]) and out.loc["claude-y", "n_judges"] == 0
    assert not bool(out.loc["claude-y", "tie"])
    assert out.loc["pipeline", "label"] == "match"
    assert (out.loc["pipeline", "n_judges"], out.loc["pipeline", "n_recused"]) == (1, 2)
    assert out.loc["gem-z", "label"] == "match" and out.loc["gem-z", "n_judges"] == 1


def test_the_label_is_the_majority_of_the_remaining_judges_and_a_tie_is_recorded_and_not_a_match():
    fam = ("f0",)
    rows = [
        ("d", "p", "s", 1, "a", "f1", fam, "match"),
        ("d", "p", "s", 1, "b", "f2", fam, "match"),
        ("d", "p", "s", 1, "c", "f3", fam, "no_match"),
        ("d", "p", "s", 2, "a", "f1", fam, "match"),
        ("d", "p", "s", 2, "b", "f2", fam, "no_match"),
        ("d", "p", "s", 3, "a", "f1", fam, "no_match"),
        ("d", "p", "s", 3, "b", "f2", fam, "no_match"),
        ("d", "p", "s", 3, "c", "f3", fam, "match"),
        # 2 match vs 2 no_match once the f0 judge is recused → tie
        ("d", "p", "s", 4, "a", "f1", fam, "match"),
        ("d", "p", "s", 4, "b", "f2", fam, "match"),
        ("d", "p", "s", 4, "c", "f3", fam, "no_match"),
        ("d", "p", "s", 4, "e", "f4", fam, "no_match"),
        ("d", "p", "s", 4, "z", "f0", fam, "match"),
    ]
    out = hypothesis_labels(judgments(rows)).set_index("slot")
    assert list(out["label"]) == ["match", "no_match", "no_match", "no_match"]
    assert list(out["tie"]) == [False, True, False, True]
    assert list(out["n_judges"]) == [3, 2, 3, 4]
    assert list(out["n_match"]) == [2, 1, 1, 2]


def test_labels_reject_an_unknown_label_and_a_repeated_judge_naming_the_row():
    good = ("d", "p", "s", 1, "a", "f1", ("f0",), "match")
    with pytest.raises(ValueError, match="row 1 has label 'yes'"):
        hypothesis_labels(judgments([good, ("d", "p", "s", 2, "a", "f1", ("f0",), "yes")]))
    with pytest.raises(ValueError, match="row 1 repeats judge 'a'"):
        hypothesis_labels(judgments([good, good]))
    assert hypothesis_labels([]).empty


# ---------------------------------------------------------------- rates, success@5, exclusions

TINY = [
    # domain x: papers p1, p2; domain y: paper p3. Systems A and B.
    ("x", "p1", "A", 1, "match"),
    ("x", "p1", "A", 2, "no_match"),
    ("x", "p1", "A", 3, None),  # unlabelled: excluded, counted
    ("x", "p1", "B", 1, "no_match"),
    ("x", "p1", "B", 2, "no_match"),
    ("x", "p2", "A", 1, "no_match"),
    ("x", "p2", "A", 2, "no_match"),
    ("x", "p2", "B", 1, "match"),
    ("x", "p2", "B", 2, "match"),
    ("y", "p3", "A", 1, "match"),
    ("y", "p3", "A", 2, "match"),
    ("y", "p3", "B", 1, "no_match"),
    ("y", "p3", "B", 2, None),
]


def test_match_rate_success_at_5_and_exclusions_by_hand():
    rep = reconstruction_report(label_frame(TINY), replicates=50, seed=1)
    assert rep["domains"] == ["x", "y", "all"]
    a_x, b_x = row(rep, "x", "A"), row(rep, "x", "B")
    assert a_x["match_rate"] == pytest.approx(1 / 4)  # 1 match of 4 labelled
    assert a_x["success_at_5"] == pytest.approx(1 / 2)
    assert (a_x["n_papers"], a_x["n_hypotheses"], a_x["excluded_unlabelled"]) == (2, 4, 1)
    assert b_x["match_rate"] == pytest.approx(2 / 4)
    assert b_x["success_at_5"] == pytest.approx(1 / 2)
    a_all, b_all = row(rep, "all", "A"), row(rep, "all", "B")
    assert a_all["match_rate"] == pytest.approx(3 / 6)
    assert a_all["success_at_5"] == pytest.approx(2 / 3)
    assert b_all["match_rate"] == pytest.approx(2 / 5)
    assert b_all["success_at_5"] == pytest.approx(1 / 3)
    assert (b_all["n_hypotheses"], b_all["excluded_unlabelled"]) == (5, 1)
    assert pair(rep, "all", "A", "B")["ratio"] == pytest.approx((3 / 6) / (2 / 5))


def test_ties_are_counted_and_count_as_not_a_match():
    labels = label_frame([("x", "p1", "A", 1, "no_match"), ("x", "p1", "A", 2, "match")])
    labels.loc[0, "tie"] = True
    r = row(reconstruction_report(labels, replicates=20), "x", "A")
    assert r["ties"] == 1 and r["match_rate"] == pytest.approx(0.5)


def test_oracles_by_hand():
    labels = label_frame(
        [
            # paper 1: slot 1: A match; slot 2: nobody; slot 3: A and B match. 3 Matches in all.
            ("x", "p1", "A", 1, "match"),
            ("x", "p1", "B", 1, "no_match"),
            ("x", "p1", "A", 2, "no_match"),
            ("x", "p1", "B", 2, "no_match"),
            ("x", "p1", "A", 3, "match"),
            ("x", "p1", "B", 3, "match"),
            # paper 2: 6 Matches among proposers in two slots; top-5 caps at 5 of 6 labelled units… of min(5, 6)
            ("x", "p2", "A", 1, "match"),
            ("x", "p2", "B", 1, "match"),
            ("x", "p2", "C", 1, "match"),
            ("x", "p2", "A", 2, "match"),
            ("x", "p2", "B", 2, "match"),
            ("x", "p2", "C", 2, "match"),
            ("x", "p2", "A", 3, None),  # unlabelled: not a unit
            # the pipeline's own hypotheses are not picked from
            ("x", "p1", "P", 1, "match"),
            ("x", "p1", "P", 2, "match"),
            ("x", "p1", "P", 3, "no_match"),
        ]
    )
    rep = reconstruction_report(labels, replicates=30, proposers=["A", "B", "C"], pairs=[("P", "slot_oracle")])
    slot, top = row(rep, "x", "slot_oracle"), row(rep, "x", "top5_oracle")
    # slot oracle: p1 slots {1: M, 2: no, 3: M} → 2/3; p2 slots {1: M, 2: M} → 2/2; pooled 4/5
    assert (slot["n_matches"], slot["n_hypotheses"]) == (4, 5)
    assert slot["match_rate"] == pytest.approx(4 / 5)
    # top-5: p1 min(5, 3 matches) of min(5, 6 labelled) = 3/5; p2 min(5, 6) of min(5, 6) = 5/5 → 8/10
    assert (top["n_matches"], top["n_hypotheses"]) == (8, 10)
    assert top["match_rate"] == pytest.approx(8 / 10)
    assert slot["success_at_5"] == top["success_at_5"] == pytest.approx(1.0)
    assert top["kind"] == "control" and slot["excluded_unlabelled"] is None
    p = pair(rep, "x", "P", "slot_oracle")
    assert p["ratio"] == pytest.approx((2 / 3) / (4 / 5))
    # sign test on p1 only (P judged only p1): P 2 matches vs slot oracle 2 → tie
    assert (p["sign_test"]["n_papers"], p["sign_test"]["ties"], p["sign_test"]["p_value"]) == (1, 1, None)


def test_reserved_and_unknown_names_are_rejected():
    with pytest.raises(ValueError, match="reserved"):
        reconstruction_report(label_frame([("x", "p", "slot_oracle", 1, "match")]))
    with pytest.raises(ValueError, match="unknown system"):
        reconstruction_report(label_frame(TINY), pairs=[("A", "Z")])
    with pytest.raises(ValueError, match="proposers"):
        reconstruction_report(label_frame(TINY), proposers=["Z"])


# ---------------------------------------------------------------- sign test


def test_sign_test_counts_and_p_value_match_scipy_binomtest_on_hand_counts():
    rows = []
    # 9 papers: A has more Matches on 6, B on 1, tie on 2.
    a_counts = [2, 1, 1, 3, 1, 2, 0, 0, 1]
    b_counts = [0, 0, 0, 1, 0, 1, 1, 0, 1]
    for i, (a, b) in enumerate(zip(a_counts, b_counts, strict=True)):
        for s in range(5):
            rows.append(("x", f"p{i}", "A", s, "match" if s < a else "no_match"))
            rows.append(("x", f"p{i}", "B", s, "match" if s < b else "no_match"))
    rep = reconstruction_report(label_frame(rows), replicates=20, pairs=[("A", "B"), ("B", "A")])
    st = pair(rep, "x", "A", "B")["sign_test"]
    assert (st["a_more"], st["b_more"], st["ties"], st["n_papers"]) == (6, 1, 2, 9)
    assert st["p_value"] == pytest.approx(binomtest(6, 7, 0.5).pvalue, rel=1e-12)
    assert pair(rep, "x", "B", "A")["sign_test"]["p_value"] == pytest.approx(binomtest(1, 7, 0.5).pvalue, rel=1e-12)
    for k, n in [(0, 1), (3, 6), (10, 12), (50, 120), (7, 7)]:
        rows = [("x", f"p{i}", "A", 1, "match" if i < k else "no_match") for i in range(n)]
        rows += [("x", f"p{i}", "B", 1, "no_match" if i < k else "match") for i in range(n)]
        st = pair(reconstruction_report(label_frame(rows), replicates=5), "x", "A", "B")["sign_test"]
        assert st["p_value"] == pytest.approx(binomtest(k, n, 0.5).pvalue, rel=1e-12, abs=1e-300)


# ---------------------------------------------------------------- bootstrap


def simulated_labels(n_papers: int = 40, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    rates = {"A": 0.1, "B": 0.25, "C": 0.4}
    for i in range(n_papers):
        dom = "bio" if i % 3 else "ml"
        for sysname, r in rates.items():
            for s in range(1, 6):
                u = rng.random()
                rows.append((dom, f"q{i}", sysname, s, None if u > 0.95 else ("match" if u < r else "no_match")))
    return label_frame(rows)


def slow_bootstrap(labels: pd.DataFrame, replicates: int, seed: int, level: float) -> dict:
    """Resample papers per scope with an explicit loop over replicates, following the documented seed scheme."""
    lab = labels[~labels["unlabelled"]]
    papers = labels[["domain", "paper"]].drop_duplicates()
    papers = papers.assign(_d=papers["domain"].astype(str), _p=papers["paper"].astype(str))
    papers = papers.sort_values(["_d", "_p"]).reset_index(drop=True)
    domains = sorted(papers["domain"].unique())
    scopes = [(d, papers[papers["domain"] == d]) for d in domains] + [("all", papers)]
    streams = np.random.SeedSequence(seed).spawn(len(scopes))
    out = {}
    by_paper = {key: g for key, g in lab.groupby(["domain", "paper"])}
    alpha = (1 - level) / 2
    for (scope, ps), stream in zip(scopes, streams, strict=True):
        keys = list(zip(ps["domain"], ps["paper"], strict=True))
        idx = np.random.default_rng(stream).integers(0, len(keys), size=(replicates, len(keys)))
        rates = {s: [] for s in sorted(lab["system"].unique())}
        successes = {s: [] for s in rates}
        for r in range(replicates):
            sample = pd.concat([by_paper[keys[i]].assign(_copy=c) for c, i in enumerate(idx[r])])
            for s in rates:
                mine = sample[sample["system"] == s]
                rates[s].append((mine["label"] == "match").mean())
                per = mine.groupby("_copy")["label"].apply(lambda x: (x == "match").any())
                successes[s].append(per.mean())
        for s in rates:
            out[(scope, s)] = (
                list(np.quantile(rates[s], [alpha, 1 - alpha])),
                list(np.quantile(successes[s], [alpha, 1 - alpha])),
                np.array(rates[s]),
            )
    return out


def test_paper_bootstrap_equals_an_explicit_slow_bootstrap_under_the_documented_seed_scheme():
    labels = simulated_labels(n_papers=24)
    rep = reconstruction_report(labels, replicates=40, seed=11, level=0.9)
    slow = slow_bootstrap(labels, 40, 11, 0.9)
    for (scope, s), (rate_ci, succ_ci, _) in slow.items():
        r = row(rep, scope, s)
        assert r["match_rate_ci"] == pytest.approx(rate_ci, abs=1e-12)
        assert r["success_at_5_ci"] == pytest.approx(succ_ci, abs=1e-12)
    # the ratio of the same replicate's rates (paired draw)
    ra, rb = slow[("all", "A")][2], slow[("all", "C")][2]
    assert pair(rep, "all", "A", "C")["ratio_ci"] == pytest.approx(list(np.quantile(ra / rb, [0.05, 0.95])), abs=1e-12)


def test_bootstrap_properties_seed_level_and_paired_ratio():
    labels = simulated_labels(n_papers=90, seed=5)
    rep = reconstruction_report(labels, replicates=400, seed=2)
    assert rep == reconstruction_report(labels, replicates=400, seed=2)
    wide = reconstruction_report(labels, replicates=400, seed=2, level=0.99)
    other = reconstruction_report(labels, replicates=400, seed=3)
    assert rep["rates"] != other["rates"]
    for r, w in zip(rep["rates"], wide["rates"], strict=True):
        lo, hi = r["match_rate_ci"]
        assert lo <= r["match_rate"] <= hi
        assert w["match_rate_ci"][0] <= lo and hi <= w["match_rate_ci"][1]
        assert 0.0 <= lo and hi <= 1.0
    for p in rep["pairs"]:
        lo, hi = p["ratio_ci"]
        assert lo <= p["ratio"] <= hi
        assert p["n_undefined"] == 0
    # the same draw for every system: a system duplicated under another name has ratio exactly 1 in every replicate
    twin = pd.concat([labels, labels[labels["system"] == "B"].assign(system="B2")])
    p = pair(reconstruction_report(twin, replicates=100, seed=4), "all", "B", "B2")
    assert p["ratio"] == 1.0 and p["ratio_ci"] == [1.0, 1.0]
    # bootstrap spread agrees with the binomial-ish standard error of a rate (distributional sanity check)
    r = row(rep, "all", "C")
    n = r["n_hypotheses"]
    se = np.sqrt(r["match_rate"] * (1 - r["match_rate"]) / n)
    width = r["match_rate_ci"][1] - r["match_rate_ci"][0]
    assert 0.6 * 2 * 1.96 * se < width < 1.6 * 2 * 1.96 * se


def test_a_domain_does_not_depend_on_the_other_domains_data():
    labels = simulated_labels(n_papers=30, seed=8)
    rep = reconstruction_report(labels, replicates=100, seed=9)
    changed = labels.copy()
    changed.loc[changed["domain"] == "ml", "label"] = "match"
    rep2 = reconstruction_report(changed, replicates=100, seed=9)
    assert row(rep, "bio", "A") == row(rep2, "bio", "A")
    assert row(rep, "ml", "A") != row(rep2, "ml", "A")
