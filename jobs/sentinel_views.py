"""The sentinels page of a benchmark (researchers only): its pinned sentinels, the drift settings, each judge
configuration's checks over time (a table and a server-rendered SVG chart) and the button that accepts a drifted
configuration. The same document as ``manage.py sentinels BENCHMARK --status --json`` (``jobs.sentinels``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from arena.models import Benchmark
from arena.permissions import researcher_required

from .lifecycle import RunError
from .models import SentinelSet
from .sentinels import agreement_chart, sentinels_accept, sentinels_status


@require_GET
@researcher_required
def sentinels_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    sentinel_set = SentinelSet.objects.filter(benchmark=benchmark).first()
    status = sentinels_status(sentinel_set) if sentinel_set is not None else None
    values = {
        "benchmark": benchmark,
        "status": status,
        "chart": agreement_chart(status) if status is not None else None,
    }
    return render(request, "jobs/sentinels.html", values)


@require_POST
@researcher_required
def sentinels_accept_view(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    sentinel_set = get_object_or_404(SentinelSet, benchmark=benchmark)
    config = request.POST.get("config", "").strip()
    try:
        check = sentinels_accept(sentinel_set=sentinel_set, config=config, by=request.user)
    except RunError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            gettext("Configuration %(key)s accepted after check %(check)s: the benchmark takes its runs again.")
            % {"key": check.config_key, "check": check.pk},
        )
    return redirect("jobs:sentinels", benchmark_id=benchmark.pk)
