"""The leaderboard's ``style_control`` section (issue 26): the style-controlled ranking beside the plain one.

The caller gives the cases (the ``cases`` frame of :func:`arena.stats.folding.encode_cases`) and the style counts
of every judged text, keyed by ``(context, model)`` (:func:`arena.stats.style_text.style_features` of each side's
proposal). Each complete case gives two ordered judgments (:func:`arena.stats.pairwise.judgments_from_cases`, a the
pair's lower model index) that share one style difference: features of a's text minus features of b's. Cases
whose two texts are not both known are left out of the fit (and counted); the plain fit the rank Δ is taken
against is the Bradley–Terry fit of the same judgments (:func:`arena.stats.style.style_control`), so that a rank Δ
is the effect of the covariates, not of a different sample.

Requested features are the names of :data:`STYLE_FEATURES` (``length``, ``citations``, ``structure``, or the counts
``words``, ``headers``, ``lists``, ``bold``); a feature that never differs between the two sides of any judgment
has no identified coefficient and is dropped with its reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .folding import encode_cases
from .pairwise import judgments_from_cases
from .style import style_control

#: Requestable style features: the name a reader asks for, the count of :mod:`arena.stats.style_text` it uses, its unit.
STYLE_FEATURES: dict[str, tuple[str, str]] = {
    "length": ("words", "word"),
    "citations": ("citations", "cited paper"),
    "structure": ("structure", "header, list item or bold span"),
    "words": ("words", "word"),
    "headers": ("headers", "Markdown header"),
    "lists": ("lists", "list item"),
    "bold": ("bold", "bold span"),
}
#: What ``--style-control`` means without a list: the three of the issue.
DEFAULT_STYLE = ("length", "citations", "structure")
#: Bootstrap replicates of the style fit (contexts resampled; every coefficient and strength gets a percentile CI).
STYLE_REPLICATES = 1_000


def parse_style(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """The requested features, in the order given, from ``"length,citations"`` or a list; () for none.

    Raises:
        ValueError: naming each unknown feature and the choices.
    """
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(dict.fromkeys(s.strip().lower() for s in items if s and s.strip()))
    unknown = [n for n in names if n not in STYLE_FEATURES]
    if unknown:
        raise ValueError(f"unknown style feature(s) {', '.join(unknown)}: choose from {', '.join(STYLE_FEATURES)}")
    return names


def _unavailable(style: Sequence[str], reason: str, used: dict[str, int], dropped: list[dict[str, str]]) -> dict[str, Any]:
    return {"available": False, "reason": reason, "requested": list(style), "judgments": used, "dropped": dropped}


def leaderboard_style(
    cases: pd.DataFrame,
    side_features: Mapping[tuple[str, str], Mapping[str, float]],
    style: Sequence[str],
    *,
    replicates: int = STYLE_REPLICATES,
    seed: int = 0,
    pseudo_count: float = 0.5,
    level: float = 0.95,
) -> dict[str, Any]:
    """The ``style_control`` section (see the module docstring), JSON-ready.

    Returns:
        ``available`` (False with a ``reason`` when nothing can be fitted); ``requested``; ``judgments`` {used,
        total, without_text, contexts}; ``dropped`` [{feature, reason}]; and, when available, ``features`` (the
        fitted ones), ``coefficients`` {feature: {gamma, ci, gamma_raw, ci_raw, scale, counts, unit}}, ``models``
        (best first by the style-controlled strength: strength, ci, rank, plain_strength, plain_rank, rank_delta),
        ``fit``, ``replicates``, ``seed``, ``level``, ``pseudo_count`` (:func:`arena.stats.style.style_control`).
    """
    style = tuple(style)
    enc = encode_cases(cases)
    j = judgments_from_cases(enc)
    c = enc.complete
    contexts = enc.context[c].astype(str)
    lo = [enc.models[i] for i in enc.lo[c]]
    hi = [enc.models[i] for i in enc.hi[c]]
    side_a = [side_features.get((ctx, m)) for ctx, m in zip(contexts, lo, strict=True)]
    side_b = [side_features.get((ctx, m)) for ctx, m in zip(contexts, hi, strict=True)]
    known = np.array([x is not None and y is not None for x, y in zip(side_a, side_b, strict=True)], dtype=bool)
    keep = np.concatenate([known, known])
    used = {
        "used": int(keep.sum()),
        "total": int(j.n),
        "without_text": int(j.n - keep.sum()),
        "contexts": len(set(contexts[known].tolist())),
    }
    if enc.n_models < 2 or not known.any():
        return _unavailable(style, "no judged case has the texts of both sides", used, [])
    counted = [STYLE_FEATURES[f][0] for f in style]
    diff_case = np.array(
        [[side_a[i][k] - side_b[i][k] for k in counted] for i in np.flatnonzero(known)], dtype=np.float64
    ).reshape(-1, len(counted))
    varies = (diff_case != 0).any(axis=0)
    dropped = [
        {"feature": f, "reason": "never differs between the two sides of a judgment"}
        for f, v in zip(style, varies, strict=True)
        if not v
    ]
    fitted = [f for f, v in zip(style, varies, strict=True) if v]
    sub = j.subset(keep)
    if sub.n_clusters < 2:
        return _unavailable(style, "the texts of both sides are known in fewer than two contexts", used, dropped)
    diffs = np.vstack([diff_case, diff_case])[:, varies]
    result = style_control(sub, diffs, features=fitted, pseudo_count=pseudo_count, replicates=replicates, seed=seed, level=level)
    for f in fitted:
        result["coefficients"][f] |= {"counts": STYLE_FEATURES[f][0], "unit": STYLE_FEATURES[f][1]}
    return {"available": True, "reason": None, "requested": list(style), "judgments": used, "dropped": dropped, **result}
