"""HypoArena fits: BTD point fits per domain and pooled, and their case-bootstrap replicates.

Split from :mod:`arena.stats.hypoarena` (its docstring states the case bootstrap: per-domain streams, chunks that
consume a stream as one draw would, the pooled fit on the same draws summed over domains). The run is written
as steps (point fits, one chunk of replicates, collecting the chunks) so each can be read on its own; the
arithmetic and its order are those of the single function it replaced, so values are unchanged bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .bt import blas_single_threaded
from .btd import BTDBatch, fit_btd_pairs, pair_to_model_sum
from .hypoarena_encoding import DomainData, _chunk_size, _global_pair_index, draw_counts, encode_codes, pairs_from_features
from .hypoarena_verdicts import VERDICT_COLUMNS, CodedMatches, _check_columns, _sort_key, debias_coded

#: A fit's point result and its point win rates, (K,).
_Point = tuple[BTDBatch, np.ndarray]


@dataclass(frozen=True)
class FitReplicates:
    """Point fit and bootstrap replicates of one BTD fit (a domain or the pooled fit).

    Attributes:
        models: global model indices of the fit (sorted).
        point: the point fit (one row).
        theta, nu: replicate strengths (R, K) and tie parameters (R,).
        fallback, diverged: replicate flags (R,).
        wr: replicate win rates (R, K): mean share per model in the resample.
        counts: the replicate case counts (R, n_cases) when kept (domains only).
    """

    models: np.ndarray
    point: BTDBatch
    point_wr: np.ndarray
    theta: np.ndarray
    nu: np.ndarray
    fallback: np.ndarray
    diverged: np.ndarray
    wr: np.ndarray
    counts: np.ndarray | None = None


def _win_rate(w_lo: np.ndarray, w_hi: np.ndarray, ties: np.ndarray, k: int) -> np.ndarray:
    """Mean share per model, (R, K): Σ(wins + ties/2) / Σ matches (a match's weights sum to its 1 share)."""
    to_models = pair_to_model_sum(k)
    n = w_lo + w_hi + ties
    score = to_models(w_lo + ties / 2, w_hi + ties / 2)
    games = to_models(n, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, score / np.maximum(games, 1e-300), np.nan)


@dataclass
class _JudgePoints:
    """One judge's point fits: the warm starts and chord data of every replicate fit of that judge.

    Attributes:
        domains: per domain, the point fit and its win rates.
        pooled: the pooled point fit and its win rates (None unless the run is pooled).
        pool_data: the pooled (w_lo, w_hi, ties), each (P_all,): the pooled fit's chord data.
    """

    domains: list[_Point]
    pooled: _Point | None
    pool_data: tuple[np.ndarray, ...]


def _point_fits(domains: list[DomainData], gidx: list[np.ndarray], k_all: int, pooled: bool) -> _JudgePoints:
    """Point fits of one judge's domains and, when ``pooled``, of their sum on the global pair axis."""
    p_all = k_all * (k_all - 1) // 2
    dom_pts = []
    pool = [np.zeros((1, p_all)) for _ in range(3)]
    for di, d in enumerate(domains):
        arrs = [x[None, :] for x in d.point]
        dom_pts.append((fit_btd_pairs(*arrs, d.k), _win_rate(*arrs, d.k)[0]))
        for acc, x in zip(pool, arrs, strict=True):
            acc[:, gidx[di]] += x
    pool_pt = (fit_btd_pairs(*pool, k_all), _win_rate(*pool, k_all)[0]) if pooled else None
    return _JudgePoints(dom_pts, pool_pt, tuple(x[0] for x in pool))


def _fit_chunk(
    domains: list[DomainData],
    draws: list[np.ndarray],
    m: int,
    gidx: list[np.ndarray],
    points: _JudgePoints,
    parts: dict[str, Any],
    k_all: int,
    pooled: bool,
) -> None:
    """Fit one chunk of ``m`` replicates (``draws[d]``: (m, n_cases) counts per domain) for one judge; append to ``parts``.

    Each replicate fit is warm-started from its point fit; the pooled replicates sum the domains' pair statistics.
    """
    p_all = k_all * (k_all - 1) // 2
    pool = [np.zeros((m, p_all)) for _ in range(3)]
    for di, d in enumerate(domains):
        feats = draws[di].astype(d.contrib.dtype) @ d.contrib
        arrs = pairs_from_features(d, feats)
        pt = points.domains[di][0]
        fit = fit_btd_pairs(*arrs, d.k, init=pt.theta[0], init_nu=pt.nu[0], chord_data=d.point)
        parts["domains"][di].append((fit, _win_rate(*arrs, d.k)))
        if pooled:
            for acc, x in zip(pool, arrs, strict=True):
                acc[:, gidx[di]] += x
    if pooled:
        pt = points.pooled[0]
        fit = fit_btd_pairs(*pool, k_all, init=pt.theta[0], init_nu=pt.nu[0], chord_data=points.pool_data)
        parts["pooled"].append((fit, _win_rate(*pool, k_all)))


def _collect(models: np.ndarray, point: _Point, chunks: list, counts: np.ndarray | None) -> FitReplicates:
    """Concatenate a fit's chunks of replicates into one :class:`FitReplicates`."""
    return FitReplicates(
        models=models,
        point=point[0],
        point_wr=point[1],
        theta=np.concatenate([c[0].theta for c in chunks]),
        nu=np.concatenate([c[0].nu for c in chunks]),
        fallback=np.concatenate([c[0].fallback for c in chunks]),
        diverged=np.concatenate([c[0].diverged for c in chunks]),
        wr=np.concatenate([c[1] for c in chunks]),
        counts=counts,
    )


def _collect_judge(
    domains: list[DomainData],
    points: _JudgePoints,
    parts: dict[str, Any],
    counts_parts: list[list[np.ndarray]] | None,
    k_all: int,
    pooled: bool,
) -> dict[str, Any]:
    """One judge's result of :func:`_run_bootstrap`: {"domains": [FitReplicates], "pooled": FitReplicates | None}.

    ``counts_parts`` (per domain, the chunks of case counts) is given only when the counts are kept.
    """
    doms = [
        _collect(
            d.models, points.domains[di], parts["domains"][di], None if counts_parts is None else np.concatenate(counts_parts[di])
        )
        for di, d in enumerate(domains)
    ]
    pool = _collect(np.arange(k_all), points.pooled, parts["pooled"], None) if pooled else None
    return {"domains": doms, "pooled": pool}


def _run_bootstrap(
    judges: list[list[DomainData]],
    *,
    n_models: int,
    replicates: int,
    seed: int,
    pooled: bool,
    keep_counts: bool = False,
    chunk: int | None = None,
) -> list[dict[str, Any]]:
    """Point fits and case-bootstrap replicates for one or more judges sharing the domains' case lists.

    Preconditions: ``judges[j][d]`` is domain d of judge j; all judges list the same domains with the same
    ``cases`` (the same draw resamples them). Returns per judge {"domains": [FitReplicates], "pooled":
    FitReplicates | None}.
    """
    n_dom = len(judges[0])
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n_dom)]
    k_all = n_models
    gidx = [[_global_pair_index(d.models, k_all) for d in jd] for jd in judges]
    points = [_point_fits(jd, gidx[j], k_all, pooled) for j, jd in enumerate(judges)]

    parts: list[dict[str, Any]] = [{"domains": [[] for _ in range(n_dom)], "pooled": []} for _ in judges]
    counts_parts: list[list[np.ndarray]] = [[] for _ in range(n_dom)]
    max_cases = max((len(d.cases) for d in judges[0]), default=1)
    step = chunk or _chunk_size(max_cases)
    for start in range(0, replicates, step):
        m = min(step, replicates - start)
        draws = [draw_counts(streams[di], m, len(judges[0][di].cases)) for di in range(n_dom)]
        if keep_counts:
            for di in range(n_dom):
                counts_parts[di].append(draws[di])
        for j, jd in enumerate(judges):
            _fit_chunk(jd, draws, m, gidx[j], points[j], parts[j], k_all, pooled)

    kept = counts_parts if keep_counts else None
    return [_collect_judge(jd, points[j], parts[j], kept, k_all, pooled) for j, jd in enumerate(judges)]


@dataclass(frozen=True)
class HypoArenaBootstrap:
    """Everything :func:`hypoarena_leaderboard` summarises (exposed for tests and diagnostics).

    Attributes:
        models: all model names, sorted (global index order).
        domains: domain names, sorted.
        cases: per domain, the case ids in the order of ``fits[d].counts``' columns.
        fits: per domain, :class:`FitReplicates` (``counts`` kept when asked).
        pooled: the pooled fit over all domains.
        matches: the :func:`debias` frame.
        domain_rows: per domain, its rows of ``matches`` (one contiguous block).
        model_matches: per domain, matches of each model on the global model axis, (K,).
    """

    models: list[Any]
    domains: list[Any]
    cases: list[np.ndarray]
    fits: list[FitReplicates]
    pooled: FitReplicates
    matches: pd.DataFrame
    domain_rows: list[slice] = field(default_factory=list)
    model_matches: list[np.ndarray] = field(default_factory=list)


def _sorted_order(uniques: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """Labels sorted by :func:`_sort_key` (the global order of every fit), and each unique's index in that order."""
    order = sorted(range(len(uniques)), key=lambda i: _sort_key(uniques[i]))
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[order] = np.arange(len(uniques))
    return [uniques[i] for i in order], rank


def _encode_coded(coded: CodedMatches) -> tuple[list[Any], list[Any], list[DomainData], list[slice]]:
    """Models and domains in global order, each domain encoded, and its rows of the match frame.

    Works on :func:`debias_coded`'s codes: a domain's matches are one contiguous block of rows (they are ordered by
    domain code), its cases are numbered in first-seen order as :func:`encode_domain` numbers them, and the
    model labels are not hashed again.
    """
    models, model_rank = _sorted_order(coded.models)
    domains, domain_rank = _sorted_order(coded.domains)
    by_rank = np.argsort(domain_rank)  # domain code of each global domain
    share = coded.frame["share"].to_numpy(dtype=np.float64)
    g_first, g_second = model_rank[coded.first], model_rank[coded.second]
    encoded, rows = [], []
    for gd, code in enumerate(by_rank):
        lo, hi = np.searchsorted(coded.domain, [code, code + 1])
        case_codes, uniq = pd.factorize(coded.case[lo:hi], sort=False)
        cases = np.asarray(coded.cases[uniq], dtype=object)
        encoded.append(encode_codes(domains[gd], g_first[lo:hi], g_second[lo:hi], share[lo:hi], case_codes, cases, len(models)))
        rows.append(slice(int(lo), int(hi)))
    return models, domains, encoded, rows


def hypoarena_bootstrap(
    verdicts: pd.DataFrame,
    *,
    replicates: int = 10_000,
    seed: int = 0,
    keep_counts: bool = False,
    chunk: int | None = None,
) -> HypoArenaBootstrap:
    """Debias, fit BTD per domain and pooled, and case-bootstrap every fit (see :mod:`arena.stats.hypoarena`).

    Preconditions: ``verdicts`` as :func:`debias` takes it, non-empty; ``replicates >= 1``. ``chunk`` (replicates
    per batch) changes values only by rounding (~1e-15 relative), and memory and speed.
    """
    if replicates < 1:
        raise ValueError("replicates must be >= 1")
    _check_columns(verdicts, VERDICT_COLUMNS, "the verdict frame")
    if len(verdicts) == 0:
        raise ValueError("no verdicts to rate: the verdict frame is empty")
    coded = debias_coded(verdicts)
    models, domains, encoded, rows = _encode_coded(coded)
    with blas_single_threaded():
        # One core per BLAS product: a chunk's product is small, and a second BLAS thread on a shared machine
        # mostly spins waiting for a core (CPU time, not speed); the exact float32 products are the same.
        res = _run_bootstrap(
            [encoded], n_models=len(models), replicates=replicates, seed=seed, pooled=True, keep_counts=keep_counts, chunk=chunk
        )[0]
    model_matches = []
    for d in encoded:
        per_model = np.zeros(len(models), dtype=np.int64)
        per_model[d.models] = d.model_matches
        model_matches.append(per_model)
    return HypoArenaBootstrap(
        models=models,
        domains=domains,
        cases=[d.cases for d in encoded],
        fits=res["domains"],
        pooled=res["pooled"],
        matches=coded.frame,
        domain_rows=rows,
        model_matches=model_matches,
    )
