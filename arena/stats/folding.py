"""Folding of ordered pairwise verdicts into canonical cases, and the counts built on them.

Protocol (PROTOCOL.md, section 1, "Folding" and "Aggregation"): every canonical pair of two models is
judged in two presentation orders (original and reverse). The two ordered verdicts fold into one case:

* order-stable when both ordered verdicts name the same model;
* order-sensitive otherwise (the winner flips, or either order says TIE);
* incomplete (our addition) when either ordered verdict is missing or invalid: such a case is counted
  and excluded from every statistic, because the statistical unit is the canonical pair with both
  of its orders.

Everything here works on an :class:`EncodedCases` (integer codes over plain numpy arrays), built once
from the ``cases`` DataFrame by :func:`encode_cases`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: The literal verdict meaning "neither proposal is better" in an ordered judgment.
TIE = "TIE"

# Codes of an ordered verdict relative to the canonical pair (lo, hi), where lo < hi are model indices.
# Integer codes (rather than names) let every statistic below be a vectorised numpy expression.
LO = 0  #: the lower-index model of the pair won
HI = 1  #: the higher-index model of the pair won
TIE_CODE = 2  #: the ordered verdict was TIE
MISSING = -1  #: the ordered verdict is missing or invalid

REQUIRED_COLUMNS = ("case", "context", "batch", "model_1", "model_2", "original", "reverse")


@dataclass(frozen=True)
class EncodedCases:
    """Canonical cases as integer arrays (one entry per row of the input frame).

    Attributes:
        models: model names; index ``k`` in every array refers to ``models[k]``.
        case, context, batch: string ids per case (object arrays).
        lo, hi: model indices of the canonical pair, ``lo < hi``.
        original, reverse: ordered verdict codes (:data:`LO`, :data:`HI`, :data:`TIE_CODE`, :data:`MISSING`).
        shown_a: which model of the pair was shown as "A" in the original order: :data:`LO`, :data:`HI`, or
            :data:`MISSING` when unknown. The reverse order shows the other model as A.
    """

    models: tuple[str, ...]
    case: np.ndarray
    context: np.ndarray
    batch: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    original: np.ndarray
    reverse: np.ndarray
    shown_a: np.ndarray

    @property
    def n_models(self) -> int:
        """Number of models."""
        return len(self.models)

    @property
    def complete(self) -> np.ndarray:
        """Boolean mask of cases with both ordered verdicts present."""
        return (self.original != MISSING) & (self.reverse != MISSING)

    @property
    def stable(self) -> np.ndarray:
        """Boolean mask of order-stable cases (complete, same non-TIE winner in both orders)."""
        return self.complete & (self.original == self.reverse) & (self.original != TIE_CODE)

    @property
    def sensitive(self) -> np.ndarray:
        """Boolean mask of order-sensitive cases (complete and not stable)."""
        return self.complete & ~self.stable

    @property
    def folded(self) -> np.ndarray:
        """Folded outcome per case: LO / HI for a stable case, TIE_CODE for a sensitive one, MISSING if incomplete."""
        out = np.full(len(self.lo), MISSING, dtype=np.int8)
        out[self.sensitive] = TIE_CODE
        st = self.stable
        out[st] = self.original[st]
        return out

    def subset(self, mask: np.ndarray) -> EncodedCases:
        """The cases selected by a boolean mask, keeping the same model list (so indices stay comparable)."""
        return EncodedCases(
            models=self.models,
            case=self.case[mask],
            context=self.context[mask],
            batch=self.batch[mask],
            lo=self.lo[mask],
            hi=self.hi[mask],
            original=self.original[mask],
            reverse=self.reverse[mask],
            shown_a=self.shown_a[mask],
        )


def encode_cases(cases: pd.DataFrame, models: Sequence[str] | None = None) -> EncodedCases:
    """Validate a ``cases`` frame and encode it as integer arrays.

    Preconditions:
        ``cases`` has the columns ``case, context, batch, model_1, model_2, original, reverse`` and optionally
        ``shown_a_original``; one row per canonical pair; ``case`` ids unique; ``model_1 != model_2``;
        ``original``/``reverse`` each hold one of the pair's model names, the literal ``"TIE"``, or a missing
        value (None/NaN); ``shown_a_original`` holds one of the pair's names or a missing value.
        No model may be named ``"TIE"``.
    Args:
        cases: the frame described above.
        models: optional model list fixing the index order (must contain every model of the frame); by
            default the sorted set of names, so the encoding does not depend on row order.
    Returns:
        The :class:`EncodedCases`.
    Raises:
        ValueError: on a missing column, duplicated case id, invalid pair, or verdict naming a model that is
            not in the pair.
    """
    missing_cols = [c for c in REQUIRED_COLUMNS if c not in cases.columns]
    if missing_cols:
        raise ValueError(f"cases frame lacks columns {missing_cols}")
    n = len(cases)
    case_ids = np.asarray(cases["case"].astype(str).to_numpy(), dtype=object)
    if not pd.Index(case_ids).is_unique:
        raise ValueError("case ids must be unique (one row per canonical pair)")

    # Vectorised: each column is factorised once and only its (few) distinct values go through str() and
    # the name lookup; the per-row work is integer indexing. Same result as coding row by row.
    def factorised_names(column: str) -> tuple[np.ndarray, list[str]]:
        # model_1/model_2 are names even when missing (str(None) == "None"), as a row-by-row str() gives.
        codes, uniques = pd.factorize(cases[column], use_na_sentinel=False)
        return codes, [str(u) for u in uniques]

    c1, u1 = factorised_names("model_1")
    c2, u2 = factorised_names("model_2")
    names = sorted(set(u1) | set(u2))
    if models is None:
        model_list = tuple(names)
    else:
        model_list = tuple(str(m) for m in models)
        unknown = set(names) - set(model_list)
        if unknown:
            raise ValueError(f"models {sorted(unknown)} are not in the given model list")
        if len(set(model_list)) != len(model_list):
            raise ValueError("model list has duplicates")
    if TIE in model_list:
        raise ValueError(f"a model may not be named {TIE!r}: it is the tie verdict")
    model_index = pd.Index(model_list)

    def name_codes(codes: np.ndarray, uniques: list[str]) -> np.ndarray:
        return model_index.get_indexer(uniques)[codes] if len(codes) else np.zeros(0, dtype=np.int64)

    i1, i2 = name_codes(c1, u1), name_codes(c2, u2)
    lo = np.minimum(i1, i2).astype(np.int64)
    hi = np.maximum(i1, i2).astype(np.int64)
    same = i1 == i2

    def verdict_codes(column: str) -> tuple[np.ndarray, np.ndarray]:
        """(codes, bad) of a verdict column: LO/HI/TIE_CODE/MISSING per row, ``bad`` where it is invalid."""
        if column not in cases.columns:
            return np.full(n, MISSING, dtype=np.int8), np.zeros(n, dtype=bool)
        codes, uniques = pd.factorize(cases[column])  # missing values (None/NaN/NA) get code -1
        strs = [str(u) for u in uniques]
        idx = np.append(model_index.get_indexer(strs), -1)[codes]  # -1 also for a missing value
        is_tie = np.append(np.array([v == TIE for v in strs], dtype=bool), False)[codes]
        missing = codes < 0
        out = np.full(n, MISSING, dtype=np.int8)
        out[(idx == lo) & ~missing] = LO
        out[(idx == hi) & ~missing] = HI
        tie_ok = is_tie & (column != "shown_a_original")
        out[tie_ok] = TIE_CODE
        bad = ~missing & (out == MISSING)
        return out, bad

    orig, bad_o = verdict_codes("original")
    rev, bad_r = verdict_codes("reverse")
    shown, bad_s = verdict_codes("shown_a_original")
    errors = same | bad_o | bad_r | bad_s
    if errors.any():
        # Report the first offending row, and within it the first check in row order (as a loop would).
        r = int(np.argmax(errors))
        if same[r]:
            raise ValueError(f"case {case_ids[r]!r}: model_1 and model_2 are both {model_list[i1[r]]!r}")
        a, b = model_list[lo[r]], model_list[hi[r]]
        for column, bad in (("original", bad_o), ("reverse", bad_r), ("shown_a_original", bad_s)):
            if bad[r]:
                v = str(cases[column].iloc[r])
                raise ValueError(f"case {case_ids[r]!r}: {column}={v!r} is neither {a!r}, {b!r} nor {TIE!r}")

    return EncodedCases(
        models=model_list,
        case=case_ids,
        context=np.asarray(cases["context"].astype(str).to_numpy(), dtype=object),
        batch=np.asarray(cases["batch"].astype(str).to_numpy(), dtype=object),
        lo=lo,
        hi=hi,
        original=orig,
        reverse=rev,
        shown_a=shown,
    )


# --------------------------------------------------------------------------------------------------
# Release loading
# --------------------------------------------------------------------------------------------------


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file into a list of dicts (blank lines skipped)."""
    rows: list[dict[str, Any]] = []
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def cases_from_release_rows(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Build the ``cases`` frame from ``corrected_folded_pairs.jsonl`` records of the Lit2Test release.

    Preconditions:
        each row has ``pair_id``, ``context_id``, ``batch``, ``model_pair`` (two names) and
        ``gemini_original_winner`` / ``gemini_reverse_winner`` (a model name, possibly absent).
    Returns:
        A frame with columns ``case, context, batch, model_1, model_2, original, reverse, shown_a_original``;
        ``shown_a_original`` is None throughout because the release does not record the A side.
    """
    records = []
    for row in rows:
        pair = list(row["model_pair"])
        if len(pair) != 2:
            raise ValueError(f"{row.get('pair_id')!r}: model_pair must have two names")
        records.append(
            {
                "case": str(row["pair_id"]),
                "context": str(row["context_id"]),
                "batch": str(row["batch"]),
                "model_1": str(pair[0]),
                "model_2": str(pair[1]),
                "original": row.get("gemini_original_winner"),
                "reverse": row.get("gemini_reverse_winner"),
                "shown_a_original": None,
            }
        )
    columns = [*REQUIRED_COLUMNS, "shown_a_original"]
    return pd.DataFrame.from_records(records, columns=columns)


def load_release_cases(path: str | Path) -> pd.DataFrame:
    """Read ``corrected_folded_pairs.jsonl`` at ``path`` and return the ``cases`` frame."""
    return cases_from_release_rows(read_jsonl(path))


# --------------------------------------------------------------------------------------------------
# Counts
# --------------------------------------------------------------------------------------------------


def case_counts(enc: EncodedCases) -> dict[str, int]:
    """Counts of cases: total (rows), stable, sensitive, incomplete (``stable + sensitive + incomplete = total``)."""
    return {
        "total": int(len(enc.lo)),
        "stable": int(enc.stable.sum()),
        "sensitive": int(enc.sensitive.sum()),
        "incomplete": int((~enc.complete).sum()),
    }


def stable_wlt(enc: EncodedCases) -> dict[str, dict[str, int]]:
    """Stable W–L–T per model: W and L count the model's stable cases, T its sensitive cases.

    Returns ``{model: {"w", "l", "t"}}`` for every model of ``enc.models`` (zeros where it has no case).
    """
    k = enc.n_models
    st, se = enc.stable, enc.sensitive
    winner = np.where(enc.original == LO, enc.lo, enc.hi)[st]
    loser = np.where(enc.original == LO, enc.hi, enc.lo)[st]
    w = np.bincount(winner, minlength=k)
    l_ = np.bincount(loser, minlength=k)
    t = np.bincount(enc.lo[se], minlength=k) + np.bincount(enc.hi[se], minlength=k)
    return {m: {"w": int(w[i]), "l": int(l_[i]), "t": int(t[i])} for i, m in enumerate(enc.models)}


def _pair_codes(enc: EncodedCases) -> np.ndarray:
    """Each case's canonical pair as one integer, lo·K + hi."""
    return enc.lo.astype(np.int64) * enc.n_models + enc.hi.astype(np.int64)


def _pair_tally(enc: EncodedCases, values: np.ndarray, mask: np.ndarray, n_values: int) -> np.ndarray:
    """How many cases of ``mask`` have each value (0 .. n_values - 1) of ``values`` (given for those cases), per pair
    code: (K·K, n_values) integer counts."""
    k = enc.n_models
    cells = _pair_codes(enc)[mask] * n_values + values.astype(np.int64)
    return np.bincount(cells, minlength=k * k * n_values).reshape(k * k, n_values)


def _pair_order(enc: EncodedCases, order: Sequence[str] | None) -> list[tuple[int, int]]:
    """Pairs (a, b) of model indices that have at least one complete case, a before b in ``order``."""
    rank = {m: r for r, m in enumerate(order if order is not None else enc.models)}
    pos = [rank[m] for m in enc.models]
    k = enc.n_models
    seen = [divmod(int(code), k) for code in np.flatnonzero(np.bincount(_pair_codes(enc)[enc.complete], minlength=k * k))]
    pairs = [(i, j) if pos[i] < pos[j] else (j, i) for i, j in seen]
    return sorted(pairs, key=lambda p: (pos[p[0]], pos[p[1]]))


def folded_head_to_head(enc: EncodedCases, order: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Folded head-to-head per model pair: stable wins of each side and sensitive cases.

    Args:
        enc: encoded cases.
        order: model names fixing which model of a pair is "a" (the earlier one) and the list order;
            default ``enc.models``.
    Returns:
        ``[{"a", "b", "a_wins", "b_wins", "sensitive"}]`` over pairs with at least one complete case.
    """
    st = enc.stable
    # Per pair code: stable LO wins, stable HI wins, sensitive cases (one count pass instead of a mask per pair).
    outcome = np.where(st & (enc.original == LO), 0, np.where(st, 1, 2))
    tally = _pair_tally(enc, outcome[enc.complete], enc.complete, 3)
    out = []
    for a, b in _pair_order(enc, order):
        i, j = min(a, b), max(a, b)
        lo_w, hi_w, sensitive = (int(x) for x in tally[i * enc.n_models + j])
        a_w, b_w = (lo_w, hi_w) if a == i else (hi_w, lo_w)
        out.append({"a": enc.models[a], "b": enc.models[b], "a_wins": a_w, "b_wins": b_w, "sensitive": sensitive})
    return out


def ordered_head_to_head(enc: EncodedCases, order: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Ordered head-to-head per model pair over the ordered verdicts (two per complete case).

    Returns ``[{"a", "b", "a_wins", "b_wins", "ties"}]``; ``a_wins + b_wins + ties = 2 × complete cases``.
    """
    c = enc.complete
    # Per pair code: ordered verdicts LO, HI, TIE_CODE of both orders (one count pass instead of a mask per pair).
    tally = _pair_tally(enc, enc.original[c], c, 3) + _pair_tally(enc, enc.reverse[c], c, 3)
    out = []
    for a, b in _pair_order(enc, order):
        i, j = min(a, b), max(a, b)
        lo_w, hi_w, ties = (int(x) for x in tally[i * enc.n_models + j, [LO, HI, TIE_CODE]])
        a_w, b_w = (lo_w, hi_w) if a == i else (hi_w, lo_w)
        out.append({"a": enc.models[a], "b": enc.models[b], "a_wins": a_w, "b_wins": b_w, "ties": ties})
    return out


def side_bias(enc: EncodedCases) -> dict[str, Any] | None:
    """Position (A/B side) win counts with a two-sided exact binomial test of P(A wins | decisive) = 1/2.

    Only ordered verdicts of complete cases whose A side is known are used; the reverse order shows the
    other model as A. Ordered ties are counted but are not part of the test (it is over decisive verdicts).

    Returns:
        ``{"rows", "a_wins", "b_wins", "ties", "a_share", "p_value"}`` or None when no side is known.
        ``a_share`` and ``p_value`` are None when there is no decisive verdict.
    """
    from scipy.stats import binomtest  # scipy.stats is slow to import; only this function needs it

    known = enc.complete & (enc.shown_a != MISSING)
    if not known.any():
        return None
    shown = enc.shown_a[known]
    # In the reverse order the other model is A: LO <-> HI.
    shown_rev = 1 - shown
    a_wins = int((enc.original[known] == shown).sum() + (enc.reverse[known] == shown_rev).sum())
    ties = int((enc.original[known] == TIE_CODE).sum() + (enc.reverse[known] == TIE_CODE).sum())
    rows = int(2 * known.sum())
    b_wins = rows - a_wins - ties
    decisive = a_wins + b_wins
    p_value = float(binomtest(a_wins, decisive, 0.5, alternative="two-sided").pvalue) if decisive else None
    return {
        "rows": rows,
        "a_wins": a_wins,
        "b_wins": b_wins,
        "ties": ties,
        "a_share": (a_wins / decisive) if decisive else None,
        "p_value": p_value,
    }
