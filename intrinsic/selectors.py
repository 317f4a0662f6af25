"""Read queries over Intrinsic-scoring benchmarks for the shared pages."""

from __future__ import annotations

from django.db.models import Count

from .models import Candidate, Paper


def dashboard_counts(benchmark_ids: list[int]) -> dict[int, str]:
    """What each of these Intrinsic benchmarks holds, for the dashboard: its papers and candidates, in two grouped
    queries whatever the number of benchmarks."""
    papers = dict(Paper.objects.filter(benchmark_id__in=benchmark_ids).values_list("benchmark_id").annotate(n=Count("id")))
    candidates = dict(
        Candidate.objects.filter(paper__benchmark_id__in=benchmark_ids).values_list("paper__benchmark_id").annotate(n=Count("id"))
    )
    return {pk: f"{papers.get(pk, 0):,} papers · {candidates.get(pk, 0):,} candidates" for pk in benchmark_ids}
