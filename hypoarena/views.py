from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from arena.permissions import researcher_required

from .selectors import benchmark_overview, hypoarena_benchmark_get


@require_GET
@researcher_required
def benchmark_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """A HypoArena benchmark: its domains, models (the Reference marked) and runs."""
    benchmark = hypoarena_benchmark_get(benchmark_id=benchmark_id)
    return render(request, "hypoarena/benchmark.html", {"benchmark": benchmark} | benchmark_overview(benchmark=benchmark))
