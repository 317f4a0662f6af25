"""Tie sensitivity of the ordering to the order-sensitive cases (PROTOCOL.md section 1).

* Scheme A (conservative): every sensitive case is a tie, half a win to each side. This is exactly the
  *folded* BT fit, so it is computed from it (and from the folded fit's bootstrap).
* Scheme B (adversarial): every sensitive case is a full win for the lower-ranked model of its pair under
  a reference ordering (the reported one); we report the resulting head-to-heads, BT ranking, Condorcet
  relation, and which relations between reference-adjacent models flip.

Note: the release's own tie-sensitivity report fitted both schemes without a pseudo-count
(``pseudo_count=0``); pass that to reproduce its strengths (rankings do not depend on it there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .bt import fit_bt, ranking_from_theta
from .folding import EncodedCases
from .matrices import win_matrix
from .relations import as_number, condorcet


def scheme_a(enc: EncodedCases, *, pseudo_count: float = 0.5) -> dict[str, Any]:
    """Scheme A: sensitive cases as ties. Returns ``{"ranking", "strengths", "converged", "diverged"}``.

    (The bootstrap modal fraction of scheme A is the folded fit's, see :func:`arena.stats.leaderboard`.)
    """
    fit = fit_bt(win_matrix(enc, "folded"), pseudo_count=pseudo_count)
    order = ranking_from_theta(fit.theta)
    return {
        "ranking": [enc.models[i] for i in order],
        "strengths": {enc.models[i]: float(fit.theta[i]) for i in order},
        "converged": fit.converged,
        "diverged": fit.diverged,
    }


def scheme_b(enc: EncodedCases, reference_order: Sequence[str], *, pseudo_count: float = 0.5) -> dict[str, Any]:
    """Scheme B: every sensitive case awarded to the lower-ranked model of its pair in ``reference_order``.

    Preconditions:
        ``reference_order`` lists every model of ``enc`` once, best first.
    Returns:
        ``{"reference": [...], "ranking": [...], "strengths": {...}, "head_to_head": [{"a", "b", "a_wins",
        "b_wins", "stable_a_wins", "stable_b_wins", "sensitive"}], "flipped": [...], "tied": [...],
        "ranking_flips": [...], "condorcet": {...}, "converged", "diverged"}``, where in every pair ``a`` is
        the model ranked higher in the reference. ``flipped`` lists the reference-adjacent pairs whose
        head-to-head majority is reversed after the assignment (a_wins < b_wins), ``tied`` those left
        level; ``ranking_flips`` the reference-adjacent pairs whose order is reversed in the scheme-B BT ranking.
    """
    ref = [str(m) for m in reference_order]
    if sorted(ref) != sorted(enc.models):
        raise ValueError("reference_order must list every model exactly once")
    rank = np.empty(enc.n_models, dtype=np.int64)
    for pos, m in enumerate(ref):
        rank[enc.models.index(m)] = pos
    w_b = win_matrix(enc, "scheme_b", reference_rank=rank)
    w_s = win_matrix(enc, "stable")
    fit = fit_bt(w_b, pseudo_count=pseudo_count)
    order = ranking_from_theta(fit.theta)
    ranking = [enc.models[i] for i in order]
    idx = {m: enc.models.index(m) for m in ref}
    h2h = []
    for x, a in enumerate(ref):
        for b in ref[x + 1 :]:
            i, j = idx[a], idx[b]
            n = w_b[i, j] + w_b[j, i]
            if n == 0:
                continue
            h2h.append(
                {
                    "a": a,
                    "b": b,
                    "a_wins": as_number(w_b[i, j]),
                    "b_wins": as_number(w_b[j, i]),
                    "stable_a_wins": as_number(w_s[i, j]),
                    "stable_b_wins": as_number(w_s[j, i]),
                    "sensitive": as_number(n - w_s[i, j] - w_s[j, i]),
                }
            )
    adjacent = {(ref[x], ref[x + 1]) for x in range(len(ref) - 1)}
    flipped = [d for d in h2h if (d["a"], d["b"]) in adjacent and d["a_wins"] < d["b_wins"]]
    tied = [d for d in h2h if (d["a"], d["b"]) in adjacent and d["a_wins"] == d["b_wins"]]
    new_pos = {m: p for p, m in enumerate(ranking)}
    ranking_flips = [[a, b] for a, b in sorted(adjacent, key=lambda t: ref.index(t[0])) if new_pos[a] > new_pos[b]]
    return {
        "reference": ref,
        "ranking": ranking,
        "strengths": {enc.models[i]: float(fit.theta[i]) for i in order},
        "head_to_head": h2h,
        "flipped": flipped,
        "tied": tied,
        "ranking_flips": ranking_flips,
        "condorcet": condorcet(w_b, enc.models, order=ref),
        "converged": fit.converged,
        "diverged": fit.diverged,
    }
