"""Cost to precision, before launch (issue 27): for a benchmark and a selection, the full run's calls and expected CI
width, and the adaptive projection (``arena.stats.adaptive_projection.projection``) of the calls it would take to reach
a target.

The subjects are the ones the run would get: the kind plans them exactly as at launch (its refusals and orientation gate
included) inside a transaction that is rolled back, so nothing is kept. The strengths assumed are a prior (evenly
spread, with the spread of the release's fitted strengths): nothing is known of a judge not run yet. The figures are
cached (the same question asked again costs nothing) and computed from :data:`SIMULATIONS` simulated runs: a median
and quartiles, seconds of work for the release's 78 subjects.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.core.cache import cache
from django.db import transaction

from . import adaptive

#: Simulated adaptive runs behind a projection (few: the form waits for it).
SIMULATIONS = 10
#: How long a projection is kept (seconds): a benchmark's subjects do not change under a form.
CACHE_SECONDS = 3600


def _pool(request: Any) -> list[list[Any]]:  # noqa: ANN401
    """The subjects (with item and sides) a run of ``request`` would choose from, planned and rolled back."""
    from .services import judge_run_create

    with transaction.atomic():
        run, _ = judge_run_create(request=request)
        found = list(run.parameters[adaptive.PARAMETER]["pool"])
        transaction.set_rollback(True)  # a projection makes nothing
    return found


def cost_to_precision(*, request: Any) -> dict[str, Any]:  # noqa: ANN401
    """The figures for an adaptive ``JudgeRunRequest`` (its ``adaptive`` settings name the target, alpha and batch).

    Raises ``RunError`` (what the launch would refuse) and ``jobs.adaptive.AdaptiveError``.
    """
    settings = request.adaptive
    key = (
        "cost-to-precision:"
        + hashlib.sha256(
            json.dumps(
                [request.benchmark.pk, request.select, request.seed, request.run_type, request.task_kind, settings],
                sort_keys=True,
                default=str,
            ).encode()
        ).hexdigest()
    )
    cached = cache.get(key)
    if cached is not None:
        return cached
    figures = _figures(_pool(request), settings)
    cache.set(key, figures, CACHE_SECONDS)
    return figures


def _figures(pool: list[list[Any]], settings: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    from arena.stats.adaptive import units
    from arena.stats.adaptive_projection import projection, spread_prior

    sides = sorted({r[2] for r in pool} | {r[3] for r in pool}, key=str)
    if len(sides) < 2:
        return {"subjects": len(pool), "full_calls": 2 * len(pool), "projected": False}
    index = {s: i for i, s in enumerate(sides)}
    design = units([str(r[1]) for r in pool], [index[r[2]] for r in pool], [index[r[3]] for r in pool], n_models=len(sides))
    target = adaptive.target_of(settings, None)
    p = projection(
        spread_prior(len(sides)),
        target,
        design=design,
        batch_size=int(settings["batch"]),
        rule=settings["rule"],
        simulations=SIMULATIONS,
        seed=int(settings["seed"]),
    )
    return {
        "subjects": len(pool),
        "sides": len(sides),
        "full_calls": int(p.full_calls),
        "full_ci_width": round(float(p.full_ci_width), 3),
        "adaptive_calls": int(np.ceil(p.adaptive_calls)),
        "adaptive_calls_range": [int(np.ceil(x)) for x in p.adaptive_calls_range],
        "adaptive_ci_width": round(float(p.adaptive_ci_width), 3),
        "reached": round(float(p.reached), 2),
        "savings": round(float(p.savings), 2),
        "simulations": SIMULATIONS,
        "projected": True,
    }
