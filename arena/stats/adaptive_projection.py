"""Simulated adaptive runs, and the projection of calls, cost and CI width shown before launch (issue 27).

:func:`simulate_run` plays an adaptive run against verdicts drawn in advance for every unit (both orders), so
the full run and the adaptive one see the same verdicts and differ only in which they reveal: the comparison in
``bench/bench_adaptive.py`` and the tests is then paired, seed by seed.

:func:`projection` answers the launch form's question "what will this cost, and how precise will it be?" for a
full run (every unit, both orders: the calls are counted, the CI width is the expected one under BT at the
assumed strengths, from the Fisher information of the whole design) and for an adaptive one (the calls are not
known in advance: it simulates ``simulations`` runs from the assumed strengths and gives their median and
quartiles). The assumed strengths are the current fit of a state (a run under way or earlier data) or a prior:
by default strengths evenly spread with the standard deviation of the release's fitted ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtri

from .adaptive import (
    AdaptiveState,
    Target,
    TargetStatus,
    Units,
    adaptive_state,
    fit_state,
    judgments_of_units,
    next_batch,
    target_met,
)
from .pairwise import PairJudgments, bt_information, centered_inverse, pair_judgments

#: Standard deviation of the release's ordered BT strengths (pseudo-count 0.5, 1,200 cases: 1.27, 0.74, −0.73,
#: −1.28): the spread of the default prior.
RELEASE_SD = 1.04


def spread_prior(n_models: int, sd: float = RELEASE_SD) -> np.ndarray:
    """Strengths evenly spaced, centered, with standard deviation ``sd``: best model first."""
    x = np.linspace(1.0, -1.0, n_models)
    return x / x.std() * sd if n_models > 1 else np.zeros(1)


def draw_outcomes(
    design: Units, theta: np.ndarray, rng: np.random.Generator, *, order_bias: float = 0.0, tie_share: float = 0.0
) -> np.ndarray:
    """Verdicts of every unit in both orders from BT at ``theta``: (n, 2) scores of ``a`` (1, 0, 0.5 a tie).

    Order 0 shows ``a`` first, order 1 shows ``b`` first; ``order_bias`` is the log-odds bonus of the model shown
    first; a verdict is a tie with probability ``tie_share``.
    """
    d = np.asarray(theta)[design.a] - np.asarray(theta)[design.b]
    p = expit(np.stack([d + order_bias, d - order_bias], axis=1))
    win = (rng.random(p.shape) < p).astype(np.float64)
    if tie_share > 0:
        win = np.where(rng.random(p.shape) < tie_share, 0.5, win)
    return win


@dataclass(frozen=True)
class SimRun:
    """One simulated adaptive run.

    Attributes:
        calls: judge calls made (two per judged unit, earlier judgments of a starting state included).
        rounds: batches judged.
        status: the last :class:`TargetStatus` (why it stopped, the fit, its SEs).
        revealed: (n,) which units of the design were judged.
    """

    calls: int
    rounds: int
    status: TargetStatus
    revealed: np.ndarray


def _joined(first: PairJudgments | None, second: PairJudgments) -> PairJudgments:
    """Judgments of ``first`` followed by ``second`` (clusters matched by label)."""
    if first is None or first.n == 0:
        return second
    labels = np.asarray(first.clusters if first.clusters is not None else first.cluster.astype(str), dtype=object)
    cl2 = np.asarray(second.clusters, dtype=object)[second.cluster] if second.n else np.zeros(0, dtype=object)
    return pair_judgments(
        np.concatenate([first.a, second.a]),
        np.concatenate([first.b, second.b]),
        np.concatenate([first.y, second.y]),
        n_models=first.n_models,
        cluster=np.concatenate([labels[first.cluster], cl2]).astype(str),
        models=first.models,
    )


def simulate_run(
    design: Units,
    outcomes: np.ndarray,
    target: Target,
    *,
    n_models: int,
    batch_size: int,
    seed: int = 0,
    rule: str = "overlap",
    pseudo_count: float = 0.5,
    min_units_per_pair: int = 1,
    covariance: str = "fisher",
    start: PairJudgments | None = None,
    start_calls: int = 0,
) -> SimRun:
    """Play an adaptive run on ``design`` whose verdicts are ``outcomes`` (n, 2), until ``target_met`` stops it.

    Round r is seeded ``[seed, r]`` (as a run should seed it). ``start`` holds judgments made before (a state's),
    ``start_calls`` the calls they cost.
    """
    revealed = np.zeros(len(design), dtype=bool)
    rounds = 0
    while True:
        done = np.flatnonzero(revealed)
        judged = judgments_of_units(design.take(done), outcomes[done], n_models=n_models)
        state = adaptive_state(
            _joined(start, judged),
            design.take(np.flatnonzero(~revealed)),
            pseudo_count=pseudo_count,
            calls=start_calls + 2 * len(done),
        )
        status = target_met(state, target, covariance=covariance)
        if status.met:
            break
        batch = next_batch(
            state,
            batch_size,
            [seed, rounds],
            target=target,
            rule=rule,
            min_units_per_pair=min_units_per_pair,
            covariance=covariance,
        )
        if len(batch.index) == 0:
            break
        revealed[np.flatnonzero(~revealed)[batch.index]] = True
        rounds += 1
    return SimRun(calls=state.calls, rounds=rounds, status=status, revealed=revealed)


@dataclass(frozen=True)
class Projection:
    """Projected calls, cost and CI width of a full run and of an adaptive one.

    Attributes:
        full_calls, full_cost: every unit in both orders (judged ones included).
        full_ci_width: expected mean width of the 95% strength intervals after the full run (Fisher, at ``theta``).
        adaptive_calls: median calls of the simulated adaptive runs; ``adaptive_calls_range`` their quartiles.
        adaptive_cost: median cost.
        adaptive_ci_width: median over the simulated runs of the mean 95% interval width where they stopped.
        reached: share of simulated runs that met the statistical target (not the budget, not exhaustion).
        savings: 1 − adaptive_calls / full_calls.
        theta: the strengths the projection assumed.
        simulations: runs simulated.
    """

    full_calls: int
    full_cost: float
    full_ci_width: float
    adaptive_calls: float
    adaptive_calls_range: tuple[float, float]
    adaptive_cost: float
    adaptive_ci_width: float
    reached: float
    savings: float
    theta: np.ndarray
    simulations: int


def expected_ci_width(design: Units, theta: np.ndarray, *, pseudo_count: float, start: PairJudgments | None = None) -> float:
    """Mean width of the 95% Wald intervals of the strengths after judging ``design`` (both orders) at ``theta``."""
    k = len(theta)
    j = judgments_of_units(design, np.full((len(design), 2), 0.5), n_models=k)
    info = bt_information(j, theta, pseudo_count=pseudo_count)
    if start is not None and start.n:
        info = info + bt_information(start, theta)
    se = np.sqrt(np.clip(np.diag(centered_inverse(info)), 0.0, None))
    return float(2.0 * ndtri(0.975) * se.mean())


def projection(
    source: AdaptiveState | np.ndarray,
    target: Target,
    *,
    design: Units | None = None,
    batch_size: int,
    price_per_call: float | None = None,
    rule: str = "overlap",
    simulations: int = 20,
    seed: int = 0,
    pseudo_count: float = 0.5,
) -> Projection:
    """Projected calls, cost and CI width of a full and an adaptive run (see the module docstring).

    Preconditions: ``source`` is an :class:`AdaptiveState` (the units left are its pending ones, the strengths its
    fit) or the assumed strengths (K,) with ``design`` the run's units; ``simulations >= 1``. The price is
    ``price_per_call``, else the target's.
    """
    if simulations < 1:
        raise ValueError(f"projection: simulations must be >= 1 (got {simulations})")
    price = target.price_per_call if price_per_call is None else float(price_per_call)
    if isinstance(source, AdaptiveState):
        theta, _ = fit_state(source)
        units, start, start_calls, pc = source.pending, source.judgments, source.calls, source.pseudo_count
    else:
        if design is None:
            raise ValueError("projection: give the design (the run's units) with assumed strengths")
        theta = np.asarray(source, dtype=np.float64) - np.mean(source)
        units, start, start_calls, pc = design, None, 0, pseudo_count
    k = len(theta)
    full_calls = start_calls + 2 * len(units)
    rng = np.random.default_rng(seed)
    calls, widths, reached = [], [], []
    for s in range(simulations):
        run = simulate_run(
            units,
            draw_outcomes(units, theta, rng),
            target,
            n_models=k,
            batch_size=batch_size,
            seed=seed * 1_000_003 + s,
            rule=rule,
            pseudo_count=pc,
            start=start,
            start_calls=start_calls,
        )
        calls.append(run.calls)
        widths.append(2.0 * ndtri(0.975) * float(run.status.se.mean()))
        reached.append(run.status.reason == "target")
    median = float(np.median(calls))
    return Projection(
        full_calls=full_calls,
        full_cost=full_calls * price,
        full_ci_width=expected_ci_width(units, theta, pseudo_count=pc, start=start),
        adaptive_calls=median,
        adaptive_calls_range=(float(np.percentile(calls, 25)), float(np.percentile(calls, 75))),
        adaptive_cost=median * price,
        adaptive_ci_width=float(np.median(widths)),
        reached=float(np.mean(reached)),
        savings=1.0 - median / full_calls if full_calls else 0.0,
        theta=theta,
        simulations=simulations,
    )
