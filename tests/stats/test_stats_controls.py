"""Diagnostic controls' statistics: every number against hand arithmetic, CIs against scipy's bootstrap, properties."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from arena.stats.controls import (
    controls_document,
    dimension_audit,
    falsifier_section,
    naive_section,
    rendering_section,
    sham_gate,
    subtle_section,
    verdict_frame,
)


def both(case: str, kind: str, target: str | None, original: str, reverse: str) -> list[tuple]:
    return [(case, kind, target, "original", original), (case, kind, target, "reverse", reverse)]


def hand_verdicts() -> pd.DataFrame:
    rows = []
    # clear / grounding: g1 clean both; g2 clean then tie; g3 variant then clean.
    rows += both("g1", "clear", "grounding", "clean", "clean")
    rows += both("g2", "clear", "grounding", "clean", "tie")
    rows += both("g3", "clear", "grounding", "variant", "clean")
    # subtle and sham / grounding, four cases.
    rows += both("s1", "subtle", "grounding", "clean", "clean") + both("s1", "sham", "grounding", "tie", "tie")
    rows += both("s2", "subtle", "grounding", "clean", "tie") + both("s2", "sham", "grounding", "tie", "tie")
    rows += both("s3", "subtle", "grounding", "variant", "clean") + both("s3", "sham", "grounding", "clean", "tie")
    rows += both("s4", "subtle", "grounding", "tie", "tie") + both("s4", "sham", "grounding", "tie", "variant")
    # subtle and sham / decisive_metric, two cases (small enough to enumerate the bootstrap).
    rows += both("d1", "subtle", "decisive_metric", "clean", "clean") + both("d1", "sham", "decisive_metric", "tie", "tie")
    rows += both("d2", "subtle", "decisive_metric", "tie", "variant") + both("d2", "sham", "decisive_metric", "tie", "tie")
    # rendering (clean = schema, variant = prose).
    rows += both("r1", "rendering", None, "tie", "tie")  # did not move (ties)
    rows += both("r2", "rendering", None, "clean", "variant")  # did not move (position won twice)
    rows += both("r3", "rendering", None, "clean", "clean")  # moved: schema both orders
    rows += both("r4", "rendering", None, "variant", "variant")  # moved: prose both orders
    rows += both("r5", "rendering", None, "tie", "clean")  # moved: a tie in one order only
    rows += [("r6", "rendering", None, "original", "clean")]  # one order: incomplete
    # falsifier on/off (clean = filled).
    rows += both("f1", "falsifier_off", None, "clean", "clean")
    rows += both("f2", "falsifier_off", None, "clean", "tie")
    rows += both("f3", "falsifier_off", None, "variant", "clean")
    # naive (clean = the real proposal).
    rows += both("n1", "naive", None, "clean", "clean")
    rows += both("n2", "naive", None, "clean", "variant")
    return verdict_frame(rows)


def hand_scores() -> pd.DataFrame:
    # Structured scores on clear/grounding: (order, dimension, clean, variant).
    table = {
        "g1": [
            ("original", "grounding", 4, 1),
            ("original", "hypothesis_specificity", 3, 3),
            ("original", "decisive_metric", 2, 3),
            ("reverse", "grounding", 4, 2),
            ("reverse", "hypothesis_specificity", 3, 2),
            ("reverse", "decisive_metric", 3, 3),
        ],
        "g2": [
            ("original", "grounding", 3, 3),
            ("original", "hypothesis_specificity", 2, 2),
            ("original", "decisive_metric", 2, 2),
            ("reverse", "grounding", 3, 1),
            ("reverse", "hypothesis_specificity", 2, 3),
            ("reverse", "decisive_metric", 2, 2),
        ],
    }
    rows = [(case, "clear", "grounding", o, d, c, v) for case, cells in table.items() for o, d, c, v in cells]
    return pd.DataFrame(rows, columns=["case", "kind", "target", "order", "dimension", "clean", "variant"])


@pytest.fixture(scope="module")
def document() -> dict:
    structured = verdict_frame(
        both("g1", "clear", "grounding", "clean", "tie")
        + both("g2", "clear", "grounding", "clean", "tie")
        + both("zz", "clear", "grounding", "clean", "clean")
    )
    return controls_document(hand_verdicts(), scores=hand_scores(), structured_verdicts=structured, replicates=4000, seed=3)


def test_clear_counts_by_hand(document: dict) -> None:
    g = document["clear"]["grounding"]
    # g1: clean, clean; g2: clean, tie; g3: variant, clean -> 4 clean wins, 1 variant win, 1 tie of 6.
    assert (g["clean_wins"], g["ordered"], g["variant_wins"], g["ties"], g["cases"]) == (4, 6, 1, 1, 3)
    empty = document["clear"]["decisive_metric"]
    assert (empty["clean_wins"], empty["ordered"], empty["target_drop"], empty["nontarget_drift"]) == (0, 0, None, None)


def test_clear_target_drop_and_drift_by_hand_with_an_enumerable_bootstrap(document: dict) -> None:
    g = document["clear"]["grounding"]
    # Target (grounding) clean − variant per judgment: g1 3, 2; g2 0, 2 -> mean 7/4.
    assert g["target_drop"]["mean"] == pytest.approx(7 / 4)
    # Two cases: resamples {g1,g1} (p 1/4) -> 5/2, {g1,g2} (1/2) -> 7/4, {g2,g2} (1/4) -> 2/2 = 1.
    # A quarter of the mass sits on each extreme, so the 2.5th and 97.5th percentiles are the extremes.
    assert g["target_drop"]["ci"] == pytest.approx([1.0, 2.5])
    # Non-target cells: g1 (0, −1) (1, 0); g2 (0, 0) (−1, 0) -> −1/8; resamples 0/4, −1/8, −1/4.
    assert g["nontarget_drift"]["mean"] == pytest.approx(-1 / 8)
    assert g["nontarget_drift"]["ci"] == pytest.approx([-0.25, 0.0])


def test_subtle_and_sham_by_hand(document: dict) -> None:
    g = document["subtle"]["grounding"]
    # Subtle: s1 clean clean, s2 clean tie, s3 variant clean, s4 tie tie -> 4 of 8 = 0.5.
    # Sham: s1 tie tie, s2 tie tie, s3 clean tie, s4 tie variant -> 1 of 8 = 0.125 (ties are not clean wins).
    assert g["p_clean_subtle"] == pytest.approx(0.5)
    assert g["p_clean_sham"] == pytest.approx(0.125)
    assert g["adjusted"]["value"] == pytest.approx(0.375)
    assert g["sham_gate"] == {"clean_wins": 1, "ties": 6, "sham_wins": 1, "ordered": 8, "tolerance": 0.0, "passed": False}
    # Per-case differences of clean-win rates (2 judgments each): s1 1 − 0, s2 ½ − 0, s3 ½ − ½, s4 0 − 0, so a
    # resample's value is the mean of 4 draws from {1, ½, 0, 0}. P(mean = 0) = (2/4)^4 = 6.25% > 2.5%: low = 0.
    # P(mean > ¾) = P(all s1) + P(three s1, one s2) = 1/256 + 4/256 = 1.95% < 2.5%, and P(mean ≥ ¾) adds
    # 6/256 (two s1, two s2) + 8/256 (three s1, one s3 or s4) = 5.5% > 2.5%: high = ¾.
    assert g["adjusted"]["ci"] == pytest.approx([0.0, 0.75])


def test_sham_adjusted_ci_by_enumeration_on_two_cases(document: dict) -> None:
    d = document["subtle"]["decisive_metric"]
    # d1: subtle 2/2 clean, sham 0/2; d2: subtle 0/2 (tie, variant), sham 0/2.
    # p_subtle = 2/4, p_sham = 0 -> 0.5. Resamples: {d1,d1} 1 − 0 = 1, {d1,d2} 0.5, {d2,d2} 0 -> CI [0, 1].
    assert (d["p_clean_subtle"], d["p_clean_sham"], d["adjusted"]["value"]) == (0.5, 0.0, 0.5)
    assert d["adjusted"]["ci"] == pytest.approx([0.0, 1.0])
    assert d["sham_gate"]["passed"] is True and d["sham_gate"]["ties"] == 4
    none = document["subtle"]["falsifiability"]
    assert none["p_clean_subtle"] is None and none["adjusted"] == {"value": None, "ci": None}
    assert none["sham_gate"]["passed"] is False  # no sham judged: nothing shows the gate holds


def test_rendering_by_hand(document: dict) -> None:
    assert document["rendering"] == {
        "pairs": 5,  # r1..r5; r6 has one order only
        "same_verdict": 2,  # r1 (tie, tie), r2 (the position won twice)
        "flips": 3,  # r3 schema twice, r4 prose twice, r5 tie then schema
        "ties": 1,
        "schema_preferred": 1,
        "prose_preferred": 1,
        "incomplete": 1,
    }


def test_falsifier_and_naive_by_hand(document: dict) -> None:
    f = document["falsifier"]
    # f1 filled filled, f2 filled tie, f3 empty filled: 4 filled, 1 empty, 1 tie; preference (4 − 1) / 6 = 0.5.
    assert {k: f[k] for k in ("pairs", "ordered", "filled_wins", "empty_wins", "ties")} == {
        "pairs": 3,
        "ordered": 6,
        "filled_wins": 4,
        "empty_wins": 1,
        "ties": 1,
    }
    assert f["preference"]["value"] == pytest.approx(0.5)
    # Per-case means of (+1 filled, −1 empty, 0 tie): f1 1, f2 ½, f3 0. All three draws f3 (mean 0) and all f1
    # (mean 1) each have probability 1/27 = 3.7% > 2.5%, so the interval is exactly [0, 1].
    assert f["preference"]["ci"] == pytest.approx([0.0, 1.0])
    assert document["naive"] == {"pairs": 2, "ordered": 4, "real_wins": 3, "naive_wins": 1, "ties": 0, "stable_real_wins": 1}


def test_dimension_audit_by_hand(document: dict) -> None:
    audit = document["dimension_audit"]
    # grounding: clean 4+4+3+3 = 14, variant 1+2+3+1 = 7 -> 21/8; hypothesis: 10 + 10 -> 20/8; metric: 9 + 10 -> 19/8.
    assert audit["mean_scores"] == pytest.approx(
        {"decisive_metric": 19 / 8, "grounding": 21 / 8, "hypothesis_specificity": 20 / 8}
    )
    assert audit["mean_scores_by_role"]["clean"]["grounding"] == pytest.approx(14 / 4)
    assert audit["mean_scores_by_role"]["variant"]["grounding"] == pytest.approx(7 / 4)
    # Structured vs holistic on g1, g2 (zz is not in the holistic run): g1 o clean=clean, g1 r tie≠clean,
    # g2 o clean=clean, g2 r tie=tie -> 3 of 4.
    assert audit["structured_vs_holistic_agreement"] == pytest.approx(0.75)
    assert audit["agreement_counts"] == {"agree": 3, "compared": 4}


def test_the_document_is_json_and_deterministic_for_a_seed(document: dict) -> None:
    again = controls_document(hand_verdicts(), scores=hand_scores(), replicates=4000, seed=3)
    assert json.loads(json.dumps(again)) == again
    assert again["subtle"] == document["subtle"] and again["clear"] == document["clear"]
    assert controls_document(hand_verdicts())["clear"]["grounding"]["target_drop"] is None  # no structured run


# --------------------------------------------------------------------------- the sham gate


def test_the_sham_gate_passes_on_the_release_figures_and_fails_when_the_judge_moves() -> None:
    assert sham_gate(0, 40, 0)["passed"] is True  # release: 0 clean wins, 40 ties, 0 sham wins
    assert sham_gate(1, 39, 0)["passed"] is False
    assert sham_gate(0, 39, 1)["passed"] is False
    assert sham_gate(5, 30, 5)["passed"] is False  # balanced but moving: still moving
    assert sham_gate(0, 0, 0)["passed"] is False
    # A stated tolerance: decisive ≤ floor(tolerance × ordered).
    assert sham_gate(1, 38, 1, tolerance=0.05)["passed"] is True  # 2 ≤ floor(2.0)
    assert sham_gate(2, 37, 1, tolerance=0.05)["passed"] is False  # 3 > 2


def test_a_judge_that_moves_on_shams_fails_the_gate_whatever_the_subtle_verdicts() -> None:
    rng = np.random.default_rng(4)
    rows = []
    for c in range(20):
        for order in ("original", "reverse"):
            rows.append((f"c{c}", "subtle", "falsifiability", order, "clean"))
            rows.append((f"c{c}", "sham", "falsifiability", order, rng.choice(["clean", "variant", "tie"], p=[0.3, 0.3, 0.4])))
    section = subtle_section(verdict_frame(rows), replicates=500)["falsifiability"]
    assert section["sham_gate"]["passed"] is False
    assert section["sham_gate"]["clean_wins"] + section["sham_gate"]["sham_wins"] > 0


def test_release_like_figures_clear_40_of_40_and_a_positive_adjusted_ci() -> None:
    rows = []
    rng = np.random.default_rng(0)
    for target in ("grounding", "decisive_metric", "falsifiability"):
        for c in range(20):
            for order in ("original", "reverse"):
                rows.append((f"{target}{c}", "clear", target, order, "clean"))
                rows.append((f"{target}{c}", "subtle", target, order, "clean" if rng.random() < 0.6 else "tie"))
                rows.append((f"{target}{c}", "sham", target, order, "tie"))
    doc = controls_document(verdict_frame(rows), replicates=2000, seed=1)
    for target in ("grounding", "decisive_metric", "falsifiability"):
        assert (doc["clear"][target]["clean_wins"], doc["clear"][target]["ordered"]) == (40, 40)
        gate = doc["subtle"][target]["sham_gate"]
        assert (gate["clean_wins"], gate["ties"], gate["sham_wins"], gate["passed"]) == (0, 40, 0, True)
        assert doc["subtle"][target]["adjusted"]["ci"][0] > 0


# --------------------------------------------------------------------------- properties


def test_adjusted_is_zero_with_a_zero_width_ci_when_subtle_and_sham_verdicts_are_identical() -> None:
    rng = np.random.default_rng(9)
    rows = []
    for c in range(15):
        for order in ("original", "reverse"):
            winner = rng.choice(["clean", "variant", "tie"])
            rows += [(f"c{c}", "subtle", "grounding", order, winner), (f"c{c}", "sham", "grounding", order, winner)]
    section = subtle_section(verdict_frame(rows), replicates=1000)["grounding"]
    assert section["adjusted"]["value"] == 0.0
    assert section["adjusted"]["ci"] == [0.0, 0.0]  # subtle and sham travel together in every resample
    assert section["p_clean_subtle"] == section["p_clean_sham"]


def test_swapping_clean_and_variant_negates_the_falsifier_preference() -> None:
    rng = np.random.default_rng(2)
    rows = [
        (f"c{c}", "falsifier_off", None, o, rng.choice(["clean", "variant", "tie"]))
        for c in range(12)
        for o in ("original", "reverse")
    ]
    swapped = [(c, k, t, o, {"clean": "variant", "variant": "clean"}.get(w, w)) for c, k, t, o, w in rows]
    a = falsifier_section(verdict_frame(rows), seed=5)
    b = falsifier_section(verdict_frame(swapped), seed=5)
    assert b["preference"]["value"] == pytest.approx(-a["preference"]["value"])
    assert b["preference"]["ci"] == pytest.approx([-a["preference"]["ci"][1], -a["preference"]["ci"][0]])
    assert (a["filled_wins"], a["empty_wins"]) == (b["empty_wins"], b["filled_wins"])


def test_a_rendering_blind_judge_never_moves() -> None:
    # Ties, or the first-shown side always winning (position bias), never depend on which side is prose.
    rows = (
        both("a", "rendering", None, "tie", "tie")
        + both("b", "rendering", None, "clean", "variant")
        + both("c", "rendering", None, "variant", "clean")
    )
    result = rendering_section(verdict_frame(rows))
    assert (result["pairs"], result["same_verdict"], result["flips"]) == (3, 3, 0)


def test_bad_input_is_refused_with_the_column_named() -> None:
    good = both("a", "naive", None, "clean", "clean")
    with pytest.raises(ValueError, match="winner"):
        naive_section(verdict_frame([("a", "naive", None, "original", "A")]))
    with pytest.raises(ValueError, match="need a target"):
        naive_section(verdict_frame([("a", "clear", None, "original", "clean")]))
    with pytest.raises(ValueError, match="only clear, subtle and sham rows have a target"):
        naive_section(verdict_frame([("a", "naive", "grounding", "original", "clean")]))
    with pytest.raises(ValueError, match="more than once"):
        naive_section(verdict_frame(good + good))
    with pytest.raises(ValueError, match="0 to 4"):
        dimension_audit(
            pd.DataFrame(
                [("a", "clear", "grounding", "original", "grounding", 5, 1)],
                columns=["case", "kind", "target", "order", "dimension", "clean", "variant"],
            )
        )


# --------------------------------------------------------------------------- CIs against scipy's bootstrap


def test_target_drop_ci_matches_scipy_percentile_bootstrap() -> None:
    rng = np.random.default_rng(11)
    rows = []
    per_case = []
    for c in range(30):
        drops = rng.integers(-1, 5, size=2)  # clean − variant, one per order
        per_case.append(drops.mean())
        for order, drop in zip(("original", "reverse"), drops, strict=True):
            variant = int(rng.integers(0, 5 - max(drop, 0))) if drop >= 0 else 4
            rows.append((f"c{c}", "clear", "decisive_metric", order, "decisive_metric", variant + drop, variant))
    scores = pd.DataFrame(rows, columns=["case", "kind", "target", "order", "dimension", "clean", "variant"])
    verdicts = verdict_frame(
        [(f"c{c}", "clear", "decisive_metric", o, "clean") for c in range(30) for o in ("original", "reverse")]
    )
    from arena.stats.controls import clear_section

    ours = clear_section(verdicts, scores, replicates=20_000, seed=0)["decisive_metric"]["target_drop"]
    # With two judgments per case, the ratio of sums is the mean of per-case means: scipy resamples those.
    ref = sps.bootstrap((np.array(per_case),), np.mean, method="percentile", n_resamples=20_000, rng=np.random.default_rng(1))
    assert ours["mean"] == pytest.approx(np.mean(per_case))
    # Monte Carlo error of a 2.5% endpoint at 20,000 resamples is about 0.01 here (standard error of the mean ≈ 0.2).
    assert ours["ci"] == pytest.approx([ref.confidence_interval.low, ref.confidence_interval.high], abs=0.03)


def test_sham_adjusted_ci_matches_scipy_paired_bootstrap() -> None:
    rng = np.random.default_rng(12)
    rows, subtle_rate, sham_rate = [], [], []
    for c in range(25):
        s = rng.choice(["clean", "variant", "tie"], size=2, p=[0.6, 0.1, 0.3])
        h = rng.choice(["clean", "variant", "tie"], size=2, p=[0.15, 0.15, 0.7])
        subtle_rate.append(np.mean(s == "clean"))
        sham_rate.append(np.mean(h == "clean"))
        for i, order in enumerate(("original", "reverse")):
            rows += [(f"c{c}", "subtle", "grounding", order, s[i]), (f"c{c}", "sham", "grounding", order, h[i])]
    ours = subtle_section(verdict_frame(rows), replicates=20_000, seed=0)["grounding"]["adjusted"]
    ref = sps.bootstrap(
        (np.array(subtle_rate), np.array(sham_rate)),
        lambda s, h, axis=-1: np.mean(s, axis=axis) - np.mean(h, axis=axis),
        paired=True,
        method="percentile",
        n_resamples=20_000,
        rng=np.random.default_rng(2),
    )
    assert ours["value"] == pytest.approx(np.mean(subtle_rate) - np.mean(sham_rate))
    assert ours["ci"] == pytest.approx([ref.confidence_interval.low, ref.confidence_interval.high], abs=0.03)
