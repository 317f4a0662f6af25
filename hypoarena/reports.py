"""The HypoArena documents: the leaderboard (what ``manage.py hypoarena_leaderboard --json`` prints and
``/api/benchmarks/<id>/hypoarena/`` returns) and the inter-judge agreement of two arena runs (``manage.py
hypoarena_agreement --json``, ``/api/benchmarks/<id>/hypoarena/agreement/``). The figures come from the pure statistics
(``arena.stats.hypoarena``); this module only reads the runs' rows (``selectors``) and passes them in.

Both documents are cached (:func:`hypoarena_report_cached`, :func:`hypoarena_agreement_cached`) on a fingerprint of
the rows they read, so that a page and its polls recompute only when a verdict or a rubric score arrives."""

from __future__ import annotations

from typing import Any

from arena.caching import report_cached, run_rows_fingerprint
from arena.errors import NotFoundError
from arena.models import Benchmark, JudgeRun

from .models import ARENA_KIND, RUBRIC_KIND, ArenaVerdict, RubricScore
from .selectors import rubric_rows, singleton_domains, verdict_frame
from .services import ARENA_RUN, RUBRIC_RUN


class ReportError(NotFoundError):
    """No leaderboard can be made as asked (no run, no verdicts); the message says what to do. A
    :class:`~arena.errors.NotFoundError`: there is nothing to report, so the API answers 404."""


def arena_runs(*, benchmark: Benchmark) -> list[JudgeRun]:
    return list(benchmark.runs.filter(subjects=ARENA_KIND, run_type=ARENA_RUN).order_by("created_at", "id"))


def arena_run_pick(*, benchmark: Benchmark, run_id: int | None) -> JudgeRun:
    """The arena run asked for, else the benchmark's first arena run. Raises :class:`ReportError` naming the runs."""
    runs = arena_runs(benchmark=benchmark)
    if run_id is None:
        if not runs:
            raise ReportError(f"{benchmark} has no arena run yet; import verdicts with import_hypoarena")
        return runs[0]
    for run in runs:
        if run.pk == run_id:
            return run
    listed = ", ".join(f"{r.pk} ({r.judge_model}, {r.label})" for r in runs) or "none"
    raise ReportError(f"run {run_id} is not an arena run of {benchmark}; its arena runs are: {listed}")


def rubric_run_first(*, benchmark: Benchmark) -> JudgeRun | None:
    """The rubric run whose scores the leaderboard shows beside the arena ranks: the benchmark's first."""
    return benchmark.runs.filter(subjects=RUBRIC_KIND, run_type=RUBRIC_RUN).order_by("created_at", "id").first()


def hypoarena_report(*, benchmark: Benchmark, run: JudgeRun, replicates: int, seed: int, level: float = 0.95) -> dict[str, Any]:
    """Per-domain and pooled BTD ratings with case-bootstrap intervals, WR, consistency and ν of one arena run, with
    the rubric scores and ranks of the benchmark's first rubric run beside them (Δ = rubric rank − arena rank).

    The Reference is named in ``reference_models``: this document is for researchers (the API is researcher-only)."""
    import pandas as pd

    from arena.stats.hypoarena import (
        hypoarena_leaderboard,
        rubric_scores,
        rubric_table,
    )

    verdicts = verdict_frame(run=run)
    if verdicts.empty:
        raise ReportError(f"run {run.pk} ({run.judge_model}, {run.label}) has no accepted verdict yet")
    singles = singleton_domains(benchmark=benchmark)
    board = hypoarena_leaderboard(verdicts, replicates=replicates, seed=seed, level=level, singleton_domains=singles)
    rubric: dict[str, Any] | None = None
    rubric_run = rubric_run_first(benchmark=benchmark)
    rows = rubric_rows(run=rubric_run) if rubric_run is not None else []
    if rows:
        scores = rubric_scores(pd.DataFrame(rows), singleton_domains=singles)
        ranks = {d: {m: e["rank"] for m, e in block["models"].items()} for d, block in board["domains"].items()}
        pooled = {m: e["rank"] for m, e in board["pooled"]["models"].items()}
        rubric = {"run": _run(rubric_run)} | rubric_table(scores, ranks, pooled_arena_ranks=pooled)
    references = sorted(
        set(benchmark.participants.filter(hypoarena_submissions__is_reference=True).values_list("name", flat=True))
    )
    return {
        "benchmark": {"id": benchmark.pk, "name": benchmark.name, "version": benchmark.version, "protocol": benchmark.protocol},
        "run": _run(run),
        "reference_models": references,
        "singleton_domains": list(singles),
        "leaderboard": board,
        "rubric": rubric,
    }


def _run(run: JudgeRun) -> dict[str, Any]:
    return {"id": run.pk, "judge": run.judge_model, "label": run.label, "provider": run.provider, "status": run.status}


def agreement_runs_pick(*, benchmark: Benchmark, run_a: int | None, run_b: int | None) -> tuple[JudgeRun, JudgeRun]:
    """Two arena runs of the benchmark to compare: those asked for, else its first two arena runs (in creation order;
    when one is given, the other is the first arena run that is not it).

    Raises :class:`ReportError` when the benchmark has fewer than two arena runs, when an id is not one of them (the
    message lists them), or when both name the same run (a judge agrees with itself; there is nothing to compare)."""
    runs = arena_runs(benchmark=benchmark)
    if len(runs) < 2:
        raise ReportError(
            f"{benchmark} has {len(runs)} arena run{'s' if len(runs) != 1 else ''}; inter-judge agreement needs two: "
            "import a second judge's verdicts on the same matches with import_hypoarena"
        )
    first = arena_run_pick(benchmark=benchmark, run_id=run_a) if run_a is not None else None
    second = arena_run_pick(benchmark=benchmark, run_id=run_b) if run_b is not None else None
    # A run left out is the first arena run other than the one given (so ?run_a=<second run> compares it with the first).
    if first is None:
        first = next(r for r in runs if second is None or r.pk != second.pk)
    if second is None:
        second = next(r for r in runs if r.pk != first.pk)
    if first.pk == second.pk:
        raise ReportError(f"run A and run B are both run {first.pk}; pick two different arena runs of {benchmark}")
    return first, second


def _average_ranks(ratings: dict[str, float]) -> dict[str, float]:
    """Ranks within one domain, 1 = highest rating, ties sharing the mean of their places: the ranks behind
    ``inter_judge_agreement``'s mean |Δrank|, so the table's |Δrank| column averages to the summary's figure."""
    from scipy.stats import rankdata

    models = sorted(ratings)
    ranks = rankdata([-ratings[m] for m in models], method="average")
    return {m: float(r) for m, r in zip(models, ranks, strict=True)}


def top_k_overlap_text(value: float | None) -> str:
    """A top-k overlap count as the paper prints it: a whole count per domain ("5", "4"), the pooled mean to at most two
    decimals without trailing zeros ("4.5", "5", "4.33"); "—" when there is none. The page and the command share it."""
    if value is None:
        return "—"
    return f"{value:.2f}".rstrip("0").rstrip(".")


def hypoarena_agreement_report(
    *, benchmark: Benchmark, run_a: JudgeRun, run_b: JudgeRun, replicates: int, seed: int, level: float = 0.95, top_k: int = 5
) -> dict[str, Any]:
    """Inter-judge agreement of two arena runs of one benchmark (PROTOCOL.md §2): per domain and pooled Spearman ρ,
    Kendall τ, mean |Δrank| and top-k overlap (a count, as the paper prints it, and its share of k) of the two judges'
    BTD ratings (``inter_judge_agreement``), the pairwise verdict agreement on the shared matches' forward verdicts
    (``pairwise_verdict_agreement``), a case-bootstrap interval for the pooled ρ (``pooled_spearman_ci``: both judges
    resampled with the same case draws), and both judges' ratings and within-domain ranks per model and domain.

    Preconditions: two different arena runs of ``benchmark`` (:func:`agreement_runs_pick`); ``replicates >= 1``.
    Raises :class:`ReportError` when a run has no accepted verdict or the two share no domain."""
    from arena.stats.hypoarena import (
        inter_judge_agreement,
        pairwise_verdict_agreement,
        pooled_spearman_ci,
    )

    frames = {}
    for name, run in (("A", run_a), ("B", run_b)):
        if run.benchmark_id != benchmark.pk:
            raise ReportError(f"run {run.pk} belongs to another benchmark than {benchmark}; compare two runs of one benchmark")
        frames[name] = verdict_frame(run=run)
        if frames[name].empty:
            raise ReportError(f"run {name} ({run.pk}: {run.judge_model}, {run.label}) has no accepted verdict yet")
    try:
        boot = pooled_spearman_ci(frames["A"], frames["B"], replicates=replicates, seed=seed, level=level)
    except ValueError as exc:
        raise ReportError(f"runs {run_a.pk} and {run_b.pk}: {exc}") from None
    ratings_a, ratings_b = boot.pop("ratings_a"), boot.pop("ratings_b")
    agreement = inter_judge_agreement(ratings_a, ratings_b, top_k=top_k)
    pairwise = pairwise_verdict_agreement(frames["A"], frames["B"])
    references = set(benchmark.participants.filter(hypoarena_submissions__is_reference=True).values_list("name", flat=True))
    ratings: dict[str, Any] = {}
    for domain in ratings_a:
        ranks_a, ranks_b = _average_ranks(ratings_a[domain]), _average_ranks(ratings_b[domain])
        ratings[domain] = {
            m: {
                "rating_a": ratings_a[domain][m],
                "rating_b": ratings_b[domain][m],
                "rank_a": ranks_a[m],
                "rank_b": ranks_b[m],
                "rank_shift": abs(ranks_a[m] - ranks_b[m]),
            }
            for m in sorted(ratings_a[domain], key=lambda m: (ranks_a[m], m))
        }
    return {
        "benchmark": {"id": benchmark.pk, "name": benchmark.name, "version": benchmark.version, "protocol": benchmark.protocol},
        "run_a": _run(run_a),
        "run_b": _run(run_b),
        "reference_models": sorted(references),
        "singleton_domains": list(singleton_domains(benchmark=benchmark)),
        "agreement": agreement,
        "pairwise": pairwise,
        "pooled_spearman": boot,
        "ratings": ratings,
        "method": {
            "ratings": "each run's Bradley–Terry–Davidson point ratings per domain (as its leaderboard's), on the cells both runs rate",
            "spearman": "Spearman ρ of the two judges' ratings (Pearson on average ranks); pooled over all (model × domain) cells",
            "kendall": "Kendall τ-b of the same ratings; pooled over all cells",
            "rank_shift": "mean |rank A − rank B| over the models, ranks 1 = best within a domain (ties share their mean place); pooled over all cells",
            "top_k_overlap": (
                f"count |top-k(A) ∩ top-k(B)| of models in both runs' top k per domain, k = min({top_k}, the domain's models) "
                "(the domain's k), ties at the boundary broken by model name; pooled: the mean count over domains. A count, "
                "as the HypoArena paper's Table 12 prints it (5, 4; pooled 4.5), not a share"
            ),
            "top_k_overlap_share": "the count / k per domain; pooled: the mean share over domains",
            "pairwise": (
                "share of matches both runs judged in the original (forward) order whose verdicts pick the same outcome "
                "among A wins (A≫B, A>B), B wins (B>A, B≫A) and tie (A≈B)"
            ),
            "bootstrap": "case bootstrap within each domain, the same draws for both judges; percentile interval of the pooled ρ",
            "replicates": replicates,
            "seed": seed,
            "level": level,
            "top_k": top_k,
        },
    }


# --------------------------------------------------------------------------- caching


def run_fingerprint(run: JudgeRun | None) -> str:
    """What a run contributes to a document (``arena.caching.run_rows_fingerprint``): its accepted verdicts (an arena
    run) or its rubric scores (a rubric run)."""
    if run is None:
        return "none"
    if run.run_type == RUBRIC_RUN:
        return run_rows_fingerprint(run, RubricScore.objects.filter(run=run))
    return run_rows_fingerprint(run, ArenaVerdict.objects.filter(run=run, status=ArenaVerdict.Status.ACCEPTED))


def hypoarena_report_cached(*, benchmark: Benchmark, run: JudgeRun, replicates: int, seed: int) -> dict[str, Any]:
    """:func:`hypoarena_report`, cached by the arena run's and the rubric run's fingerprints, the replicates and the seed.

    The demo's leaderboard (3 domains, 8 models, 3,360 verdicts, 10,000 replicates) takes a few seconds of a core; a page
    polling a running run would pay that on every poll without the cache. A ReportError is not cached."""
    return report_cached(
        namespace="hypoarena-report:v2",
        benchmark=benchmark,
        parts=[run_fingerprint(run), run_fingerprint(rubric_run_first(benchmark=benchmark)), replicates, seed],
        make=lambda: hypoarena_report(benchmark=benchmark, run=run, replicates=replicates, seed=seed),
    )


def hypoarena_agreement_cached(
    *, benchmark: Benchmark, run_a: JudgeRun, run_b: JudgeRun, replicates: int, seed: int
) -> dict[str, Any]:
    """:func:`hypoarena_agreement_report`, cached by both runs' fingerprints, the replicates and the seed."""
    return report_cached(
        namespace="hypoarena-agreement:v3",
        benchmark=benchmark,
        parts=[run_fingerprint(run_a), run_fingerprint(run_b), replicates, seed],
        make=lambda: hypoarena_agreement_report(benchmark=benchmark, run_a=run_a, run_b=run_b, replicates=replicates, seed=seed),
    )
