"""``debias`` / ``debias_coded`` (issue 25, item 5: labels hashed once per run of equal neighbours, matches as slots of
a dense integer key, the frame built without copies) against a plain pandas reference written here: the ordered
verdicts grouped by (domain, case, first, second, order), unstacked into the two orders and combined row by row.

Random frames with ties, one-order matches, several domains, case names shared by domains, and three row layouts
(shuffled, grouped by match, grouped by order: the runs of equal labels the fast path relies on, or none) and three
column types (pandas' ``str``, plain ``object``, ``category``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.stats.hypoarena import VERDICT_COLUMNS, debias, encode_domain
from arena.stats.hypoarena_verdicts import debias_coded

#: The five-level scale (PROTOCOL.md §2), written out here rather than read from the code under test.
SHARES = {"A>>B": 1.0, "A>B": 0.75, "A=B": 0.5, "B>A": 0.25, "B>>A": 0.0}
KEY = ["domain", "case", "first", "second"]
MODELS = ["m0", "m10", "m2", "Zed", "alpha", "b-3", "GPT 5.2"]
DOMAINS = ["zeta", "alpha", "mid", "Ops"]
# database=None: no example database written into the working tree; derandomize keeps CI runs reproducible.
SETTINGS = settings(
    max_examples=150, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def reference_debias(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The debiased matches the obvious way: first's share per ordered verdict, one column per order, sorted by key."""
    v = verdicts.astype(object)
    shown_a = v["verdict"].map(SHARES).astype(float)
    v = v.assign(first_share=np.where(v["order"] == "reverse", 1.0 - shown_a, shown_a))
    wide = v.groupby([*KEY, "order"], sort=True)["first_share"].first().unstack("order")
    wide = wide.reindex(columns=["original", "reverse"]).reset_index()
    o, r = wide["original"].to_numpy(float), wide["reverse"].to_numpy(float)
    both = ~np.isnan(o) & ~np.isnan(r)
    out = wide[KEY].copy()
    out["share_original"], out["share_reverse"] = o, r
    out["share"] = np.where(both, (o + r) / 2.0, np.where(np.isnan(o), r, o))
    out["orders"] = np.where(both, 2, 1)
    out["one_order"] = ~both
    po, pr = np.sign(o - 0.5), np.sign(r - 0.5)
    out["consistent"] = [bool(a == b) if t else pd.NA for a, b, t in zip(po, pr, both, strict=True)]
    out["conflict"] = [bool(a * b < 0) if t else pd.NA for a, b, t in zip(po, pr, both, strict=True)]
    return out


def assert_same_matches(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Every column of ``debias``'s frame equal to the reference's, floats exactly, <NA> at the same rows."""
    assert len(got) == len(want), f"debias gave {len(got)} matches, the reference {len(want)}"
    for col in KEY:
        assert got[col].astype(object).tolist() == want[col].tolist(), f"column {col!r} differs from the reference"
    for col in ("share_original", "share_reverse", "share"):
        np.testing.assert_array_equal(got[col].to_numpy(float), want[col].to_numpy(float), err_msg=f"column {col!r}")
    for col in ("orders", "one_order"):
        assert got[col].tolist() == want[col].tolist(), f"column {col!r} differs from the reference"
    for col in ("consistent", "conflict"):
        assert got[col].isna().tolist() == want[col].isna().tolist(), f"<NA> rows of {col!r} differ"
        assert got[col].dropna().tolist() == want[col].dropna().tolist(), f"column {col!r} differs from the reference"


@st.composite
def verdict_frames(draw: st.DrawFn) -> pd.DataFrame:
    """Ordered verdicts of random matches: each (domain, case, pair of models) in one fixed orientation, judged in
    one or both orders; case names repeat across domains; laid out and typed at random."""
    domains = draw(st.lists(st.sampled_from(DOMAINS), min_size=1, max_size=3, unique=True))
    models = draw(st.lists(st.sampled_from(MODELS), min_size=2, max_size=5, unique=True))
    pairs = [(i, j) for i in range(len(models)) for j in range(i + 1, len(models))]
    rows = []
    for dom in domains:
        for c in range(draw(st.integers(1, 4))):
            for i, j in draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=6, unique=True)):
                first, second = (models[i], models[j]) if draw(st.booleans()) else (models[j], models[i])
                for order in draw(st.sampled_from([("original",), ("reverse",), ("original", "reverse")])):
                    rows.append((dom, f"case{c}", first, second, order, draw(st.sampled_from(list(SHARES)))))
    frame = pd.DataFrame(rows, columns=VERDICT_COLUMNS)
    layout = draw(st.sampled_from(["shuffled", "by match", "by order"]))
    if layout == "shuffled":
        frame = frame.sample(frac=1.0, random_state=draw(st.integers(0, 2**16))).reset_index(drop=True)
    elif layout == "by order":
        frame = frame.sort_values("order", kind="stable").reset_index(drop=True)
    kind = draw(st.sampled_from(["str", "object", "category"]))
    return frame.astype(object if kind == "object" else kind)


@SETTINGS
@given(verdict_frames())
def test_debias_equals_the_plain_pandas_reference(verdicts: pd.DataFrame) -> None:
    assert_same_matches(debias(verdicts), reference_debias(verdicts))


@SETTINGS
@given(verdict_frames())
def test_the_codes_name_the_frame_s_labels_in_sorted_order(verdicts: pd.DataFrame) -> None:
    coded = debias_coded(verdicts)
    for codes, uniques, col in (
        (coded.domain, coded.domains, "domain"),
        (coded.case, coded.cases, "case"),
        (coded.first, coded.models, "first"),
        (coded.second, coded.models, "second"),
    ):
        assert list(uniques) == sorted(uniques), f"the {col} uniques are not sorted: {list(uniques)}"
        assert np.asarray(uniques, dtype=object)[codes].tolist() == coded.frame[col].astype(object).tolist(), col


@SETTINGS
@given(verdict_frames())
def test_the_encoded_columns_are_distinct_in_lexicographic_order_and_add_up_to_the_domain_counts(verdicts: pd.DataFrame) -> None:
    """``encode_domain``'s distinct contribution columns (what ``np.unique(table, axis=1)`` gives): no column twice,
    sorted case by case, and expanded back they add up to the domain's win, tie and match counts, which are
    counted here with pandas from the debiased matches."""
    matches = debias(verdicts)
    models = sorted(set(matches["first"].astype(object)) | set(matches["second"].astype(object)))
    for dom, rows in matches.groupby(matches["domain"].astype(object)):
        enc = encode_domain(dom, rows, models)
        columns = [tuple(c) for c in np.asarray(enc.contrib, dtype=np.float64).T]
        assert columns == sorted(set(columns)), f"domain {dom!r}: columns repeated or not in lexicographic order"
        local = {models[g]: i for i, g in enumerate(enc.models)}
        f, sec = rows["first"].astype(object).map(local), rows["second"].astype(object).map(local)
        # A share s of first splits into a win 2s − 1 (s ≥ ½) or a loss 1 − 2s (s ≤ ½), and a tie for the rest.
        share = rows["share"].to_numpy(float)
        win, loss = np.maximum(0.0, 2 * share - 1), np.maximum(0.0, 1 - 2 * share)
        counted = pd.DataFrame(
            {"lo": np.minimum(f, sec), "hi": np.maximum(f, sec), "tie": 1.0 - win - loss, "win_lo": np.where(f < sec, win, loss)}
        )
        ii, jj = np.triu_indices(enc.k, 1)
        per_pair = counted.groupby(["lo", "hi"]).agg(w=("win_lo", "sum"), t=("tie", "sum"), n=("tie", "size"))
        per_pair = per_pair.reindex(list(zip(ii, jj, strict=True)), fill_value=0)
        totals = np.asarray(enc.contrib[:, enc.expand], dtype=np.float64).sum(axis=0)
        p = len(ii)
        np.testing.assert_array_equal(totals[2 * p :], per_pair["n"].to_numpy(float), err_msg=f"matches per pair, {dom!r}")
        np.testing.assert_array_equal(totals[p : 2 * p], per_pair["t"].to_numpy(float), err_msg=f"ties per pair, {dom!r}")
        np.testing.assert_array_equal(totals[:p], per_pair["w"].to_numpy(float), err_msg=f"wins of lo per pair, {dom!r}")


def test_a_key_space_too_large_to_index_is_renumbered_with_the_same_result() -> None:
    """Hundreds of models: (case, first, second) slots far outnumber the rows, so the keys are hashed instead."""
    rng = np.random.default_rng(5)
    rows = []
    for dom in ("d1", "d0"):
        for c in range(2):
            for p in range(300):
                first, second = (f"m{2 * p}", f"m{2 * p + 1}") if rng.random() < 0.5 else (f"m{2 * p + 1}", f"m{2 * p}")
                for order in ("original", "reverse"):
                    if rng.random() < 0.8:
                        rows.append((dom, f"c{c}", first, second, order, list(SHARES)[rng.integers(5)]))
    verdicts = pd.DataFrame(rows, columns=VERDICT_COLUMNS).sample(frac=1.0, random_state=1)
    assert_same_matches(debias(verdicts), reference_debias(verdicts))
    flipped = verdicts.iloc[:1].assign(first=verdicts["second"].iloc[0], second=verdicts["first"].iloc[0], order="reverse")
    with pytest.raises(ValueError, match="appear in both orientations"):
        debias(pd.concat([verdicts, flipped]))


def test_a_repeated_verdict_in_a_run_of_its_match_is_named() -> None:
    rows = [("d", f"c{c}", "X", "Y", o, "A>B") for c in range(3) for o in ("original", "reverse")]
    rows.insert(4, ("d", "c1", "X", "Y", "reverse", "B>A"))
    with pytest.raises(ValueError, match="duplicate reverse verdict for match domain='d' case='c1' first='X' second='Y'"):
        debias(pd.DataFrame(rows, columns=VERDICT_COLUMNS))


@pytest.mark.parametrize("column", ["domain", "case", "first", "second"])
def test_a_missing_label_is_refused_naming_its_row(column: str) -> None:
    rows = [("d", "c1", "X", "Y", o, "A>B") for o in ("original", "reverse")]
    frame = pd.DataFrame(rows + [("d", "c2", "X", "Y", "original", "A=B")], columns=VERDICT_COLUMNS).astype(object)
    frame.loc[2, column] = None
    with pytest.raises(ValueError, match=f"row 2 has no {column}"):
        debias(frame)
