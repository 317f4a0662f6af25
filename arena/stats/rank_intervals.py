"""What a leaderboard reader looks for beside the strengths (issue 24, "Leaderboard readers"): the range of ranks a
model takes over the bootstrap replicates already drawn, and how many comparisons each model and each pair of models
rests on.

Rank intervals are read from the replicate strengths the leaderboard's case bootstrap has already fitted: no new
resampling, so the figure costs one sort of the (R, K) strengths. Ranks follow :func:`arena.stats.bt.replicate_rankings`
(tied strengths in random order, so a tie spans its ranks), the same ranks as the rank probabilities of :func:`arena.stats.bootstrap.ranking_summary`;
the bounds are order statistics (``inverted_cdf``), so both are whole ranks a replicate actually gave, as HypoArena's rank
intervals are (:mod:`arena.stats.hypoarena_intervals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .bt import ranking_from_theta, replicate_rankings

#: What a comparison is in the counts below: one accepted ordered judgment of a complete case (a canonical pair judged
#: in both presentation orders gives two), the unit the ordered Bradley–Terry fit (the paper's Table 1) counts.
COMPARISON_UNIT = "ordered judgment"


def replicate_ranks(theta: np.ndarray, *, break_ties: bool = True) -> np.ndarray:
    """The rank (1 = best) of each model in each replicate of ``theta`` (R, K), as an (R, K) integer array.

    Ties in random order (:func:`arena.stats.bt.replicate_rankings`: over replicates a tie spans its ranks, whatever
    the names); ``break_ties=False`` keeps index order, for the ranks of one fit shown beside a listing in that
    order (a point estimate's rank column)."""
    theta = np.atleast_2d(theta)
    order = replicate_rankings(theta) if break_ties else ranking_from_theta(theta)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1, order.shape[1] + 1), order.shape), axis=1)
    return ranks


def rank_intervals(theta: np.ndarray, level: float = 0.95) -> np.ndarray:
    """The central ``level`` interval of each model's rank over the replicates ``theta`` (R, K): shape (K, 2), whole ranks.

    The lower bound is the smallest rank r with P(rank <= r) >= (1 - level) / 2, the upper the smallest r with
    P(rank <= r) >= (1 + level) / 2, P being the share of replicates (numpy's ``inverted_cdf`` quantile).
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, not {level!r}")
    alpha = (1.0 - level) / 2.0
    bounds = np.quantile(replicate_ranks(theta), [alpha, 1.0 - alpha], axis=0, method="inverted_cdf")
    return bounds.T.astype(np.int64)


def comparison_counts(ordered_head_to_head: Sequence[dict[str, Any]], models: Sequence[str]) -> dict[str, Any]:
    """How many comparisons (:data:`COMPARISON_UNIT`) each model and each pair of models has, from the leaderboard's
    ordered head-to-head (``[{"a", "b", "a_wins", "b_wins", "ties"}]``, one entry per pair with a complete case).

    Returns ``{"unit", "models": {model: n}, "pairs": [{"a", "b", "judgments", "a_wins", "b_wins", "ties",
    "a_share"}]}``: ``a_share`` is a's share of the pair's judgments that were not a TIE (None when every one was), as
    Chatbot Arena's win-fraction matrix reads; pairs follow the head-to-head's order, models the order given.
    """
    per_model = dict.fromkeys(models, 0)
    pairs = []
    for h in ordered_head_to_head:
        n = int(h["a_wins"]) + int(h["b_wins"]) + int(h["ties"])
        per_model[h["a"]] += n
        per_model[h["b"]] += n
        decided = int(h["a_wins"]) + int(h["b_wins"])
        pairs.append(
            {
                "a": h["a"],
                "b": h["b"],
                "judgments": n,
                "a_wins": int(h["a_wins"]),
                "b_wins": int(h["b_wins"]),
                "ties": int(h["ties"]),
                "a_share": int(h["a_wins"]) / decided if decided else None,
            }
        )
    return {"unit": COMPARISON_UNIT, "models": per_model, "pairs": pairs}
