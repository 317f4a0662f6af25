"""Intrinsic scoring's researcher page: the papers of a benchmark (discipline, question, candidates, which one is
gold) and its scorers (model, criterion, coverage). Researcher-side only: it shows the gold and the scorers' model
names. The results page comes with the report (issue 14)."""

from __future__ import annotations

from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from arena.models import Benchmark
from arena.permissions import researcher_required

from .models import LISTWISE_TOP, Candidate, Paper, Scorer


def _benchmark_get(benchmark_id: int) -> Benchmark:
    """The Intrinsic benchmark of that id; 404 naming the protocol when it is another protocol's."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        raise Http404(f"no benchmark {benchmark_id}")
    if benchmark.protocol != Benchmark.Protocol.INTRINSIC:
        raise Http404(f"{benchmark} is a {benchmark.get_protocol_display()} benchmark, not an Intrinsic-scoring one")
    return benchmark


@require_GET
@researcher_required
def paper_list_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """The papers of a benchmark with their candidate counts and gold, the papers per discipline, and the scorers
    with how many papers each covers. A fixed number of queries whatever the size."""
    benchmark = _benchmark_get(benchmark_id)
    papers = list(
        Paper.objects.filter(benchmark=benchmark).annotate(n_candidates=Count("candidates")).order_by("discipline", "external_id")
    )
    gold = dict(Candidate.objects.filter(paper__benchmark=benchmark, gold=True).values_list("paper_id", "external_id"))
    for paper in papers:
        paper.gold_id = gold.get(paper.pk, "")
    disciplines: dict[str, int] = {}
    for paper in papers:
        disciplines[paper.discipline] = disciplines.get(paper.discipline, 0) + 1
    scorers = (
        Scorer.objects.filter(benchmark=benchmark)
        .annotate(
            n_scored=Count("scores__candidate__paper", distinct=True),
            n_ranked=Count("rankings", filter=Q(rankings__status="accepted"), distinct=True),
            n_invalid=Count("rankings", filter=Q(rankings__status="invalid"), distinct=True),
        )
        .order_by("criterion", "name")
    )
    context = {"benchmark": benchmark, "papers": papers, "disciplines": sorted(disciplines.items()), "scorers": scorers, "listwise_top": LISTWISE_TOP}
    return render(request, "intrinsic/paper_list.html", context)
