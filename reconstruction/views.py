"""Reconstruction's researcher pages: the seed list of a benchmark, and one seed with its frozen bibliography and the
anti-leakage audit (what was excluded or scrubbed, and why). Researcher-side only: these pages show the held-out
seed and the original reference ids."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from arena.models import Benchmark
from arena.permissions import researcher_required

from . import leakage
from .models import BibliographyFreeze, SeedPaper


def _benchmark_get(benchmark_id: int) -> Benchmark:
    """The Reconstruction benchmark of that id; 404 naming the protocol when it is another protocol's."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        raise Http404(f"no benchmark {benchmark_id}")
    if benchmark.protocol != Benchmark.Protocol.RECONSTRUCTION:
        raise Http404(f"{benchmark} is a {benchmark.get_protocol_display()} benchmark, not a Reconstruction one")
    return benchmark


@require_GET
@researcher_required
def seed_list_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """The seeds of a benchmark with their references, eligible counts and freeze state."""
    from django.db.models import Count, Q

    benchmark = _benchmark_get(benchmark_id)
    seeds = (
        SeedPaper.objects.filter(benchmark=benchmark)
        .annotate(n_refs=Count("references", distinct=True), n_eligible=Count("references", filter=Q(references__eligible=True), distinct=True),
                  n_hypotheses=Count("hypotheses", distinct=True))
        .select_related("freeze")
        .order_by("domain", "external_id")
    )
    return render(request, "reconstruction/seed_list.html", {"benchmark": benchmark, "seeds": seeds, "min_eligible": leakage.MIN_ELIGIBLE})


@require_GET
@researcher_required
def seed_page(request: HttpRequest, benchmark_id: int, seed_id: int) -> HttpResponse:
    """One seed: its held-out title and abstract, its frozen bibliography (as every prompt shows it) and the audit."""
    benchmark = _benchmark_get(benchmark_id)
    seed = SeedPaper.objects.filter(benchmark=benchmark, pk=seed_id).first()
    if seed is None:
        raise Http404(f"no seed {seed_id} in {benchmark}")
    freeze = BibliographyFreeze.objects.filter(seed=seed).first()
    references = sorted(seed.references.all(), key=lambda r: (not r.eligible, r.number))
    context = {
        "benchmark": benchmark, "seed": seed, "freeze": freeze, "references": references,
        "n_eligible": sum(r.eligible for r in references), "min_eligible": leakage.MIN_ELIGIBLE,
        "thresholds": {"span": leakage.SPAN_N, "jaccard_n": leakage.JACCARD_N, "jaccard_max": leakage.JACCARD_MAX},
    }
    return render(request, "reconstruction/seed.html", context)
