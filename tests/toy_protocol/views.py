from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from arena.permissions import researcher_required
from arena.protocol_reports import protocol_benchmark_or_404

from .models import PROTOCOL, Item
from .reports import ToyReportError, toy_report


@require_GET
@researcher_required
def benchmark_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    benchmark = protocol_benchmark_or_404(benchmark_id, PROTOCOL)
    try:
        document, problem = toy_report(benchmark=benchmark), ""
    except ToyReportError as exc:
        document, problem = None, str(exc)
    items = Item.objects.filter(benchmark=benchmark)
    return render(
        request, "toy_protocol/benchmark.html", {"benchmark": benchmark, "items": items, "doc": document, "problem": problem}
    )
