"""Read queries over Reconstruction benchmarks for the shared pages."""

from __future__ import annotations

from django.db.models import Count

from .models import Hypothesis, SeedPaper


def dashboard_counts(benchmark_ids: list[int]) -> dict[int, str]:
    """What each of these Reconstruction benchmarks holds, for the dashboard: its seed papers and hypotheses, in two
    grouped queries whatever the number of benchmarks."""
    seeds = dict(SeedPaper.objects.filter(benchmark_id__in=benchmark_ids).values_list("benchmark_id").annotate(n=Count("id")))
    hypotheses = dict(
        Hypothesis.objects.filter(seed__benchmark_id__in=benchmark_ids).values_list("seed__benchmark_id").annotate(n=Count("id"))
    )
    return {pk: f"{seeds.get(pk, 0):,} seed papers · {hypotheses.get(pk, 0):,} hypotheses" for pk in benchmark_ids}
