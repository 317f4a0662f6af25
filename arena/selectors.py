"""Read queries over benchmarks."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from .models import Benchmark, Paper


def benchmark_list() -> QuerySet[Benchmark]:
    return Benchmark.objects.annotate(
        n_contexts=Count("contexts", distinct=True),
        n_text_contexts=Count("contexts", filter=Q(contexts__has_text=True), distinct=True),
        n_participants=Count("participants", distinct=True),
        n_pairs=Count("pairs", distinct=True),
        n_runs=Count("runs", distinct=True),
    )


@dataclass(frozen=True)
class RepeatedPaper:
    key: str
    title: str
    contexts: list[str]


def paper_provenance_audit(*, benchmark: Benchmark) -> list[RepeatedPaper]:
    """Papers that appear in more than one context of the benchmark.

    A paper is identified by its source paper id, else its URL, else its normalised title,
    so that a paper re-entered with a different id but the same URL is still caught.
    """
    seen: dict[str, set[str]] = defaultdict(set)
    titles: dict[str, str] = {}
    for paper in Paper.objects.filter(context__benchmark=benchmark).select_related("context"):
        keys = {f"title:{' '.join(paper.title.lower().split())}"}
        if paper.source_paper_id:
            keys.add(f"id:{paper.source_paper_id}")
        if paper.url:
            keys.add(f"url:{paper.url.rstrip('/')}")
        for key in keys:
            seen[key].add(paper.context.external_id)
            titles.setdefault(key, paper.title)
    repeated: dict[frozenset[str], RepeatedPaper] = {}
    for key, contexts in sorted(seen.items()):
        if len(contexts) > 1:
            repeated.setdefault(frozenset(contexts) | {titles[key]}, RepeatedPaper(key, titles[key], sorted(contexts)))
    return list(repeated.values())
