"""How much the pseudo-count prior weighs in a Bradley–Terry fit (issue 10, item 8).

The release adds 0.5 to every off-diagonal cell of the win matrix. With few comparisons per pair this is a
mild prior that keeps strengths finite; it is not harmless at scale. At 200 models with about 25 cases per
pair it shrinks strengths towards 0 (slope 0.965) while the case bootstrap's intervals get narrow, so the
shrinkage becomes large against the interval: nominal 95% intervals covered the truth for only 74% of models.

:func:`prior_weight` reports the prior's share of the data and, what decides coverage, how far the prior
moves each strength compared with that strength's interval: a bias of δ standard errors gives a nominal
95% interval coverage P(|Z + δ| < 1.96), 92% at δ = 0.5 and 83% at δ = 1. Since a 95% half-width is
about 1.96 standard errors, the flag ``large`` is raised when the median model's shift exceeds
:data:`SHIFT_RATIO_LIMIT` (0.35, δ ≈ 0.7) of its half-width, or when the plain MLE does not exist (the
prior then decides the magnitudes). The shift is measured against the plain MLE, which itself is biased
away from 0 in small samples, so on little data it overstates the prior's bias (a conservative flag).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .bt import add_pseudo_count, fit_bt, strongly_connected

#: Flag when the prior moves the typical (median) strength by more than this fraction of its 95% CI
#: half-width (δ ≈ 0.7 SE, coverage ≈ 89% for such a model). Calibrated on bench/bench_scale_stats.py
#: simulations: median ratio 0.18-0.21 where coverage was 0.89-0.93, 0.49 at 200 models (coverage 0.78),
#: 0.83 and 1.9 under heavier priors (coverage 0.68 and 0.34).
SHIFT_RATIO_LIMIT = 0.35
#: A cell counts as prior-dominated-ish when the pseudo-count is more than this share of it.
CELL_SHARE_LIMIT = 0.1


def prior_weight(
    w: np.ndarray,
    pseudo_count: float,
    *,
    theta: np.ndarray | None = None,
    ci: np.ndarray | None = None,
) -> dict[str, Any]:
    """The prior's weight in the BT fit of the win matrix ``w`` (K, K) with ``pseudo_count`` per cell.

    Preconditions:
        ``w`` non-negative (diagonal ignored); ``theta`` (optional) the fit with the pseudo-count, computed
        here when absent; ``ci`` (optional, (K, 2)) each model's interval, e.g. the case-bootstrap 95% CI.
    Returns:
        A JSON-ready dict: ``pseudo_count``; ``prior_share`` (pseudo-counts / all counts, over every
        off-diagonal cell); ``cell_share_median`` / ``cell_share_max`` (pseudo-count / (cell + pseudo-count)
        over the cells of pairs that were compared) and ``cells_over_limit`` (fraction of them above
        :data:`CELL_SHARE_LIMIT`); ``mle_exists``; ``max_shift`` (max |θ with prior − θ without|, None
        without an MLE); ``max_shift_ratio`` (max of shift / CI half-width, None without ``ci`` or MLE);
        ``median_shift_ratio`` (the same, median over models); ``large`` (see module docstring).
    """
    w0 = add_pseudo_count(w, 0.0)
    k = w0.shape[0]
    off = ~np.eye(k, dtype=bool)
    prior_total = pseudo_count * k * (k - 1)
    data_total = float(w0.sum())
    compared = off & ((w0 + w0.T) > 0)
    cell_share = pseudo_count / (w0[compared] + pseudo_count) if pseudo_count > 0 else np.zeros(int(compared.sum()))
    out: dict[str, Any] = {
        "pseudo_count": float(pseudo_count),
        "prior_share": prior_total / (prior_total + data_total) if prior_total + data_total > 0 else 0.0,
        "cell_share_median": float(np.median(cell_share)) if cell_share.size else None,
        "cell_share_max": float(cell_share.max()) if cell_share.size else None,
        "cells_over_limit": float((cell_share > CELL_SHARE_LIMIT).mean()) if cell_share.size else None,
        "mle_exists": bool(strongly_connected(w0)),
        "max_shift": None,
        "max_shift_ratio": None,
        "median_shift_ratio": None,
        "large": False,
    }
    if pseudo_count == 0:
        return out
    if not out["mle_exists"]:
        out["large"] = True
        return out
    with_prior = fit_bt(w0, pseudo_count=pseudo_count).theta if theta is None else np.asarray(theta, dtype=np.float64)
    shift = np.abs(with_prior - fit_bt(w0).theta)
    out["max_shift"] = float(shift.max())
    if ci is not None:
        ci = np.asarray(ci, dtype=np.float64)
        half = (ci[:, 1] - ci[:, 0]) / 2.0
        width = half > 0
        ratios = shift[width] / half[width]
        median = float(np.median(ratios)) if width.any() else None
        out["max_shift_ratio"] = float(ratios.max()) if width.any() else None
        out["median_shift_ratio"] = median
        # A zero-width interval that the prior moved off counts as large too.
        out["large"] = bool((median is not None and median > SHIFT_RATIO_LIMIT) or (shift[~width] > 1e-12).any())
    return out
