"""Intrinsic-scoring statistics (PROTOCOL.md §4): gold ranks, Hit@k, MRR, gold-beats rate, paper-bootstrap CIs,
paired differences, cross-model agreement and gold-rank distributions. Pure numpy; no Django.

Data contract (the app builds these arrays from its tables). A benchmark has P papers, each with n candidates (16 in
the release) in a fixed column order (the candidates' ``position``); ``gold`` holds, per paper, the column of its one
gold candidate. Every array is in one paper order, the caller's (the app passes papers ordered by external id); the
bootstrap draws depend on that order, so keep it stable.

Mixed candidate counts. Papers may have different counts n_i (``n_candidates`` given per paper): the arrays are as wide
as the largest count, paper i's candidates are its first n_i columns, and the rest is padding (NaN scores, -1 list
entries; anything else is refused as misaligned). Every figure below is defined per paper over that paper's own
candidates and each paper weighs 1, so nothing assumes a common n: Hit@k (a paper of k or fewer candidates always
counts at k), 1 / rank, beats over the paper's n_i − 1 distractors (the mean of the papers' shares, not a pooled share
of (gold, distractor) pairs), the listwise width min(w, n_i) and terminal rank n_i, agreement and paired differences.
What does mix papers of different sizes: chance levels differ by paper (Hit@1 by chance is 1 / n_i), and a rank
distribution pools ranks of papers of different sizes; the report lists the counts (``method.candidate_counts``).

A *scorer* is (model, criterion[, aggregate]), e.g. ("llama-1b", "energy", "mean"). Two kinds:

* scoring (intrinsic) scorers give ``scores``, a (P, n) float array, **lower is better** (mean NLL or mean raw
  target-logit energy over the hypothesis span). A paper with any NaN score (a candidate the run could not score)
  is **not ranked** by that scorer: it is left out of that scorer's metrics and counted (``n_excluded``).
* listwise scorers give ``top``, a (P, w) int array (w = 5 in the protocol): the judge's top-w candidate columns in
  order, best first (min(w, n_i) of them, then -1, with mixed counts); a row holding -1 among those (the list was
  invalid after its retries, or missing) is not ranked, counted.

Tie rule (PESSIMISTIC), used everywhere: the gold's rank is 1 + the number of distractors whose score is <= the
gold's. A tie counts against the gold, so a constant scorer never gets Hit@1 (its gold is always last); the number
of distractors tied with the gold is counted per paper (``ties``) and reported per scope.

Terminal-rank rule (listwise): a gold in the top-w list at position j (1-based) has rank j; any other gold shares
the terminal rank n with every other unlisted candidate. Hit@k is reported for a listwise scorer only for k <= w (or
every k when the lists hold every candidate): MRR would conflate "just outside the list" with "last".

Metrics per scorer, over the papers it ranked (each paper weighs 1):

* ``hit_at_k`` (k in :data:`HIT_KS`) = share of papers whose gold rank is <= k;
* ``mrr`` = mean of 1 / gold rank (scoring scorers only);
* ``beats`` = mean over papers of the gold-beats-distractor share, **strict** as the paper counts it ("placed higher"):
  distractors placed strictly below the gold / (n − 1). A scoring scorer places below the gold the distractors scoring
  strictly worse; a tie is not a win, consistently with the pessimistic rank, so beats = (n − rank) / (n − 1). A
  listwise scorer places below a listed gold the candidates listed after it and every unlisted one; an unlisted gold
  shares the terminal rank with the other unlisted candidates and beats none; again beats = (n − rank) / (n − 1).

"All models" rows (the paper's headline rows and per-discipline figures pooled across models;
:mod:`arena.stats.intrinsic_pooled`): per criterion (and every scoring scorer together when they use several
criteria), every model's ranked (model, paper) pairs pooled, each weighing 1, with the same paper bootstrap.

Scopes: each discipline (sorted by name) and the pooled ``"all"`` (a ratio of sums over every paper, not a mean of
the disciplines).

Paper-level bootstrap. A scope holds P_s papers in the caller's order. Each replicate draws P_s paper indices
uniformly with replacement, ``rng.integers(0, P_s, size=(R, P_s))`` (drawn in chunks of replicates, which consumes
the stream exactly as one draw would). **Per discipline, papers are resampled within the discipline; the pooled
scope resamples all papers (not stratified by discipline).** A drawn paper brings its values for every scorer, so
every scorer, pair, agreement share and all-models row of a scope uses the same draws (differences are paired). Each
scope has its own stream ``numpy.random.default_rng(SeedSequence(seed).spawn(D + 1)[i])``, i = the scope's index in
sorted disciplines followed by ``"all"``: a discipline's intervals depend only on its own papers. A replicate's metric
is (sum of drawn papers' values) / (number of drawn papers the scorer ranked; for an all-models row, the drawn papers'
(model, paper) pairs ranked); the per-paper values are computed once and every replicate's sums for all scorers are
one product ``counts @ values`` (counts = how often each paper was drawn). Intervals are percentile intervals (numpy's ``"linear"`` quantiles, as ``scipy.stats.bootstrap(...,
method="percentile")``) at ``level``; a replicate that drew no paper the scorer ranked is undefined, left out of
the interval and counted (``n_undefined``).

Paired difference of scorers a and b: metric(a) − metric(b) over the papers *both* ranked, bootstrapped on the
scope's draws. Cross-model agreement: per (criterion, aggregate) with at least two models, the share of papers
(ranked by every one of those models) where every model ranks the gold first.

API: :func:`gold_ranks`, :func:`gold_beats`, :func:`listwise_gold_ranks` (→ :class:`GoldRanks`),
:func:`paper_metrics`, :func:`rank_distribution`, :func:`model_agreement`, :func:`paired_difference` and the
entry point :func:`intrinsic_report` (a JSON-ready document; its shape is in its docstring).

Cost (issue 14: every metric with 10,000 replicates for 14 scorers × 1,323 papers × 16 candidates in under 1 s;
bench/bench_intrinsic.py): integer-valued per-paper columns (Hit@k, ranked, beats × (n − 1) when every paper has n
candidates, agreement, all-models sums) are multiplied in float32, exact below 2**24; an interval whose numerator is an integer and whose denominator is the
same in every replicate is found by counting instead of partitioning; quantities are processed in blocks in
reused buffers; BLAS runs on one thread (as the Bradley–Terry fits: extra threads only wait on a busy machine).
With mixed counts, beats is kept as each paper's
share (float64, partitioned like MRR). None of this changes a value beyond floating-point rounding (tests/stats/test_stats_intrinsic.py compares with
``scipy.stats.bootstrap`` and a per-replicate loop to 1e-12).

Layout. This module is the public face of the intrinsic-scoring statistics and re-exports every name it has
always offered; the code lives in focused sibling modules:

* :mod:`arena.stats.intrinsic_ranks`: constants (:data:`HIT_KS`, :data:`METRICS`, :data:`POOLED`, …),
  :class:`GoldRanks` and the per-paper facts (gold ranks, beats, metrics, rank distribution, agreement);
* :mod:`arena.stats.intrinsic_bootstrap`: drawn-paper totals, percentile intervals, :func:`paired_difference`;
* :mod:`arena.stats.intrinsic_scorers`: a report scorer's spec validated and turned into ranks and values;
* :mod:`arena.stats.intrinsic_pooled`: the "All models" groups and their rows;
* :mod:`arena.stats.intrinsic_document`: :func:`intrinsic_report`.
"""

from __future__ import annotations

# Re-exported because this module exposed it before the split (it imported it).
from .bt import blas_single_threaded_call
from .intrinsic_bootstrap import paired_difference
from .intrinsic_document import intrinsic_report
from .intrinsic_ranks import (
    DEFAULT_AGGREGATE,
    HIT_KS,
    METRICS,
    POOLED,
    GoldRanks,
    available_metrics,
    gold_beats,
    gold_ranks,
    listwise_gold_ranks,
    model_agreement,
    paper_metrics,
    rank_distribution,
)

__all__ = [
    "DEFAULT_AGGREGATE",
    "HIT_KS",
    "METRICS",
    "POOLED",
    "GoldRanks",
    "available_metrics",
    "blas_single_threaded_call",
    "gold_beats",
    "gold_ranks",
    "intrinsic_report",
    "listwise_gold_ranks",
    "model_agreement",
    "paired_difference",
    "paper_metrics",
    "rank_distribution",
]
