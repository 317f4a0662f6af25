"""HypoArena statistics (PROTOCOL.md §2): 5-level verdicts, debiasing, Bradley–Terry–Davidson leaderboards with
case-bootstrap intervals, rubric scores and inter-judge agreement. Pure numpy/pandas/scipy; no Django.

Data contract (the app builds these frames from its tables):

* ordered verdicts, :data:`VERDICT_COLUMNS`: one row per judged order of a match. ``(first, second)`` is the
  match's fixed canonical orientation: ``first`` is shown as A in the ``"original"`` order, ``second`` is shown
  as A in the ``"reverse"`` order; ``verdict`` is the judge's 5-level answer about the *shown* A and B.
* matches (:func:`debias`): one row per (domain, case, first, second) with ``first``'s debiased share.

How fractional shares enter the Davidson likelihood. A debiased share s (a multiple of ⅛) is split by
:func:`arena.stats.btd.share_to_outcome` into (win, tie, loss) weights with as little tie mass as possible
and the same expected score win + tie/2 = s: s ≥ ½ gives win 2s − 1 and tie 2 − 2s, s ≤ ½ gives loss 1 − 2s
and tie 2s. So 1 is a win, ½ exactly a tie, ¾ half a win and half a tie; each match has total weight 1, and
the weights are summed into fractional win and tie counts, the sufficient statistics of the Davidson
log-likelihood Σ_pairs [W_ij log P(i≻j) + W_ji log P(j≻i) + T_ij log P(tie)].

Case bootstrap. A case carries all its matches (the matches of a case share submissions, so they are not
independent). Resampling the n_d cases of domain d with replacement is drawing per-case counts; every
replicate's sufficient statistics are then ``counts @ F_d``, with F_d the (n_d, 3·pairs) table of each case's
contributions (wins of the lower model index, ties, matches, per pair), for all replicates in one matrix
product (as :mod:`arena.stats.bootstrap` does with case types: HypoArena cases carry 120 matches each, so
distinct case *compositions* hardly repeat and the case itself is the unit). Domains are resampled
independently (stratified by domain); the pooled fit of a replicate uses the same draws, summed over domains.
The fits run on all replicates at once (:func:`arena.stats.btd.fit_btd_pairs`: Newton on (θ, log ν),
warm-started from the point fit). Each domain draws from its own stream (``SeedSequence(seed).spawn``, in
sorted domain order) and replicates are processed in chunks that consume each stream as one draw would, so
neither the chunk size nor another domain changes a domain's values (beyond rounding, ~1e-15 relative).

Intervals are percentile intervals (linear interpolation) for ratings, ν and WR; rank intervals use order
statistics (``inverted_cdf``) so that they are whole ranks. Ranks are 1 = best; equal ratings keep the
sorted model-name order.

Layout. This module is the public face of HypoArena's statistics and re-exports every name it has always
offered; the code lives in focused sibling modules:

* :mod:`arena.stats.hypoarena_verdicts`: the verdict contract (:data:`VERDICT_COLUMNS`, …) and :func:`debias`;
* :mod:`arena.stats.hypoarena_encoding`: per-domain contribution tables (:func:`encode_domain`,
  :func:`pairs_from_features`) and case draws (:func:`draw_counts`);
* :mod:`arena.stats.hypoarena_fits`: point fits and bootstrap replicates (:func:`hypoarena_bootstrap`);
* :mod:`arena.stats.hypoarena_intervals`: ranks and percentile intervals shared by the summaries;
* :mod:`arena.stats.hypoarena_summary`: :func:`hypoarena_leaderboard`;
* :mod:`arena.stats.hypoarena_rubric`: :func:`rubric_scores`, :func:`rubric_table`;
* :mod:`arena.stats.hypoarena_agreement`: :func:`inter_judge_agreement`, :func:`pairwise_verdict_agreement`,
  :func:`pooled_spearman_ci`.
"""

from __future__ import annotations

# Names this module exposed before the split because it imported them (kept importable from here).
from .bootstrap import ranking_summary
from .btd import FIVE_LEVEL_SHARES, BTDBatch, elo_ratings, fit_btd_pairs, pair_to_model_sum, share_to_outcome
from .hypoarena_agreement import inter_judge_agreement, pairwise_verdict_agreement, pooled_spearman_ci
from .hypoarena_encoding import DomainData, draw_counts, encode_domain, pairs_from_features
from .hypoarena_fits import FitReplicates, HypoArenaBootstrap, hypoarena_bootstrap
from .hypoarena_rubric import rubric_scores, rubric_table
from .hypoarena_summary import hypoarena_leaderboard
from .hypoarena_verdicts import MATCH_KEY, ORDERS, VERDICT_COLUMNS, VERDICT_OUTCOME, debias

__all__ = [
    "BTDBatch",
    "DomainData",
    "FIVE_LEVEL_SHARES",
    "FitReplicates",
    "HypoArenaBootstrap",
    "MATCH_KEY",
    "ORDERS",
    "VERDICT_COLUMNS",
    "VERDICT_OUTCOME",
    "debias",
    "draw_counts",
    "elo_ratings",
    "encode_domain",
    "fit_btd_pairs",
    "hypoarena_bootstrap",
    "hypoarena_leaderboard",
    "inter_judge_agreement",
    "pair_to_model_sum",
    "pairs_from_features",
    "pairwise_verdict_agreement",
    "pooled_spearman_ci",
    "ranking_summary",
    "rubric_scores",
    "rubric_table",
    "share_to_outcome",
]
