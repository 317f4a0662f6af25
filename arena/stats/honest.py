"""The leaderboard's ``honest_intervals`` section (issue 26): how far its intervals and its ranking can be trusted.

Beside the bootstrap CIs the leaderboard already prints, from the ordered judgments of the complete cases
(:func:`arena.stats.pairwise.judgments_from_cases`, clustered by context):

* ``sandwich``: cluster-robust (CR1, context clusters) standard errors of the ordered fit's strengths, with the
  pseudo-count of the fit (:func:`arena.stats.sandwich.cluster_robust_se`), and their Wald intervals θ̂ ± z·SE;
* ``rank_sets``: simultaneous rank confidence sets from the context bootstrap's replicates (max-t,
  :func:`arena.stats.rank_sets.rank_confidence_sets`): with the stated confidence every model's true rank lies in
  its set *at once*, a stricter statement than each model's percentile rank range;
* ``drop_k``: the fewest contexts whose removal changes the leader (:func:`arena.stats.drop_k.drop_k_robustness`),
  exact or an upper bound, with the proven lower bound;
* ``coverage``: how often Table 1's case-bootstrap 95% CIs and the sandwich's Wald intervals contain the truth
  when the judgments are simulated from the fitted strengths (the parametric bootstrap of
  :mod:`arena.stats.coverage`, here running the leaderboard's own case bootstrap on every simulated set), with a
  modest number of simulations (:data:`COVERAGE_SIMULATIONS` x :data:`COVERAGE_REPLICATES` replicates) so that a
  cold page stays fast; its Monte Carlo error is given. The simulation draws judgments independently, so it checks
  small-sample and prior bias, not the dependence within a context (that is what the cluster bootstrap and the
  sandwich are for). A simulated set whose fit diverged (without a pseudo-count its judgments can separate the
  models) or whose information is singular has no Wald interval: the Wald coverage is over the others,
  ``sandwich_simulations`` says how many, and ``sandwich_skipped`` why (None when none was left out);
* ``prior``: the strengths the pseudo-count prior moves by more than their standard error
  (:func:`arena.stats.sandwich.prior_influence`), and ``warning`` when any does.

Everything here is computed from the judgments and the replicates the document already has; nothing is quadratic
in the number of judgments.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import norm

from .bootstrap import percentile_ci
from .bt import blas_single_threaded_call, fit_bt_batch
from .coverage import CaseSimulation, ClusterScoreSums
from .drop_k import DEFAULT_EXHAUSTIVE_FITS, drop_k_robustness
from .folding import EncodedCases
from .matrices import CaseTypes, type_matrix, win_matrices_from_type_matrix
from .pairwise import CHUNK_ELEMENTS, PairJudgments, judgments_from_cases
from .rank_sets import rank_confidence_sets
from .sandwich import cluster_robust_se, prior_influence, sandwich_from_parts

#: Simulated data sets of the coverage estimate (Monte Carlo SE of a coverage near 95%: sqrt(.95 · .05 / 100) = 2.2 points).
COVERAGE_SIMULATIONS = 100
#: Case-bootstrap replicates per simulated data set (Table 1 uses 10,000). 200 put the CI ends within a few
#: hundredths of the 10,000-replicate ones, which moves a coverage by less than its Monte Carlo error, for 20,000
#: BT fits in all (the document's own two bootstraps fit 60,000); see bench/bench_style_leaderboard.py.
COVERAGE_REPLICATES = 200


def _drop_k_block(j: PairJudgments, names: list[str], pseudo_count: float, budget: int) -> dict[str, Any]:
    dk = drop_k_robustness(j, pseudo_count=pseudo_count, exhaustive_fits=budget)
    labels = list(j.clusters) if j.clusters is not None else [str(c) for c in range(j.n_clusters)]
    return {
        "top": names[dk.top],
        "k": dk.k,
        "exact": dk.exact,
        "lower_bound": dk.lower_bound,
        "holds_up_to": dk.holds_up_to,
        "method": dk.method,
        "removed": [labels[c] for c in dk.removed],
        "new_top": None if dk.new_top is None else names[dk.new_top],
        "contexts": j.n_clusters,
        "exhaustive_fits": budget,
    }


#: The (o1, o2) verdict patterns of a case type, o1 <= o2 (LO, HI, TIE_CODE are 0, 1, 2): keys in increasing order.
_PATTERNS = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
#: (9, 6) 0/1: a case's verdict pair code (original·3 + reverse) to its pattern (the two verdicts sorted).
_PATTERN_OF_CODE = np.array(
    [[_PATTERNS.index((min(c // 3, c % 3), max(c // 3, c % 3))) == t for t in range(6)] for c in range(9)], dtype=np.int64
)


def all_case_types(complete: EncodedCases) -> tuple[np.ndarray, np.ndarray | Any]:
    """Every case type a simulation can produce (each judged pair x each verdict pattern), as sorted type keys, and
    their :func:`arena.stats.matrices.type_matrix` for the ordered fit: one matrix for every simulated set."""
    k = complete.n_models
    pairs = np.unique(complete.lo.astype(np.int64) * k + complete.hi.astype(np.int64))
    o1 = np.tile([p[0] for p in _PATTERNS], len(pairs))
    o2 = np.tile([p[1] for p in _PATTERNS], len(pairs))
    pair = np.repeat(pairs, len(_PATTERNS))
    types = CaseTypes(
        n_models=k, lo=pair // k, hi=pair % k, o1=o1, o2=o2, counts=np.zeros(len(pair), np.int64), of_case=np.zeros(0, np.int64)
    )
    return (pair * 3 + o1) * 3 + o2, type_matrix(types, "ordered")


def case_bootstrap_counts(counts: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Type counts (R, T) of a case bootstrap (the cases drawn with replacement), drawn over the types present."""
    present = np.flatnonzero(counts)
    n = int(counts.sum())
    out = np.zeros((replicates, len(counts)))
    out[:, present] = rng.multinomial(n, counts[present] / n, size=replicates)
    return out


def _coverage_block(
    enc: EncodedCases, j: PairJudgments, theta: np.ndarray, order: list[int], pseudo_count: float, level: float, seed: int
) -> dict[str, Any]:
    """Simulate the judgments from ``theta`` (:func:`arena.stats.coverage.simulate_outcomes`, the data's tie share),
    then compute the leaderboard's own intervals on each simulated set: Table 1's case-bootstrap percentile CI (case
    types resampled as :func:`arena.stats.bootstrap.bootstrap_fits` does, ordered fit, same pseudo-count) and the
    Wald interval of the context-clustered sandwich SE; count how often each contains ``theta``.

    Every simulated set's case types are counted against one table of all the types it can produce, so the
    replicates of a group of simulated sets become win matrices in one product and are fitted in one batch
    (:func:`arena.stats.bt.fit_bt_batch`): a bootstrap call per simulated set cost most of the time.

    The judgments are drawn by :class:`arena.stats.coverage.CaseSimulation` (the stream and values of
    ``simulate_outcomes``), kept as one verdict-pair code per case: type counts, win matrices (bit for bit) and
    the sandwich's information and meat (:class:`arena.stats.coverage.ClusterScoreSums`, equal up to rounding)
    come from counts, never from a per-judgment refit (issue 25).
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 26]))
    names, k = list(enc.models), enc.n_models
    complete = enc.subset(enc.complete)
    tie_share = float(np.mean(j.y == 0.5))
    z = float(norm.ppf(0.5 + level / 2.0))
    truth = np.asarray(theta, dtype=np.float64)
    hit_boot = np.zeros(k)
    hit_sand = np.zeros(k)
    left_out = 0  # simulated sets without a Wald interval: a diverged fit or a singular information (below)
    keys, matrix = all_case_types(complete)
    sim = CaseSimulation(j, complete.lo.astype(np.int64) * k + complete.hi.astype(np.int64), truth, tie_share)
    sums = ClusterScoreSums(j.cluster[: j.n // 2], j.n_clusters, sim) if j.n_clusters >= 2 else None
    group = max(1, CHUNK_ELEMENTS // max(j.n, COVERAGE_REPLICATES * max(k * k, len(keys))))
    for start in range(0, COVERAGE_SIMULATIONS, group):
        codes = [sim.draw(rng) for _ in range(min(group, COVERAGE_SIMULATIONS - start))]
        counts = [sim.pair_counts(c) for c in codes]
        fits = fit_bt_batch(np.stack([sim.win_matrix(c) for c in counts]), pseudo_count=pseudo_count, init=truth)
        points = fits.theta
        draws = np.concatenate(
            [case_bootstrap_counts((c @ _PATTERN_OF_CODE).reshape(-1), COVERAGE_REPLICATES, rng) for c in counts]
        )
        boot = fit_bt_batch(win_matrices_from_type_matrix(matrix, draws, k), pseudo_count=pseudo_count, init=truth).theta
        for i in range(len(points)):
            ci = percentile_ci(boot[i * COVERAGE_REPLICATES : (i + 1) * COVERAGE_REPLICATES], level)
            hit_boot += (ci[:, 0] <= truth) & (truth <= ci[:, 1])
        if sums is not None:
            for point, diverged, (info, meat) in zip(points, fits.diverged, sums.parts(codes, points, pseudo_count), strict=True):
                # Without a pseudo-count a simulated set can separate the models: its fit has no finite maximum (it
                # stops at the cap), so it has no Wald interval; its information underflows, to exactly singular
                # or not depending on the pair's orientation. Such a set is left out of the Wald coverage (and
                # counted) instead of failing the whole document; the bootstrap's coverage still counts it.
                se = None if diverged else _sandwich_se(point, info, meat, j, pseudo_count)
                if se is None:
                    left_out += 1
                    continue
                hit_sand += np.abs(point - truth) <= z * se
    boot_cov = hit_boot / COVERAGE_SIMULATIONS
    wald = wald_coverage(hit_sand, left_out if sums is not None else None, names, order)
    return {
        "simulations": COVERAGE_SIMULATIONS,
        "replicates": COVERAGE_REPLICATES,
        "level": level,
        "truth": "the ordered fit's strengths (with the pseudo-count)",
        "bootstrap": {names[i]: float(boot_cov[i]) for i in order},
        "sandwich": wald.pop("sandwich"),
        "bootstrap_overall": float(boot_cov.mean()),
        "sandwich_overall": wald.pop("sandwich_overall"),
        "mc_se": float(np.sqrt(level * (1.0 - level) / COVERAGE_SIMULATIONS)),
        **wald,  # sandwich_simulations, sandwich_skipped
    }


def _sandwich_se(
    theta: np.ndarray, info: np.ndarray, meat: np.ndarray, j: PairJudgments, pseudo_count: float
) -> np.ndarray | None:
    """The simulated set's cluster-robust SEs (:func:`arena.stats.sandwich.sandwich_from_parts`), None when its
    information is singular."""
    try:
        return sandwich_from_parts(theta, info, meat, j.n_clusters, j.n, pseudo_count).se
    except ValueError:
        return None


def wald_coverage(hits: np.ndarray, left_out: int | None, names: list[str], order: list[int]) -> dict[str, Any]:
    """The Wald interval's part of the coverage block from its hits per model over the simulated sets that had a
    sandwich (``left_out`` of the :data:`COVERAGE_SIMULATIONS` had none; None: fewer than two contexts, no sandwich
    at all). ``sandwich_simulations`` says over how many sets it is; ``sandwich_skipped`` says why some were left
    out (None when none was), or why there is no Wald coverage when every set was."""
    if left_out is None:
        return {"sandwich": None, "sandwich_overall": None, "sandwich_simulations": None, "sandwich_skipped": None}
    used = COVERAGE_SIMULATIONS - left_out
    why = (
        f"{left_out} of the {COVERAGE_SIMULATIONS} simulated data sets separate the models (their fit has no finite "
        "maximum at this pseudo-count, or a singular information matrix), so they have no Wald interval"
    )
    if used == 0:
        skipped = f"{why}: no Wald coverage; a larger pseudo-count (0.5 is the protocol's) gives one"
        return {"sandwich": None, "sandwich_overall": None, "sandwich_simulations": 0, "sandwich_skipped": skipped}
    cov = hits / used  # the same division as before when no set was left out: the same values, bit for bit
    return {
        "sandwich": {names[i]: float(cov[i]) for i in order},
        "sandwich_overall": float(cov.mean()),
        "sandwich_simulations": used,
        "sandwich_skipped": f"{why}: the Wald coverage is over the other {used}" if left_out else None,
    }


@blas_single_threaded_call  # small, memory-bound products: extra BLAS threads only wait for each other (see bt)
def honest_intervals_section(
    enc: EncodedCases,
    theta: np.ndarray,
    context_replicates: np.ndarray,
    order: list[int],
    *,
    pseudo_count: float,
    level: float,
    seed: int,
    diverged: bool = False,
    drop_k_fits: int = DEFAULT_EXHAUSTIVE_FITS,
    judgments: PairJudgments | None = None,
) -> dict[str, Any]:
    """The ``honest_intervals`` section (see the module docstring), models best first by ``order``.

    Preconditions:
        ``theta`` the ordered fit's strengths with ``pseudo_count`` (``diverged``: that fit diverged);
        ``context_replicates`` (R, K) the context bootstrap's replicates of that fit; at least two models and one
        complete case; ``judgments``, when given, is :func:`arena.stats.pairwise.judgments_from_cases` of ``enc``
        (the caller's, computed once).
    Returns:
        The section; ``sandwich``, ``rank_sets``, ``drop_k`` and ``coverage`` are None, and ``unavailable`` says
        why, when the fit diverged, there are fewer than two contexts or the information is singular.
    """
    names = list(enc.models)
    j = judgments if judgments is not None else judgments_from_cases(enc)
    out: dict[str, Any] = {"unit": "context", "contexts": j.n_clusters, "judgments": j.n, "level": level, "unavailable": None}
    out |= {"sandwich": None, "rank_sets": None, "drop_k": None, "coverage": None}
    if diverged or not np.isfinite(theta).all():
        # Without the prior the fit has no finite maximum (separation): strengths are not magnitudes.
        out["unavailable"] = "the ordered fit diverged (complete separation without a pseudo-count): strengths are not magnitudes"
    elif j.n_clusters < 2:
        out["unavailable"] = "fewer than two contexts: no cluster-robust variance"
    else:
        try:
            se = cluster_robust_se(j, theta, pseudo_count=pseudo_count)
        except ValueError as exc:  # a singular information (a model with no comparison and no prior)
            out["unavailable"] = str(exc)
        else:
            z = float(norm.ppf(0.5 + level / 2.0))
            out["sandwich"] = {
                "method": "CR1 (statsmodels' cluster default), clusters = contexts",
                "se": {names[i]: float(se.se[i]) for i in order},
                "ci": {names[i]: [float(theta[i] - z * se.se[i]), float(theta[i] + z * se.se[i])] for i in order},
            }
            sets = rank_confidence_sets(theta, context_replicates, level)
            out["rank_sets"] = {
                "method": "max-t over pairwise differences of the context-bootstrap replicates",
                "replicates": int(len(context_replicates)),
                "critical_value": sets.critical_value,
                "sets": {names[i]: [int(sets.lo[i]), int(sets.hi[i])] for i in order},
            }
            out["drop_k"] = _drop_k_block(j, names, pseudo_count, drop_k_fits)
            out["coverage"] = _coverage_block(enc, j, theta, order, pseudo_count, level, seed)
    # Without a pseudo-count there is no prior to warn about; with one, its pull is set against the plain MLE's SEs.
    prior = prior_influence(j, pseudo_count=pseudo_count) if j.n_clusters >= 2 and pseudo_count > 0 else None
    if prior is not None:
        for key in ("shift", "se", "ratio"):
            if prior.get(key) is not None:
                prior[key] = {names[i]: prior[key][names[i]] for i in order}
    out["prior"] = prior
    out["warning"] = bool(prior and prior["warning"])
    return out
