"""Pure statistics engine of Lit2Test Web (numpy/scipy/pandas only; no Django).

Public API (all functions take plain arrays / DataFrames and return plain values):

Data
    cases_from_release_rows(rows) -> DataFrame       release jsonl dicts -> ``cases`` frame
    load_release_cases(path) -> DataFrame            same, from a corrected_folded_pairs.jsonl path
    encode_cases(cases, models=None) -> EncodedCases validate + encode (integer codes)

Folding and counts
    case_counts(enc), stable_wlt(enc), folded_head_to_head(enc, order), ordered_head_to_head(enc, order),
    side_bias(enc)

Bradley–Terry
    win_matrix(enc, kind)            kind in "ordered" | "folded" | "stable"
    fit_bt(W, pseudo_count=0.0) -> BTFit          MM (Hunter 2004), centered log-abilities, diverged flag
    fit_bt_batch(Ws, pseudo_count=0.0) -> BTBatch vectorised over a (R, K, K) stack
    win_matrix_from_judgments(winners, losers, n_models, ties=None, weights=None)

Bootstraps
    bootstrap_fits(enc, unit="case"|"context", kinds, replicates, seed, pseudo_count) -> BootstrapFits
    percentile_ci(theta, level), ranking_summary(theta)

Prior weight
    prior_weight(W, pseudo_count, theta=None, ci=None) -> the pseudo-count's share and shift vs the CIs, flag

Relations
    condorcet(W, models, order=None), complete_separation(W, models, order=None)

Tie sensitivity
    scheme_a(enc, pseudo_count), scheme_b(enc, reference_order, pseudo_count)

Judges
    judge_agreement(primary_cases, secondary_cases) (ordered agreement on the primary's stable cases, case-folded
    agreement, case-bootstrap CIs), ratio_bootstrap_ci(numerators, denominators)

Win rates
    win_rates(labels) -> per-model win rate, label count and item-bootstrap CI (the leaderboard's "Human WR")

Bradley–Terry–Davidson
    fit_btd(W, T, pseudo_count=0.0) -> BTDFit, FIVE_LEVEL_SHARES, share_to_outcome, shares_from_verdicts,
    debiased_share, btd_counts, elo_ratings

Reliability
    krippendorff_alpha(data, level, value_domain=None), reliability_matrix(frame, unit=, coder=, value=)

Honest intervals and style control (issue 26)
    pair_judgments(a, b, y, cluster=...), judgments_from_cases(enc) -> PairJudgments  judgments as flat arrays
    cluster_robust_se(judgments, theta=None, pseudo_count=0.0) -> SandwichSE        cluster-robust (CR1) SEs
    prior_influence(judgments, pseudo_count=0.5) -> models the prior moves by more than their SE
    rank_confidence_sets(theta, boot, level=0.95) -> RankSets   simultaneous rank ranges (bootstrap max-t)
    drop_k_robustness(judgments, pseudo_count=0.5) -> DropK     fewest contexts whose removal changes the leader
    ci_coverage(judgments, theta=None, ...) -> Coverage         coverage of the 95% CIs by a parametric bootstrap
    fit_style_bt(judgments, diffs, features=...) -> StyleFit, style_bootstrap(...), style_control(...) -> dict
    style_features(texts, paper_ids=None), style_differences(features_a, features_b, names)

Adaptive judging (issue 27)
    adaptive_state(judgments, pending, pseudo_count=0.5) -> AdaptiveState, units(...), all_pair_units(items, K)
    next_batch(state, batch_size, rng, target=, rule="overlap"|"arena"|"uniform") -> Batch   the next units
    target_met(state, Target(kind="top_k"|"separated"|"budget", ...)) -> TargetStatus         stop or not, uncertainty
    projection(state_or_strengths, target, design=, batch_size=) -> Projection   calls/cost/CI width, full vs adaptive

Everything at once
    leaderboard_document(cases, *, replicates=10000, seed=0, pseudo_count=0.5) -> dict (JSON-serialisable)

The package loads lazily: importing ``arena.stats`` (or one of its modules) loads numpy, scipy and pandas only for the
modules a caller uses, when it uses them (``from arena.stats import fit_bt`` loads ``bt`` then). Web pages, commands
and workers start without them; a statistic loads what it needs when it is computed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adaptive import (
        AdaptiveState,
        Batch,
        Target,
        TargetStatus,
        adaptive_state,
        all_pair_units,
        next_batch,
        target_met,
        units,
    )
    from .adaptive_projection import Projection, projection
    from .agreement import ORDERED_AGREEMENT, agreement_by_order, judge_agreement, ratio_bootstrap_ci
    from .alpha import krippendorff_alpha, reliability_matrix
    from .bootstrap import BootstrapFits, RankingSummary, bootstrap_fits, percentile_ci, ranking_summary
    from .bt import (
        BTBatch,
        BTFit,
        fit_bt,
        fit_bt_batch,
        ranking_from_theta,
        replicate_rankings,
        strongly_connected,
        win_matrix_from_judgments,
    )
    from .btd import (
        FIVE_LEVEL_SHARES,
        BTDFit,
        btd_counts,
        debiased_share,
        elo_ratings,
        fit_btd,
        share_to_outcome,
        shares_from_verdicts,
    )
    from .coverage import Coverage, ci_coverage
    from .drop_k import DropK, drop_k_robustness
    from .folding import (
        TIE,
        EncodedCases,
        case_counts,
        cases_from_release_rows,
        encode_cases,
        folded_head_to_head,
        load_release_cases,
        ordered_head_to_head,
        read_jsonl,
        side_bias,
        stable_wlt,
    )
    from .leaderboard import leaderboard_document
    from .matrices import FIT_KINDS, win_matrix
    from .pairwise import PairJudgments, judgments_from_cases, pair_judgments
    from .prior import prior_weight
    from .rank_sets import RankSets, rank_confidence_sets
    from .relations import complete_separation, condorcet
    from .sandwich import SandwichSE, cluster_robust_se, prior_influence
    from .style import StyleBootstrap, StyleFit, fit_style_bt, style_bootstrap, style_control
    from .style_text import style_differences, style_features
    from .ties import scheme_a, scheme_b
    from .winrate import win_rates

#: Each public name and the module that holds it.
_HOME: dict[str, str] = {
    "AdaptiveState": "adaptive",
    "Batch": "adaptive",
    "Target": "adaptive",
    "TargetStatus": "adaptive",
    "adaptive_state": "adaptive",
    "all_pair_units": "adaptive",
    "next_batch": "adaptive",
    "target_met": "adaptive",
    "units": "adaptive",
    "Projection": "adaptive_projection",
    "projection": "adaptive_projection",
    "ORDERED_AGREEMENT": "agreement",
    "agreement_by_order": "agreement",
    "judge_agreement": "agreement",
    "ratio_bootstrap_ci": "agreement",
    "krippendorff_alpha": "alpha",
    "reliability_matrix": "alpha",
    "BootstrapFits": "bootstrap",
    "RankingSummary": "bootstrap",
    "bootstrap_fits": "bootstrap",
    "percentile_ci": "bootstrap",
    "ranking_summary": "bootstrap",
    "BTBatch": "bt",
    "BTFit": "bt",
    "fit_bt": "bt",
    "fit_bt_batch": "bt",
    "ranking_from_theta": "bt",
    "replicate_rankings": "bt",
    "strongly_connected": "bt",
    "win_matrix_from_judgments": "bt",
    "FIVE_LEVEL_SHARES": "btd",
    "BTDFit": "btd",
    "btd_counts": "btd",
    "debiased_share": "btd",
    "elo_ratings": "btd",
    "fit_btd": "btd",
    "share_to_outcome": "btd",
    "shares_from_verdicts": "btd",
    "complete_separation": "relations",
    "condorcet": "relations",
    "TIE": "folding",
    "EncodedCases": "folding",
    "case_counts": "folding",
    "cases_from_release_rows": "folding",
    "encode_cases": "folding",
    "folded_head_to_head": "folding",
    "load_release_cases": "folding",
    "ordered_head_to_head": "folding",
    "read_jsonl": "folding",
    "side_bias": "folding",
    "stable_wlt": "folding",
    "leaderboard_document": "leaderboard",
    "FIT_KINDS": "matrices",
    "win_matrix": "matrices",
    "prior_weight": "prior",
    "scheme_a": "ties",
    "scheme_b": "ties",
    "win_rates": "winrate",
    "Coverage": "coverage",
    "ci_coverage": "coverage",
    "DropK": "drop_k",
    "drop_k_robustness": "drop_k",
    "PairJudgments": "pairwise",
    "judgments_from_cases": "pairwise",
    "pair_judgments": "pairwise",
    "RankSets": "rank_sets",
    "rank_confidence_sets": "rank_sets",
    "SandwichSE": "sandwich",
    "cluster_robust_se": "sandwich",
    "prior_influence": "sandwich",
    "StyleBootstrap": "style",
    "StyleFit": "style",
    "fit_style_bt": "style",
    "style_bootstrap": "style",
    "style_control": "style",
    "style_differences": "style_text",
    "style_features": "style_text",
}


def __getattr__(name: str) -> Any:  # noqa: ANN401
    """Load the module that holds ``name`` on first use (PEP 562)."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})


__all__ = [
    "AdaptiveState",
    "Batch",
    "Projection",
    "Target",
    "TargetStatus",
    "adaptive_state",
    "all_pair_units",
    "next_batch",
    "projection",
    "target_met",
    "units",
    "FIT_KINDS",
    "FIVE_LEVEL_SHARES",
    "ORDERED_AGREEMENT",
    "TIE",
    "BTBatch",
    "BTDFit",
    "BTFit",
    "BootstrapFits",
    "EncodedCases",
    "RankingSummary",
    "bootstrap_fits",
    "btd_counts",
    "case_counts",
    "cases_from_release_rows",
    "complete_separation",
    "condorcet",
    "debiased_share",
    "elo_ratings",
    "encode_cases",
    "fit_bt",
    "fit_bt_batch",
    "fit_btd",
    "folded_head_to_head",
    "agreement_by_order",
    "judge_agreement",
    "krippendorff_alpha",
    "leaderboard_document",
    "load_release_cases",
    "ordered_head_to_head",
    "percentile_ci",
    "prior_weight",
    "ranking_from_theta",
    "replicate_rankings",
    "ranking_summary",
    "ratio_bootstrap_ci",
    "read_jsonl",
    "reliability_matrix",
    "scheme_a",
    "scheme_b",
    "share_to_outcome",
    "shares_from_verdicts",
    "side_bias",
    "stable_wlt",
    "strongly_connected",
    "win_matrix",
    "win_matrix_from_judgments",
    "win_rates",
    "Coverage",
    "DropK",
    "PairJudgments",
    "RankSets",
    "SandwichSE",
    "StyleBootstrap",
    "StyleFit",
    "ci_coverage",
    "cluster_robust_se",
    "drop_k_robustness",
    "fit_style_bt",
    "judgments_from_cases",
    "pair_judgments",
    "prior_influence",
    "rank_confidence_sets",
    "style_bootstrap",
    "style_control",
    "style_differences",
    "style_features",
]
