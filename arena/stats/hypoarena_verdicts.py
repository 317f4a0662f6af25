"""HypoArena verdicts (PROTOCOL.md §2): the verdict frame's contract and debiasing of a match's two orders.

Split from :mod:`arena.stats.hypoarena` (which re-exports every public name here) so that the data contract and
the one step every HypoArena statistic starts from sit apart from the fits, summaries, rubric and agreement
built on them. The small column/sort helpers live here too because every sibling module needs them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .btd import FIVE_LEVEL_SHARES

VERDICT_COLUMNS = ["domain", "case", "first", "second", "order", "verdict"]
ORDERS = ("original", "reverse")
MATCH_KEY = ["domain", "case", "first", "second"]
#: Outcome of a verdict about the shown pair, for pairwise agreement: "A" (A wins), "B", or "tie".
VERDICT_OUTCOME = {"A>>B": "A", "A>B": "A", "A=B": "tie", "B>A": "B", "B>>A": "B"}


def _sort_key(x: Any) -> tuple[str, Any]:
    """Sort key that orders mixed-type labels (by type name first), so domains and models sort deterministically."""
    return (type(x).__name__, x)


# ---------------------------------------------------------------- debiasing


def _check_columns(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Fail early, naming the missing columns, rather than with a KeyError deep inside a statistic."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the column(s) {missing}; expected at least {list(columns)}")


def _raw(values: pd.Series) -> np.ndarray:
    """A column as a numpy array, strings as a plain object array.

    pandas' string-dtype factorize costs about twice as much per row as the object-array one (it carries a
    missing-value mask through); the codes and uniques are the same.
    """
    return values.to_numpy(dtype=object) if pd.api.types.is_string_dtype(values.dtype) else values.to_numpy()


def _factorize(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes and uniques of a column (:func:`_raw`), sorted when the values sort (so outputs are in key order).

    The same as ``pd.factorize(raw, sort=True)`` (first-seen order when the values do not sort), but the sort is
    done on the few uniques and the codes are renumbered with one integer gather: pandas renumbers them with a
    take that checks every row for the missing-value code, which cost as much as hashing the labels.
    """
    codes, uniques = pd.factorize(raw, sort=False)
    codes = np.asarray(codes, dtype=np.int64)
    try:
        rank, ordered = pd.factorize(uniques, sort=True)
    except TypeError:  # mixed, unorderable values: first-seen order
        return codes, np.asarray(uniques, dtype=object)
    rank = np.asarray(rank, dtype=np.int64)
    missing = codes < 0
    codes = rank[codes]
    if missing.any():
        codes[missing] = -1
    return codes, np.asarray(ordered, dtype=object)


def _unique_first(key: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(key, return_index=True, return_inverse=True)`` for an int64 key in [0, ``space``), without a
    stable sort of every row: a key space not much larger than the rows is indexed directly, else the keys are
    hashed and only the distinct ones sorted."""
    n = len(key)
    if n and space <= 4 * n + (1 << 20) and key.min() >= 0:
        first = np.full(space, n, dtype=np.int64)
        np.minimum.at(first, key, np.arange(n, dtype=np.int64))
        present = first < n
        rank = np.cumsum(present) - 1
        return np.flatnonzero(present), first[present], rank[key]
    codes, uniques = pd.factorize(key, sort=False)
    codes = np.asarray(codes, dtype=np.int64)
    # Codes are numbered in first-seen order: a code first appears where the running maximum grows.
    grows = np.empty(len(codes), dtype=bool)
    grows[:1] = True
    grows[1:] = codes[1:] > np.maximum.accumulate(codes)[:-1]
    first_seen = np.flatnonzero(grows)
    order = np.argsort(uniques)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return np.asarray(uniques)[order], first_seen[order], rank[codes]


def _labels(values: np.ndarray, rows: np.ndarray, like: pd.Series) -> Any:  # noqa: ANN401
    """``values[rows]`` as a column of the match frame. A string column stays in ``like``'s string dtype through an
    array take: building the frame from the taken objects checked that each of them is a string, row by row."""
    if isinstance(like.dtype, pd.StringDtype):
        return pd.array(values, dtype=like.dtype).take(rows)
    return values[rows]


def _take_rows(column: pd.Series, rows: np.ndarray) -> Any:  # noqa: ANN401
    """``column``'s values at ``rows``, a string column kept in its dtype (see :func:`_labels`)."""
    if isinstance(column.dtype, pd.StringDtype):
        return column.array.take(rows)
    return column.to_numpy()[rows]


@dataclass(frozen=True)
class CodedMatches:
    """:func:`debias`'s frame and the integer codes it was built from, one entry per match (row of ``frame``).

    The HypoArena fits and summaries work on these codes, so the labels are hashed once (in :func:`debias`),
    not again per domain. Uniques are sorted when the labels sort (first-seen order otherwise), so the rows of
    ``frame`` are ordered by (domain code, case code, first code, second code) and each domain's rows are one
    contiguous block.

    Attributes:
        frame: the :func:`debias` frame.
        domain, case, first, second: (n_matches,) codes into ``domains``, ``cases`` and ``models``.
        domains, cases, models: the uniques (object arrays).
    """

    frame: pd.DataFrame
    domain: np.ndarray
    case: np.ndarray
    first: np.ndarray
    second: np.ndarray
    domains: np.ndarray
    cases: np.ndarray
    models: np.ndarray


def debias(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per match (domain, case, first, second) with ``first``'s debiased share and consistency flags.

    Preconditions:
        ``verdicts`` has :data:`VERDICT_COLUMNS`; ``verdict`` in :data:`FIVE_LEVEL_SHARES`, ``order`` in
        :data:`ORDERS`, at most one row per (match, order), and each pair of a case in one orientation only.
    Returns:
        Columns ``domain, case, first, second`` and:

        * ``share_original``: first's share in the original order (first shown as A), NaN when absent;
        * ``share_reverse``: first's share in the reverse order, 1 − (share of the shown A = second), or NaN;
        * ``share``: their mean (:func:`arena.stats.btd.debiased_share`), or the one present order's share;
        * ``orders``: 1 or 2; ``one_order``: True when only one order is present (the share is not debiased);
        * ``consistent`` (nullable boolean): both orders agree in polarity, i.e. sign(share − ½) is the same in
          both (both favour first, both favour second, or both exact ties). A tie against a win (e.g. A=B and
          A>B) is *not* consistent: the polarity differs. <NA> for one-order matches;
        * ``conflict`` (nullable boolean): the two orders favour opposite models (the strict subset of
          inconsistency that excludes tie-vs-win); <NA> for one-order matches.

        Rows are sorted by (domain, case, first, second) when those values sort.
    """
    _check_columns(verdicts, VERDICT_COLUMNS, "the verdict frame")
    if len(verdicts) == 0:
        out = pd.DataFrame(columns=[*MATCH_KEY, "share_original", "share_reverse", "share", "orders", "one_order"])
        out["consistent"] = pd.array([], dtype="boolean")
        out["conflict"] = pd.array([], dtype="boolean")
        return out
    return debias_coded(verdicts).frame


def debias_coded(verdicts: pd.DataFrame) -> CodedMatches:
    """:func:`debias` of a non-empty verdict frame, with the match codes it was built from (see :class:`CodedMatches`)."""
    _check_columns(verdicts, VERDICT_COLUMNS, "the verdict frame")
    if len(verdicts) == 0:
        raise ValueError("no verdicts to debias: the verdict frame is empty")
    # Validation and mapping work on the few distinct labels (factorize once), not on every row.
    v_code, v_uni = pd.factorize(_raw(verdicts["verdict"]))
    unknown = [v for v in v_uni if v not in FIVE_LEVEL_SHARES]
    if unknown or (v_code < 0).any():
        i = int(np.flatnonzero((v_code < 0) | np.isin(v_code, [list(v_uni).index(u) for u in unknown]))[0])
        raise ValueError(
            f"unknown verdict {verdicts['verdict'].iloc[i]!r} in row {i} (case {verdicts['case'].iloc[i]!r}); "
            f"expected one of {list(FIVE_LEVEL_SHARES)} (drop invalid verdicts before debiasing)"
        )
    o_code, o_uni = pd.factorize(_raw(verdicts["order"]))
    if any(o not in ORDERS for o in o_uni) or (o_code < 0).any():
        i = int(np.flatnonzero((o_code < 0) | np.isin(o_code, [c for c, o in enumerate(o_uni) if o not in ORDERS]))[0])
        raise ValueError(f"unknown order {verdicts['order'].iloc[i]!r} in row {i}; expected one of {list(ORDERS)}")
    share_a = np.array([FIVE_LEVEL_SHARES[v] for v in v_uni], dtype=np.float64)[v_code]
    is_rev = np.array([o == "reverse" for o in o_uni], dtype=bool)[o_code]
    d_code, d_uni = _factorize(_raw(verdicts["domain"]))
    c_code, c_uni = _factorize(_raw(verdicts["case"]))
    # One model vocabulary for both sides, so (x, y) and (y, x) can be recognised as the same pair.
    m_code, m_uni = _factorize(np.concatenate([_raw(verdicts["first"]), _raw(verdicts["second"])]))
    n = len(verdicts)
    f_code, s_code = m_code[:n], m_code[n:]
    same = f_code == s_code
    if same.any():
        i = int(np.flatnonzero(same)[0])
        raise ValueError(f"row {i} pairs model {verdicts['first'].iloc[i]!r} with itself")
    nm = len(m_uni)
    case_key = d_code * len(c_uni) + c_code
    # The (domain, case) pairs renumbered densely in the same order, so that the match key's space is about the
    # number of matches (case names are global: most (domain, case) slots are empty).
    slots = len(d_uni) * len(c_uni)
    n_case_keys, dense_case = slots, case_key
    if 0 < slots <= 4 * n and case_key.min() >= 0:
        used = np.zeros(slots, dtype=bool)
        used[case_key] = True
        n_case_keys, dense_case = int(used.sum()), (np.cumsum(used) - 1)[case_key]
    key = (dense_case * nm + f_code) * nm + s_code
    uniq, first_row, inverse = _unique_first(key, n_case_keys * nm * nm)
    n_matches = len(uniq)

    counts = np.bincount(inverse * 2 + is_rev, minlength=2 * n_matches)
    if (counts > 1).any():
        g = int(np.flatnonzero(counts > 1)[0])
        r = first_row[g // 2]
        raise ValueError(
            f"duplicate {ORDERS[g % 2]} verdict for match domain={verdicts['domain'].iloc[r]!r} "
            f"case={verdicts['case'].iloc[r]!r} first={verdicts['first'].iloc[r]!r} "
            f"second={verdicts['second'].iloc[r]!r}; keep one verdict per order"
        )
    m_first, m_second = f_code[first_row], s_code[first_row]
    unordered = (case_key[first_row] * nm + np.minimum(m_first, m_second)) * nm + np.maximum(m_first, m_second)
    by_pair = np.argsort(unordered, kind="stable")
    twice = unordered[by_pair[1:]] == unordered[by_pair[:-1]]
    if twice.any():
        r = first_row[by_pair[int(np.flatnonzero(twice)[0])]]
        raise ValueError(
            f"models {verdicts['first'].iloc[r]!r} and {verdicts['second'].iloc[r]!r} appear in both orientations "
            f"in case {verdicts['case'].iloc[r]!r} of domain {verdicts['domain'].iloc[r]!r}: (first, second) must "
            "be the match's fixed canonical orientation, not the order shown to the judge"
        )

    s_orig = np.full(n_matches, np.nan)
    s_rev = np.full(n_matches, np.nan)
    s_orig[inverse[~is_rev]] = share_a[~is_rev]
    s_rev[inverse[is_rev]] = 1.0 - share_a[is_rev]
    has_o, has_r = ~np.isnan(s_orig), ~np.isnan(s_rev)
    both = has_o & has_r
    share = np.where(both, (s_orig + s_rev) / 2.0, np.where(has_o, s_orig, s_rev))
    pol_o, pol_r = np.sign(s_orig - 0.5), np.sign(s_rev - 0.5)
    consistent = pd.array(np.where(both, pol_o == pol_r, False), dtype="boolean")
    consistent[~both] = pd.NA
    conflict = pd.array(np.where(both, pol_o * pol_r < 0, False), dtype="boolean")
    conflict[~both] = pd.NA
    frame = pd.DataFrame(
        {
            "domain": _take_rows(verdicts["domain"], first_row),
            "case": _take_rows(verdicts["case"], first_row),
            "first": _labels(m_uni, m_first, verdicts["first"]),
            "second": _labels(m_uni, m_second, verdicts["second"]),
            "share_original": s_orig,
            "share_reverse": s_rev,
            "share": share,
            "orders": both.astype(np.int64) + 1,
            "one_order": ~both,
            "consistent": consistent,
            "conflict": conflict,
        }
    )
    return CodedMatches(
        frame, d_code[first_row], c_code[first_row], m_first, m_second, np.asarray(d_uni), np.asarray(c_uni), m_uni
    )
