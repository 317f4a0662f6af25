"""HypoArena rubric (PROTOCOL.md §2): per-submission rubric scores and their table against the arena ranks.

Split from :mod:`arena.stats.hypoarena` (which re-exports :func:`rubric_scores` and :func:`rubric_table`): the
rubric is scored independently of the pairwise verdicts and only compared with the arena's ranks at the end.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .hypoarena_intervals import _average_ranks_desc
from .hypoarena_verdicts import _check_columns, _sort_key


def _score_list(value: Any, what: str, where: str) -> list[float]:
    """Per-pair scores as floats in 1–5; a bad list fails naming the submission rather than skewing its mean."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"{what} of {where} must be a list of 1–5 scores, got {value!r}")
    out = [float(v) for v in value]
    if any(not (1.0 <= v <= 5.0) for v in out):
        raise ValueError(f"{what} of {where} has a score outside 1–5: {value!r}")
    return out


def _score(value: Any, what: str, where: str, *, required: bool) -> float:
    """One set score as a float in 1–5 (NaN when absent and not ``required``), failing with the submission named."""
    v = float("nan") if value is None else float(value)
    if math.isnan(v):
        if required:
            raise ValueError(f"{what} of {where} is missing; it is required here")
        return v
    if not 1.0 <= v <= 5.0:
        raise ValueError(f"{what} of {where} is {value!r}, outside 1–5")
    return v


def rubric_scores(rows: pd.DataFrame, *, singleton_domains: Iterable[Any] = ()) -> pd.DataFrame:
    """Rubric scores of submissions (PROTOCOL.md §2): q per pair, Q_pair, Q_set and S_rubric.

    Preconditions:
        ``rows`` has one row per (domain, case, model) with per-pair score lists ``g``, ``l``, ``j`` (equal
        length K ≥ 1, values 1–5) and set scores ``b``, ``d``, ``u`` (1–5; ``d`` may be NaN when K = 1, and is
        ignored then). Singleton domains need K = 1; there the set scores are not used and may be NaN.
    Returns:
        A copy of ``rows`` with ``K``, ``q`` (list: q_i = (g_i + l_i + j_i)/3), ``Q_pair`` (mean q_i), ``Q_set``
        ((b + d + u)/3 for K > 1, (b + u)/2 for K = 1 in a multi-pair domain, NaN in singleton domains) and
        ``S`` (q_1 in singleton domains, (Q_pair + Q_set)/2 otherwise).
    """
    _check_columns(rows, ["domain", "case", "model", "g", "l", "j", "b", "d", "u"], "the rubric frame")
    singles = set(singleton_domains)
    ks, qs, q_pair, q_set, s = [], [], [], [], []
    for rec in rows[["domain", "case", "model", "g", "l", "j", "b", "d", "u"]].itertuples(index=False):
        where = f"domain {rec.domain!r}, case {rec.case!r}, model {rec.model!r}"
        g = _score_list(rec.g, "g", where)
        ll = _score_list(rec.l, "l", where)
        jj = _score_list(rec.j, "j", where)
        k = len(g)
        if k == 0 or len(ll) != k or len(jj) != k:
            raise ValueError(f"g, l and j of {where} must have the same length K >= 1 (got {len(g)}, {len(ll)}, {len(jj)})")
        q = [(g[i] + ll[i] + jj[i]) / 3.0 for i in range(k)]
        qp = sum(q) / k
        if rec.domain in singles:
            if k != 1:
                raise ValueError(f"{where}: a singleton domain takes exactly one pair, got K = {k}")
            qs_ = float("nan")
            total = q[0]
        else:
            b = _score(rec.b, "b", where, required=True)
            u = _score(rec.u, "u", where, required=True)
            if k > 1:
                dd = _score(rec.d, "d", where, required=True)
                qs_ = (b + dd + u) / 3.0
            else:
                qs_ = (b + u) / 2.0  # distinctness is not applicable to a single pair
            total = (qp + qs_) / 2.0
        ks.append(k)
        qs.append(q)
        q_pair.append(qp)
        q_set.append(qs_)
        s.append(total)
    out = rows.copy()
    out["K"] = np.array(ks, dtype=np.int64)
    out["q"] = qs
    out["Q_pair"] = np.array(q_pair, dtype=np.float64)
    out["Q_set"] = np.array(q_set, dtype=np.float64)
    out["S"] = np.array(s, dtype=np.float64)
    return out


def rubric_table(
    scores: pd.DataFrame,
    arena_ranks: Mapping[Any, Mapping[Any, float]],
    *,
    pooled_arena_ranks: Mapping[Any, float] | None = None,
) -> dict[str, Any]:
    """Mean rubric score, rubric rank, arena rank and Δ = rubric rank − arena rank per domain and pooled.

    Preconditions: ``scores`` from :func:`rubric_scores` (columns domain, model, S); ``arena_ranks`` maps
    domain → model → arena rank (1 = best). The pooled arena ranks come from ``pooled_arena_ranks`` or, when
    omitted, from an ``arena_ranks["pooled"]`` entry that is not a scored domain.
    Returns:
        ``{"domains": {domain: {"models": {model: {"mean_s", "submissions", "rubric_rank", "arena_rank",
        "delta"}}}}, "pooled": {"models": {...}}}``. Rubric ranks are 1 = highest mean S, ties sharing the
        mean of their positions; a model without an arena rank gets ``arena_rank``/``delta`` None. The
        pooled mean S is over all the model's scored submissions (``mean_s_domains``: mean of domain means).
    """
    _check_columns(scores, ["domain", "model", "S"], "the rubric score frame")
    domains = sorted(set(scores["domain"]), key=_sort_key)
    if pooled_arena_ranks is None and "pooled" in arena_ranks and "pooled" not in domains:
        pooled_arena_ranks = arena_ranks["pooled"]

    def block(frame: pd.DataFrame, ranks: Mapping[Any, float] | None, domain_means: pd.Series | None) -> dict[str, Any]:
        """One scope's models: mean S, rubric rank, arena rank and their difference."""
        agg = frame.groupby("model", sort=True)["S"].agg(["mean", "size"])
        rubric_rank = _average_ranks_desc(agg["mean"].to_numpy())
        models = {}
        for i, (m, row) in enumerate(agg.iterrows()):
            a = None if ranks is None or m not in ranks else float(ranks[m])
            rr = float(rubric_rank[i])
            entry = {
                "mean_s": float(row["mean"]),
                "submissions": int(row["size"]),
                "rubric_rank": rr,
                "arena_rank": a,
                "delta": None if a is None else rr - a,
            }
            if domain_means is not None:
                entry["mean_s_domains"] = float(domain_means[m])
            models[m] = entry
        return {"models": models}

    out = {"domains": {d: block(scores[scores["domain"] == d], arena_ranks.get(d), None) for d in domains}}
    dom_means = scores.groupby(["domain", "model"])["S"].mean().groupby(level="model").mean()
    out["pooled"] = block(scores, pooled_arena_ranks, dom_means)
    return out
