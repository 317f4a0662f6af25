"""Intrinsic-report scorers: one scorer's spec validated, aligned to the report's papers and turned into ranks
and per-paper metric values.

Split from :mod:`arena.stats.intrinsic` (the spec format is in :func:`arena.stats.intrinsic.intrinsic_report`'s
docstring). Every error names the scorer and what to fix, because specs come from many runs of different models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .intrinsic_ranks import DEFAULT_AGGREGATE, GoldRanks, _as_scores, gold_ranks, listwise_gold_ranks, paper_metrics


@dataclass
class _Scorer:
    """A validated scorer of the report: its identity, its gold ranks and its per-paper metric values."""

    name: str
    model: str
    criterion: str
    aggregate: str | None
    ranks: GoldRanks
    values: dict[str, np.ndarray]  # metric -> per-paper value × divisors[metric], 0 where not ranked
    divisors: dict[str, int]  # metric -> what its totals are divided by after the bootstrap (see _scaled_values)

    @property
    def kind(self) -> str:
        """``"scoring"`` (a score per candidate) or ``"listwise"`` (a top list): they report different metrics."""
        return "scoring" if self.ranks.listwise_width is None else "listwise"


def _aligned_rows(name: str, spec_papers: Any, papers: list[str] | None) -> np.ndarray | None:
    """Row order that puts a scorer's own ``papers`` in the report's order (None when the scorer names none)."""
    if spec_papers is None:
        return None
    where = f"intrinsic_report: scorer {name!r}"
    if papers is None:
        raise ValueError(f"{where} names its papers; pass papers= (the order of gold and disciplines) to align them.")
    own = [str(p) for p in spec_papers]
    if len(set(own)) != len(own):
        raise ValueError(f"{where} lists a paper twice in its papers; one row per paper.")
    missing = [p for p in papers if p not in set(own)]
    extra = [p for p in own if p not in set(papers)]
    if missing or extra:
        raise ValueError(
            f"{where} covers a different paper set from the report's papers: missing {missing[:5]}"
            f"{' …' if len(missing) > 5 else ''} ({len(missing)}), extra {extra[:5]}{' …' if len(extra) > 5 else ''} "
            f"({len(extra)}). Every scorer covers every benchmark paper: give NaN scores or a -1 top list for a paper "
            "it could not rank."
        )
    pos = {p: i for i, p in enumerate(own)}
    return np.array([pos[p] for p in papers], dtype=np.int64)


def _scoring_ranks(
    where: str, spec: Mapping[str, Any], rows: np.ndarray | None, gold: np.ndarray, n: int, sizes: np.ndarray | None
) -> tuple[GoldRanks, Any, str]:
    """Ranks, criterion and aggregate of a scoring scorer (``spec["scores"]``)."""
    s = _as_scores(spec["scores"], where)
    if rows is not None:
        s = s[rows] if len(rows) == len(s) else s
    if s.shape != (len(gold), n):
        raise ValueError(
            f"{where}: scores has shape {s.shape}; expected (papers, n_candidates) = ({len(gold)}, {n}): one row per "
            "paper in the report's order (NaN scores for a paper it did not score), one column per candidate"
            + (" (NaN past a paper's own count)." if sizes is not None else ".")
        )
    try:
        ranks = gold_ranks(s, gold, sizes)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    criterion = spec.get("criterion")
    if not criterion:
        raise ValueError(f"{where}: a scoring scorer needs its 'criterion' (e.g. 'nll' or 'energy').")
    aggregate = str(spec.get("aggregate") or DEFAULT_AGGREGATE)
    return ranks, criterion, aggregate


def _listwise_ranks(
    where: str, spec: Mapping[str, Any], rows: np.ndarray | None, gold: np.ndarray, n: int, sizes: np.ndarray | None
) -> tuple[GoldRanks, str]:
    """Ranks and criterion of a listwise scorer (``spec["top"]``), list errors prefixed with the scorer."""
    t = np.asarray(spec["top"])
    if rows is not None and t.ndim == 2 and len(rows) == len(t):
        t = t[rows]
    if t.ndim != 2 or len(t) != len(gold):
        raise ValueError(
            f"{where}: top has shape {t.shape}; expected ({len(gold)}, w): one top list per paper in the report's "
            "order (-1 for the whole row when the list is invalid or missing)."
        )
    try:
        ranks = listwise_gold_ranks(t, gold, n if sizes is None else sizes)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return ranks, str(spec.get("criterion") or "listwise")


def _build_scorer(
    name: str, spec: Mapping[str, Any], gold: np.ndarray, n: int, papers: list[str] | None, sizes: np.ndarray | None = None
) -> _Scorer:
    """Validate one ``{name: spec}`` entry of the report and compute its ranks and per-paper values (``sizes``: each
    paper's candidate count when they are mixed, None when every paper has ``n``)."""
    where = f"intrinsic_report: scorer {name!r}"
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where}: expected a dict with 'model', 'criterion' and 'scores' or 'top', got {type(spec).__name__}.")
    kinds = [k for k in ("scores", "top") if spec.get(k) is not None]
    if len(kinds) != 1:
        raise ValueError(f"{where}: give exactly one of 'scores' (a scoring scorer) or 'top' (a listwise scorer), got {kinds}.")
    rows = _aligned_rows(name, spec.get("papers"), papers)
    model = str(spec.get("model") or name)
    if kinds == ["scores"]:
        ranks, criterion, aggregate = _scoring_ranks(where, spec, rows, gold, n, sizes)
    else:
        ranks, criterion = _listwise_ranks(where, spec, rows, gold, n, sizes)
        aggregate = None
    values, divisors = _scaled_values(ranks)
    return _Scorer(
        name=name, model=model, criterion=str(criterion), aggregate=aggregate, ranks=ranks, values=values, divisors=divisors
    )


def _scaled_values(ranks: GoldRanks) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Per-paper metric values (0 where not ranked) as the bootstrap sums them, and the divisor of each metric's totals.

    When every paper has n candidates, per-paper ``beats`` is kept as the integer n − rank (distractors placed below
    the gold; = beats × (n − 1)) with divisor n − 1, so that its sums are exact in single precision and its intervals
    are found by counting. With mixed counts each paper's share has its own denominator n_i − 1, so ``beats`` is the
    share itself (divisor 1) and its intervals are partitioned like MRR's.
    """
    values = {m: np.nan_to_num(v, nan=0.0) for m, v in paper_metrics(ranks).items()}
    divisors = dict.fromkeys(values, 1)
    if "beats" in values and ranks.sizes is None:
        values["beats"] = np.where(ranks.ranked, ranks.n_candidates - ranks.rank, 0).astype(np.float64)
        divisors["beats"] = ranks.n_candidates - 1
    return values, divisors
