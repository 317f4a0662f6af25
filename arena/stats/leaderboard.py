"""The leaderboard document: every Lit2Test statistic of one set of cases, as one JSON-serialisable dict.

Keys (models best first by ordered BT strength everywhere):

* ``models``; ``cases`` {total, stable, sensitive, incomplete}; ``stable_wlt`` {model: {w, l, t}};
* ``head_to_head`` (folded: a_wins, b_wins, sensitive) and ``ordered_head_to_head`` (a_wins, b_wins, ties);
* ``bt`` {ordered|folded|stable: {model: {strength, ci}}, pseudo_count, level, scale} — CIs from the case bootstrap;
* ``bootstrap`` (case level): replicates, seed, unit, modal_ranking, modal_fraction, top1, rankings (distribution,
  most frequent first), distinct_rankings, rank_probabilities, rank_intervals {model: [lo, hi]} (the ordered fit's
  central ``level`` interval of each model's rank over the replicates, :func:`arena.stats.rank_intervals.rank_intervals`),
  fits {kind: modal ranking/fraction, rank_intervals, diverged counts};
* ``comparisons``: unit ("ordered judgment"), models {model: judgments}, pairs [{a, b, judgments, a_wins, b_wins, ties,
  a_share}] (:func:`arena.stats.rank_intervals.comparison_counts`, from the ordered head-to-head);
* ``cluster_bootstrap`` (context level): replicates, contexts, ci (ordered fit), width_ratio (cluster / case CI
  width), modal_ranking, modal_fraction, top1, fits {kind: ci, modal_fraction};
* ``condorcet`` (on stable folded wins): beat_counts, winner, transitive, acyclic, cycles, undecided;
* ``tie_sensitivity``: scheme_a {ranking, strengths, modal_ranking, modal_fraction}, scheme_b {reference, ranking,
  strengths, head_to_head, flipped, tied, ranking_flips, condorcet};
* ``separation``: pairs with complete separation in the stable folded wins (empty when none);
* ``side_bias``: A/B win counts and binomial p-value, None when no side is known;
* ``batches``: per construction batch, the ordered-fit ranking and strengths and whether it matches the overall one;
* ``diagnostic``: separation / strengths_diagnostic_only flags, fit convergence, graph connectivity, agreement of the
  folded/stable/Condorcet orderings with the ordered one, incomplete cases, models without cases, and
  ``prior_weight`` (:func:`arena.stats.prior.prior_weight` of the ordered fit against its case CIs: the
  pseudo-count's share of the data, its largest shift of a strength relative to the CI half-width, ``large``);
* ``honest_intervals`` (issue 26, :func:`arena.stats.honest.honest_intervals_section`): cluster-robust SEs and Wald
  CIs, simultaneous rank sets, the drop-k line, the simulated coverage of Table 1's CIs, the prior's influence
  against the SEs and ``warning``; None when there is nothing to fit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import BootstrapFits, RankingSummary, bootstrap_fits, percentile_ci, ranking_summary
from .bt import BTFit, fit_bt, ranking_from_theta, strong_components, strongly_connected
from .folding import (
    EncodedCases,
    case_counts,
    encode_cases,
    folded_head_to_head,
    ordered_head_to_head,
    side_bias,
    stable_wlt,
)
from .honest import honest_intervals_section
from .matrices import FIT_KINDS, contributions, win_matrix
from .pairwise import judgments_from_cases
from .prior import prior_weight
from .rank_intervals import comparison_counts, rank_intervals
from .relations import complete_separation, condorcet
from .ties import scheme_b

#: At most this many distinct bootstrap rankings are listed (K! can be huge); the count of distinct ones is given.
MAX_LISTED_RANKINGS = 24


def to_builtin(obj: Any) -> Any:
    """Recursively convert numpy scalars/arrays and tuples to plain Python (JSON-serialisable) values."""
    if isinstance(obj, Mapping):
        return {str(k): to_builtin(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_builtin(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_builtin(v) for v in obj.tolist()]
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        if not np.isfinite(f):
            # JSON has no NaN/inf; none is expected here, so fail loudly rather than emit invalid JSON.
            raise ValueError("non-finite float in the leaderboard document")
        return f
    return obj


def _fit_flags(fit: BTFit) -> dict[str, Any]:
    """A fit's convergence flags for the diagnostic (a diverged fit's strengths are not magnitudes)."""
    return {"converged": fit.converged, "diverged": fit.diverged, "iterations": fit.iterations}


def _ranking_block(enc: EncodedCases, rs: RankingSummary) -> dict[str, Any]:
    """Modal ranking, its fraction, top-1 fractions, listed ranking distribution, rank probabilities."""
    names = enc.models
    r = int(rs.counts.sum())
    return {
        "modal_ranking": [names[i] for i in rs.modal],
        "modal_fraction": rs.modal_fraction,
        "top1": {names[i]: float(rs.top1[i]) for i in np.argsort(-rs.top1, kind="stable")},
        "rankings": [
            {"ranking": [names[i] for i in rk], "count": int(c), "fraction": float(c / r)}
            for rk, c in zip(rs.rankings[:MAX_LISTED_RANKINGS], rs.counts[:MAX_LISTED_RANKINGS], strict=True)
        ],
        "distinct_rankings": len(rs.rankings),
        "rank_probabilities": {names[i]: rs.rank_probabilities[i].tolist() for i in range(len(names))},
    }


def _ci_block(enc: EncodedCases, boot: BootstrapFits, kind: str, order: list[int], level: float) -> dict[str, list[float]]:
    """Percentile CI of each model's strength in one fit kind, models best first."""
    ci = percentile_ci(boot.theta[kind], level)
    return {enc.models[i]: [float(ci[i, 0]), float(ci[i, 1])] for i in order}


def _empty_document(enc: EncodedCases, replicates: int, seed: int, pseudo_count: float) -> dict[str, Any]:
    """The document when there is nothing to fit (fewer than two models or no complete case)."""
    return to_builtin(
        {
            "models": list(enc.models),
            "cases": case_counts(enc),
            "stable_wlt": stable_wlt(enc),
            "head_to_head": [],
            "ordered_head_to_head": [],
            "comparisons": comparison_counts([], enc.models),
            "bt": {"ordered": {}, "folded": {}, "stable": {}, "pseudo_count": pseudo_count},
            "bootstrap": {
                "replicates": replicates,
                "seed": seed,
                "unit": "case",
                "modal_ranking": [],
                "modal_fraction": None,
                "top1": {},
                "rank_intervals": {},
            },
            "cluster_bootstrap": {"replicates": replicates, "ci": {}, "modal_fraction": None},
            "condorcet": {"beat_counts": {}, "transitive": True, "cycles": []},
            "tie_sensitivity": {
                "scheme_a": {"ranking": [], "modal_fraction": None},
                "scheme_b": {"ranking": [], "head_to_head": [], "flipped": []},
            },
            "separation": [],
            "side_bias": side_bias(enc),
            "batches": [],
            "diagnostic": {"insufficient_data": True, "incomplete_cases": case_counts(enc)["incomplete"]},
            "honest_intervals": None,
        }
    )


@dataclass(frozen=True)
class _PointFits:
    """The point fits every section reads: the win matrices and BT fits of each kind and the overall order.

    Attributes:
        enc: the encoded cases.
        w: win matrix per kind in :data:`FIT_KINDS`.
        fits: BT fit per kind.
        order: model indices best first by the ordered fit's strength.
        models: model names in that order.
        pseudo_count: the fits' pseudo-count.
    """

    enc: EncodedCases
    w: dict[str, np.ndarray]
    fits: dict[str, BTFit]
    order: list[int]
    models: list[str]
    pseudo_count: float

    @property
    def names(self) -> list[str]:
        """Model names in encoding (index) order."""
        return self.enc.models


def _point_fits(enc: EncodedCases, pseudo_count: float) -> _PointFits:
    """Win matrices and BT fits of every kind, and the overall ranking by the ordered fit."""
    names = enc.models
    w = {kind: win_matrix(enc, kind) for kind in FIT_KINDS}
    fits = {kind: fit_bt(w[kind], pseudo_count=pseudo_count) for kind in FIT_KINDS}
    order = ranking_from_theta(fits["ordered"].theta).tolist()
    return _PointFits(enc, w, fits, order, [names[i] for i in order], pseudo_count)


class _Summaries:
    """Each bootstrap fit's :func:`ranking_summary`, computed once: the bootstrap, cluster and tie sections read the
    same ones (a summary sorts the replicates' rankings, ~10 ms per 10,000 replicates)."""

    def __init__(self, boot: BootstrapFits, cboot: BootstrapFits) -> None:
        self._boots = {"case": boot, "context": cboot}
        self._done: dict[tuple[str, str], RankingSummary] = {}

    def __call__(self, unit: str, kind: str) -> RankingSummary:
        """The summary of ``kind``'s replicates in the ``unit`` ("case" or "context") bootstrap."""
        if (unit, kind) not in self._done:
            self._done[unit, kind] = ranking_summary(self._boots[unit].theta[kind])
        return self._done[unit, kind]


def _bootstraps(pf: _PointFits, replicates: int, seed: int) -> tuple[BootstrapFits, BootstrapFits]:
    """The case and the context (cluster) bootstraps, warm-started from the point fits."""
    # Independent, reproducible random streams for the two bootstraps.
    case_seq, ctx_seq = np.random.SeedSequence(seed).spawn(2)
    init = {kind: pf.fits[kind].theta for kind in FIT_KINDS}
    boot = bootstrap_fits(
        pf.enc, unit="case", replicates=replicates, seed=np.random.default_rng(case_seq), pseudo_count=pf.pseudo_count, init=init
    )
    cboot = bootstrap_fits(
        pf.enc,
        unit="context",
        replicates=replicates,
        seed=np.random.default_rng(ctx_seq),
        pseudo_count=pf.pseudo_count,
        init=init,
    )
    return boot, cboot


def _bt_section(pf: _PointFits, boot: BootstrapFits, level: float) -> dict[str, Any]:
    """``bt``: every fit's strengths with case-bootstrap CIs, best first."""
    names = pf.names
    bt_section: dict[str, Any] = {}
    for kind in FIT_KINDS:
        ci = _ci_block(pf.enc, boot, kind, pf.order, level)
        bt_section[kind] = {names[i]: {"strength": float(pf.fits[kind].theta[i]), "ci": ci[names[i]]} for i in pf.order}
    bt_section["pseudo_count"] = pf.pseudo_count
    bt_section["level"] = level
    bt_section["scale"] = "centered natural-log ability (mean 0)"
    return bt_section


def _rank_interval_block(enc: EncodedCases, theta: np.ndarray, order: list[int], level: float) -> dict[str, list[int]]:
    """Each model's rank interval over the replicates ``theta``, models best first."""
    bounds = rank_intervals(theta, level)
    return {enc.models[i]: [int(bounds[i, 0]), int(bounds[i, 1])] for i in order}


def _bootstrap_section(
    enc: EncodedCases,
    boot: BootstrapFits,
    summaries: _Summaries,
    replicates: int,
    seed: int,
    order: list[int],
    level: float,
) -> dict[str, Any]:
    """``bootstrap``: the case bootstrap's ranking distribution and rank intervals, and each fit's modal ranking, rank
    intervals and failures (all read from the replicates already fitted)."""
    names = enc.models
    ordered_rank = _ranking_block(enc, summaries("case", "ordered"))
    bootstrap_section = {"replicates": replicates, "seed": seed, "unit": "case", **ordered_rank, "fits": {}}
    for kind in FIT_KINDS:
        rs = summaries("case", kind)
        bootstrap_section["fits"][kind] = {
            "modal_ranking": [names[i] for i in rs.modal],
            "modal_fraction": rs.modal_fraction,
            "rank_intervals": _rank_interval_block(enc, boot.theta[kind], order, level),
            "diverged_replicates": int(boot.diverged[kind].sum()),
            "unconverged_replicates": int((~boot.converged[kind] & ~boot.diverged[kind]).sum()),
        }
    bootstrap_section["rank_intervals"] = bootstrap_section["fits"]["ordered"]["rank_intervals"]  # computed once
    return bootstrap_section


def _cluster_section(
    pf: _PointFits,
    n_contexts: int,
    cboot: BootstrapFits,
    summaries: _Summaries,
    case_ci: np.ndarray,
    replicates: int,
    seed: int,
    level: float,
) -> dict[str, Any]:
    """``cluster_bootstrap``: the context bootstrap's CIs, their width against the case CIs, its rankings;
    ``n_contexts`` the distinct contexts of the complete cases."""
    enc, names, order = pf.enc, pf.names, pf.order
    ctx_ci = percentile_ci(cboot.theta["ordered"], level)
    case_width = case_ci[:, 1] - case_ci[:, 0]
    ctx_width = ctx_ci[:, 1] - ctx_ci[:, 0]
    ctx_rank = _ranking_block(enc, summaries("context", "ordered"))
    return {
        "replicates": replicates,
        "seed": seed,
        "unit": "context",
        "contexts": n_contexts,
        "ci": {names[i]: [float(ctx_ci[i, 0]), float(ctx_ci[i, 1])] for i in order},
        "width_ratio": {names[i]: float(ctx_width[i] / case_width[i]) if case_width[i] > 0 else None for i in order},
        "modal_ranking": ctx_rank["modal_ranking"],
        "modal_fraction": ctx_rank["modal_fraction"],
        "top1": ctx_rank["top1"],
        "fits": {
            kind: {
                "ci": _ci_block(enc, cboot, kind, order, level),
                "modal_fraction": summaries("context", kind).modal_fraction,
                "diverged_replicates": int(cboot.diverged[kind].sum()),
            }
            for kind in FIT_KINDS
        },
    }


def _tie_section(pf: _PointFits, summaries: _Summaries) -> dict[str, Any]:
    """``tie_sensitivity``: scheme A (the folded fit) and scheme B (ties resolved against the reference order)."""
    names, pseudo_count = pf.names, pf.pseudo_count
    folded_rank = ranking_from_theta(pf.fits["folded"].theta)
    folded_rs = summaries("case", "folded")
    return {
        "scheme_a": {
            "ranking": [names[i] for i in folded_rank],
            "strengths": {names[i]: float(pf.fits["folded"].theta[i]) for i in folded_rank},
            "modal_ranking": [names[i] for i in folded_rs.modal],
            "modal_fraction": folded_rs.modal_fraction,
            "pseudo_count": pseudo_count,
        },
        "scheme_b": {**scheme_b(pf.enc, pf.models, pseudo_count=pseudo_count), "pseudo_count": pseudo_count},
    }


@dataclass(frozen=True)
class _BatchCounts:
    """Every construction batch's counts at once (one pass over the cases, not one mask and subset per batch: a
    release of 20,000 contexts has 500 batches of 560,000 cases).

    Attributes:
        labels: the batch labels, in label order.
        complete, stable: complete and stable cases per batch.
        present: (batches, K) whether a model has a complete case in the batch.
        w: (batches, K, K) the ordered win matrix of each batch's complete cases (sums of halves: exact, so equal
            bit for bit to :func:`arena.stats.matrices.win_matrix` of the batch's subset).
    """

    labels: list[Any]
    complete: np.ndarray
    stable: np.ndarray
    present: np.ndarray
    w: np.ndarray


def _batch_counts(enc: EncodedCases) -> _BatchCounts:
    """:class:`_BatchCounts` of ``enc``; the batch labels coded once by pandas' hash table (no sort of every label)."""
    k = enc.n_models
    codes, labels = pd.factorize(enc.batch, use_na_sentinel=False)
    n = len(labels)
    order = sorted(range(n), key=lambda c: labels[c])  # the labels' codes in label order
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    of_case = rank[codes]
    c = enc.complete
    lo, hi, batch = enc.lo[c].astype(np.int64), enc.hi[c].astype(np.int64), of_case[c]
    a, b = contributions(enc.original[c], enc.reverse[c], "ordered", lo=lo, hi=hi)
    cell = batch * (k * k)
    w = np.bincount(cell + lo * k + hi, weights=a, minlength=n * k * k) + np.bincount(
        cell + hi * k + lo, weights=b, minlength=n * k * k
    )
    seen = np.bincount(batch * k + lo, minlength=n * k) + np.bincount(batch * k + hi, minlength=n * k)
    return _BatchCounts(
        labels=[labels[i] for i in order],
        complete=np.bincount(batch, minlength=n),
        stable=np.bincount(of_case[enc.stable], minlength=n),
        present=(seen > 0).reshape(n, k),
        w=w.reshape(n, k, k),
    )


def _batch_entry(pf: _PointFits, counts: _BatchCounts, batch: int) -> dict[str, Any] | None:
    """One ``batches`` entry: the ordered fit of batch ``batch`` (None when it has no complete case)."""
    names = pf.names
    n_complete = int(counts.complete[batch])
    if n_complete == 0:
        return None
    fit = fit_bt(counts.w[batch], pseudo_count=pf.pseudo_count)
    rk = ranking_from_theta(fit.theta)
    present = np.flatnonzero(counts.present[batch]).tolist()
    ranking = [names[i] for i in rk if i in present]
    return {
        "batch": counts.labels[batch],
        "cases": n_complete,
        "stable": int(counts.stable[batch]),
        "ranking": ranking,
        "strengths": {names[i]: float(fit.theta[i]) for i in rk if i in present},
        "matches_overall": ranking == [m for m in pf.models if names.index(m) in present],
    }


def _batches(pf: _PointFits) -> list[dict[str, Any]]:
    """``batches``: per construction batch with complete cases, its own ranking against the overall one."""
    counts = _batch_counts(pf.enc)
    entries = (_batch_entry(pf, counts, i) for i in range(len(counts.labels)))
    return [e for e in entries if e is not None]


def _stable_components(pf: _PointFits) -> list[list[str]]:
    """Strong components of the stable-wins graph, as model names, components and members in overall order."""
    comps = strong_components(pf.w["stable"])
    comp_order: list[int] = []
    for i in pf.order:
        if comps[i] not in comp_order:
            comp_order.append(int(comps[i]))
    return [[pf.names[i] for i in pf.order if comps[i] == c] for c in comp_order]


def _orderings_agree(pf: _PointFits, cond: dict[str, Any]) -> dict[str, bool]:
    """Whether the folded, stable and (strict) Condorcet orderings equal the ordered fit's."""
    names, models = pf.names, pf.models
    beat_sorted = sorted(models, key=lambda m: -cond["beat_counts"][m])  # stable sort keeps BT order on ties
    strict_condorcet = len(set(cond["beat_counts"].values())) == len(names)
    return {
        "folded": [names[i] for i in ranking_from_theta(pf.fits["folded"].theta)] == models,
        "stable": [names[i] for i in ranking_from_theta(pf.fits["stable"].theta)] == models,
        # A strict Condorcet order (beat counts K-1, ..., 0) identical to the BT order.
        "condorcet": bool(cond["transitive"] and strict_condorcet and beat_sorted == models),
    }


def _diagnostic(
    pf: _PointFits, counts: dict[str, int], cond: dict[str, Any], separation: list[dict[str, Any]], case_ci: np.ndarray
) -> dict[str, Any]:
    """``diagnostic``: whether the strengths can be read as magnitudes, and the checks behind that verdict."""
    enc, names = pf.enc, pf.names
    stable_connected = strongly_connected(pf.w["stable"])
    complete_idx = set(enc.lo[enc.complete].tolist()) | set(enc.hi[enc.complete].tolist())
    return {
        "insufficient_data": False,
        "incomplete_cases": counts["incomplete"],
        "separation": bool(separation),
        "stable_graph_strongly_connected": stable_connected,
        "stable_graph_components": _stable_components(pf),
        # Per PROTOCOL: with separation the ordinal result (ranks, Condorcet, bootstrap rank recovery) is the
        # result and strength magnitudes are diagnostic only.
        "strengths_diagnostic_only": bool(separation) or not stable_connected or any(f.diverged for f in pf.fits.values()),
        "fits": {kind: _fit_flags(pf.fits[kind]) for kind in FIT_KINDS},
        "orderings_agree": _orderings_agree(pf, cond),
        "models_without_cases": [m for k, m in enumerate(names) if k not in complete_idx],
        # The pseudo-count's weight in the ordered fit and its shift against the case CIs (issue 10, item 8).
        "prior_weight": prior_weight(pf.w["ordered"], pf.pseudo_count, theta=pf.fits["ordered"].theta, ci=case_ci),
    }


def leaderboard_document(
    cases: pd.DataFrame | EncodedCases,
    *,
    replicates: int = 10_000,
    seed: int = 0,
    pseudo_count: float = 0.5,
    level: float = 0.95,
) -> dict[str, Any]:
    """Compute the full leaderboard of a set of Lit2Test cases.

    Preconditions:
        ``cases`` satisfies the contract of :func:`arena.stats.folding.encode_cases` (one row per canonical
        pair; verdicts are model names, ``"TIE"`` or missing), or is already encoded (e.g. by
        :func:`arena.stats.pair_rows.encode_pair_rows`); ``replicates >= 1``; ``pseudo_count >= 0``.
    Returns:
        One JSON-serialisable dict (plain Python types, deterministic for a given seed) with keys
        ``models, cases, stable_wlt, head_to_head, ordered_head_to_head, comparisons, bt, bootstrap, cluster_bootstrap,
        condorcet, tie_sensitivity, separation, side_bias, batches, diagnostic`` (described in the module
        docstring). Models are ordered best first by the ordered BT strength; incomplete
        cases are counted and excluded from every statistic.
    """
    enc = cases if isinstance(cases, EncodedCases) else encode_cases(cases)
    counts = case_counts(enc)
    if enc.n_models < 2 or counts["stable"] + counts["sensitive"] == 0:
        return _empty_document(enc, replicates, seed, pseudo_count)
    pf = _point_fits(enc, pseudo_count)
    models = pf.models
    boot, cboot = _bootstraps(pf, replicates, seed)
    summaries = _Summaries(boot, cboot)
    # The ordered judgments of the complete cases, clustered by context: the honest section's data, and their
    # distinct contexts the cluster section's count (one hashing of every case's context, not two).
    judgments = judgments_from_cases(enc)
    case_ci = percentile_ci(boot.theta["ordered"], level)
    cond = condorcet(pf.w["stable"], pf.names, order=models)
    separation = complete_separation(pf.w["stable"], pf.names, order=models)
    wlt = stable_wlt(enc)
    ordered_h2h = ordered_head_to_head(enc, models)
    doc = {
        "models": models,
        "cases": {
            "total": counts["total"],
            "stable": counts["stable"],
            "sensitive": counts["sensitive"],
            "incomplete": counts["incomplete"],
        },
        "stable_wlt": {m: wlt[m] for m in models},
        "head_to_head": folded_head_to_head(enc, models),
        "ordered_head_to_head": ordered_h2h,
        "comparisons": comparison_counts(ordered_h2h, models),
        "bt": _bt_section(pf, boot, level),
        "bootstrap": _bootstrap_section(enc, boot, summaries, replicates, seed, pf.order, level),
        "cluster_bootstrap": _cluster_section(pf, judgments.n_clusters, cboot, summaries, case_ci, replicates, seed, level),
        "condorcet": cond,
        "tie_sensitivity": _tie_section(pf, summaries),
        "separation": separation,
        "side_bias": side_bias(enc),
        "batches": _batches(pf),
        "diagnostic": _diagnostic(pf, counts, cond, separation, case_ci),
        "honest_intervals": honest_intervals_section(
            enc,
            pf.fits["ordered"].theta,
            cboot.theta["ordered"],
            pf.order,
            pseudo_count=pseudo_count,
            level=level,
            seed=seed,
            diverged=pf.fits["ordered"].diverged,
            judgments=judgments,
        ),
    }
    return to_builtin(doc)
