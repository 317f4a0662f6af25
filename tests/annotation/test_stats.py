"""Agreement statistics on small hand-made studies, with expected values computed by hand."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest

from annotation import stats
from annotation.stats import NAIVE, NO_MAJORITY, TIE
from arena.stats import fit_bt

INVALID = stats.INVALID
DIMS = stats.DIMENSIONS

# Items: three models; i3 is order-sensitive for the judge (no judge winner); c1 is a hidden control.
ITEMS = pd.DataFrame(
    [
        {"item": "i1", "control": False, "model_1": "Alpha", "model_2": "Beta", "judge_winner": "Alpha"},
        {"item": "i2", "control": False, "model_1": "Alpha", "model_2": "Gamma", "judge_winner": "Alpha"},
        {"item": "i3", "control": False, "model_1": "Beta", "model_2": "Gamma", "judge_winner": None},
        {"item": "i4", "control": False, "model_1": "Beta", "model_2": "Gamma", "judge_winner": "Beta"},
        {"item": "c1", "control": True, "model_1": "Alpha", "model_2": NAIVE, "judge_winner": None},
    ]
)
WINNERS = {
    "i1": {"x": "Alpha", "y": "Alpha", "z": "Beta"},
    "i2": {"x": "Gamma", "y": "Gamma", "z": TIE},
    "i3": {"x": "Beta", "y": TIE, "z": "Gamma"},
    "i4": {"x": "Beta", "y": "Beta", "z": INVALID},
    "c1": {"x": "Alpha", "y": "Alpha", "z": NAIVE},
}
SCREENING = {
    "i1": ["coherent", "coherent", "coherent"],
    "i2": ["coherent", "coherent", "partly"],
    "i3": ["incoherent", "partly", "partly"],
    "i4": ["coherent", "coherent", "coherent"],
    "c1": ["incoherent", "incoherent", "partly"],
}
# Dimension scores per (item, annotator): (first side, second side), the same on every dimension but one.
SCORES = {
    ("i1", "x"): (3, 1),
    ("i1", "y"): (3, 2),
    ("i1", "z"): (2, 3),
    ("i2", "x"): (1, 3),
    ("i2", "y"): (2, 3),
    ("i2", "z"): (2, 2),
    ("i3", "x"): (3, 2),
    ("i3", "y"): (2, 2),
    ("i3", "z"): (1, 3),
    ("i4", "x"): (3, 1),
    ("i4", "y"): (3, 1),
    ("i4", "z"): (1, 1),
    ("c1", "x"): (3, 1),
    ("c1", "y"): (3, 1),
    ("c1", "z"): (1, 3),
}


def labels_frame(extra: list[dict] | None = None) -> pd.DataFrame:
    rows = []
    items = ITEMS.set_index("item")
    for item, by in WINNERS.items():
        for n, (annotator, winner) in enumerate(by.items()):
            s1, s2 = SCORES[(item, annotator)]
            row = {
                "item": item,
                "annotator": annotator,
                "control": bool(items.loc[item, "control"]),
                "model_1": items.loc[item, "model_1"],
                "model_2": items.loc[item, "model_2"],
                "winner": winner,
                "screening": SCREENING[item][n],
                "over_time": False,
            }
            for d in DIMS:
                row[f"s1_{d}"] = s1
                row[f"s2_{d}"] = s2
            # One dimension disagrees differently, so the per-dimension alphas are not all equal.
            row["s1_falsifiability"] = 2 if annotator == "x" else s1
            rows.append(row)
    frame = pd.DataFrame(rows + (extra or []), columns=stats.LABEL_COLUMNS)
    return frame


def over_time_label() -> dict:
    row = {
        "item": "i1",
        "annotator": "w",
        "control": False,
        "model_1": "Alpha",
        "model_2": "Beta",
        "winner": "Beta",
        "screening": "incoherent",
        "over_time": True,
    }
    return row | {f"s{s}_{d}": 1 for d in DIMS for s in (1, 2)}


def test_winner_alpha_matches_the_hand_computed_coincidence_matrix() -> None:
    # Units (first/second/TIE/INVALID): i1 F F S · i2 S S T · i3 F T S · i4 F F I.
    # o_FF = 2, o_SS = 1, o_FS = o_SF = 1.5, o_ST = o_TS = 1.5, o_FT = o_TF = .5, o_FI = o_IF = 1;
    # n_F = 5, n_S = 4, n_T = 2, n_I = 1, n = 12; α = 1 − 11·9 / (144 − 46) = −1/98.
    assert stats.winner_alpha(labels_frame()) == pytest.approx(-1 / 98)


def test_winner_alpha_matches_the_krippendorff_package() -> None:
    code = {"F": 0, "S": 1, "T": 2, "I": 3}
    data = [[code[v] for v in coder] for coder in ("FSFF", "FSTF", "STSI")]  # coders x, y, z over units i1..i4
    assert stats.winner_alpha(labels_frame()) == pytest.approx(
        krippendorff.alpha(reliability_data=np.array(data, dtype=float), level_of_measurement="nominal")
    )


def test_screening_alpha_is_nominal_over_real_items() -> None:
    # C C C · C C P · I P P · C C C: o_CC = 7, o_CP = o_PC = 1, o_PP = 1, o_IP = o_PI = 1; n = (8, 3, 1);
    # α = 1 − 11·4 / (144 − 74) = 26/70. The control's screening (c1) is not counted.
    assert stats.screening_alpha(labels_frame()) == pytest.approx(26 / 70)


def test_dimension_alpha_is_ordinal_pooled_and_per_dimension() -> None:
    labels = labels_frame()
    real = labels[~labels["control"]]
    coders = ["x", "y", "z"]
    pooled_units = [(it, side, d) for it in ("i1", "i2", "i3", "i4") for side in (1, 2) for d in DIMS]
    lookup = {(r["annotator"], r["item"]): r for r in real.to_dict("records")}
    table = [[lookup[(c, it)][f"s{side}_{d}"] for it, side, d in pooled_units] for c in coders]
    expected = krippendorff.alpha(
        reliability_data=np.array(table, dtype=float), level_of_measurement="ordinal", value_domain=[1, 2, 3]
    )
    result = stats.dimension_alpha(labels)
    assert result["pooled"] == pytest.approx(expected)
    per_units = [(it, side) for it in ("i1", "i2", "i3", "i4") for side in (1, 2)]
    for d in DIMS:
        table = [[lookup[(c, it)][f"s{side}_{d}"] for it, side in per_units] for c in coders]
        expected = krippendorff.alpha(
            reliability_data=np.array(table, dtype=float), level_of_measurement="ordinal", value_domain=[1, 2, 3]
        )
        assert result["per_dimension"][d] == pytest.approx(expected)
    assert result["per_dimension"]["falsifiability"] != pytest.approx(result["per_dimension"]["grounding"])


def test_alpha_is_none_when_undefined() -> None:
    one_coder = labels_frame()
    one_coder = one_coder[one_coder["annotator"] == "x"]
    assert stats.winner_alpha(one_coder) is None
    assert stats.winner_alpha(stats.empty_labels()) is None


def test_majority_labels_need_a_strict_majority() -> None:
    assert stats.majority_labels(labels_frame()) == {"c1": "Alpha", "i1": "Alpha", "i2": "Gamma", "i3": NO_MAJORITY, "i4": "Beta"}


def test_naive_detection_counts_every_label_on_controls() -> None:
    assert stats.naive_detection(labels_frame()) == {"detected": 2, "total": 3, "rate": pytest.approx(2 / 3)}


def test_judge_agreement_on_decisive_order_stable_cases() -> None:
    # i1 Alpha = judge Alpha; i2 Gamma ≠ judge Alpha; i3 has no judge winner; i4 Beta = judge Beta.
    result = stats.judge_agreement(labels_frame(), ITEMS, replicates=2000, seed=1)
    assert (result["agree"], result["decisive"]) == (2, 3)
    assert result["rate"] == pytest.approx(2 / 3)
    lo, hi = result["ci"]
    assert 0.0 <= lo < 2 / 3 < hi <= 1.0
    assert stats.judge_agreement(labels_frame(), ITEMS, replicates=2000, seed=1)["ci"] == result["ci"]  # seeded


def test_judge_agreement_ci_collapses_when_every_case_agrees() -> None:
    labels = labels_frame()
    labels = labels[labels["item"].isin(["i1", "i4"])]
    result = stats.judge_agreement(labels, ITEMS)
    assert (result["agree"], result["decisive"], result["ci"]) == (2, 2, [1.0, 1.0])


def test_human_win_rate_counts_ties_as_half_and_drops_invalid() -> None:
    # Alpha: i1 (1, 1, 0) + i2 (0, 0, .5) = 2.5/6; Beta: i1 (0, 0, 1) + i3 (1, .5, 0) + i4 (1, 1) = 4.5/8;
    # Gamma: i2 (1, 1, .5) + i3 (0, .5, 1) + i4 (0, 0) = 4/8. Controls never count.
    assert stats.human_win_rate(labels_frame()) == {
        "Beta": pytest.approx(4.5 / 8),
        "Gamma": pytest.approx(0.5),
        "Alpha": pytest.approx(2.5 / 6),
    }


def test_over_time_labels_are_excluded_by_default() -> None:
    labels = labels_frame([over_time_label()])
    doc = stats.agreement_document(labels, ITEMS, judge_order=["Alpha", "Beta", "Gamma"], replicates=200)
    assert doc["counts"]["over_time"] == 1 and doc["counts"]["counted"] == 15
    assert doc["majority"]["labels"]["i1"] == "Alpha"
    assert doc["krippendorff_alpha"]["winner"] == pytest.approx(-1 / 98)
    included = stats.agreement_document(
        labels, ITEMS, judge_order=["Alpha", "Beta", "Gamma"], include_over_time=True, replicates=200
    )
    assert included["majority"]["labels"]["i1"] == NO_MAJORITY  # Alpha 2, Beta 2
    assert included["judge_agreement"]["decisive"] == 2


def test_human_bt_fits_the_per_label_win_matrix() -> None:
    # Wins: A>B 2, B>A 1; G>A 2 + .5, A>G .5; B>G 1 + .5 + 2, G>B 1 + .5.
    w = np.array([[0, 2, 0.5], [1, 0, 3.5], [2.5, 1.5, 0]])
    expected = fit_bt(w, pseudo_count=0.5).theta
    result = stats.human_bt(labels_frame(), judge_order=["Alpha", "Beta", "Gamma"], replicates=300, seed=3)
    assert result["strengths"] == {
        "Alpha": pytest.approx(expected[0]),
        "Beta": pytest.approx(expected[1]),
        "Gamma": pytest.approx(expected[2]),
    }
    assert result["models"] == sorted(result["strengths"], key=lambda m: -result["strengths"][m])
    assert 0.0 <= result["within_one_inversion"] <= 1.0


def _unanimous(order: list[str], n_per_pair: int = 4) -> pd.DataFrame:
    rows = []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            for k in range(n_per_pair):
                for annotator in ("x", "y", "z"):
                    row = {
                        "item": f"{a}-{b}-{k}",
                        "annotator": annotator,
                        "control": False,
                        "model_1": a,
                        "model_2": b,
                        "winner": a,
                        "screening": "coherent",
                        "over_time": False,
                    }
                    rows.append(row | {f"s{s}_{d}": 2 for d in DIMS for s in (1, 2)})
    return pd.DataFrame(rows, columns=stats.LABEL_COLUMNS)


def test_within_one_inversion_is_one_when_humans_agree_with_the_judge_and_zero_when_reversed() -> None:
    models = ["Alpha", "Beta", "Gamma"]
    agree = stats.human_bt(_unanimous(models), judge_order=models, replicates=200)
    assert agree["within_one_inversion"] == 1.0 and agree["kendall_distance_to_judge"] == 0
    reversed_ = stats.human_bt(_unanimous(models[::-1]), judge_order=models, replicates=200)
    # Fully reversed: three inversions, in every replicate that keeps the order.
    assert reversed_["kendall_distance_to_judge"] == 3
    assert reversed_["within_one_inversion"] < 0.05


def test_kendall_distance_counts_discordant_pairs() -> None:
    assert stats.kendall_distance([0, 1, 2, 3], [0, 1, 2, 3]) == 0
    assert stats.kendall_distance([1, 0, 2, 3], [0, 1, 2, 3]) == 1
    assert stats.kendall_distance([3, 2, 1, 0], [0, 1, 2, 3]) == 6


def test_leave_one_annotator_out() -> None:
    loo = stats.leave_one_out(labels_frame(), ITEMS, replicates=200)
    assert sorted(loo) == ["x", "y", "z"]
    without_z = loo["z"]
    # Units i1 F F · i2 S S · i3 F T · i4 F F: o_FF = 4, o_SS = 2, o_FT = o_TF = 1; n = (5, 2, 1);
    # α = 1 − 7·2 / (64 − 30) = 20/34.
    assert without_z["winner_alpha"] == pytest.approx(20 / 34)
    assert (without_z["judge_agreement"]["agree"], without_z["judge_agreement"]["decisive"]) == (2, 3)
    assert without_z["human_win_rate"] == {
        "Beta": pytest.approx(3.5 / 6),
        "Alpha": pytest.approx(0.5),
        "Gamma": pytest.approx(2.5 / 6),
    }


def test_agreement_document_has_the_api_keys() -> None:
    doc = stats.agreement_document(labels_frame(), ITEMS, judge_order=["Alpha", "Beta", "Gamma"], replicates=200)
    assert {"winner", "screening", "dimensions"} <= set(doc["krippendorff_alpha"])
    for key in ("naive_detection", "judge_agreement", "human_bt", "within_one_inversion", "human_win_rate", "leave_one_out"):
        assert key in doc
    assert {"agree", "decisive", "ci"} <= set(doc["judge_agreement"])
    assert doc["majority"]["counts"] == {"first": 3, "second": 1, NO_MAJORITY: 1}  # c1, i1, i4 · i2 · i3


def test_an_empty_study_has_no_figures() -> None:
    doc = stats.agreement_document(stats.empty_labels(), pd.DataFrame(columns=stats.ITEM_COLUMNS), judge_order=[])
    assert doc["krippendorff_alpha"]["winner"] is None
    assert doc["human_bt"] is None and doc["within_one_inversion"] is None
    assert doc["judge_agreement"]["decisive"] == 0 and doc["judge_agreement"]["ci"] is None
    assert doc["human_win_rate"] == {} and doc["leave_one_out"] == {}


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: observers A–D, units 1–12,
# values 1–5 with missing data. Published: nominal 0.743, ordinal 0.815, interval 0.849.
K2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_long_format_alpha_reproduces_the_published_worked_example(level: str, published: float) -> None:
    rows = [
        {"item": f"u{u:02d}", "annotator": coder, "value": v}
        for coder, values in K2011.items()
        for u, v in enumerate(values, start=1)
        if v is not None
    ]
    result = stats.long_alpha(pd.DataFrame(rows), unit="item", value="value", level=level, domain=[1, 2, 3, 4, 5])
    assert round(result, 3) == published
    table = np.array([[np.nan if v is None else v for v in values] for values in K2011.values()], dtype=float)
    assert result == pytest.approx(
        krippendorff.alpha(reliability_data=table, level_of_measurement=level, value_domain=[1, 2, 3, 4, 5])
    )
