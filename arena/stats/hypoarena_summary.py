"""HypoArena leaderboard: BTD ratings per domain and pooled with case-bootstrap intervals, as one JSON-ready dict.

Split from :mod:`arena.stats.hypoarena` (which re-exports :func:`hypoarena_leaderboard`): this module only
summarises the fits of :func:`arena.stats.hypoarena_fits.hypoarena_bootstrap` (ratings, ranks, intervals, the
paper's "Avg" column, order consistency) and states the method in words.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import ranking_summary
from .btd import SEPARATION_PSEUDO_COUNT, elo_ratings
from .hypoarena_fits import FitReplicates, hypoarena_bootstrap
from .hypoarena_intervals import _f, _pct, _rank_ci, _ranks
from .hypoarena_verdicts import _sort_key


def _consistency(frame: pd.DataFrame) -> dict[str, Any]:
    """Order consistency of the two-order matches (the one-order ones cannot be checked, only counted).

    On numpy arrays: the flags of two-order matches are never missing, and their mean is a count over a count.
    """
    two = frame["orders"].to_numpy() == 2
    n_two = int(two.sum())

    def share(column: str) -> float | None:
        return _f(frame[column].to_numpy(dtype=np.float64, na_value=np.nan)[two].mean()) if n_two else None

    return {
        "consistency": share("consistent"),
        "conflict_share": share("conflict"),
        "two_order_matches": n_two,
        "one_order_matches": int(len(frame) - n_two),
    }


def _summarise_fit(fit: FitReplicates, names: list[Any], level: float) -> dict[str, Any]:
    """The per-fit block of the leaderboard: models with ratings, ranks, intervals; ν; the modal ranking."""
    point = fit.point
    ratings = elo_ratings(point.theta[0])
    rank = _ranks(point.theta, replicates=False)[0]
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
    # Per-domain rows, counts and cases come from the bootstrap's codes: no label is compared or hashed again.
    for d, fit, rows, per_model, cases in zip(
        boot.domains, boot.fits, boot.domain_rows, boot.model_matches, boot.cases, strict=True
    ):
        frame = matches.iloc[rows]
        block = _summarise_fit(fit, names, level)
        for g, entry in zip(fit.models, block["models"].values(), strict=True):
            entry["matches"] = int(per_model[g])
        block.update(_consistency(frame))
        block["matches"] = int(len(frame))
        block["cases"] = len(cases)
        block["singleton"] = d in singles
        out_domains[d] = block
        rep_sum[:, fit.models] += elo_ratings(fit.theta)
        pt_sum[fit.models] += elo_ratings(fit.point.theta[0])
        rep_n[fit.models] += 1
    pooled = _summarise_fit(boot.pooled, names, level)
    pooled_matches = np.sum(boot.model_matches, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg_pt = pt_sum / rep_n
        avg_rep = rep_sum / rep_n
    avg_ci = _pct(avg_rep, level)
    avg_rank = _ranks(avg_pt[None, :], replicates=False)[0]
    avg_rank_ci = _rank_ci(_ranks(avg_rep), level)
    for i, m in enumerate(names):
        entry = pooled["models"][m]
        entry["matches"] = int(pooled_matches[i])
        entry["avg_domain_rating"] = _f(avg_pt[i])
        entry["avg_domain_ci"] = [_f(avg_ci[0, i]), _f(avg_ci[1, i])]
        entry["avg_domain_rank"] = int(avg_rank[i])
        entry["avg_domain_rank_ci"] = [int(avg_rank_ci[0, i]), int(avg_rank_ci[1, i])]
        entry["domains"] = int(rep_n[i])
    pooled.update(_consistency(matches))
    pooled["matches"] = int(len(matches))
    pooled["cases"] = sum(len(c) for c in boot.cases)  # a case belongs to one domain
    return {
        "domains": out_domains,
        "pooled": pooled,
        "method": {
            "model": (
                "Bradley–Terry–Davidson (Davidson 1970), maximum likelihood, Newton on (θ, log ν); where the estimate may "
                "not exist (wins not strongly connected, or no decisive outcome) the fit adds a "
                f"{SEPARATION_PSEUDO_COUNT:g} pseudo-win to every "
                "ordered pair and is flagged diverged: its order follows the data, its magnitudes are not estimable"
            ),
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
