"""The Intrinsic-scoring report (PROTOCOL.md §4; issue 14): what ``manage.py intrinsic_report BENCHMARK --json``
prints, ``/api/benchmarks/<id>/intrinsic/`` returns and the report page shows. The figures come from the pure
statistics (:func:`arena.stats.intrinsic.intrinsic_report`, whose docstring states the rules: the pessimistic tie
rule, the listwise terminal rank, the paper bootstrap); this module only reads a benchmark's stored rows into the
arrays it takes and adds what the tables hold about where the numbers came from.

Reading. Papers are in external-id order (the bootstrap's draws follow that order, so it is stable); a paper's
candidates are columns in ``position`` order. Every nll/energy scorer gives a (papers, candidates) array of its
``mean`` scores (the primary aggregate), NaN where a candidate has no score: a paper a scorer did not fully score is
not ranked by it, left out of its figures and counted (``n_excluded``). A listwise scorer gives its top list per
paper, -1 for an invalid or missing answer (likewise left out and counted).

Candidate counts may differ between papers (the importer accepts 2 to 1,000): every figure is defined per paper over
its own candidates (``method.candidates`` says how), so the arrays are as wide as the largest count, NaN (scores) or -1
(a list of min(5, n) entries) past a paper's own count, and the statistics are given each paper's count.

All reads are a fixed number of ``values_list`` queries turned into numpy arrays; 1,323 papers × 16 candidates × 14
scorers (296,352 scores) read in well under the statistics' own time (bench figure in
/tmp/h/readme_intrinsic_report.md).

One scorer per (model, criterion). The report compares *models* (cross-model agreement is per criterion across
models), so when several scorers read the same model by the same criterion (a rerun is a new scorer) it keeps the
one that ranked the most papers (then the newest) and lists the others under ``read.scorers_left_out`` with why.

The length check. The span's ``sum`` is reported beside the mean as a check that the mean's ranking is not a length
effect: ``length_check`` holds each scoring scorer's pooled metrics when its candidates are ranked by the sum
(same papers, same bootstrap); no pair or agreement is computed for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Max, Q

from arena.caching import report_cached
from arena.errors import NotFoundError
from arena.models import Benchmark

from .models import LISTWISE_TOP, Candidate, CandidateScore, ListwiseRanking, Paper, Scorer

if TYPE_CHECKING:
    import numpy as np


#: Bootstrap replicates by default (the protocol's 2,000) and the default seed and level.
REPORT_REPLICATES = 2000
REPORT_SEED = 0
REPORT_LEVEL = 0.95
#: Criteria in report order; listwise scorers come last (the baseline).
CRITERION_ORDER = {Scorer.Criterion.NLL.value: 0, Scorer.Criterion.ENERGY.value: 1, Scorer.Criterion.LISTWISE.value: 2}


class ReportError(NotFoundError):
    """No report can be made as asked (no papers, no scores, a paper without exactly one gold); the message says what
    to do. A :class:`~arena.errors.NotFoundError`: there is nothing to answer with, so the API says 404."""


def _natural(text: str) -> tuple[Any, ...]:
    """Sort key that puts "LM-7B" before "LM-70B" (digits compared as numbers)."""
    # isdecimal, not isdigit: the split's numbers are the decimal runs; "²" is a digit to isdigit() but not to int()
    return tuple(int(part) if part.isdecimal() else part.lower() for part in re.split(r"(\d+)", text))


@dataclass
class ReportInputs:
    """The benchmark's rows as the statistics take them (see the module docstring)."""

    paper_ids: list[str]
    disciplines: list[str]
    gold: np.ndarray  # (P,) gold column
    n_candidates: int  # the largest count (every paper's when they agree)
    sizes: np.ndarray  # (P,) each paper's candidate count
    scorers: list[Scorer]  # kept, in report order
    means: dict[int, np.ndarray] = field(default_factory=dict)  # scorer pk -> (P, n), NaN = not scored
    totals: dict[int, np.ndarray] = field(default_factory=dict)
    tops: dict[int, np.ndarray] = field(default_factory=dict)  # scorer pk -> (P, w), -1 = invalid or missing
    rows: dict[int, int] = field(default_factory=dict)  # scorer pk -> stored score or ranking rows
    invalid: dict[int, int] = field(default_factory=dict)  # listwise scorer pk -> invalid rankings
    sources: dict[int, list[str]] = field(default_factory=dict)
    left_out: list[dict[str, Any]] = field(default_factory=list)


def _papers_and_columns(
    benchmark: Benchmark,
) -> tuple[list[tuple[int, str, str]], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[tuple[int, str], int]]:
    """Papers in external-id order, each paper's candidate count, every candidate's (paper row, column) and the gold
    columns; raises ReportError when there is no paper or a paper has not exactly one gold."""
    import numpy as np

    papers = list(
        Paper.objects.filter(benchmark=benchmark).order_by("external_id").values_list("pk", "external_id", "discipline")
    )
    if not papers:
        raise ReportError(f"{benchmark} has no paper yet; import papers.jsonl with import_intrinsic (intrinsic/FORMAT.md)")
    paper_pk = np.array([p[0] for p in papers], dtype=np.int64)
    order = np.argsort(paper_pk)
    cands = list(
        Candidate.objects.filter(paper__benchmark=benchmark).values_list("pk", "paper_id", "position", "gold", "external_id")
    )
    c_pk = np.fromiter((c[0] for c in cands), dtype=np.int64, count=len(cands))
    c_paper = np.fromiter((c[1] for c in cands), dtype=np.int64, count=len(cands))
    c_pos = np.fromiter((c[2] for c in cands), dtype=np.int64, count=len(cands))
    c_gold = np.fromiter((c[3] for c in cands), dtype=bool, count=len(cands))
    c_row = order[np.searchsorted(paper_pk[order], c_paper)]
    sizes = np.bincount(c_row, minlength=len(papers)).astype(np.int64)
    by = np.lexsort((c_pos, c_row))  # candidates by paper row, then position
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    c_col = np.empty(len(cands), dtype=np.int64)
    c_col[by] = np.arange(len(cands)) - np.repeat(starts, sizes)
    gold_count = np.bincount(c_row[c_gold], minlength=len(papers))
    if (gold_count != 1).any():
        bad = papers[int(np.flatnonzero(gold_count != 1)[0])][1]
        raise ReportError(
            f"{benchmark}: paper {bad!r} has {int(gold_count[gold_count != 1][0])} gold candidates; mark exactly one (intrinsic/FORMAT.md)"
        )
    gold = np.empty(len(papers), dtype=np.int64)
    gold[c_row[c_gold]] = c_col[c_gold]
    by_external = {(int(c[1]), c[4]): int(col) for c, col in zip(cands, c_col, strict=True)}
    return papers, sizes, gold, c_pk, c_row, c_col, by_external


def report_inputs(*, benchmark: Benchmark) -> ReportInputs:
    """Read the benchmark's papers, candidates, scores and listwise rankings into arrays (a fixed number of queries).

    Raises :class:`ReportError` when there is nothing to rank (no paper; no score and no ranking) or a paper has not
    exactly one gold."""
    import numpy as np

    papers, sizes, gold, c_pk, c_row, c_col, by_external = _papers_and_columns(benchmark)
    n = int(sizes.max())
    paper_ids = [p[1] for p in papers]
    n_papers = len(papers)
    c_order = np.argsort(c_pk)
    c_sorted = c_pk[c_order]
    scorers = {s.pk: s for s in Scorer.objects.filter(benchmark=benchmark)}
    inputs = ReportInputs(
        paper_ids=paper_ids, disciplines=[p[2] for p in papers], gold=gold, n_candidates=n, sizes=sizes, scorers=[]
    )

    # Scores: one query, three columns straight into numpy (≈300k rows at the study's size).
    rows = (
        CandidateScore.objects.filter(scorer__benchmark=benchmark)
        .order_by()
        .values_list("scorer_id", "candidate_id", "mean", "total")
    )
    fetched = list(rows)
    data = np.fromiter(chain.from_iterable(fetched), dtype=np.float64, count=4 * len(fetched)).reshape(-1, 4)
    s_ids = data[:, 0].astype(np.int64)
    idx = c_order[np.searchsorted(c_sorted, data[:, 1].astype(np.int64))]
    r, c = c_row[idx], c_col[idx]
    for pk in np.unique(s_ids):
        pick = s_ids == pk
        means = np.full((n_papers, n), np.nan)
        totals = np.full((n_papers, n), np.nan)
        means[r[pick], c[pick]] = data[pick, 2]
        totals[r[pick], c[pick]] = data[pick, 3]
        inputs.means[int(pk)], inputs.totals[int(pk)] = means, totals
        inputs.rows[int(pk)] = int(pick.sum())

    # Listwise rankings: a few rows per paper; the top lists name candidates by external id. A paper of fewer than
    # LISTWISE_TOP candidates is ranked whole (FORMAT.md), its row padded with -1.
    width = min(LISTWISE_TOP, n)
    row_of = {p[0]: i for i, p in enumerate(papers)}
    for scorer_id, paper_id, status, top in (
        ListwiseRanking.objects.filter(scorer__benchmark=benchmark)
        .order_by()
        .values_list("scorer_id", "paper_id", "status", "top")
    ):
        tops = inputs.tops.setdefault(scorer_id, np.full((n_papers, width), -1, dtype=np.int64))
        inputs.rows[scorer_id] = inputs.rows.get(scorer_id, 0) + 1
        if status != ListwiseRanking.Status.ACCEPTED:
            inputs.invalid[scorer_id] = inputs.invalid.get(scorer_id, 0) + 1
            continue
        columns = [by_external.get((paper_id, str(cid))) for cid in top or []]
        row = row_of[paper_id]
        wanted = min(LISTWISE_TOP, int(sizes[row]))
        if len(columns) != wanted or None in columns:
            name = scorers[scorer_id].name
            raise ReportError(
                f"{benchmark}: scorer {name!r}'s ranking of paper {paper_ids[row]!r} lists {top!r}; an accepted ranking "
                f"lists {wanted} candidate ids of its paper: mark it invalid with a reason, or re-import it"
            )
        tops[row, :wanted] = columns

    for table in (CandidateScore, ListwiseRanking):
        for scorer_id, source in (
            table.objects.filter(scorer__benchmark=benchmark).order_by().values_list("scorer_id", "source").distinct()
        ):
            inputs.sources.setdefault(scorer_id, []).append(source)
    for pk in inputs.sources:
        inputs.sources[pk].sort()
    inputs.scorers, inputs.left_out = _scorers_kept(scorers.values(), inputs)
    if not inputs.scorers:
        raise ReportError(
            f"{benchmark} has no score and no listwise ranking yet; import scores.jsonl or listwise.jsonl with import_intrinsic "
            "(intrinsic/FORMAT.md), or run a scorer"
        )
    return inputs


def _ranked(pk: int, inputs: ReportInputs) -> int:
    import numpy as np

    if pk in inputs.means:
        return int((~np.isnan(inputs.means[pk]).any(axis=1)).sum())
    return int((inputs.tops[pk] >= 0).all(axis=1).sum()) if pk in inputs.tops else 0


def _scorers_kept(scorers: Iterable[Scorer], inputs: ReportInputs) -> tuple[list[Scorer], list[dict[str, Any]]]:
    """The scorers with rows, one per (model, criterion) (most papers ranked, then newest), in report order: by model
    (natural order) and criterion, listwise last; and the others with why they are left out."""
    left_out: list[dict[str, Any]] = []
    groups: dict[tuple[str, str], list[Scorer]] = {}
    for s in scorers:
        if s.pk not in inputs.rows:
            left_out.append(
                {"name": s.name, "model": s.model, "criterion": s.criterion, "reason": "no score or ranking stored yet"}
            )
            continue
        groups.setdefault((s.model, s.criterion), []).append(s)
    kept = []
    for members in groups.values():
        members.sort(key=lambda s: (_ranked(s.pk, inputs), s.created_at, s.pk), reverse=True)
        kept.append(members[0])
        for other in members[1:]:
            left_out.append(
                {
                    "name": other.name,
                    "model": other.model,
                    "criterion": other.criterion,
                    "reason": f"{members[0].name} reads the same model by the same criterion and ranked more papers (or is newer); "
                    "the report keeps one scorer per model and criterion",
                }
            )
    kept.sort(
        key=lambda s: (s.criterion == Scorer.Criterion.LISTWISE, _natural(s.model), CRITERION_ORDER.get(s.criterion, 9), s.name)
    )
    left_out.sort(key=lambda x: x["name"])
    return kept, left_out


def benchmark_intrinsic_report(
    *, benchmark: Benchmark, replicates: int = REPORT_REPLICATES, seed: int = REPORT_SEED, level: float = REPORT_LEVEL
) -> dict[str, Any]:
    """Hit@1/2/3/5, MRR and the (strict) gold-beats-distractor rate per scorer × discipline and pooled, and pooled
    across models per criterion (``all_models``, the paper's "All models" rows), with paper-bootstrap intervals;
    paired differences of every pair of scorers (pooled); cross-model agreement per criterion; gold-rank
    distributions; the sum-aggregate length check. A JSON-ready dict (no NaN or infinity). Papers may have different
    candidate counts (``read.candidate_counts``; ``candidates_per_paper`` is None then).

    Preconditions: ``benchmark`` is an Intrinsic benchmark, ``replicates >= 1``, ``0 < level < 1``. Raises
    :class:`ReportError` when there is nothing to report or the rows cannot be ranked (a paper without exactly one
    gold). The document names the models: it is for researchers."""
    from arena.stats.intrinsic import POOLED, intrinsic_report

    inputs = report_inputs(benchmark=benchmark)
    specs: dict[str, dict[str, Any]] = {}
    sum_specs: dict[str, dict[str, Any]] = {}
    for s in inputs.scorers:
        if s.is_listwise:
            specs[s.name] = {"model": s.model, "criterion": s.criterion, "top": inputs.tops[s.pk]}
        else:
            specs[s.name] = {"model": s.model, "criterion": s.criterion, "aggregate": "mean", "scores": inputs.means[s.pk]}
            sum_specs[s.name] = {"model": s.model, "criterion": s.criterion, "aggregate": "sum", "scores": inputs.totals[s.pk]}
    mixed = bool((inputs.sizes != inputs.n_candidates).any())
    common = {
        "gold": inputs.gold,
        "disciplines": inputs.disciplines,
        "n_candidates": inputs.sizes if mixed else inputs.n_candidates,
        "replicates": replicates,
        "seed": seed,
        "level": level,
    }
    try:
        report = intrinsic_report(specs, **common)
        length = intrinsic_report(sum_specs, **common, pairs=[]) if sum_specs else None
    except ValueError as exc:
        raise ReportError(f"{benchmark}: {exc}") from None
    by_pk = {s.name: s for s in inputs.scorers}
    for entry in report["scorers"]:
        s = by_pk[entry["name"]]
        entry |= {
            "endpoint": s.endpoint,
            "sources": inputs.sources.get(s.pk, []),
            "rows": inputs.rows.get(s.pk, 0),
            "invalid_rankings": inputs.invalid.get(s.pk, 0) if s.is_listwise else None,
        }
    report["method"] |= {
        "paper_order": "papers by external id, candidates by position (the bootstrap's draws follow this order)",
        "aggregate": "scores are the mean over the hypothesis span (primary); length_check ranks by the sum",
        "one_scorer_per_model_and_criterion": "when several scorers read one model by one criterion, the one that ranked "
        "the most papers (then the newest) is reported; the others are listed in read.scorers_left_out",
    }
    listwise = [s.name for s in inputs.scorers if s.is_listwise]
    return {
        "benchmark": {"id": benchmark.pk, "name": benchmark.name, "version": benchmark.version, "protocol": benchmark.protocol},
        "read": {
            "papers": len(inputs.paper_ids),
            "candidates_per_paper": None if mixed else inputs.n_candidates,
            "candidate_counts": report["method"]["candidate_counts"],
            "scores": sum(inputs.rows.get(s.pk, 0) for s in inputs.scorers if not s.is_listwise),
            "rankings": sum(inputs.rows.get(s.pk, 0) for s in inputs.scorers if s.is_listwise),
            "invalid_rankings": sum(inputs.invalid.get(s.pk, 0) for s in inputs.scorers if s.is_listwise),
            "scorers_left_out": inputs.left_out,
        },
        "baselines": listwise,
        **report,
        "length_check": [
            {
                k: r[k]
                for k in (
                    "scorer",
                    "n_papers",
                    "n_ranked",
                    "n_excluded",
                    "papers_with_ties",
                    "tied_distractors",
                    "metrics",
                    "rank_distribution",
                )
            }
            for r in (length["results"] if length else [])
            if r["discipline"] == POOLED
        ],
    }


# --------------------------------------------------------------------------- caching


def rows_fingerprint(*, benchmark: Benchmark) -> str:
    """What the report reads, in four aggregate queries: per table (papers, scorers, scores, rankings) the number of
    rows and the newest id, and how many rankings are accepted (a ranking is the row a run might rewrite: an invalid
    answer retried). Papers, candidates and scores are only added or deleted (with their paper or scorer), so any
    change to what the report reads changes this."""
    parts = []
    for queryset in (
        Paper.objects.filter(benchmark=benchmark),
        Scorer.objects.filter(benchmark=benchmark),
        CandidateScore.objects.filter(scorer__benchmark=benchmark),
    ):
        found = queryset.aggregate(n=Count("id"), last=Max("id"))
        parts.append(f"{found['n']}.{found['last']}")
    rankings = ListwiseRanking.objects.filter(scorer__benchmark=benchmark).aggregate(
        n=Count("id"), last=Max("id"), accepted=Count("id", filter=Q(status=ListwiseRanking.Status.ACCEPTED))
    )
    parts.append(f"{rankings['n']}.{rankings['last']}.{rankings['accepted']}")
    return "/".join(parts)


def intrinsic_report_cached(
    *, benchmark: Benchmark, replicates: int = REPORT_REPLICATES, seed: int = REPORT_SEED, level: float = REPORT_LEVEL
) -> dict[str, Any]:
    """:func:`benchmark_intrinsic_report`, cached on :func:`rows_fingerprint`, the replicates, seed and level (the page
    and the API recompute only when a row arrives). A ReportError is not cached."""
    return report_cached(
        namespace="intrinsic-report:v2",  # v2: strict beats, listwise beats, all_models rows, mixed counts
        benchmark=benchmark,
        parts=[rows_fingerprint(benchmark=benchmark), replicates, seed, level],
        make=lambda: benchmark_intrinsic_report(benchmark=benchmark, replicates=replicates, seed=seed, level=level),
    )
