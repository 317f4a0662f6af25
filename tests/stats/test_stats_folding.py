"""Folding and counts on a small hand-computed case set (expected values worked out by hand below)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.stats import (
    case_counts,
    cases_from_release_rows,
    encode_cases,
    folded_head_to_head,
    ordered_head_to_head,
    side_bias,
    stable_wlt,
    win_matrix,
)

A, B, C = "A m", "B", "C"  # "A m" has a space on purpose: names are arbitrary strings


def small_cases() -> pd.DataFrame:
    """Six canonical pairs.

    c1  A m vs B : A m, A m        -> stable, A m wins
    c2  A m vs B : B,   A m        -> sensitive (winner flips)
    c3  B vs C   : TIE, C          -> sensitive (one order says TIE)
    c4  C vs A m : C,   C          -> stable, C wins
    c5  B vs C   : B,   None       -> incomplete (excluded everywhere)
    c6  A m vs C : TIE, TIE        -> sensitive (both TIE)
    Shown as A in the original order: c1 A m, c2 B, c3 unknown, c4 A m, c5 B, c6 C.
    """
    rows = [
        ("c1", "x1", "b1", A, B, A, A, A),
        ("c2", "x1", "b1", A, B, B, A, B),
        ("c3", "x2", "b1", B, C, "TIE", C, None),
        ("c4", "x2", "b2", C, A, C, C, A),
        ("c5", "x3", "b2", B, C, B, None, B),
        ("c6", "x3", "b2", A, C, "TIE", "TIE", C),
    ]
    return pd.DataFrame(
        rows, columns=["case", "context", "batch", "model_1", "model_2", "original", "reverse", "shown_a_original"]
    )


def test_counts() -> None:
    enc = encode_cases(small_cases())
    # stable: c1, c4; sensitive: c2, c3, c6; incomplete: c5.
    assert case_counts(enc) == {"total": 6, "stable": 2, "sensitive": 3, "incomplete": 1}


def test_stable_wlt() -> None:
    wlt = stable_wlt(encode_cases(small_cases()))
    # A m: W c1, L c4, T c2+c6.  B: L c1, T c2+c3.  C: W c4, T c3+c6.  (c5 incomplete: not counted.)
    assert wlt == {A: {"w": 1, "l": 1, "t": 2}, B: {"w": 0, "l": 1, "t": 2}, C: {"w": 1, "l": 0, "t": 2}}


def test_folded_head_to_head() -> None:
    h2h = folded_head_to_head(encode_cases(small_cases()), [A, B, C])
    assert h2h == [
        {"a": A, "b": B, "a_wins": 1, "b_wins": 0, "sensitive": 1},  # c1 stable A m; c2 sensitive
        {"a": A, "b": C, "a_wins": 0, "b_wins": 1, "sensitive": 1},  # c4 stable C; c6 sensitive
        {"a": B, "b": C, "a_wins": 0, "b_wins": 0, "sensitive": 1},  # c3 sensitive; c5 incomplete
    ]


def test_folded_head_to_head_respects_order() -> None:
    h2h = folded_head_to_head(encode_cases(small_cases()), [C, B, A])
    assert h2h[0] == {"a": C, "b": B, "a_wins": 0, "b_wins": 0, "sensitive": 1}
    assert {"a": C, "b": A, "a_wins": 1, "b_wins": 0, "sensitive": 1} in h2h


def test_ordered_head_to_head() -> None:
    h2h = ordered_head_to_head(encode_cases(small_cases()), [A, B, C])
    assert h2h == [
        {"a": A, "b": B, "a_wins": 3, "b_wins": 1, "ties": 0},  # c1: A,A  c2: B,A
        {"a": A, "b": C, "a_wins": 0, "b_wins": 2, "ties": 2},  # c4: C,C  c6: TIE,TIE
        {"a": B, "b": C, "a_wins": 0, "b_wins": 1, "ties": 1},  # c3: TIE,C
    ]


def _w(enc: object, kind: str) -> dict[tuple[str, str], float]:
    w = win_matrix(enc, kind)  # type: ignore[arg-type]
    names = enc.models  # type: ignore[attr-defined]
    return {(names[i], names[j]): float(w[i, j]) for i in range(3) for j in range(3) if i != j}


def test_win_matrices() -> None:
    enc = encode_cases(small_cases())
    # ordered: A>B 3, B>A 1; C>A 2 plus the 2 ordered ties of c6 as half each: A>C 1, C>A 3;
    #          B-C: C>B 1 plus c3's tie: B>C 0.5, C>B 1.5.
    assert _w(enc, "ordered") == {
        (A, B): 3.0,
        (B, A): 1.0,
        (A, C): 1.0,
        (C, A): 3.0,
        (B, C): 0.5,
        (C, B): 1.5,
    }
    # folded: stable = 1 win, sensitive = 0.5 each.  c1 -> A>B 1; c2 -> .5/.5; c3 -> .5/.5 (B,C);
    #         c4 -> C>A 1; c6 -> .5/.5 (A,C).
    assert _w(enc, "folded") == {
        (A, B): 1.5,
        (B, A): 0.5,
        (A, C): 0.5,
        (C, A): 1.5,
        (B, C): 0.5,
        (C, B): 0.5,
    }
    # stable only: c1 and c4.
    assert _w(enc, "stable") == {(A, B): 1.0, (B, A): 0.0, (A, C): 0.0, (C, A): 1.0, (B, C): 0.0, (C, B): 0.0}


def test_side_bias() -> None:
    sb = side_bias(encode_cases(small_cases()))
    # Known sides on complete cases c1, c2, c4, c6 (c3 unknown, c5 incomplete) -> 8 ordered rows.
    # c1: orig A side = A m wins -> A; rev A side = B, A m wins -> B.
    # c2: orig A side = B wins -> A;  rev A side = A m wins -> A.
    # c4: orig A side = A m, C wins -> B; rev A side = C wins -> A.
    # c6: TIE, TIE.
    # A wins 4, B wins 2, ties 2.  Two-sided exact binomial test of 4 of 6 at p = 1/2:
    # P(X<=2) + P(X>=4) = (1+6+15)/64 + (15+6+1)/64 = 44/64 = 0.6875.
    assert sb is not None
    assert (sb["rows"], sb["a_wins"], sb["b_wins"], sb["ties"]) == (8, 4, 2, 2)
    assert sb["a_share"] == pytest.approx(4 / 6)
    assert sb["p_value"] == pytest.approx(0.6875)


def test_side_bias_unknown_is_none() -> None:
    df = small_cases().drop(columns=["shown_a_original"])
    assert side_bias(encode_cases(df)) is None


def test_nan_is_missing() -> None:
    df = small_cases()
    df["reverse"] = df["reverse"].astype(object)
    df.loc[df["case"] == "c1", "reverse"] = np.nan
    assert case_counts(encode_cases(df))["incomplete"] == 2


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("original", "D", "neither"),
        ("model_2", A, "both"),
        ("shown_a_original", "TIE", "neither"),
    ],
)
def test_validation_errors(column: str, value: str, message: str) -> None:
    df = small_cases()
    df.loc[0, column] = value
    with pytest.raises(ValueError, match=message):
        encode_cases(df)


def test_duplicate_case_ids_rejected() -> None:
    df = small_cases()
    df.loc[1, "case"] = "c1"
    with pytest.raises(ValueError, match="unique"):
        encode_cases(df)


def test_model_named_tie_rejected() -> None:
    df = small_cases().replace({C: "TIE"})
    with pytest.raises(ValueError):
        encode_cases(df)


def test_cases_from_release_rows() -> None:
    rows = [
        {
            "pair_id": "ctx1__GPT 5.2__vs__GLM-5",
            "context_id": "ctx1",
            "batch": "b",
            "model_pair": ["GLM-5", "GPT 5.2"],
            "gemini_original_winner": "GPT 5.2",
            "gemini_reverse_winner": "GLM-5",
            "stability_label": "order-unstable",
        }
    ]
    df = cases_from_release_rows(rows)
    assert df.to_dict("records") == [
        {
            "case": "ctx1__GPT 5.2__vs__GLM-5",
            "context": "ctx1",
            "batch": "b",
            "model_1": "GLM-5",
            "model_2": "GPT 5.2",
            "original": "GPT 5.2",
            "reverse": "GLM-5",
            "shown_a_original": None,
        }
    ]
    assert case_counts(encode_cases(df)) == {"total": 1, "stable": 0, "sensitive": 1, "incomplete": 0}
