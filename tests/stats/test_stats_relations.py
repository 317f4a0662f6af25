"""Condorcet relations, complete separation, tie-sensitivity schemes and judge agreement on hand-made data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.stats import (
    complete_separation,
    condorcet,
    encode_cases,
    fit_bt,
    judge_agreement,
    ratio_bootstrap_ci,
    scheme_a,
    scheme_b,
    win_matrix,
)

COLS = ["case", "context", "batch", "model_1", "model_2", "original", "reverse"]


def frame(rows: list[tuple[str, str, str, str | None, str | None]]) -> pd.DataFrame:
    """Rows (case, model_1, model_2, original, reverse) in one context and batch."""
    return pd.DataFrame([(c, "ctx", "b", m1, m2, o, r) for c, m1, m2, o, r in rows], columns=COLS)


# ---------------------------------------------------------------- Condorcet


def test_condorcet_transitive() -> None:
    # A beats B 3–1, A beats C 2–0, B beats C 2–1: counts 2/1/0, transitive, A is the Condorcet winner.
    w = np.array([[0, 3, 2], [1, 0, 2], [0, 1, 0]])
    res = condorcet(w, ["A", "B", "C"])
    assert res["beat_counts"] == {"A": 2, "B": 1, "C": 0}
    assert res["transitive"] and res["acyclic"]
    assert res["cycles"] == []
    assert res["winner"] == "A"


def test_condorcet_three_cycle() -> None:
    # Rock–paper–scissors: A beats B, B beats C, C beats A (each 2–1).
    w = np.array([[0, 2, 1], [1, 0, 2], [2, 1, 0]])
    res = condorcet(w, ["A", "B", "C"])
    assert res["beat_counts"] == {"A": 1, "B": 1, "C": 1}
    assert not res["transitive"] and not res["acyclic"]
    assert res["cycles"] == [["A", "B", "C"]]
    assert res["winner"] is None


def test_condorcet_four_cycle_without_three_cycle() -> None:
    # A>B, B>C, C>D, D>A; the diagonals A–C and B–D are level (1–1): the only cycle is A→B→C→D→A.
    w = np.array([[0, 2, 1, 0], [0, 0, 2, 1], [1, 0, 0, 2], [2, 1, 0, 0]])
    res = condorcet(w, ["A", "B", "C", "D"])
    assert res["cycles"] == [["A", "B", "C", "D"]]
    assert sorted(map(tuple, res["undecided"])) == [("A", "C"), ("B", "D")]


def test_condorcet_intransitive_but_acyclic() -> None:
    # A>B, B>C but A–C level: no cycle, yet not transitive (A does not beat C).
    w = np.array([[0, 2, 1], [0, 0, 2], [1, 0, 0]])
    res = condorcet(w, ["A", "B", "C"])
    assert res["acyclic"] and not res["transitive"]
    assert res["undecided"] == [["A", "C"]]


def test_complete_separation() -> None:
    # A vs C is 2–0 (separation); A vs B 3–1 and B vs C 2–1 are not.
    w = np.array([[0, 3, 2], [1, 0, 2], [0, 1, 0]])
    assert complete_separation(w, ["A", "B", "C"]) == [{"a": "A", "b": "C", "a_wins": 2, "b_wins": 0}]
    # An uncompared pair (0–0) is not separation.
    w2 = np.array([[0, 3, 0], [1, 0, 2], [0, 1, 0]])
    assert complete_separation(w2, ["A", "B", "C"]) == []


# ---------------------------------------------------------------- tie sensitivity


def scheme_frame() -> pd.DataFrame:
    """Reference X > Y > Z.
    X–Y: 2 stable X, 1 sensitive   -> scheme B: X 2, Y 1 (no flip)
    Y–Z: 1 stable Y, 1 sensitive   -> scheme B: Y 1, Z 1 (tied)
    X–Z: 2 sensitive               -> scheme B: X 0, Z 2 (reversed, but X–Z is not adjacent)
    """
    return frame(
        [
            ("1", "X", "Y", "X", "X"),
            ("2", "X", "Y", "X", "X"),
            ("3", "X", "Y", "X", "Y"),
            ("4", "Y", "Z", "Y", "Y"),
            ("5", "Y", "Z", "TIE", "Y"),
            ("6", "X", "Z", "X", "Z"),
            ("7", "Z", "X", "TIE", "TIE"),
        ]
    )


def test_scheme_b_hand() -> None:
    res = scheme_b(encode_cases(scheme_frame()), ["X", "Y", "Z"], pseudo_count=0.5)
    h2h = {(d["a"], d["b"]): (d["a_wins"], d["b_wins"], d["sensitive"]) for d in res["head_to_head"]}
    assert h2h == {("X", "Y"): (2, 1, 1), ("X", "Z"): (0, 2, 2), ("Y", "Z"): (1, 1, 1)}
    assert res["flipped"] == []
    assert [(d["a"], d["b"]) for d in res["tied"]] == [("Y", "Z")]
    assert res["reference"] == ["X", "Y", "Z"]


def test_scheme_b_two_models_flip() -> None:
    # 3 stable X, 1 stable Y, 3 sensitive: scheme B gives X 3, Y 4. Plain MLE: θX − θY = ln(3/4) < 0.
    rows = [(str(i), "X", "Y", "X", "X") for i in range(3)] + [("3", "X", "Y", "Y", "Y")]
    rows += [(f"s{i}", "X", "Y", "X", "Y") for i in range(3)]
    res = scheme_b(encode_cases(frame(rows)), ["X", "Y"], pseudo_count=0.0)
    assert [(d["a"], d["a_wins"], d["b_wins"]) for d in res["flipped"]] == [("X", 3, 4)]
    assert res["ranking"] == ["Y", "X"]
    assert res["ranking_flips"] == [["X", "Y"]]
    assert res["strengths"]["X"] - res["strengths"]["Y"] == pytest.approx(math.log(3 / 4), abs=1e-9)
    assert res["condorcet"]["winner"] == "Y"


def test_scheme_a_is_ties_as_half_wins() -> None:
    # 3 stable X, 1 stable Y, 2 sensitive: X 3 + 1, Y 1 + 1 -> θX − θY = ln 2 (plain MLE).
    rows = [(str(i), "X", "Y", "X", "X") for i in range(3)] + [("3", "X", "Y", "Y", "Y")]
    rows += [("s1", "X", "Y", "X", "Y"), ("s2", "X", "Y", "TIE", "X")]
    res = scheme_a(encode_cases(frame(rows)), pseudo_count=0.0)
    assert res["ranking"] == ["X", "Y"]
    assert res["strengths"]["X"] == pytest.approx(0.5 * math.log(2), abs=1e-9)


def test_scheme_b_rejects_bad_reference() -> None:
    with pytest.raises(ValueError):
        scheme_b(encode_cases(scheme_frame()), ["X", "Y"])


# ---------------------------------------------------------------- judge agreement


def test_judge_agreement_hand() -> None:
    j1 = frame(
        [
            ("k1", "P", "Q", "P", "P"),  # stable P
            ("k2", "P", "Q", "Q", "Q"),  # stable Q
            ("k3", "P", "Q", "P", "Q"),  # sensitive
            ("k4", "P", "Q", "P", "P"),  # stable P
            ("k5", "P", "Q", "TIE", "P"),  # sensitive
            ("k6", "P", "Q", "P", "P"),  # only judge 1
        ]
    )
    j2 = frame(
        [
            ("k1", "Q", "P", "P", "P"),  # stable P (models listed the other way round: same pair)
            ("k2", "P", "Q", "Q", "P"),  # sensitive
            ("k3", "P", "Q", "P", "Q"),  # sensitive
            ("k4", "P", "Q", "Q", None),  # incomplete
            ("k5", "P", "Q", "Q", "Q"),  # stable Q
            ("k7", "P", "Q", "P", "P"),  # only judge 2
        ]
    )
    res = judge_agreement(j1, j2)
    assert (res["joined"], res["only_primary"], res["only_secondary"]) == (5, 1, 1)
    assert res["primary"] == {"stable": 3, "sensitive": 2, "incomplete": 0}
    assert res["secondary"] == {"stable": 2, "sensitive": 2, "incomplete": 1}
    # Primary stable: k1 (P), k2 (Q), k4 (P). The secondary's present verdicts there: k1 P,P (2 agree),
    # k2 Q,P (1 agrees), k4 Q (0 agree): 3 of 5.
    ordered = res["ordered_agreement"]
    assert {k: ordered[k] for k in ("cases", "verdicts", "agree", "fraction")} == {
        "cases": 3,
        "verdicts": 5,
        "agree": 3,
        "fraction": 0.6,
    }
    assert ordered["name"] == "Ordered agreement on the primary judge’s stable cases"
    # The disagreeing cases, with the secondary's verdicts as names (None: missing).
    assert ordered["disagreements"] == [
        {
            "case": "k2",
            "context": "ctx",
            "model_1": "P",
            "model_2": "Q",
            "primary_winner": "Q",
            "secondary_original": "Q",
            "secondary_reverse": "P",
            "agree": 1,
            "verdicts": 2,
        },
        {
            "case": "k4",
            "context": "ctx",
            "model_1": "P",
            "model_2": "Q",
            "primary_winner": "P",
            "secondary_original": "Q",
            "secondary_reverse": None,
            "agree": 0,
            "verdicts": 1,
        },
    ]
    # Complete for both: k1, k2, k3, k5. Equal folded outcome: k1 (same stable winner), k3 (both sensitive).
    folded = {k: v for k, v in res["case_folded"].items() if k not in ("name", "ci")}
    assert folded == {
        "cases": 4,
        "agree": 2,
        "fraction": 0.5,
        "same_stable_winner": 1,
        "both_sensitive": 1,
        "opposite_stable_winner": 0,
        "stable_vs_sensitive": 2,
    }


def test_ordered_agreement_ci_is_a_case_bootstrap_of_the_primary_stable_cases() -> None:
    # Two primary-stable cases: the secondary agrees in both orders on k1 (2 of 2) and in one on k2 (1 of 2).
    # Resampling the two cases (both orders together) gives {k1,k1} 4/4 = 1 with probability 1/4,
    # {k1,k2} 3/4 with probability 1/2 and {k2,k2} 2/4 = 0.5 with probability 1/4: the 2.5th percentile is
    # 0.5 and the 97.5th is 1 (a quarter of the replicates sit at each end).
    primary = frame([("k1", "P", "Q", "P", "P"), ("k2", "P", "Q", "Q", "Q")])
    secondary = frame([("k1", "P", "Q", "P", "P"), ("k2", "P", "Q", "Q", "P")])
    res = judge_agreement(primary, secondary, replicates=4000, seed=1)
    assert res["ordered_agreement"]["fraction"] == 0.75
    assert res["ordered_agreement"]["ci"] == [0.5, 1.0]
    assert res["bootstrap"] | {} == {
        "unit": "canonical pairs resampled with both their orders",
        "replicates": 4000,
        "seed": 1,
        "level": 0.95,
    }


def test_ordered_agreement_is_anchored_on_the_first_frame() -> None:
    # Swapping the judges changes the anchor: the primary's stable cases are the denominator.
    a = frame([("k1", "P", "Q", "P", "P"), ("k2", "P", "Q", "P", "Q"), ("k3", "P", "Q", "Q", "Q")])
    b = frame([("k1", "P", "Q", "P", "Q"), ("k2", "P", "Q", "P", "P"), ("k3", "P", "Q", "Q", "Q")])
    on_a = judge_agreement(a, b)["ordered_agreement"]
    on_b = judge_agreement(b, a)["ordered_agreement"]
    assert (on_a["agree"], on_a["verdicts"]) == (3, 4)  # a's stable k1 (P; b says P, Q) and k3 (Q; b says Q, Q)
    assert (on_b["agree"], on_b["verdicts"]) == (3, 4)  # b's stable k2 (P; a says P, Q) and k3
    assert [d["case"] for d in on_a["disagreements"]] == ["k1"] and [d["case"] for d in on_b["disagreements"]] == ["k2"]


def test_ratio_bootstrap_ci_is_none_without_a_denominator() -> None:
    assert ratio_bootstrap_ci(np.array([]), np.array([])) is None
    assert ratio_bootstrap_ci(np.array([0, 0]), np.array([0, 0])) is None
    # Every case agrees fully: the interval is the point.
    assert ratio_bootstrap_ci(np.array([2, 2, 1]), np.array([2, 2, 1])) == [1.0, 1.0]


def test_judge_agreement_rejects_different_pairs() -> None:
    j1 = frame([("k1", "P", "Q", "P", "P")])
    j2 = frame([("k1", "P", "R", "P", "P")])
    with pytest.raises(ValueError, match="different model pairs"):
        judge_agreement(j1, j2)


def test_separation_strengths_in_stable_fit() -> None:
    # A stable fit with a 2–0 pair and no pseudo-count diverges and is flagged; 0.5 keeps it finite.
    df = frame([("1", "A", "B", "A", "A"), ("2", "A", "B", "A", "A")])
    w = win_matrix(encode_cases(df), "stable")
    assert fit_bt(w).diverged
    assert not fit_bt(w, pseudo_count=0.5).diverged
