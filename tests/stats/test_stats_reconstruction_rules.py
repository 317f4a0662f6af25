"""Reconstruction statistics, issue 23: the controls over the proposers only, the sign test over paper rates, the
best single model per paper as the pipeline's foil, each pair once, and the paper's own rules (``label_rule=
"fraction"``, ``rate="paper-mean"``) beside the app's defaults.

Expected values are worked by hand in the comments (or by an explicit loop written here) and p-values come from
``scipy.stats.binomtest``; never from the code under test.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from arena.stats.reconstruction import (
    CONTROLS,
    LABEL_COLUMNS,
    LABEL_RULES,
    RATE_RULES,
    hypothesis_labels,
    reconstruction_report,
)


def label_frame(rows: list[tuple]) -> pd.DataFrame:
    """Hypothesis labels (domain, paper, system, slot, label); None = unlabelled."""
    f = pd.DataFrame(rows, columns=["domain", "paper", "system", "slot", "label"])
    f["unlabelled"] = f["label"].isna()
    f["tie"] = False
    return f


def five(domain: str, paper: str, system: str, matches: set[int], unlabelled: set[int] = frozenset()) -> list[tuple]:
    """A system's five hypotheses on a paper: Match in the slots ``matches``, no label in ``unlabelled``."""
    return [
        (domain, paper, system, s, None if s in unlabelled else ("match" if s in matches else "no_match")) for s in range(1, 6)
    ]


def row(report: dict, domain: str, system: str) -> dict:
    (r,) = [x for x in report["rates"] if x["domain"] == domain and x["system"] == system]
    return r


def pair(report: dict, domain: str, a: str, b: str) -> dict:
    (r,) = [x for x in report["pairs"] if x["domain"] == domain and x["a"] == a and x["b"] == b]
    return r


# ---------------------------------------------------------------- defect 2: the sign test compares rates


def test_the_sign_test_compares_paper_rates_so_a_missing_label_is_not_a_no_match():
    # Five papers. On q1..q3 A has 1 Match of 5 and B none; on q4 B has 1 of 5 and A none. On q5 A has 2 Matches of
    # 4 labelled hypotheses (its fifth has no label: missing) and B 2 of 5: A's rate 0.5 is above B's 0.4.
    rows = []
    for q in ("q1", "q2", "q3"):
        rows += five("x", q, "A", {1}) + five("x", q, "B", set())
    rows += five("x", "q4", "A", set()) + five("x", "q4", "B", {2})
    rows += five("x", "q5", "A", {1, 2}, unlabelled={5}) + five("x", "q5", "B", {1, 2})
    st = pair(reconstruction_report(label_frame(rows), replicates=10), "x", "A", "B")["sign_test"]
    # Rates: A higher on q1, q2, q3, q5; B on q4. (Comparing Match counts, q5 is a 2-2 tie: 3 vs 1, p 0.625.)
    assert (st["n_papers"], st["a_more"], st["b_more"], st["ties"]) == (5, 4, 1, 0)
    assert st["p_value"] == pytest.approx(binomtest(4, 5, 0.5).pvalue, rel=1e-12)
    assert st["p_value"] == pytest.approx(0.375)


def test_equal_paper_rates_from_different_counts_are_a_tie():
    # 1 of 2 against 2 of 4 (B's fifth unlabelled): the same rate, a tie; 1 of 5 against 0 of 3: A higher.
    rows = [
        ("x", "q1", "A", 1, "match"),
        ("x", "q1", "A", 2, "no_match"),
        *[("x", "q1", "A", s, None) for s in (3, 4, 5)],
        *five("x", "q1", "B", {1, 2}, unlabelled={3}),
        *five("x", "q2", "A", {4}),
        *five("x", "q2", "B", set(), unlabelled={4, 5}),
    ]
    st = pair(reconstruction_report(label_frame(rows), replicates=10), "x", "A", "B")["sign_test"]
    assert (st["a_more"], st["b_more"], st["ties"]) == (1, 0, 1)
    assert st["p_value"] == pytest.approx(binomtest(1, 1, 0.5).pvalue)


# ---------------------------------------------------------------- defect 1: the controls are over the proposers only

PIPELINE = [
    # x/p1: A Matches in slot 1, B in slot 2. The pipeline P's champions copy A1 (Match), B2 (Match), A3 (No-match, but
    # the champion was judged on its own and got a Match), B4, A5 (No-match).
    *five("x", "p1", "A", {1}),
    *five("x", "p1", "B", {2}),
    *five("x", "p1", "P", {1, 2, 3}),
    # y/p2: no proposer Match at all; P's slot-1 champion (a copy of a No-match) was judged a Match.
    *five("y", "p2", "A", set()),
    *five("y", "p2", "B", set()),
    *five("y", "p2", "P", {1}),
]


def test_the_controls_pick_from_the_proposers_hypotheses_never_from_the_pipelines_copies():
    rep = reconstruction_report(label_frame(PIPELINE), replicates=30, proposers=["A", "B"])
    assert rep["method"]["proposers"] == ["A", "B"] and rep["method"]["pipelines"] == ["P"]
    # slot oracle: p1 slots 1 and 2 hold a proposer Match, 3-5 none → 2/5; p2 none → 0/5 (the champion's own Match in
    # slot 1 is not a proposer's); pooled 2/10. (With P among the proposers: 3/5, 1/5, 4/10.)
    assert (row(rep, "x", "slot_oracle")["n_matches"], row(rep, "x", "slot_oracle")["n_hypotheses"]) == (2, 5)
    assert row(rep, "y", "slot_oracle")["match_rate"] == 0.0
    assert row(rep, "all", "slot_oracle")["match_rate"] == pytest.approx(2 / 10)
    # top-5 oracle: p1 the best five of A's and B's ten hypotheses hold their 2 Matches → 2/5; p2 0/5; pooled 2/10.
    # (With P's copies counted again: p1 min(5, 5 Matches) = 5/5, p2 1/5, pooled 6/10.)
    assert (row(rep, "x", "top5_oracle")["n_matches"], row(rep, "x", "top5_oracle")["n_hypotheses"]) == (2, 5)
    assert row(rep, "all", "top5_oracle")["match_rate"] == pytest.approx(2 / 10)
    assert row(rep, "all", "top5_oracle")["success_at_5"] == pytest.approx(1 / 2)
    # the pipeline's own row is untouched: 4 Matches of 10
    assert row(rep, "all", "P")["match_rate"] == pytest.approx(4 / 10)


def test_best_single_is_per_paper_the_proposer_with_the_highest_rate_and_each_pipeline_is_tested_against_it():
    rows = [
        # q1: A 1/5, B 2/5 → B (2 Matches of 5). P 3/5.
        *five("x", "q1", "A", {1}),
        *five("x", "q1", "B", {1, 2}),
        *five("x", "q1", "P", {1, 2, 3}),
        # q2: A 1/5, B 1/5: equal rates and equal counts → A, the first by name. P 0/5.
        *five("x", "q2", "A", {3}),
        *five("x", "q2", "B", {4}),
        *five("x", "q2", "P", set()),
        # q3: A 1/2 (three unlabelled), B 2/4: equal rates → B, more labelled hypotheses. P 3/5.
        *five("x", "q3", "A", {1}, unlabelled={3, 4, 5}),
        *five("x", "q3", "B", {1, 2}, unlabelled={5}),
        *five("x", "q3", "P", {1, 2, 5}),
    ]
    rep = reconstruction_report(label_frame(rows), replicates=30, proposers=["A", "B"])
    best = row(rep, "x", "best_single")
    # B's q1 (2/5) + A's q2 (1/5) + B's q3 (2/4): 5 Matches of 14; every paper has a Match.
    assert (best["n_matches"], best["n_hypotheses"], best["n_papers_with_match"], best["n_papers"]) == (5, 14, 3, 3)
    assert best["match_rate"] == pytest.approx(5 / 14) and best["kind"] == "control"
    # each pair of systems once, the pipeline first; then the pipeline against best_single
    assert [(p["a"], p["b"]) for p in rep["pairs"] if p["domain"] == "x"] == [
        ("P", "A"),
        ("P", "B"),
        ("A", "B"),
        ("P", "best_single"),
    ]
    # P against the best single model per paper: q1 0.6 > 0.4, q2 0 < 0.2, q3 0.6 > 0.5 → 2 to 1
    st = pair(rep, "x", "P", "best_single")["sign_test"]
    assert (st["n_papers"], st["a_more"], st["b_more"], st["ties"]) == (3, 2, 1, 0)
    assert st["p_value"] == pytest.approx(binomtest(2, 3, 0.5).pvalue)
    assert pair(rep, "x", "P", "best_single")["ratio"] == pytest.approx((6 / 15) / (5 / 14))


def test_without_a_pipeline_the_default_pairs_are_each_pair_of_systems_once_by_name():
    rows = five("x", "q", "C", {1}) + five("x", "q", "A", set()) + five("x", "q", "B", {2})
    rep = reconstruction_report(label_frame(rows), replicates=5)
    assert [(p["a"], p["b"]) for p in rep["pairs"] if p["domain"] == "x"] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert rep["method"]["pipelines"] == [] and rep["controls"] == list(CONTROLS)


# ---------------------------------------------------------------- the paper's rules


def judgments() -> pd.DataFrame:
    """Judges J1 (f1), J2 (f2), J3 (f3) and JA (fa, A's family: recused on A). Per hypothesis, (judge, label)."""
    J1, J2, J3, JA = ("J1", "f1"), ("J2", "f2"), ("J3", "f3"), ("JA", "fa")
    m, n = "match", "no_match"
    votes = {
        ("p1", "A", 1): [(J1, m), (J2, n)],  # 1-1: fraction 1/2, majority a tie (not a Match)
        ("p1", "A", 2): [(J1, m), (J2, m), (J3, n)],  # 2/3; a Match
        ("p1", "A", 3): [(J1, n), (J2, n)],  # 0
        ("p1", "A", 4): [(JA, m), (J1, n)],  # JA recused: 0
        ("p1", "A", 5): [(JA, m)],  # only a recused judge: unlabelled
        ("p1", "B", 1): [(J1, m), (J2, m)],  # 1
        ("p1", "B", 2): [(J1, n), (J2, m), (J3, n)],  # 1/3; not a Match
        **{("p1", "B", s): [(J1, n)] for s in (3, 4, 5)},
        ("p2", "A", 1): [(J1, m)],  # 1
        **{("p2", "A", s): [(J1, n)] for s in (2, 3, 4, 5)},
        ("p2", "B", 1): [(J1, n), (J2, m)],  # 1/2; a tie
        **{("p2", "B", s): [(J1, n)] for s in (2, 3, 4, 5)},
    }
    families = {"A": ("fa",), "B": ("fb",)}
    rows = [
        ("x", paper, system, slot, judge, family, families[system], label)
        for (paper, system, slot), said in votes.items()
        for (judge, family), label in said
    ]
    return pd.DataFrame(rows, columns=LABEL_COLUMNS)


# Per paper (fraction scores):  A p1 [1/2, 2/3, 0, 0] (4 labelled, best 2/3)   A p2 [1, 0, 0, 0, 0]
#                               B p1 [1, 1/3, 0, 0, 0]                           B p2 [1/2, 0, 0, 0, 0]
F = Fraction


def test_the_fraction_rule_scores_the_share_of_non_recused_judges_saying_match():
    hyps = hypothesis_labels(judgments())
    rep = reconstruction_report(hyps, replicates=20, proposers=["A", "B"], label_rule="fraction")
    a, b = row(rep, "x", "A"), row(rep, "x", "B")
    # A: (1/2 + 2/3 + 1) / 9 labelled = 13/54; B: (1 + 1/3 + 1/2) / 10 = 11/60
    assert a["match_rate"] == pytest.approx(float(F(13, 54))) and a["n_matches"] == pytest.approx(float(F(13, 6)))
    assert b["match_rate"] == pytest.approx(float(F(11, 60))) and b["n_matches"] == pytest.approx(float(F(11, 6)))
    assert (a["n_hypotheses"], a["excluded_unlabelled"], a["ties"], b["ties"]) == (9, 1, 1, 1)
    # success@5: the mean of each paper's best score: A (2/3 + 1) / 2, B (1 + 1/2) / 2
    assert a["success_at_5"] == pytest.approx(5 / 6) and a["n_papers_with_match"] == pytest.approx(5 / 3)
    assert b["success_at_5"] == pytest.approx(3 / 4)
    # slot oracle: p1 slots max(1/2, 1), max(2/3, 1/3), 0, 0, 0 (slot 5: B's 0) → 5/3 of 5; p2 1 of 5 → 8/30
    slot = row(rep, "x", "slot_oracle")
    assert (slot["n_matches"], slot["n_hypotheses"]) == (pytest.approx(8 / 3), 10)
    # top-5: p1 1 + 2/3 + 1/2 + 1/3 + 0 = 5/2; p2 1 + 1/2 → 4 of 10
    assert row(rep, "x", "top5_oracle")["match_rate"] == pytest.approx(0.4)
    # best single: A on both papers (p1 7/24 > 4/15, p2 1/5 > 1/10)
    assert row(rep, "x", "best_single")["match_rate"] == pytest.approx(float(F(13, 54)))
    assert rep["method"]["label_rule"] == "fraction" and "1-1 split scores 0.5" in rep["method"]["label_rule_text"]
    # the same hypotheses under majority labels: A p1 1/4 (slot 2), p2 1/5 → 2/9; B p1 1/5 → 1/10
    majority = reconstruction_report(hyps, replicates=20, proposers=["A", "B"])
    assert row(majority, "x", "A")["match_rate"] == pytest.approx(2 / 9)
    assert row(majority, "x", "B")["match_rate"] == pytest.approx(1 / 10)
    assert row(majority, "x", "A")["n_matches"] == 2 and isinstance(row(majority, "x", "A")["n_matches"], int)
    assert majority["method"]["label_rule"] == "majority" and "tie is not a Match" in majority["method"]["label_rule_text"]


def test_the_paper_mean_rate_averages_the_papers_rates():
    hyps = hypothesis_labels(judgments())
    rep = reconstruction_report(hyps, replicates=20, proposers=["A", "B"], label_rule="fraction", rate="paper-mean")
    # A: ((7/6) / 4 + 1/5) / 2 = 59/240; B: ((4/3) / 5 + (1/2) / 5) / 2 = 11/60 (equal counts: as pooled)
    assert row(rep, "x", "A")["match_rate"] == pytest.approx(float(F(59, 240)))
    assert row(rep, "x", "B")["match_rate"] == pytest.approx(float(F(11, 60)))
    assert rep["method"]["rate"] == "paper-mean" and "mean over the scope's papers" in rep["method"]["rate_text"]
    # majority labels, paper-mean: A (1/4 + 1/5) / 2 = 9/40 (pooled: 2/9)
    majority = reconstruction_report(hyps, replicates=20, proposers=["A", "B"], rate="paper-mean")
    assert row(majority, "x", "A")["match_rate"] == pytest.approx(9 / 40)
    # the sign test compares the same paper rates whatever the scope's rate: A above B on both papers
    st = pair(rep, "x", "A", "B")["sign_test"]
    assert (st["a_more"], st["b_more"], st["p_value"]) == (2, 0, pytest.approx(binomtest(2, 2, 0.5).pvalue))


def test_the_paper_mean_bootstrap_equals_an_explicit_loop_over_drawn_papers():
    rng = np.random.default_rng(7)
    rows = []
    for i in range(18):
        for system, r in (("A", 0.2), ("B", 0.45)):
            for s in range(1, 6):
                u = rng.random()
                rows.append(("x", f"q{i:02d}", system, s, None if u > 0.85 else ("match" if u < r else "no_match")))
    labels = label_frame(rows)
    rep = reconstruction_report(labels, replicates=60, seed=5, rate="paper-mean", level=0.9)
    # the documented stream: scope "x" is the first of SeedSequence(5).spawn(2); papers in name order
    idx = np.random.default_rng(np.random.SeedSequence(5).spawn(2)[0]).integers(0, 18, size=(60, 18))
    papers = sorted({r[1] for r in rows})
    lab = labels[~labels["unlabelled"]]
    for system in ("A", "B"):
        mine = lab[lab["system"] == system]
        rate = {p: (g["label"] == "match").mean() for p, g in mine.groupby("paper")}
        assert row(rep, "x", system)["match_rate"] == pytest.approx(np.mean([rate[p] for p in papers if p in rate]))
        replicates = [np.mean([rate[papers[i]] for i in draw if papers[i] in rate]) for draw in idx]
        expected = list(np.quantile(replicates, [0.05, 0.95]))
        assert row(rep, "x", system)["match_rate_ci"] == pytest.approx(expected, abs=1e-12)


def test_unknown_rules_and_a_fraction_without_the_judges_counts_are_refused():
    labels = label_frame(five("x", "q", "A", {1}))
    with pytest.raises(ValueError, match=r"label_rule 'share'.*one of \['majority', 'fraction'\]"):
        reconstruction_report(labels, label_rule="share")
    with pytest.raises(ValueError, match=r"rate one of \['pooled', 'paper-mean'\]"):
        reconstruction_report(labels, rate="mean")
    with pytest.raises(ValueError, match=r"'fraction' needs the column\(s\) \['n_match', 'n_judges'\].*hypothesis_labels"):
        reconstruction_report(labels, label_rule="fraction")
    bad = labels.assign(n_match=[1, 0, 0, 3, 0], n_judges=[1, 1, 1, 2, 1])
    with pytest.raises(ValueError, match=r"row 3 \(hypothesis \('x', 'q', 'A', 4\)\) has n_match 3.0 of n_judges 2.0"):
        reconstruction_report(bad, label_rule="fraction")
    assert LABEL_RULES == ("majority", "fraction") and RATE_RULES == ("pooled", "paper-mean")
