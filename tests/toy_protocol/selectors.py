from __future__ import annotations

from django.db.models import Count

from .models import Item


def dashboard_counts(benchmark_ids: list[int]) -> dict[int, str]:
    """Each toy benchmark's items, in one grouped query."""
    items = dict(Item.objects.filter(benchmark_id__in=benchmark_ids).values_list("benchmark_id").annotate(n=Count("id")))
    return {pk: f"{items.get(pk, 0)} items" for pk in benchmark_ids}
