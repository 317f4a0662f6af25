"""The two scales a Lit2Test leaderboard can be read on (issue 24): the Bradley–Terry log-ability the document is
computed on (θ, centered natural-log strength, what the paper's Table 1 prints), and the Elo-style 1500 scale
HypoArena's leaderboard uses (rating = 1500 + 400 · θ / ln 10, :func:`arena.stats.btd.elo_ratings`), so that a
reader can put both protocols' figures side by side.

The map is increasing and affine, so a percentile interval of θ maps end for end onto the percentile interval of the
rating, the ranks and every ratio of widths stay as they are, and a difference of strengths (the prior's shift) is
multiplied by 400 / ln 10.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from .btd import ELO_CENTER, ELO_SCALE, elo_ratings

LOG_ABILITY = "log-ability"
ELO = "elo"
#: The scales, the document's own first.
SCALES = (LOG_ABILITY, ELO)
#: What each scale's figures are, as the document's ``bt.scale`` says it.
SCALE_DESCRIPTIONS = {
    LOG_ABILITY: "centered natural-log ability (mean 0)",
    ELO: "Elo-style rating 1500 + 400·θ/ln 10 (θ the centered natural-log ability; 1500 is the mean model)",
}
#: Rating points per unit of log-ability.
ELO_PER_LOG_ABILITY = ELO_SCALE / math.log(10.0)
#: The fit kinds whose strengths the document holds (``bt``, ``cluster_bootstrap.fits``).
_KINDS = ("ordered", "folded", "stable")


def _rating(value: float | None) -> float | None:
    return None if value is None else float(elo_ratings(value))


def _ci(ci: list[float | None] | None) -> list[float | None] | None:
    return None if ci is None else [_rating(v) for v in ci]


def _strengths(by_model: dict[str, float | None] | None) -> None:
    """Map a ``{model: strength}`` block in place."""
    for model, value in (by_model or {}).items():
        by_model[model] = _rating(value)  # type: ignore[index]


def document_on_scale(doc: dict[str, Any], scale: str) -> dict[str, Any]:
    """The leaderboard document (:func:`arena.stats.leaderboard.leaderboard_document`) with every strength, strength
    interval and strength difference on ``scale`` (one of :data:`SCALES`), and ``scale`` saying which.

    ``doc`` is left as it is (a cached document is shared); on the log-ability scale the result is a shallow copy.
    Scale-free figures (ranks, rank intervals, probabilities, counts, width ratios, the prior's shares) are unchanged.
    """
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}: choose one of {', '.join(SCALES)}")
    scale_block = {"name": scale, "description": SCALE_DESCRIPTIONS[scale]}
    if scale == ELO:
        scale_block |= {"center": ELO_CENTER, "points_per_log_ability": ELO_PER_LOG_ABILITY}
    if scale == LOG_ABILITY:
        return doc | {"scale": scale_block}
    out = copy.deepcopy(doc)
    bt = out.get("bt") or {}
    for kind in _KINDS:
        for entry in (bt.get(kind) or {}).values():
            entry["strength"], entry["ci"] = _rating(entry.get("strength")), _ci(entry.get("ci"))
    if "scale" in bt:
        bt["scale"] = SCALE_DESCRIPTIONS[ELO]
    cluster = out.get("cluster_bootstrap") or {}
    for model, ci in (cluster.get("ci") or {}).items():
        cluster["ci"][model] = _ci(ci)
    for block in (cluster.get("fits") or {}).values():
        for model, ci in (block.get("ci") or {}).items():
            block["ci"][model] = _ci(ci)
    for scheme in (out.get("tie_sensitivity") or {}).values():
        _strengths(scheme.get("strengths"))
    for batch in out.get("batches") or []:
        _strengths(batch.get("strengths"))
    prior = (out.get("diagnostic") or {}).get("prior_weight") or {}
    if prior.get("max_shift") is not None:
        prior["max_shift"] = prior["max_shift"] * ELO_PER_LOG_ABILITY  # a difference: no centre
    _honest_and_style(out)
    return out | {"scale": scale_block}


def _widths(by_model: dict[str, float | None] | None) -> None:
    """Map a ``{model: width}`` block (a standard error, a shift: no centre) in place."""
    for model, value in (by_model or {}).items():
        by_model[model] = None if value is None else value * ELO_PER_LOG_ABILITY  # type: ignore[index]


def _honest_and_style(out: dict[str, Any]) -> None:
    """The honest-interval and style-control sections (issue 26), in place: strengths and interval ends mapped,
    standard errors and the prior's shifts multiplied by the points per log-ability; ranks, coverages, ratios and the
    style coefficients (log-odds per unit) unchanged."""
    honest = out.get("honest_intervals") or {}
    sandwich = honest.get("sandwich") or {}
    _widths(sandwich.get("se"))
    for model, ci in (sandwich.get("ci") or {}).items():
        sandwich["ci"][model] = _ci(ci)
    prior = honest.get("prior") or {}
    for key in ("shift", "se"):
        _widths(prior.get(key))
    for row in (out.get("style_control") or {}).get("models") or []:
        row["strength"], row["plain_strength"] = _rating(row["strength"]), _rating(row["plain_strength"])
        row["ci"] = _ci(row["ci"])
