"""Adaptive judge runs: judge in rounds and stop when the ranking is known (issue 27), for every task kind that compares
two sides.

A run launched with ``adaptive`` parameters (``JudgeRunRequest.adaptive``, :func:`adaptive_parameters`) does not get
every subject's tasks at once. Its kind plans the whole selection as usual (the orientation gate included); the run
keeps that *pool* (each subject with its item and its two sides, from the kind's ``unit_sides`` hook) in its
parameters and gets the tasks of round 0 only: the warm-up batch the statistics choose (``arena.stats.adaptive``),
both orders of each chosen subject. When a round's tasks are all done, the engine's durable step (``jobs.steps``:
exactly once, rolled back whole by a dead worker or a database outage, tried again) carries out :func:`round_step`:
it refits from the run's own verdicts (the kind's ``sides`` hook), asks ``target_met`` whether the target holds, and
either lets the run end (recording why and the figures) or adds the next batch's tasks and keeps it running.

Determinism: round r's batch is drawn with the seed ``[run seed, r]`` from the verdicts of rounds < r, so a step tried
again after a kill picks the same batch; tasks are unique per (run, subject, order), so no verdict can be doubled.

The statistics (numpy, scipy) load when a round is computed, not with the app.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from .execution import driver_enqueue, run_event_add
from .models import RunKind
from .subjects import JudgeSubjects, subjects_of

log = logging.getLogger(__name__)

#: The run parameter that holds an adaptive run's settings, pool and rounds.
PARAMETER = "adaptive"
#: Targets a run may state: the top-k set known, every adjacent pair separated, or judge until the budget is spent.
TARGETS = ("top-k", "separated", "budget")
#: Simulated runs behind the projection shown on the run page (computed once per round, in the step): few, because it
#: is computed inside the step's transaction; its figures are a median with quartiles, not a promise.
PAGE_SIMULATIONS = 8
STEP_TITLE = "refit and choose the next adaptive round"


class AdaptiveError(ValueError):
    """Adaptive parameters that cannot be used, with what to do instead."""


@dataclass(frozen=True)
class TargetSpec:
    kind: str  # top_k | separated | budget (arena.stats.adaptive.TARGET_KINDS)
    k: int = 1


def target_parse(raw: str) -> TargetSpec:
    """``top-k:K``, ``separated`` or ``budget`` (the command's --target and the form's field)."""
    text = (raw or "").strip().lower()
    if text in ("separated", "budget"):
        return TargetSpec(text)
    if text.startswith("top-k:"):
        try:
            k = int(text.split(":", 1)[1])
        except ValueError:
            k = 0
        if k >= 1:
            return TargetSpec("top_k", k)
    raise AdaptiveError(f"target {raw!r}: write top-k:K (K a whole number ≥ 1, e.g. top-k:1), separated or budget")


def adaptive_parameters(
    *,
    target: str = "top-k:1",
    alpha: float = 0.05,
    batch: int = 8,
    budget_calls: int | None = None,
    budget_cost: float | None = None,
    seed: int = 0,
    rule: str = "overlap",
) -> dict[str, Any]:
    """The checked settings of an adaptive run (stored as ``parameters["adaptive"]``); raises :class:`AdaptiveError`."""
    spec = target_parse(target)
    if not 0 < float(alpha) < 1:
        raise AdaptiveError(f"alpha {alpha}: the error allowed must be between 0 and 1 (e.g. 0.05)")
    if int(batch) < 1:
        raise AdaptiveError(f"batch {batch}: a round judges at least one subject (in both orders)")
    if budget_calls is not None and int(budget_calls) < 2:
        raise AdaptiveError(f"call budget {budget_calls}: one subject takes two calls; allow at least 2")
    if budget_cost is not None and not float(budget_cost) > 0:
        raise AdaptiveError(f"cost budget {budget_cost}: give a positive amount in USD")
    if spec.kind == "budget" and budget_calls is None and budget_cost is None:
        raise AdaptiveError("a budget target needs a call budget (--budget-calls) or a cost budget (--budget-cost)")
    if rule not in ("overlap", "arena", "uniform"):
        raise AdaptiveError(f"rule {rule!r}: choose overlap, arena or uniform")
    return {
        "target": target.strip().lower(),
        "kind": spec.kind,
        "k": spec.k,
        "alpha": float(alpha),
        "batch": int(batch),
        "budget_calls": None if budget_calls is None else int(budget_calls),
        "budget_cost": None if budget_cost is None else float(budget_cost),
        "seed": int(seed),
        "rule": rule,
        "round": 0,
        "rounds": [],
        "pool": [],
        "stopped": "",
    }


def adaptive_refusal(kind: JudgeSubjects, orders: tuple[str, ...], *, sentinels: bool, prices: bool, cost: bool) -> str:
    """Why a run of ``kind`` cannot be adaptive ("" when it can)."""
    if kind.unit_sides is None or kind.sides is None:
        return f"{kind.label} are not compared two sides at a time: an adaptive run needs a two-sided task kind"
    if len(orders) != 2:
        return "an adaptive run judges each chosen subject in both orders: choose both orders"
    if sentinels:
        return "a sentinel check judges the sentinels only: it cannot be adaptive"
    if cost and not prices:
        return "a cost budget needs the prices (--price-per-1k-prompt and --price-per-1k-completion)"
    return ""


# --------------------------------------------------------------------------- the pool and the state


def planned(make_tasks: Any, kind: JudgeSubjects, orders: tuple[str, ...]) -> Any:  # noqa: ANN401
    """Wrap a kind's task factory: the run keeps every planned subject as its pool and gets round 0's tasks only."""

    def make(run: Any) -> list[Any]:  # noqa: ANN401
        rows = make_tasks(run)
        field = f"{kind.subject_field}_id"
        subjects = sorted({getattr(row, field) for row in rows})
        assert kind.unit_sides is not None
        sides = kind.unit_sides(subjects)
        settings = run.parameters[PARAMETER]
        # a subject whose two sides are one participant (two of its own texts) says nothing of the ranking
        settings["pool"] = [[s, *map(_plain, sides[s])] for s in subjects if s in sides and sides[s][1] != sides[s][2]]
        chosen = set(_choose(run, settings, round_number=0))
        settings["rounds"] = [{"round": 0, "subjects": len(chosen)}]
        run.save(update_fields=["parameters"])
        return [row for row in rows if getattr(row, field) in chosen and row.order in orders]

    return make


def _plain(value: Any) -> Any:  # noqa: ANN401
    """A side or item key as JSON keeps it (an int stays an int, anything else becomes its string)."""
    return value if isinstance(value, int) else str(value)


def _pool(settings: dict[str, Any]) -> tuple[list[int], list[Any], list[Any], list[Any]]:
    rows = settings.get("pool") or []
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows]


def _state(run: Any, settings: dict[str, Any], asked: set[int], calls: int) -> Any:  # noqa: ANN401
    """The statistics' state of the run: its verdicts (by the kind's ``sides``) and the pool's subjects not asked yet."""
    import numpy as np

    from arena.stats.adaptive import adaptive_state, judgments_of_verdicts, units

    from .reliability import sides_of

    subjects, items, side_a, side_b = _pool(settings)
    keys = sorted({*side_a, *side_b}, key=str)
    index = {key: i for i, key in enumerate(keys)}
    where = {s: i for i, s in enumerate(subjects)}
    a, b, y, cluster = [], [], [], []
    sides = sides_of(run) if asked else None
    if sides is not None:
        for subject, sa, sb, outcome in zip(
            sides.item.tolist(), sides.side_a.tolist(), sides.side_b.tolist(), sides.outcome.tolist(), strict=True
        ):
            if subject not in where or outcome != outcome or sa not in index or sb not in index:  # NaN: invalid
                continue
            a.append(index[sa])
            b.append(index[sb])
            y.append(outcome)
            cluster.append(str(items[where[subject]]))
    judgments = judgments_of_verdicts(
        np.asarray(a, dtype=np.int64),
        np.asarray(b, dtype=np.int64),
        np.asarray(y, dtype=np.float64),
        n_models=len(keys),
        item=np.asarray(cluster, dtype=str) if cluster else None,
        models=tuple(str(k) for k in keys),
    )
    pending = [i for i, s in enumerate(subjects) if s not in asked]
    pend = units(
        [str(items[i]) for i in pending],
        [index[side_a[i]] for i in pending],
        [index[side_b[i]] for i in pending],
        n_models=len(keys),
    )
    return adaptive_state(judgments, pend, calls=calls), [subjects[i] for i in pending]


def target_of(settings: dict[str, Any], price_per_call: float | None) -> Any:  # noqa: ANN401
    from arena.stats.adaptive import Target

    priced = price_per_call is not None and price_per_call > 0
    return Target(
        kind=settings["kind"],
        k=int(settings["k"]),
        alpha=float(settings["alpha"]),
        max_calls=settings.get("budget_calls"),
        # No price is known before the first answer comes back: the cost budget applies from then on.
        max_cost=settings.get("budget_cost") if priced else None,
        price_per_call=float(price_per_call) if priced else 0.0,
    )


def _spent(run: Any, kind: JudgeSubjects) -> tuple[set[int], int, float | None]:  # noqa: ANN401
    """The subjects the run has tasks for, its calls so far, and what a call cost on average (None: no price)."""
    from .selectors import run_progress

    field = f"{kind.subject_field}_id"
    asked = set(kind.task_model.objects.filter(run_id=run.pk).values_list(field, flat=True))
    progress = run_progress(run=run)
    calls = int(progress.calls)
    cost = progress.cost if calls else None
    return asked, calls, (float(cost) / calls if cost is not None and calls else None)


def _choose(run: Any, settings: dict[str, Any], *, round_number: int) -> list[int]:  # noqa: ANN401
    """Round 0's subjects (no verdict yet): the warm-up batch, seeded ``[seed, 0]``."""
    from arena.stats.adaptive import next_batch

    state, pending = _state(run, settings, set(), 0)
    batch = next_batch(
        state,
        int(settings["batch"]),
        [int(settings["seed"]), round_number],
        target=target_of(settings, None),
        rule=settings["rule"],
    )
    return [pending[i] for i in batch.index.tolist()]


# --------------------------------------------------------------------------- between rounds


def round_step(run: Any) -> bool:  # noqa: ANN401
    """Between rounds, inside the step's transaction (``jobs.steps``; ``run`` shows the status it ends with): refit,
    check the target, and either let the run end (its reason and figures recorded) or add the next round's tasks and
    keep it running. Returns True when the run goes on. A round with failed tasks ends the run failed: resuming it
    retries them, and the step comes back. Idempotent: the same verdicts and seed give the same batch, and a subject
    already asked is never asked again."""
    import numpy as np

    from arena.stats.adaptive import next_batch, target_met

    settings = dict(run.parameters[PARAMETER])
    if run.status != "completed":
        return False
    kind = subjects_of(run)
    asked, calls, price = _spent(run, kind)
    state, pending = _state(run, settings, asked, calls)
    target = target_of(settings, price)
    status = target_met(state, target)
    number = int(settings.get("round") or 0) + 1
    figures = {
        "round": number - 1,
        "subjects": len(asked),
        "calls": calls,
        "uncertainty": float(status.uncertainty),
        "unresolved": int(status.unresolved),
        "cost": None if price is None else calls * price,
    }
    chosen: list[int] = []
    if not status.met:
        batch = next_batch(state, int(settings["batch"]), [int(settings["seed"]), number], target=target, rule=settings["rule"])
        chosen = [pending[i] for i in np.asarray(batch.index).tolist()]
    if chosen:
        figures |= _projection(state, target, settings, price)
    rounds = [r for r in settings.get("rounds") or [] if r.get("round") != number - 1]
    settings["rounds"] = [*rounds, figures]
    if not chosen:
        settings["stopped"] = status.reason or ("budget" if target.call_limit() is not None else "exhausted")
        run.parameters = {**run.parameters, PARAMETER: settings}
        run.save(update_fields=["parameters"])
        run_event_add(kind=RunKind.JUDGE, run_id=run.pk, code="adaptive_stopped", message=_stop_message(settings, figures))
        return False
    settings["round"] = number
    settings["rounds"].append({"round": number, "subjects": len(chosen)})
    run.parameters = {**run.parameters, PARAMETER: settings}
    run.status, run.finished_at = "running", None
    run.save(update_fields=["parameters", "status", "finished_at"])
    field = kind.subject_field
    kind.task_model.objects.bulk_create(
        [kind.task_model(run_id=run.pk, order=o, **{f"{field}_id": s}) for s in chosen for o in run.parameters["orders"]]
    )
    run_event_add(
        kind=RunKind.JUDGE,
        run_id=run.pk,
        code="adaptive_round",
        message=f"round {number - 1} judged (uncertainty {figures['uncertainty']:.3f}, {calls} calls); round {number}: "
        f"{len(chosen)} more subject(s) in both orders",
    )
    run_id = run.pk
    transaction.on_commit(lambda: driver_enqueue(RunKind.JUDGE, run_id))
    return True


def _projection(state: Any, target: Any, settings: dict[str, Any], price: float | None) -> dict[str, Any]:  # noqa: ANN401
    """The projected calls and cost to reach the target from this state, kept with the round (the page never
    recomputes it); an estimate from :data:`PAGE_SIMULATIONS` simulated runs at the current fit."""
    from arena.stats.adaptive_projection import projection

    try:
        p = projection(
            state,
            target,
            batch_size=int(settings["batch"]),
            price_per_call=price or 0.0,
            rule=settings["rule"],
            simulations=PAGE_SIMULATIONS,
            seed=int(settings["seed"]),
        )
    except (ValueError, ArithmeticError) as exc:  # a projection is a figure for the page, never a reason to fail
        log.warning("no adaptive projection: %s", exc)
        return {}
    return {
        "projected_calls": float(p.adaptive_calls),
        "projected_calls_range": [float(x) for x in p.adaptive_calls_range],
        "projected_cost": None if price is None else float(p.adaptive_cost),
        "full_calls": int(p.full_calls),
    }


def _stop_message(settings: dict[str, Any], figures: dict[str, Any]) -> str:
    why = {
        "target": "the target holds",
        "settled": "judging every subject left would not change the answer (settled)",
        "budget": "the budget is spent",
        "exhausted": "every subject of the selection is judged",
    }.get(settings["stopped"], settings["stopped"])
    return (
        f"adaptive run stopped after round {figures['round']}: {why} (target {settings['target']}, alpha {settings['alpha']}, "
        f"uncertainty {figures['uncertainty']:.3f}, {figures['calls']} calls, {figures['subjects']} subjects judged)"
    )


# --------------------------------------------------------------------------- the run page


def adaptive_summary(run: Any, calls: int) -> dict[str, Any] | None:  # noqa: ANN401
    """What the run page shows of an adaptive run (from what the steps recorded; nothing is computed here)."""
    settings = (run.parameters or {}).get(PARAMETER)
    if not settings:
        return None
    measured = [r for r in settings.get("rounds") or [] if "uncertainty" in r]
    last = measured[-1] if measured else {}
    reasons = {
        "target": _("the target holds"),
        "settled": _("settled: judging the rest would not change the answer"),
        "budget": _("the budget is spent"),
        "exhausted": _("every subject is judged"),
    }
    projected = last.get("projected_calls")
    return {
        "target": settings["target"],
        "alpha": settings["alpha"],
        "round": settings.get("round") or 0,
        "calls": calls,
        "pool": len(settings.get("pool") or []),
        "full_calls": 2 * len(settings.get("pool") or []),
        "uncertainty": last.get("uncertainty"),
        "projected_calls": None if projected is None else math.ceil(projected),
        "projected_cost": last.get("projected_cost"),
        "stopped": reasons.get(settings.get("stopped") or "", settings.get("stopped") or ""),
        "budget_calls": settings.get("budget_calls"),
        "budget_cost": settings.get("budget_cost"),
    }
