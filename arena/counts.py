"""The benchmark list's counts, read from :class:`arena.models.BenchmarkCounts` (issue 25, item 5).

Counting a benchmark's rows grows with them (98 ms for 560,000 pairs on PostgreSQL, most of it reading the pairs'
index and rows); the database keeps the five numbers up to date in the same transaction as every write (triggers,
migration 0011), so the list reads them by primary key.
"""

from __future__ import annotations

from django.db import models
from django.db.models import OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from .models import Benchmark, BenchmarkCounts

#: The counts every row of the benchmark list carries, as named on :class:`BenchmarkCounts`.
COUNT_FIELDS = ("n_contexts", "n_text_contexts", "n_participants", "n_pairs", "n_runs")


def with_counts(benchmarks: QuerySet[Benchmark]) -> QuerySet[Benchmark]:
    """``benchmarks`` annotated with :data:`COUNT_FIELDS` (0 for a benchmark no row was ever written to)."""
    kept = BenchmarkCounts.objects.filter(benchmark_id=OuterRef("pk"))
    return benchmarks.annotate(
        **{name: Coalesce(Subquery(kept.values(name), output_field=models.BigIntegerField()), 0) for name in COUNT_FIELDS}
    )
