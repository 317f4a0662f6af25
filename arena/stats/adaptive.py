"""Adaptive judging: which (item, model pair) units to judge next, and when the ranking is known (issue 27).

A *unit* is one item (a context, a case: the cluster of :mod:`arena.stats.pairwise`) and one pair of models;
judging it costs two calls, one per presentation order, and yields two judgments of the pair (both orders, as
every Lit2Test statistic needs). A run judges units in rounds: after each round it refits, asks
:func:`target_met` whether the stated target holds, and if not asks :func:`next_batch` for the next units.

The fit is the ordered Bradley–Terry fit with the release's pseudo-count (:func:`arena.stats.bt.fit_bt` on the
judgments' win matrix), and its uncertainty the inverse Fisher information at the estimate (prior included;
:func:`arena.stats.pairwise.bt_information`), or on request the cluster-robust sandwich
(:func:`arena.stats.sandwich.cluster_robust_se`). The pseudo-count must be positive: it keeps the information
invertible before every pair has been judged (with no data at all every strength is 0 ± the prior's width).

Rules for the next batch (``rule=``):

* ``"overlap"`` (the default, chosen by ``bench/bench_adaptive.py``): the expected reduction of the
  probability that the target's relevant pairs are misordered. The relevant pairs are those the target is about:
  the pairs across the top-k boundary (one model in the current top k, the other outside) for a top-k target,
  the pairs adjacent in the current ranking otherwise. Under the normal approximation the difference D of a
  relevant pair is N(d, s²) and the chance its estimated order is wrong is u = Φ(−|d|/s). Judging a unit of the
  pair (a, b) adds the information w = 2·p(1 − p) along e_a − e_b (Sherman–Morrison: s² shrinks by
  w·g²/(1 + w·v), g the covariance of the two differences, v the candidate's variance), and moves the estimate d
  by N(0, τ²) with τ² that shrinkage (the pre-posterior). The gain is Σ (u − E Φ(−|d + τZ|/s')) over the relevant
  pairs, in closed form with Owen's T function; ≥ 0 for every candidate, positive even when d = 0. Units are
  picked greedily, the covariance updated after each pick.
* ``"arena"``: the Chatbot Arena rule (Chiang et al. 2024, §5.3) P(pair) ∝ √(Σ/n) − √(Σ/(n + 1)), with n the
  pair's units judged so far plus the pseudo-count (the prior's c wins each way are c units), Σ = V·n and V the
  variance of the pair's strength difference; pairs are drawn by these weights, n increasing as they are drawn.
  Target-blind: it shrinks every pair's variance, wherever the ranking is already settled.
* ``"uniform"``: pending units uniformly at random (the baseline).

Before any rule, every pair with pending units gets ``min_units_per_pair`` units (a spanning start: the rules
need an estimate of each pair). Within a pair the unit is taken from the item judged least so far (spreads the
judgments over items, which the cluster-robust intervals need); ties by a seeded permutation.

Every product here is small (K × K, a few thousand draws): BLAS runs single-threaded (``blas_single_threaded``
of :mod:`arena.stats.bt`): the normal draws of a 12-model :func:`target_met` took 22 ms with OpenBLAS's threads and
1.2 ms without them on this loaded 2-core machine.

Determinism: pending units are put in a canonical order (pair, then item label) before anything is drawn, the
fit does not depend on the order of the judgments, and every draw comes from the ``rng`` argument. A run should
seed round r with ``numpy.random.default_rng([run_seed, r])``: a resumed run then picks the same next batch.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtr, ndtri, owens_t

from .bt import blas_single_threaded_call, fit_bt, ranking_from_theta
from .pairwise import PairJudgments, bt_information, centered_inverse, pair_judgments
from .sandwich import cluster_robust_se

#: Rules :func:`next_batch` knows.
RULES = ("overlap", "arena", "uniform")
#: Target kinds :func:`target_met` knows.
TARGET_KINDS = ("top_k", "separated", "budget")
#: Normal draws behind the probabilities of :func:`target_met` (Monte Carlo standard error 0.0034 at p = 0.95,
#: 0.0007 at p = 0.998).
DRAWS = 4000
#: Fixed seed of those draws: the figure shown for a state is the same every time it is computed.
DRAW_SEED = 20270
#: Elements of one chunk of the overlap rule's (relevant pairs × candidates) work arrays.
_GAIN_ELEMENTS = 1_000_000


@dataclass(frozen=True)
class Units:
    """(item, model pair) units, each judged in both presentation orders.

    Attributes:
        item: item (cluster) labels as strings (n,).
        a, b: int64 model indices with ``a < b`` (n,).
    """

    item: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return len(self.a)

    def take(self, index: np.ndarray) -> Units:
        """The units at ``index``."""
        return Units(self.item[index], self.a[index], self.b[index])


def units(item: np.ndarray | list, a: np.ndarray | list, b: np.ndarray | list, *, n_models: int) -> Units:
    """Validate and build :class:`Units`; each pair is stored as (min, max).

    Raises:
        ValueError: naming the argument and position of a model index outside ``[0, n_models)`` or a unit
            that pairs a model with itself.
    """
    a = np.asarray(a, dtype=np.int64).reshape(-1)
    b = np.asarray(b, dtype=np.int64).reshape(-1)
    item = np.asarray(item).astype(str).reshape(-1)
    if not len(item) == len(a) == len(b):
        raise ValueError(f"units: item, a and b must have equal lengths (got {len(item)}, {len(a)}, {len(b)})")
    for name, idx in (("a", a), ("b", b)):
        bad = np.flatnonzero((idx < 0) | (idx >= n_models))
        if len(bad):
            raise ValueError(f"units: {name}[{bad[0]}] = {idx[bad[0]]} is not a model index in [0, {n_models})")
    same = np.flatnonzero(a == b)
    if len(same):
        raise ValueError(f"units: unit {same[0]} pairs model {a[same[0]]} with itself; drop it")
    return Units(item, np.minimum(a, b), np.maximum(a, b))


def all_pair_units(items: list[str] | np.ndarray, n_models: int) -> Units:
    """Every pair of the ``n_models`` models on every item (the full design: items × K(K−1)/2 units)."""
    ii, jj = np.triu_indices(n_models, 1)
    items = np.asarray(items).astype(str)
    return units(np.repeat(items, len(ii)), np.tile(ii, len(items)), np.tile(jj, len(items)), n_models=n_models)


@dataclass(frozen=True)
class AdaptiveState:
    """What an adaptive run knows between rounds.

    Attributes:
        judgments: the ordered judgments so far (two per judged unit).
        pending: the units not judged yet (candidates of the next batch).
        pseudo_count: the fit's prior (> 0).
        calls: judge calls made so far, failed ones included (the budget counts them).
    """

    judgments: PairJudgments
    pending: Units
    pseudo_count: float
    calls: int

    @property
    def n_models(self) -> int:
        return self.judgments.n_models


def adaptive_state(
    judgments: PairJudgments, pending: Units, *, pseudo_count: float = 0.5, calls: int | None = None
) -> AdaptiveState:
    """Validate and build :class:`AdaptiveState` (``calls`` defaults to the number of judgments)."""
    if not pseudo_count > 0:
        raise ValueError(f"adaptive_state: pseudo_count must be > 0 (got {pseudo_count}); the release uses 0.5")
    k = judgments.n_models
    if k < 2:
        raise ValueError(f"adaptive_state: need at least 2 models (got {k})")
    if len(pending) and (pending.b.max() >= k):
        raise ValueError(f"adaptive_state: a pending unit names model {pending.b.max()}, beyond the {k} models")
    return AdaptiveState(judgments, pending, float(pseudo_count), judgments.n if calls is None else int(calls))


@dataclass(frozen=True)
class Target:
    """A stopping target.

    Attributes:
        kind: ``"top_k"`` (the top-k set is known with probability ≥ 1 − alpha), ``"separated"`` (every pair
            adjacent in rank has a (1 − alpha/(K−1)) interval of its difference that excludes 0: Bonferroni over
            the K − 1 adjacent pairs) or ``"budget"`` (judge until the budget is spent).
        k: the k of a top-k target.
        alpha: the error allowed.
        max_calls, max_cost: a budget (either kind can have one; the run stops when it is spent).
        price_per_call: cost of one call, for ``max_cost`` and the cost figures.
        settle: a top-k target also stops when judging every unit left would change the top-k set with chance ≤
            alpha (reason ``"settled"``: the full run's answer is known even though it is itself uncertain).
    """

    kind: str = "top_k"
    k: int = 1
    alpha: float = 0.05
    max_calls: int | None = None
    max_cost: float | None = None
    price_per_call: float = 0.0
    settle: bool = True

    def __post_init__(self) -> None:
        if self.kind not in TARGET_KINDS:
            raise ValueError(f"Target: kind {self.kind!r} is not one of {TARGET_KINDS}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"Target: alpha must be in (0, 1) (got {self.alpha})")
        if self.kind == "budget" and self.max_calls is None and self.max_cost is None:
            raise ValueError("Target: a budget target needs max_calls or max_cost")
        if self.max_cost is not None and not self.price_per_call > 0:
            raise ValueError("Target: max_cost needs a positive price_per_call")

    def call_limit(self) -> int | None:
        """The most calls the budget allows (None: no budget)."""
        limits = []
        if self.max_calls is not None:
            limits.append(int(self.max_calls))
        if self.max_cost is not None:
            limits.append(int(np.floor(self.max_cost / self.price_per_call + 1e-9)))
        return min(limits) if limits else None


@dataclass(frozen=True)
class TargetStatus:
    """Where a run stands against its target.

    Attributes:
        met: stop now.
        reason: ``"target"`` (the statistical target holds), ``"settled"`` (top-k: judging every unit left would
            change the top-k set with chance ≤ alpha, so the full run's answer is known though it is itself
            uncertain), ``"budget"`` (spent), ``"exhausted"`` (no unit left to judge) or ``""`` (not met).
        uncertainty: the chance, under the normal approximation, that the target's statement is wrong now:
            1 − P(top-k set) for a top-k target, 1 − P(whole ranking) otherwise (the figure for the run page).
        unresolved: pairs the target still needs: boundary pairs (top-k) or adjacent pairs (otherwise) whose
            (1 − alpha/(K−1)) interval of the difference contains 0.
        full_run_change: top-k: the chance that judging every pending unit would change the top-k set
            (:func:`full_run_change`); NaN for other kinds and with ``settle=False``.
        calls, cost: spent so far.
        theta: the current fit (K,); ``se`` its standard errors (K,).
    """

    met: bool
    reason: str
    uncertainty: float
    unresolved: int
    full_run_change: float
    calls: int
    cost: float
    theta: np.ndarray
    se: np.ndarray


def fit_state(state: AdaptiveState, *, covariance: str = "fisher") -> tuple[np.ndarray, np.ndarray]:
    """The fit (K,) and the covariance (K, K) of the centered strengths of ``state``'s judgments.

    ``covariance`` is ``"fisher"`` (inverse information at the estimate, prior included) or ``"sandwich"``
    (cluster-robust CR1; falls back to Fisher with fewer than two clusters, where it is undefined).
    """
    j = state.judgments
    theta = fit_bt(j.win_matrix(), pseudo_count=state.pseudo_count).theta
    if covariance == "sandwich" and j.n_clusters >= 2:
        return theta, cluster_robust_se(j, theta, pseudo_count=state.pseudo_count).cov
    if covariance not in ("fisher", "sandwich"):
        raise ValueError(f"fit_state: covariance must be 'fisher' or 'sandwich' (got {covariance!r})")
    return theta, centered_inverse(bt_information(j, theta, pseudo_count=state.pseudo_count))


def difference_variance(cov: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Var(θ_i − θ_j) for index arrays i, j."""
    return np.maximum(cov[i, i] + cov[j, j] - 2.0 * cov[i, j], 0.0)


def relevant_pairs(theta: np.ndarray, target: Target | None) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (upper, lower in the current ranking) the target is about: top-k boundary pairs or adjacent pairs."""
    order = ranking_from_theta(theta)
    if target is not None and target.kind == "top_k":
        k = min(max(int(target.k), 1), len(theta) - 1)
        top, rest = order[:k], order[k:]
        return np.repeat(top, len(rest)), np.tile(rest, len(top))
    return order[:-1], order[1:]


def misorder_draws(theta: np.ndarray, cov: np.ndarray, draws: int = DRAWS) -> np.ndarray:
    """``draws`` strengths from N(θ, cov) (the covariance is singular along the ones vector: drawn by eigh)."""
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2.0)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    return theta + _standard_draws(draws, len(theta)) @ root.T


@functools.lru_cache(maxsize=16)
def _standard_draws(draws: int, k: int) -> np.ndarray:
    """The fixed standard normal draws (draws, k) behind :func:`misorder_draws`, made once per shape (read-only)."""
    z = np.random.default_rng(DRAW_SEED).standard_normal((draws, k))
    z.setflags(write=False)
    return z


def pending_information(state: AdaptiveState, theta: np.ndarray) -> np.ndarray:
    """Expected Fisher information (K, K) of the pending units at ``theta`` (both orders each; no prior)."""
    pend = state.pending
    k = state.n_models
    p = expit(theta[pend.a] - theta[pend.b])
    w = 2.0 * np.bincount(pend.a * k + pend.b, weights=p * (1.0 - p), minlength=k * k).reshape(k, k)
    off = w + w.T
    info = -off
    info[np.diag_indices(k)] = off.sum(axis=1)
    return info


def full_run_change(state: AdaptiveState, theta: np.ndarray, cov: np.ndarray, target: Target | None) -> float:
    """Chance that judging every pending unit would change the top-k set (or the ranking): the pre-posterior.

    The full run's estimate is about θ̂ + N(0, cov − cov_full), cov_full the covariance with the pending units'
    expected information added. When this chance is ≤ alpha the full run's answer is known already.
    """
    if len(state.pending) == 0:
        return 0.0
    info_now = np.linalg.pinv(cov)
    cov_full = np.linalg.pinv(info_now + pending_information(state, theta))
    return 1.0 - _probability_right(theta, cov - cov_full, target)


def _probability_right(theta: np.ndarray, cov: np.ndarray, target: Target | None) -> float:
    """P(the current top-k set) for a top-k target, else P(the current whole ranking), by normal draws."""
    sample = misorder_draws(theta, cov)
    order = ranking_from_theta(theta)
    if target is not None and target.kind == "top_k":
        k = min(max(int(target.k), 1), len(theta) - 1)
        ok = sample[:, order[:k]].min(axis=1) > sample[:, order[k:]].max(axis=1)
    else:
        ok = (np.diff(sample[:, order], axis=1) < 0).all(axis=1)
    return float(ok.mean())


@blas_single_threaded_call
def target_met(state: AdaptiveState, target: Target, *, covariance: str = "fisher") -> TargetStatus:
    """Whether ``target`` holds for ``state``, with the uncertainty figure to show (see :class:`TargetStatus`).

    The budget is checked first (a spent budget stops whatever the statistics say), then the statistics, then
    whether any unit is left. A top-k target holds when P(top-k set) ≥ 1 − alpha under N(θ̂, cov); a separated
    target when no adjacent pair is unresolved; a budget target only when the budget is spent or nothing is left.
    """
    theta, cov = fit_state(state, covariance=covariance)
    k = state.n_models
    hi, lo = relevant_pairs(theta, target)
    z = ndtri(1.0 - target.alpha / (2.0 * max(k - 1, 1)))
    unresolved = int(((theta[hi] - theta[lo]) <= z * np.sqrt(difference_variance(cov, hi, lo))).sum())
    uncertainty = 1.0 - _probability_right(theta, cov, target)
    change = full_run_change(state, theta, cov, target) if target.kind == "top_k" and target.settle else float("nan")
    limit = target.call_limit()
    if limit is not None and state.calls >= limit:
        reason = "budget"
    elif target.kind == "top_k" and uncertainty <= target.alpha:
        reason = "target"
    elif target.kind == "top_k" and change <= target.alpha:
        reason = "settled"
    elif target.kind == "separated" and unresolved == 0:
        reason = "target"
    elif len(state.pending) == 0:
        reason = "exhausted"
    else:
        reason = ""
    return TargetStatus(
        met=bool(reason),
        reason=reason,
        uncertainty=uncertainty,
        unresolved=unresolved,
        full_run_change=change,
        calls=state.calls,
        cost=state.calls * target.price_per_call,
        theta=theta,
        se=np.sqrt(np.clip(np.diag(cov), 0.0, None)),
    )


def overlap_gain(
    theta: np.ndarray, cov: np.ndarray, rel: tuple[np.ndarray, np.ndarray], cand: tuple[np.ndarray, np.ndarray], w: np.ndarray
) -> np.ndarray:
    """Expected reduction of Σ Φ(−|d|/s) over the relevant pairs ``rel`` from one unit of each candidate pair.

    ``w`` (P,) is each candidate's information per unit, 2·p(1 − p). Returns (P,) gains (see the module docstring).
    The expectation is exact: with D ~ N(d, τ²) and s'² = s² − τ², E Φ(−|D|/s') = 2·T(d/s, s'/τ), T Owen's T
    function (write it with the bivariate normal of (D, D − s'X), correlation τ/s, whose two orthant terms reduce
    to one T because their arguments are proportional); τ → 0 gives back Φ(−|d|/s). Relevant pairs already
    settled (Φ(−|d|/s) < 1e-9) cannot gain and are left out; candidates go in chunks of bounded size.
    """
    ri, rj = rel
    s2 = difference_variance(cov, ri, rj)
    h = np.abs(theta[ri] - theta[rj]) / np.sqrt(np.maximum(s2, 1e-300))
    now = ndtr(-h)
    live = now >= 1e-9
    ri, rj, h, s2, now = ri[live], rj[live], h[live, None], s2[live, None], now[live, None]
    ca, cb = cand
    gain = np.zeros(len(ca))
    step = max(1, _GAIN_ELEMENTS // max(1, len(ri)))
    for lo in range(0, len(ca) if len(ri) else 0, step):
        a, b, wc = ca[lo : lo + step], cb[lo : lo + step], w[None, lo : lo + step]
        g = cov[np.ix_(ri, a)] - cov[np.ix_(ri, b)] - cov[np.ix_(rj, a)] + cov[np.ix_(rj, b)]  # (R, chunk)
        v = difference_variance(cov, a, b)[None, :]
        tau2 = np.minimum(wc * g * g / (1.0 + wc * v), s2 * (1.0 - 1e-12))
        ratio = np.sqrt(np.maximum(s2 - tau2, 0.0)) / np.sqrt(np.maximum(tau2, 1e-300))
        gain[lo : lo + step] = (now - 2.0 * owens_t(h, ratio)).sum(axis=0)
    return gain


def arena_weights(cov: np.ndarray, a: np.ndarray, b: np.ndarray, judged: np.ndarray, pseudo_count: float) -> np.ndarray:
    """The Chatbot Arena rule's weights √(Σ/n) − √(Σ/(n + 1)) of the pairs (a, b), unnormalised.

    n = units of the pair judged so far + the pseudo-count (the prior's c wins each way count as c units); Σ = V·n
    with V = Var(θ_a − θ_b) from ``cov``, so the weight is √V·(1 − √(n/(n + 1))): large for uncertain, rarely
    judged pairs.
    """
    n = np.asarray(judged, dtype=np.float64) + pseudo_count
    sigma = difference_variance(cov, a, b) * n
    return np.sqrt(sigma / n) - np.sqrt(sigma / (n + 1.0))


@blas_single_threaded_call
def rule_weights(
    state: AdaptiveState, *, rule: str = "arena", target: Target | None = None, covariance: str = "fisher"
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (P, 2) with pending units and each one's weight under ``rule`` now: the Arena weight, normalised
    to a probability, or the overlap rule's expected gain (what the run page can show as "why this pair")."""
    k = state.n_models
    flat = np.unique(state.pending.a * k + state.pending.b)
    pairs = np.stack([flat // k, flat % k], axis=1)
    theta, cov = fit_state(state, covariance=covariance)
    ca, cb = pairs[:, 0], pairs[:, 1]
    if rule == "arena":
        j = state.judgments
        judged = np.bincount(np.minimum(j.a, j.b) * k + np.maximum(j.a, j.b), minlength=k * k)[flat] / 2.0
        weight = arena_weights(cov, ca, cb, judged, state.pseudo_count)
        return pairs, weight / weight.sum()
    if rule == "overlap":
        p = expit(theta[ca] - theta[cb])
        return pairs, overlap_gain(theta, cov, relevant_pairs(theta, target), (ca, cb), 2.0 * p * (1.0 - p))
    raise ValueError(f"rule_weights: rule must be 'arena' or 'overlap' (got {rule!r})")


def _add_information(cov: np.ndarray, a: int, b: int, w: float) -> np.ndarray:
    """The centered covariance after adding information ``w`` along e_a − e_b (Sherman–Morrison)."""
    g = cov[:, a] - cov[:, b]
    v = g[a] - g[b]
    return cov - (w / (1.0 + w * v)) * np.outer(g, g)


@dataclass(frozen=True)
class Batch:
    """The units chosen for the next round.

    Attributes:
        units: the chosen units, in the order they were chosen (judge both orders of each).
        index: their positions in ``state.pending`` as given.
    """

    units: Units
    index: np.ndarray


def _pick_rule(
    rule: str,
    theta: np.ndarray,
    cov: np.ndarray,
    pairs: np.ndarray,
    left: np.ndarray,
    judged: np.ndarray,
    target: Target | None,
    pseudo_count: float,
    rng: np.random.Generator,
) -> int:
    """One pair index (into ``pairs``) by ``rule``, among those with units ``left``."""
    avail = np.flatnonzero(left > 0)
    ca, cb = pairs[avail, 0], pairs[avail, 1]
    if rule == "arena":
        weight = arena_weights(cov, ca, cb, judged[avail], pseudo_count)
        total = weight.sum()
        p = weight / total if total > 0 else np.full(len(avail), 1.0 / len(avail))
        return int(avail[rng.choice(len(avail), p=p)])
    if rule == "uniform":
        # Units, not pairs, uniformly: a pair is drawn in proportion to its units left.
        return int(avail[rng.choice(len(avail), p=left[avail] / left[avail].sum())])
    p_win = expit(theta[ca] - theta[cb])
    gain = overlap_gain(theta, cov, relevant_pairs(theta, target), (ca, cb), 2.0 * p_win * (1.0 - p_win))
    # Equal gains (symmetric designs) are broken by the seeded generator, never by float noise.
    best = np.flatnonzero(gain >= gain.max() - 1e-12 * max(abs(gain.max()), 1e-300))
    return int(avail[best[rng.integers(len(best))]])


@blas_single_threaded_call
def next_batch(
    state: AdaptiveState,
    batch_size: int,
    rng: int | np.random.Generator | list[int],
    *,
    target: Target | None = None,
    rule: str = "overlap",
    min_units_per_pair: int = 1,
    covariance: str = "fisher",
) -> Batch:
    """Choose up to ``batch_size`` pending units to judge next (both orders each); see the module docstring.

    Preconditions: ``batch_size >= 1``; ``rule`` in :data:`RULES`; ``target`` the run's target (the overlap rule
    aims at its relevant pairs; a budget caps the batch at the calls it has left, two per unit).
    Returns: :class:`Batch` (empty when nothing is pending or the budget is spent).
    """
    if rule not in RULES:
        raise ValueError(f"next_batch: rule {rule!r} is not one of {RULES}")
    if batch_size < 1:
        raise ValueError(f"next_batch: batch_size must be >= 1 (got {batch_size})")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    limit = None if target is None else target.call_limit()
    if limit is not None:
        batch_size = min(batch_size, max(0, (limit - state.calls) // 2))
    pend = state.pending
    canon = np.lexsort((pend.item, pend.b, pend.a))
    k = state.n_models
    pair_id = (pend.a * k + pend.b)[canon]
    pairs_flat, unit_pair = np.unique(pair_id, return_inverse=True)
    pairs = np.stack([pairs_flat // k, pairs_flat % k], axis=1)
    left = np.bincount(unit_pair, minlength=len(pairs_flat)).astype(np.int64)
    j = state.judgments
    judged_flat = np.bincount(np.minimum(j.a, j.b) * k + np.maximum(j.a, j.b), minlength=k * k) / 2.0
    judged = judged_flat[pairs_flat].astype(np.float64)
    items, unit_item = np.unique(pend.item[canon], return_inverse=True)
    used = _item_usage(j, items)
    priority = gen.permutation(len(canon))  # tie-break among a pair's least-used items
    taken = np.zeros(len(canon), dtype=bool)
    theta, cov = fit_state(state, covariance=covariance)
    chosen: list[int] = []
    warm = [p for p in gen.permutation(len(pairs_flat)) if judged[p] < min_units_per_pair]
    while len(chosen) < batch_size and left.sum() > 0:
        need = [p for p in warm if left[p] > 0 and judged[p] < min_units_per_pair]
        p = need[0] if need else _pick_rule(rule, theta, cov, pairs, left, judged, target, state.pseudo_count, gen)
        cand = np.flatnonzero((unit_pair == p) & ~taken)
        pick = cand[np.lexsort((priority[cand], used[unit_item[cand]]))[0]]
        taken[pick] = True
        used[unit_item[pick]] += 1
        left[p] -= 1
        judged[p] += 1
        chosen.append(int(pick))
        a, b = int(pairs[p, 0]), int(pairs[p, 1])
        pw = float(expit(theta[a] - theta[b]))
        cov = _add_information(cov, a, b, 2.0 * pw * (1.0 - pw))
    index = canon[np.asarray(chosen, dtype=np.int64)]
    return Batch(units=pend.take(index), index=index)


def _item_usage(j: PairJudgments, items: np.ndarray) -> np.ndarray:
    """Units judged so far on each of ``items`` (labels as strings), from the judgments' clusters."""
    used = np.zeros(len(items), dtype=np.int64)
    if j.n == 0 or j.clusters is None:
        return used
    per_cluster = np.bincount(j.cluster, minlength=j.n_clusters) // 2
    where = {label: i for i, label in enumerate(items.tolist())}
    for code, label in enumerate(j.clusters):
        if label in where:
            used[where[label]] = per_cluster[code]
    return used


def judgments_of_verdicts(
    a: np.ndarray,
    b: np.ndarray,
    y: np.ndarray,
    *,
    n_models: int,
    item: np.ndarray | None = None,
    models: tuple[str, ...] | None = None,
) -> PairJudgments:
    """Judgments from verdicts one by one (score ``y`` of ``a``, one per presentation order), clustered by ``item``:
    what a run that stores verdicts (not units) builds its state from."""
    return pair_judgments(a, b, y, n_models=n_models, cluster=item, models=models)


def judgments_of_units(
    done: Units, outcomes: np.ndarray, *, n_models: int, models: tuple[str, ...] | None = None
) -> PairJudgments:
    """The judgments of judged units: ``outcomes`` (n, 2) holds the score of ``a`` in each order (1, 0 or 0.5)."""
    outcomes = np.asarray(outcomes, dtype=np.float64).reshape(len(done), 2)
    return pair_judgments(
        np.concatenate([done.a, done.a]),
        np.concatenate([done.b, done.b]),
        np.concatenate([outcomes[:, 0], outcomes[:, 1]]),
        n_models=n_models,
        cluster=np.concatenate([done.item, done.item]),
        models=models,
    )
