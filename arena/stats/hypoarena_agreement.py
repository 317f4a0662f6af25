"""HypoArena inter-judge agreement: rank correlations of two judges' ratings, forward-verdict agreement, and a
case-bootstrap interval for the pooled Spearman ρ.

Split from :mod:`arena.stats.hypoarena` (which re-exports the public functions): agreement compares two judges'
results, so it builds on the verdicts, the fits and the intervals but nothing builds on it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .btd import elo_ratings
from .hypoarena_encoding import encode_domain
from .hypoarena_fits import _run_bootstrap
from .hypoarena_intervals import _average_ranks_desc, _f, _pct
from .hypoarena_verdicts import MATCH_KEY, VERDICT_COLUMNS, VERDICT_OUTCOME, _check_columns, _sort_key, debias


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b (ties in either variable handled as in Kendall 1945 / scipy's default)."""
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    iu = np.triu_indices(len(x), 1)
    dx, dy = dx[iu], dy[iu]
    s = float((dx * dy).sum())
    denom = math.sqrt(float((dx != 0).sum()) * float((dy != 0).sum()))
    return s / denom if denom > 0 else float("nan")


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ: Pearson correlation of average ranks (NaN when either side is constant)."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denom = math.sqrt(float((rx * rx).sum()) * float((ry * ry).sum()))
    return float((rx * ry).sum()) / denom if denom > 0 else float("nan")


def _top_k(models: list[Any], ratings: np.ndarray, k: int) -> set[Any]:
    """The k best models; equal ratings at the boundary are broken by sorted model name."""
    order = sorted(range(len(models)), key=lambda i: (-ratings[i], _sort_key(models[i])))
    return {models[i] for i in order[:k]}


def inter_judge_agreement(
    ratings_a: Mapping[Any, Mapping[Any, float]], ratings_b: Mapping[Any, Mapping[Any, float]], top_k: int = 5
) -> dict[str, Any]:
    """Ranking-level agreement of two judges' ratings, per domain and pooled.

    Preconditions: ``ratings_a``/``ratings_b`` map domain → model → rating (higher is better); only domains
    and, within a domain, models present in both are compared; ``top_k >= 1``.
    Returns:
        ``{"domains": {domain: {"spearman", "kendall", "rank_shift", "top_k_overlap", "top_k_overlap_share", "k",
        "models"}}, "pooled": {"spearman", "kendall", "rank_shift", "top_k_overlap", "top_k_overlap_share", "cells",
        "domains"}, "top_k"}``:

        * ``spearman``: Spearman's ρ of the two rating vectors (Pearson on average ranks); ``kendall``:
          Kendall's τ-b; both None when undefined (fewer than 2 models, or a constant side);
        * ``rank_shift``: mean |rank_a − rank_b| over the models, ranks 1 = best within the domain, tied
          ratings sharing the mean of their positions (average ranks);
        * ``top_k_overlap``: the count |top-k(a) ∩ top-k(b)| with k = min(top_k, models), ties at the k-th place
          broken by sorted model name. A count, as the HypoArena paper prints it (5 of 5, 4 of 5, pooled 4.5),
          not a share; ``top_k_overlap_share`` is the count / k, and ``k`` the domain's k;
        * pooled: ρ and τ over all (model × domain) cells of the two judges' ratings, the rank shift averaged
          over all cells (within-domain ranks), the top-k overlap count and share each the mean over domains.
    """
    if top_k < 1:
        raise ValueError("top_k must be >= 1")
    domains = sorted(set(ratings_a).intersection(ratings_b), key=_sort_key)
    out: dict[Any, Any] = {}
    cells_a: list[float] = []
    cells_b: list[float] = []
    shifts: list[float] = []
    overlaps: list[int] = []
    shares: list[float] = []
    for d in domains:
        models = sorted(set(ratings_a[d]).intersection(ratings_b[d]), key=_sort_key)
        a = np.array([float(ratings_a[d][m]) for m in models])
        b = np.array([float(ratings_b[d][m]) for m in models])
        if len(models) == 0:
            out[d] = {
                "spearman": None,
                "kendall": None,
                "rank_shift": None,
                "top_k_overlap": None,
                "top_k_overlap_share": None,
                "k": 0,
                "models": 0,
            }
            continue
        shift = np.abs(_average_ranks_desc(a) - _average_ranks_desc(b))
        k = min(top_k, len(models))
        overlap = len(_top_k(models, a, k) & _top_k(models, b, k))
        out[d] = {
            "spearman": _f(_spearman(a, b)) if len(models) > 1 else None,
            "kendall": _f(_kendall_tau_b(a, b)) if len(models) > 1 else None,
            "rank_shift": float(shift.mean()),
            "top_k_overlap": overlap,
            "top_k_overlap_share": overlap / k,
            "k": k,
            "models": len(models),
        }
        cells_a.extend(a)
        cells_b.extend(b)
        shifts.extend(shift)
        overlaps.append(overlap)
        shares.append(overlap / k)
    ca, cb = np.array(cells_a), np.array(cells_b)
    pooled = {
        "spearman": _f(_spearman(ca, cb)) if len(ca) > 1 else None,
        "kendall": _f(_kendall_tau_b(ca, cb)) if len(ca) > 1 else None,
        "rank_shift": float(np.mean(shifts)) if shifts else None,
        "top_k_overlap": float(np.mean(overlaps)) if overlaps else None,
        "top_k_overlap_share": float(np.mean(shares)) if shares else None,
        "cells": len(ca),
        "domains": len(overlaps),
    }
    return {"domains": out, "pooled": pooled, "top_k": top_k}


def pairwise_verdict_agreement(verdicts_a: pd.DataFrame, verdicts_b: pd.DataFrame) -> dict[str, Any]:
    """Share of shared matches whose forward verdicts pick the same outcome (A wins / B wins / tie).

    Preconditions: two verdict frames (:data:`VERDICT_COLUMNS`); only ``order == "original"`` rows count, at
    most one per match and judge. A match is shared when both judges have its forward verdict.
    Returns:
        ``{"domains": {domain: {"shared", "agree", "agreement", "confusion"}}, "pooled": {...}}``; ``agreement``
        is None when nothing is shared; ``confusion[x][y]`` counts judge A's outcome x against judge B's y.
    """
    for name, v in (("judge A", verdicts_a), ("judge B", verdicts_b)):
        _check_columns(v, VERDICT_COLUMNS, f"the verdict frame of {name}")

    def forward(v: pd.DataFrame, name: str) -> pd.DataFrame:
        """A judge's forward verdicts as outcomes, one per match (the reverse order is another question)."""
        f = v[v["order"] == "original"][[*MATCH_KEY, "verdict"]]
        dup = f.duplicated(MATCH_KEY)
        if dup.any():
            r = f[dup].iloc[0]
            raise ValueError(f"{name} has two forward verdicts for match {tuple(r[MATCH_KEY])}; keep one per match")
        unknown = ~f["verdict"].isin(list(VERDICT_OUTCOME))
        if unknown.any():
            raise ValueError(f"{name} has an unknown verdict {f['verdict'][unknown].iloc[0]!r}")
        return f.assign(outcome=f["verdict"].map(VERDICT_OUTCOME)).drop(columns="verdict")

    shared = forward(verdicts_a, "judge A").merge(forward(verdicts_b, "judge B"), on=MATCH_KEY, suffixes=("_a", "_b"))
    labels = ["A", "B", "tie"]

    def block(f: pd.DataFrame) -> dict[str, Any]:
        """Agreement and confusion counts of one scope's shared matches."""
        agree = int((f["outcome_a"] == f["outcome_b"]).sum())
        conf = {x: {y: int(((f["outcome_a"] == x) & (f["outcome_b"] == y)).sum()) for y in labels} for x in labels}
        return {"shared": int(len(f)), "agree": agree, "agreement": agree / len(f) if len(f) else None, "confusion": conf}

    domains = sorted(set(shared["domain"]), key=_sort_key)
    return {"domains": {d: block(shared[shared["domain"] == d]) for d in domains}, "pooled": block(shared)}


def _rowwise_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's ρ of every row pair of two (R, C) arrays at once (NaN for a constant row): one per replicate."""
    from scipy.stats import rankdata

    rx = rankdata(x, axis=1)
    ry = rankdata(y, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=1) / np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))


def pooled_spearman_ci(
    verdicts_a: pd.DataFrame,
    verdicts_b: pd.DataFrame,
    *,
    replicates: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Case-bootstrap percentile interval for the pooled Spearman ρ between two judges' per-domain ratings.

    Each replicate resamples, within each domain, the union of the two judges' cases, with the same draw for
    both judges (a case a judge did not rate adds nothing to that judge); both judges' domains are refitted
    and ρ is taken over the (model × domain) cells both rate, as in :func:`inter_judge_agreement`.

    Preconditions: two verdict frames as :func:`debias` takes them, sharing at least one domain.
    Returns:
        ``{"spearman": point ρ, "ci": [lo, hi], "replicates", "level", "seed", "cells", "undefined_replicates"}``.
    """
    if replicates < 1:
        raise ValueError("replicates must be >= 1")
    ma, mb = debias(verdicts_a), debias(verdicts_b)
    domains = sorted(set(ma["domain"]).intersection(mb["domain"]), key=_sort_key)
    if not domains:
        raise ValueError("the two judges share no domain; pass verdicts on the same benchmark")
    ma, mb = ma[ma["domain"].isin(domains)], mb[mb["domain"].isin(domains)]
    models = sorted(
        pd.unique(pd.concat([ma["first"], ma["second"], mb["first"], mb["second"]], ignore_index=True)), key=_sort_key
    )
    ga, gb = dict(tuple(ma.groupby("domain", sort=False))), dict(tuple(mb.groupby("domain", sort=False)))
    enc_a, enc_b = [], []
    for d in domains:
        cases = pd.unique(pd.concat([ga[d]["case"], gb[d]["case"]], ignore_index=True))
        cases = np.asarray(cases, dtype=object)
        enc_a.append(encode_domain(d, ga[d], models, cases))
        enc_b.append(encode_domain(d, gb[d], models, cases))
    res = _run_bootstrap([enc_a, enc_b], n_models=len(models), replicates=replicates, seed=seed, pooled=False)
    # Cells rated by both judges, in a fixed order; per-domain columns of each judge's replicate ratings.
    cols_a, cols_b, point_a, point_b = [], [], {}, {}
    for di, d in enumerate(domains):
        fa, fb = res[0]["domains"][di], res[1]["domains"][di]
        pos_a = {g: i for i, g in enumerate(fa.models)}
        pos_b = {g: i for i, g in enumerate(fb.models)}
        shared = sorted(set(pos_a) & set(pos_b))
        ra, rb = elo_ratings(fa.theta), elo_ratings(fb.theta)
        cols_a.append(ra[:, [pos_a[g] for g in shared]])
        cols_b.append(rb[:, [pos_b[g] for g in shared]])
        pa, pb = elo_ratings(fa.point.theta[0]), elo_ratings(fb.point.theta[0])
        point_a[d] = {models[g]: float(pa[pos_a[g]]) for g in shared}
        point_b[d] = {models[g]: float(pb[pos_b[g]]) for g in shared}
    xa, xb = np.concatenate(cols_a, axis=1), np.concatenate(cols_b, axis=1)
    rho = _rowwise_spearman(xa, xb)
    ok = np.isfinite(rho)
    ci = _pct(rho[ok], level) if ok.any() else np.array([np.nan, np.nan])
    point = inter_judge_agreement(point_a, point_b)["pooled"]["spearman"]
    return {
        "spearman": point,
        "ci": [_f(ci[0]), _f(ci[1])],
        "replicates": replicates,
        "level": level,
        "seed": seed,
        "cells": int(xa.shape[1]),
        "undefined_replicates": int((~ok).sum()),
        "ratings_a": point_a,
        "ratings_b": point_b,
    }
