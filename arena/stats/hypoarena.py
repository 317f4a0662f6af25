"""HypoArena statistics (PROTOCOL.md §2): 5-level verdicts, debiasing, Bradley–Terry–Davidson leaderboards with
case-bootstrap intervals, rubric scores and inter-judge agreement. Pure numpy/pandas/scipy; no Django.

Data contract (the app builds these frames from its tables):

* ordered verdicts, :data:`VERDICT_COLUMNS`: one row per judged order of a match. ``(first, second)`` is the
  match's fixed canonical orientation: ``first`` is shown as A in the ``"original"`` order, ``second`` is shown
  as A in the ``"reverse"`` order; ``verdict`` is the judge's 5-level answer about the *shown* A and B.
* matches (:func:`debias`): one row per (domain, case, first, second) with ``first``'s debiased share.

How fractional shares enter the Davidson likelihood. A debiased share s (a multiple of ⅛) is split by
:func:`arena.stats.btd.share_to_outcome` into (win, tie, loss) weights with as little tie mass as possible
and the same expected score win + tie/2 = s: s ≥ ½ gives win 2s − 1 and tie 2 − 2s, s ≤ ½ gives loss 1 − 2s
and tie 2s. So 1 is a win, ½ exactly a tie, ¾ half a win and half a tie; each match has total weight 1, and
the weights are summed into fractional win and tie counts, the sufficient statistics of the Davidson
log-likelihood Σ_pairs [W_ij log P(i≻j) + W_ji log P(j≻i) + T_ij log P(tie)].

Case bootstrap. A case carries all its matches (the matches of a case share submissions, so they are not
independent). Resampling the n_d cases of domain d with replacement is drawing per-case counts; every
replicate's sufficient statistics are then ``counts @ F_d``, with F_d the (n_d, 3·pairs) table of each case's
contributions (wins of the lower model index, ties, matches, per pair), for all replicates in one matrix
product (as :mod:`arena.stats.bootstrap` does with case types: HypoArena cases carry 120 matches each, so
distinct case *compositions* hardly repeat and the case itself is the unit). Domains are resampled
independently (stratified by domain); the pooled fit of a replicate uses the same draws, summed over domains.
The fits run on all replicates at once (:func:`arena.stats.btd.fit_btd_pairs`: Newton on (θ, log ν),
warm-started from the point fit). Each domain draws from its own stream (``SeedSequence(seed).spawn``, in
sorted domain order) and replicates are processed in chunks that consume each stream as one draw would, so
neither the chunk size nor another domain changes a domain's values (beyond rounding, ~1e-15 relative).

Intervals are percentile intervals (linear interpolation) for ratings, ν and WR; rank intervals use order
statistics (``inverted_cdf``) so that they are whole ranks. Ranks are 1 = best; equal ratings keep the
sorted model-name order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import ranking_summary
from .btd import FIVE_LEVEL_SHARES, BTDBatch, elo_ratings, fit_btd_pairs, pair_to_model_sum, share_to_outcome

VERDICT_COLUMNS = ["domain", "case", "first", "second", "order", "verdict"]
ORDERS = ("original", "reverse")
MATCH_KEY = ["domain", "case", "first", "second"]
#: Outcome of a verdict about the shown pair, for pairwise agreement: "A" (A wins), "B", or "tie".
VERDICT_OUTCOME = {"A>>B": "A", "A>B": "A", "A=B": "tie", "B>A": "B", "B>>A": "B"}

#: Elements of one chunk of (replicates × cases) counts; bounds memory (and keeps the count array in cache).
_COUNT_ELEMENTS = 1_000_000
#: Largest value (in eighths) below which float32 products of counts and contributions are exact.
_F32_EXACT = 2**24


# ---------------------------------------------------------------- debiasing


def _check_columns(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the column(s) {missing}; expected at least {list(columns)}")


def _factorize(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes and uniques of a column, sorted when the values sort (so outputs are in key order)."""
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # mixed, unorderable values: first-seen order
        codes, uniques = pd.factorize(values, sort=False)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques, dtype=object)


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
    # Validation and mapping work on the few distinct labels (factorize once), not on every row.
    v_code, v_uni = pd.factorize(verdicts["verdict"])
    unknown = [v for v in v_uni if v not in FIVE_LEVEL_SHARES]
    if unknown or (v_code < 0).any():
        i = int(np.flatnonzero((v_code < 0) | np.isin(v_code, [list(v_uni).index(u) for u in unknown]))[0])
        raise ValueError(
            f"unknown verdict {verdicts['verdict'].iloc[i]!r} in row {i} (case {verdicts['case'].iloc[i]!r}); "
            f"expected one of {list(FIVE_LEVEL_SHARES)} (drop invalid verdicts before debiasing)"
        )
    o_code, o_uni = pd.factorize(verdicts["order"])
    if any(o not in ORDERS for o in o_uni) or (o_code < 0).any():
        i = int(np.flatnonzero((o_code < 0) | np.isin(o_code, [c for c, o in enumerate(o_uni) if o not in ORDERS]))[0])
        raise ValueError(f"unknown order {verdicts['order'].iloc[i]!r} in row {i}; expected one of {list(ORDERS)}")
    share_a = np.array([FIVE_LEVEL_SHARES[v] for v in v_uni], dtype=np.float64)[v_code]
    is_rev = np.array([o == "reverse" for o in o_uni], dtype=bool)[o_code]
    d_code, d_uni = _factorize(verdicts["domain"])
    c_code, c_uni = _factorize(verdicts["case"])
    # One model vocabulary for both sides, so (x, y) and (y, x) can be recognised as the same pair.
    m_code, m_uni = _factorize(pd.concat([verdicts["first"], verdicts["second"]], ignore_index=True))
    n = len(verdicts)
    f_code, s_code = m_code[:n], m_code[n:]
    same = f_code == s_code
    if same.any():
        i = int(np.flatnonzero(same)[0])
        raise ValueError(f"row {i} pairs model {verdicts['first'].iloc[i]!r} with itself")
    nm = len(m_uni)
    case_key = d_code * len(c_uni) + c_code
    key = (case_key * nm + f_code) * nm + s_code
    uniq, first_row, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
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
    return pd.DataFrame(
        {
            "domain": verdicts["domain"].to_numpy()[first_row],
            "case": verdicts["case"].to_numpy()[first_row],
            "first": m_uni[m_first],
            "second": m_uni[m_second],
            "share_original": s_orig,
            "share_reverse": s_rev,
            "share": share,
            "orders": both.astype(np.int64) + 1,
            "one_order": ~both,
            "consistent": consistent,
            "conflict": conflict,
        }
    )


# ---------------------------------------------------------------- encoding for the fits


@dataclass
class _DomainData:
    """One domain's matches encoded for the BTD fits (model indices are global, sorted by name).

    Attributes:
        name: the domain.
        models: global indices of the domain's models, sorted (local index = position here).
        cases: case ids, in row order of ``contrib``.
        point: (w_lo, w_hi, ties) of the whole domain, each (P_d,) over ``np.triu_indices(K_d, 1)``.
        contrib: (n_cases, F) distinct columns of the per-case contribution table (float32 when exact).
        expand: (3·P_d,) index of each [w_lo | ties | matches] column into ``contrib``'s columns.
        model_matches: (K_d,) number of matches of each model.
    """

    name: Any
    models: np.ndarray
    cases: np.ndarray
    point: tuple[np.ndarray, np.ndarray, np.ndarray]
    contrib: np.ndarray
    expand: np.ndarray
    model_matches: np.ndarray

    @property
    def k(self) -> int:
        return len(self.models)


def _encode_domain(name: Any, frame: pd.DataFrame, models_all: list[Any], cases: np.ndarray | None = None) -> _DomainData:
    """Encode one domain's debiased matches (``frame``: rows of :func:`debias` for that domain).

    ``cases`` optionally fixes the case list and order (two judges resampled with the same draw); cases
    absent from ``frame`` get an all-zero contribution row.
    """
    # Categorical codes: a hash lookup per row, far faster than mapping strings through a dict.
    g_first = pd.Categorical(frame["first"], categories=models_all).codes.astype(np.int64)
    g_second = pd.Categorical(frame["second"], categories=models_all).codes.astype(np.int64)
    models = np.unique(np.concatenate([g_first, g_second]))
    k = len(models)
    local = np.full(len(models_all), -1, dtype=np.int64)
    local[models] = np.arange(k)
    a, b = local[g_first], local[g_second]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    # Pair index of (lo, hi) in np.triu_indices(k, 1) order.
    pair = lo * k - lo * (lo + 1) // 2 + (hi - lo - 1)
    n_pairs = k * (k - 1) // 2
    win, tie, loss = share_to_outcome(frame["share"].to_numpy(dtype=np.float64))
    flipped = a > b
    w_lo = np.where(flipped, loss, win)
    if cases is None:
        case_codes, cases = pd.factorize(frame["case"], sort=False)
        cases = np.asarray(cases, dtype=object)
    else:
        case_codes = pd.Index(cases).get_indexer(frame["case"]).astype(np.int64)
    n_cases = len(cases)
    n_cols = 3 * n_pairs
    # Per-case contributions: columns [wins of lo over hi | ties | matches], one block of P_d each.
    base = case_codes * n_cols + pair
    size = n_cases * n_cols
    flat = np.bincount(base, weights=w_lo, minlength=size)
    flat += np.bincount(base + n_pairs, weights=tie, minlength=size)
    flat += np.bincount(base + 2 * n_pairs, minlength=size)
    table = flat.reshape(n_cases, n_cols)
    # Identical columns (e.g. every case has every pair once: all "matches" columns are ones) are computed once.
    contrib, expand = np.unique(table, axis=1, return_inverse=True)
    expand = expand.reshape(-1)
    eighths = contrib * 8
    exact = bool(np.all(eighths == np.round(eighths))) and float(n_cases) * float(eighths.max(initial=0)) < _F32_EXACT
    # float32 products are then exact (every partial sum is a multiple of 1/8 below 2^21): same values, half the cost.
    contrib = np.ascontiguousarray(contrib, dtype=np.float32 if exact else np.float64)
    tot = table.sum(axis=0)
    w_lo_p, ties_p, n_p = tot[:n_pairs], tot[n_pairs : 2 * n_pairs], tot[2 * n_pairs :]
    w_hi_p = np.maximum(n_p - w_lo_p - ties_p, 0.0)
    model_matches = np.bincount(a, minlength=k) + np.bincount(b, minlength=k)
    return _DomainData(name, models, cases, (w_lo_p, w_hi_p, ties_p), contrib, expand, model_matches)


def _pairs_from_features(d: _DomainData, feats: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(w_lo, w_hi, ties), each (R, P_d), from replicate feature sums (R, F)."""
    full = np.asarray(feats, dtype=np.float64)[:, d.expand]
    p = d.k * (d.k - 1) // 2
    w_lo, ties, n = full[:, :p], full[:, p : 2 * p], full[:, 2 * p :]
    return w_lo, np.maximum(n - w_lo - ties, 0.0), ties


def _global_pair_index(models: np.ndarray, k_all: int) -> np.ndarray:
    """Index into ``np.triu_indices(k_all, 1)`` of each local pair of the sorted global ``models``."""
    ii, jj = np.triu_indices(len(models), 1)
    gi, gj = models[ii], models[jj]  # sorted models: gi < gj, orientation preserved
    return gi * k_all - gi * (gi + 1) // 2 + (gj - gi - 1)


def _chunk_size(n_cases: int) -> int:
    return max(1, _COUNT_ELEMENTS // max(1, n_cases))


def _draw_counts(rng: np.random.Generator, replicates: int, n_cases: int) -> np.ndarray:
    """Case counts (R, n) of ``replicates`` resamples of n cases with replacement (n uniform index draws each).

    The draws use the narrowest unsigned type that holds n (16-bit draws are about four times faster than
    64-bit ones); the type depends only on n, so a domain's stream is the same for any chunking.
    """
    dtype = np.uint16 if n_cases <= 2**16 else np.uint32 if n_cases <= 2**32 else np.uint64
    picks = rng.integers(0, n_cases, size=(replicates, n_cases), dtype=dtype)
    out = np.empty((replicates, n_cases), dtype=np.int64)
    for r in range(replicates):
        # One small bincount per replicate stays in cache; a flat bincount over R·n cells does not.
        out[r] = np.bincount(picks[r], minlength=n_cases)
    return out


# ---------------------------------------------------------------- the bootstrap


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


def _run_bootstrap(
    judges: list[list[_DomainData]],
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
    p_all = k_all * (k_all - 1) // 2
    gidx = [[_global_pair_index(d.models, k_all) for d in jd] for jd in judges]

    points = []
    pool_data: list[tuple[np.ndarray, ...]] = []
    for j, jd in enumerate(judges):
        dom_pts = []
        pool = [np.zeros((1, p_all)) for _ in range(3)]
        for di, d in enumerate(jd):
            arrs = [x[None, :] for x in d.point]
            dom_pts.append((fit_btd_pairs(*arrs, d.k), _win_rate(*arrs, d.k)[0]))
            for acc, x in zip(pool, arrs, strict=True):
                acc[:, gidx[j][di]] += x
        pool_pt = (fit_btd_pairs(*pool, k_all), _win_rate(*pool, k_all)[0]) if pooled else None
        points.append((dom_pts, pool_pt))
        pool_data.append(tuple(x[0] for x in pool))

    parts: list[dict[str, Any]] = [{"domains": [[] for _ in range(n_dom)], "pooled": []} for _ in judges]
    counts_parts: list[list[np.ndarray]] = [[] for _ in range(n_dom)]
    max_cases = max((len(d.cases) for d in judges[0]), default=1)
    step = chunk or _chunk_size(max_cases)
    for start in range(0, replicates, step):
        m = min(step, replicates - start)
        draws = [_draw_counts(streams[di], m, len(judges[0][di].cases)) for di in range(n_dom)]
        if keep_counts:
            for di in range(n_dom):
                counts_parts[di].append(draws[di])
        for j, jd in enumerate(judges):
            pool = [np.zeros((m, p_all)) for _ in range(3)]
            for di, d in enumerate(jd):
                feats = draws[di].astype(d.contrib.dtype) @ d.contrib
                arrs = _pairs_from_features(d, feats)
                pt = points[j][0][di][0]
                fit = fit_btd_pairs(*arrs, d.k, init=pt.theta[0], init_nu=pt.nu[0], chord_data=d.point)
                parts[j]["domains"][di].append((fit, _win_rate(*arrs, d.k)))
                if pooled:
                    for acc, x in zip(pool, arrs, strict=True):
                        acc[:, gidx[j][di]] += x
            if pooled:
                pt = points[j][1][0]
                fit = fit_btd_pairs(*pool, k_all, init=pt.theta[0], init_nu=pt.nu[0], chord_data=pool_data[j])
                parts[j]["pooled"].append((fit, _win_rate(*pool, k_all)))

    def collect(models: np.ndarray, point: tuple[BTDBatch, np.ndarray], chunks: list, counts: np.ndarray | None) -> FitReplicates:
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

    out = []
    for j, jd in enumerate(judges):
        doms = [
            collect(
                d.models, points[j][0][di], parts[j]["domains"][di], np.concatenate(counts_parts[di]) if keep_counts else None
            )
            for di, d in enumerate(jd)
        ]
        pool = collect(np.arange(k_all), points[j][1], parts[j]["pooled"], None) if pooled else None
        out.append({"domains": doms, "pooled": pool})
    return out


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
    """

    models: list[Any]
    domains: list[Any]
    cases: list[np.ndarray]
    fits: list[FitReplicates]
    pooled: FitReplicates
    matches: pd.DataFrame


def _prepare(matches: pd.DataFrame) -> tuple[list[Any], list[Any]]:
    models = sorted(pd.unique(pd.concat([matches["first"], matches["second"]], ignore_index=True)), key=_sort_key)
    domains = sorted(pd.unique(matches["domain"]), key=_sort_key)
    return models, domains


def _sort_key(x: Any) -> tuple[str, Any]:
    return (type(x).__name__, x)


def hypoarena_bootstrap(
    verdicts: pd.DataFrame,
    *,
    replicates: int = 10_000,
    seed: int = 0,
    keep_counts: bool = False,
    chunk: int | None = None,
) -> HypoArenaBootstrap:
    """Debias, fit BTD per domain and pooled, and case-bootstrap every fit (see the module docstring).

    Preconditions: ``verdicts`` as :func:`debias` takes it, non-empty; ``replicates >= 1``. ``chunk`` (replicates
    per batch) changes values only by rounding (~1e-15 relative), and memory and speed.
    """
    if replicates < 1:
        raise ValueError("replicates must be >= 1")
    matches = debias(verdicts)
    if len(matches) == 0:
        raise ValueError("no verdicts to rate: the verdict frame is empty")
    models, domains = _prepare(matches)
    groups = dict(tuple(matches.groupby("domain", sort=False)))
    encoded = [_encode_domain(d, groups[d], models) for d in domains]
    res = _run_bootstrap(
        [encoded], n_models=len(models), replicates=replicates, seed=seed, pooled=True, keep_counts=keep_counts, chunk=chunk
    )[0]
    return HypoArenaBootstrap(
        models=models,
        domains=domains,
        cases=[d.cases for d in encoded],
        fits=res["domains"],
        pooled=res["pooled"],
        matches=matches,
    )


# ---------------------------------------------------------------- summaries


def _ranks(theta: np.ndarray) -> np.ndarray:
    """Rank of each model (1 = best) per row of (R, K); equal strengths keep index (sorted-name) order."""
    theta = np.atleast_2d(theta)
    order = np.argsort(-theta, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1, theta.shape[1] + 1), order.shape), axis=1)
    return ranks


def _pct(x: np.ndarray, level: float) -> np.ndarray:
    """Percentile interval per column of (R, K) (or of (R,)), linear interpolation; NaNs ignored."""
    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        return np.nanpercentile(x, [100 * a, 100 * (1 - a)], axis=0)


def _rank_ci(ranks: np.ndarray, level: float) -> np.ndarray:
    a = (1.0 - level) / 2.0
    return np.quantile(ranks, [a, 1 - a], axis=0, method="inverted_cdf")


def _f(x: float) -> float | None:
    """JSON-friendly float (None for NaN)."""
    x = float(x)
    return None if math.isnan(x) else x


def _consistency(frame: pd.DataFrame) -> dict[str, Any]:
    two = frame[frame["orders"] == 2]
    return {
        "consistency": _f(two["consistent"].astype(float).mean()) if len(two) else None,
        "conflict_share": _f(two["conflict"].astype(float).mean()) if len(two) else None,
        "two_order_matches": int(len(two)),
        "one_order_matches": int(len(frame) - len(two)),
    }


def _summarise_fit(fit: FitReplicates, names: list[Any], level: float) -> dict[str, Any]:
    """The per-fit block of the leaderboard: models with ratings, ranks, intervals; ν; the modal ranking."""
    point = fit.point
    ratings = elo_ratings(point.theta[0])
    rank = _ranks(point.theta)[0]
    rep_ratings = elo_ratings(fit.theta)
    r_ci = _pct(rep_ratings, level)
    rep_ranks = _ranks(fit.theta)
    k_ci = _rank_ci(rep_ranks, level)
    wr_ci = _pct(fit.wr, level)
    summary = ranking_summary(fit.theta)
    model_names = [names[i] for i in fit.models]
    models = {}
    for i, m in enumerate(model_names):
        models[m] = {
            "rating": float(ratings[i]),
            "ci": [float(r_ci[0, i]), float(r_ci[1, i])],
            "rank": int(rank[i]),
            "rank_ci": [int(k_ci[0, i]), int(k_ci[1, i])],
            "wr": _f(fit.point_wr[i]),
            "wr_ci": [_f(wr_ci[0, i]), _f(wr_ci[1, i])],
            "theta": float(point.theta[0, i]),
        }
    nu_ci = _pct(fit.nu, level)
    return {
        "models": models,
        "nu": float(point.nu[0]),
        "nu_ci": [float(nu_ci[0]), float(nu_ci[1])],
        "modal_ranking": [model_names[i] for i in summary.modal],
        "modal_fraction": summary.modal_fraction,
        "point_diverged": bool(point.diverged[0]),
        "diverged_replicates": int(fit.diverged.sum()),
        "fallback_replicates": int(fit.fallback.sum()),
    }


def hypoarena_leaderboard(
    verdicts: pd.DataFrame,
    *,
    replicates: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    singleton_domains: Iterable[Any] = (),
) -> dict[str, Any]:
    """HypoArena leaderboard: BTD ratings per domain and pooled, with case-bootstrap intervals (JSON-ready).

    Preconditions: ``verdicts`` as :func:`debias` takes it (invalid verdicts already dropped), non-empty;
    ``replicates >= 1``; ``0 < level < 1``. ``singleton_domains`` only labels domains (``"singleton"``): the
    arena treats every domain alike.
    Returns:
        ``{"domains": {domain: block}, "pooled": block, "method": {...}}`` where a block is
        ``{"models": {model: {"rating", "ci", "rank", "rank_ci", "wr", "wr_ci", "matches", "theta"}}, "nu",
        "nu_ci", "modal_ranking", "modal_fraction", "consistency", "conflict_share", "matches", "cases",
        "two_order_matches", "one_order_matches", "point_diverged", "diverged_replicates",
        "fallback_replicates"}``; pooled models also carry ``"avg_domain_rating"`` (mean of the model's
        domain ratings over the domains it appears in, the paper's "Avg" column), its percentile interval
        ``"avg_domain_ci"`` (the same replicates), ``"avg_domain_rank"``, ``"avg_domain_rank_ci"`` and
        ``"domains"`` (how many domains it appears in).
    """
    if not 0 < level < 1:
        raise ValueError("level must lie strictly between 0 and 1")
    boot = hypoarena_bootstrap(verdicts, replicates=replicates, seed=seed)
    names = boot.models
    singles = set(singleton_domains)
    matches = boot.matches
    out_domains: dict[Any, Any] = {}
    k_all = len(names)
    n_dom = len(boot.domains)
    # Replicate ratings per domain on the global model axis (NaN where a model is absent), for "Avg".
    rep_sum = np.zeros((replicates, k_all))
    rep_n = np.zeros(k_all)
    pt_sum = np.zeros(k_all)
    for d, fit in zip(boot.domains, boot.fits, strict=True):
        frame = matches[matches["domain"] == d]
        block = _summarise_fit(fit, names, level)
        per_model = pd.concat([frame["first"], frame["second"]]).value_counts()
        for m in block["models"]:
            block["models"][m]["matches"] = int(per_model.get(m, 0))
        block.update(_consistency(frame))
        block["matches"] = int(len(frame))
        block["cases"] = int(frame["case"].nunique())
        block["singleton"] = d in singles
        out_domains[d] = block
        rep_sum[:, fit.models] += elo_ratings(fit.theta)
        pt_sum[fit.models] += elo_ratings(fit.point.theta[0])
        rep_n[fit.models] += 1
    pooled = _summarise_fit(boot.pooled, names, level)
    per_model = pd.concat([matches["first"], matches["second"]]).value_counts()
    with np.errstate(invalid="ignore", divide="ignore"):
        avg_pt = pt_sum / rep_n
        avg_rep = rep_sum / rep_n
    avg_ci = _pct(avg_rep, level)
    avg_rank = _ranks(avg_pt[None, :])[0]
    avg_rank_ci = _rank_ci(_ranks(avg_rep), level)
    for i, m in enumerate(names):
        entry = pooled["models"][m]
        entry["matches"] = int(per_model.get(m, 0))
        entry["avg_domain_rating"] = _f(avg_pt[i])
        entry["avg_domain_ci"] = [_f(avg_ci[0, i]), _f(avg_ci[1, i])]
        entry["avg_domain_rank"] = int(avg_rank[i])
        entry["avg_domain_rank_ci"] = [int(avg_rank_ci[0, i]), int(avg_rank_ci[1, i])]
        entry["domains"] = int(rep_n[i])
    pooled.update(_consistency(matches))
    pooled["matches"] = int(len(matches))
    pooled["cases"] = int(matches[["domain", "case"]].drop_duplicates().shape[0])
    return {
        "domains": out_domains,
        "pooled": pooled,
        "method": {
            "model": "Bradley–Terry–Davidson (Davidson 1970), maximum likelihood, Newton on (θ, log ν)",
            "scale": "rating = 1500 + 400·θ/ln 10, θ centered natural-log strengths (mean 0 per fit)",
            "shares": (
                "5-level verdicts → shares 1, .75, .5, .25, 0 of the shown A; both orders averaged into the first "
                "model's debiased share (one order: that order's share, counted in one_order_matches); a share s "
                "enters the likelihood as fractional (win, tie, loss) = (max(0, 2s−1), 1−|2s−1|, max(0, 1−2s)): "
                "an exact ½ is a tie"
            ),
            "wr": "mean debiased share over the model's matches",
            "consistency": (
                "share of two-order matches whose orders agree in polarity (sign of share − ½); a tie against a "
                "win is inconsistent; conflict_share counts opposite winners only"
            ),
            "bootstrap": "case bootstrap, cases resampled with replacement within each domain (a case carries all its matches)",
            "pooled": (
                "one BTD fit over all domains' matches (the same case draws, summed over domains); avg_domain_rating "
                "is the mean of the model's per-domain ratings (the paper's Avg)"
            ),
            "intervals": "percentile (linear interpolation); rank intervals by order statistics (inverted_cdf)",
            "ranks": "1 = best; equal ratings keep the sorted model-name order",
            "replicates": replicates,
            "seed": seed,
            "level": level,
            "domains": n_dom,
            "singleton_domains": sorted((d for d in boot.domains if d in singles), key=_sort_key),
        },
    }


# ---------------------------------------------------------------- rubric


def _score_list(value: Any, what: str, where: str) -> list[float]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"{what} of {where} must be a list of 1–5 scores, got {value!r}")
    out = [float(v) for v in value]
    if any(not (1.0 <= v <= 5.0) for v in out):
        raise ValueError(f"{what} of {where} has a score outside 1–5: {value!r}")
    return out


def _score(value: Any, what: str, where: str, *, required: bool) -> float:
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


def _average_ranks_desc(values: np.ndarray) -> np.ndarray:
    """Ranks 1 = highest; tied values share the mean of the positions they span (scipy's "average")."""
    from scipy.stats import rankdata

    return rankdata(-np.asarray(values, dtype=np.float64), method="average")


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


# ---------------------------------------------------------------- inter-judge agreement


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
        ``{"domains": {domain: {"spearman", "kendall", "rank_shift", "top_k_overlap", "models"}}, "pooled":
        {"spearman", "kendall", "rank_shift", "top_k_overlap", "cells", "domains"}}``:

        * ``spearman``: Spearman's ρ of the two rating vectors (Pearson on average ranks); ``kendall``:
          Kendall's τ-b; both None when undefined (fewer than 2 models, or a constant side);
        * ``rank_shift``: mean |rank_a − rank_b| over the models, ranks 1 = best within the domain, tied
          ratings sharing the mean of their positions (average ranks);
        * ``top_k_overlap``: |top-k(a) ∩ top-k(b)| / k with k = min(top_k, models); ties at the k-th place are
          broken by sorted model name;
        * pooled: ρ and τ over all (model × domain) cells of the two judges' ratings, the rank shift averaged
          over all cells (within-domain ranks), top-k overlap the mean over domains.
    """
    if top_k < 1:
        raise ValueError("top_k must be >= 1")
    domains = sorted(set(ratings_a).intersection(ratings_b), key=_sort_key)
    out: dict[Any, Any] = {}
    cells_a: list[float] = []
    cells_b: list[float] = []
    shifts: list[float] = []
    overlaps: list[float] = []
    for d in domains:
        models = sorted(set(ratings_a[d]).intersection(ratings_b[d]), key=_sort_key)
        a = np.array([float(ratings_a[d][m]) for m in models])
        b = np.array([float(ratings_b[d][m]) for m in models])
        if len(models) == 0:
            out[d] = {"spearman": None, "kendall": None, "rank_shift": None, "top_k_overlap": None, "models": 0}
            continue
        shift = np.abs(_average_ranks_desc(a) - _average_ranks_desc(b))
        k = min(top_k, len(models))
        overlap = len(_top_k(models, a, k) & _top_k(models, b, k)) / k
        out[d] = {
            "spearman": _f(_spearman(a, b)) if len(models) > 1 else None,
            "kendall": _f(_kendall_tau_b(a, b)) if len(models) > 1 else None,
            "rank_shift": float(shift.mean()),
            "top_k_overlap": overlap,
            "models": len(models),
        }
        cells_a.extend(a)
        cells_b.extend(b)
        shifts.extend(shift)
        overlaps.append(overlap)
    ca, cb = np.array(cells_a), np.array(cells_b)
    pooled = {
        "spearman": _f(_spearman(ca, cb)) if len(ca) > 1 else None,
        "kendall": _f(_kendall_tau_b(ca, cb)) if len(ca) > 1 else None,
        "rank_shift": float(np.mean(shifts)) if shifts else None,
        "top_k_overlap": float(np.mean(overlaps)) if overlaps else None,
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
        agree = int((f["outcome_a"] == f["outcome_b"]).sum())
        conf = {x: {y: int(((f["outcome_a"] == x) & (f["outcome_b"] == y)).sum()) for y in labels} for x in labels}
        return {"shared": int(len(f)), "agree": agree, "agreement": agree / len(f) if len(f) else None, "confusion": conf}

    domains = sorted(set(shared["domain"]), key=_sort_key)
    return {"domains": {d: block(shared[shared["domain"] == d]) for d in domains}, "pooled": block(shared)}


def _rowwise_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
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
        enc_a.append(_encode_domain(d, ga[d], models, cases))
        enc_b.append(_encode_domain(d, gb[d], models, cases))
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
