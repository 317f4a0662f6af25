"""Win rate per model from pairwise labels (the leaderboard's "Human WR", PROTOCOL.md section 1), with its
count and an item-bootstrap confidence interval.

A label gives its chosen model a score of 1 and the other 0; TIE gives 0.5 to each; INVALID counts for
neither (it is dropped). A model's win rate is its mean score over the labels it appears in. Several labels
of one item (one per annotator) are not independent, so the interval resamples *items* with replacement,
all labels of an item together, and takes percentiles (not a Wilson interval, which would treat every label
as an independent trial and be too narrow).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

WIN_RATE_METHOD = "item bootstrap (all labels of an item resampled together), percentile"
WIN_RATE_REPLICATES = 2000


def win_rates(
    labels: pd.DataFrame,
    *,
    tie: str = "TIE",
    invalid: str = "INVALID",
    replicates: int = WIN_RATE_REPLICATES,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Per-model win rates with counts and CIs.

    Preconditions:
        ``labels`` has columns ``item`` (hashable), ``model_1``, ``model_2`` (model names) and ``winner``
        (``model_1``, ``model_2``, ``tie`` or ``invalid``); one row per label; ``replicates >= 1``.
    Returns:
        ``{"method", "replicates", "seed", "level", "models": {model: {"rate", "n", "items", "ci"}}}`` with
        models by rate, best first (then by name); ``n`` is the number of labels the model appears in (INVALID
        excluded), ``items`` the number of distinct items; ``ci`` is None for a model seen in a single item.
    """
    head = {"method": WIN_RATE_METHOD, "replicates": replicates, "seed": seed, "level": level}
    rows = labels[labels["winner"] != invalid] if not labels.empty else labels
    if rows.empty:
        return head | {"models": {}}
    models = sorted(set(rows["model_1"]) | set(rows["model_2"]))
    index = {m: k for k, m in enumerate(models)}
    item_ids = sorted(set(rows["item"]), key=str)
    item_pos = {it: n for n, it in enumerate(item_ids)}
    score = np.zeros((len(item_ids), len(models)))
    seen = np.zeros((len(item_ids), len(models)))
    for row in rows.itertuples(index=False):
        n = item_pos[row.item]
        for model in (row.model_1, row.model_2):
            seen[n, index[model]] += 1
            score[n, index[model]] += 0.5 if row.winner == tie else float(row.winner == model)
    total_score, total_seen = score.sum(axis=0), seen.sum(axis=0)
    items_of = (seen > 0).sum(axis=0)

    rng = np.random.default_rng(seed)
    n_items = len(item_ids)
    draws = rng.multinomial(n_items, np.full(n_items, 1 / n_items), size=replicates)  # (R, items)
    boot_score, boot_seen = draws @ score, draws @ seen
    with np.errstate(invalid="ignore", divide="ignore"):
        boot_rate = np.where(boot_seen > 0, boot_score / boot_seen, np.nan)
    out: dict[str, dict[str, Any]] = {}
    rate = total_score / total_seen
    for k in sorted(range(len(models)), key=lambda k: (-rate[k], models[k])):
        ci = None
        if items_of[k] > 1:
            lo, hi = np.nanpercentile(boot_rate[:, k], [100 * (1 - level) / 2, 100 * (1 + level) / 2])
            ci = [float(lo), float(hi)]
        out[models[k]] = {"rate": float(rate[k]), "n": int(total_seen[k]), "items": int(items_of[k]), "ci": ci}
    return head | {"models": out}
