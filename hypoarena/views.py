"""HypoArena's researcher pages: a benchmark's overview, its leaderboard (the paper's main table, with intervals) and the
inter-judge agreement of two of its arena runs. The documents come from :mod:`hypoarena.reports` (cached on what they
read); this module only picks runs and options and lays the documents out in rows the templates print as they are."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from arena import formatting
from arena.charts import interval_plot
from arena.models import JudgeRun
from arena.permissions import researcher_required
from arena.protocol_reports import int_option
from arena.selectors import LEADERBOARD_REPLICATES, LEADERBOARD_SEED

from .reports import (
    ReportError,
    agreement_runs_pick,
    arena_runs,
    hypoarena_agreement_cached,
    hypoarena_report_cached,
    top_k_overlap_text,
)
from .selectors import benchmark_overview, hypoarena_benchmark_get

MAX_SEED = 2**32 - 1  # the API's (arena.apis.MAX_SEED)
#: Ratings are on the Elo-like scale; the plots' dashed line is its centre (θ = 0, a model of average strength).
RATING_CENTRE = 1500.0


def _plain(value: float, digits: int) -> str:
    """A number as :func:`arena.formatting.number` writes it, without the thousands separator: ratings read 1684, not
    1,684 (which inside an interval, [1,619, 1,755], reads as four numbers)."""
    return formatting.number(value, digits).replace(",", "")


@require_GET
@researcher_required
def benchmark_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """A HypoArena benchmark: its domains, models (the Reference marked) and runs, with links to its leaderboard and
    inter-judge pages."""
    benchmark = hypoarena_benchmark_get(benchmark_id=benchmark_id)
    return render(request, "hypoarena/benchmark.html", {"benchmark": benchmark} | benchmark_overview(benchmark=benchmark))


# --------------------------------------------------------------------------- options


def _bootstrap_options(request: HttpRequest, problems: list[str]) -> tuple[int, int, int]:
    """(replicates, seed, cap): the API's bounds, the replicates capped by ``LIT2TEST_LEADERBOARD_MAX_REPLICATES``."""
    cap = settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES
    replicates = int_option(request, "replicates", min(LEADERBOARD_REPLICATES, cap), 1, cap, problems)
    seed = int_option(request, "seed", LEADERBOARD_SEED, 0, MAX_SEED, problems)
    return replicates, seed, cap


def _pick(runs: list[JudgeRun], raw: str | None, what: str) -> JudgeRun | None:
    """The run of ``runs`` whose id is ``raw``; None when ``raw`` is empty; 404 when it names no arena run here."""
    if not raw:
        return None
    found = next((r for r in runs if str(r.pk) == raw), None)
    if found is None:
        raise Http404(f"no arena run {raw!r} in this benchmark ({what})")
    return found


# --------------------------------------------------------------------------- the leaderboard


def leaderboard_sections(doc: dict[str, Any]) -> dict[str, Any]:
    """The leaderboard document as rows: one per model in pooled-rank order, one cell per domain; a footer row per
    domain-level figure (ν, consistency, modal ranking's share, counts); the rubric beside the arena ranks; one interval
    plot per domain and one of the pooled fit, on a shared axis so that their ratings compare by eye."""
    board = doc["leaderboard"]
    domains = list(board["domains"])
    pooled = board["pooled"]
    references = set(doc["reference_models"])
    rubric = doc.get("rubric") or {}
    rubric_pooled = (rubric.get("pooled") or {}).get("models", {})
    models = sorted(pooled["models"], key=lambda m: (pooled["models"][m]["rank"], m))
    rows = [
        {
            "model": m,
            "reference": m in references,
            "pooled": pooled["models"][m],
            "cells": [board["domains"][d]["models"].get(m) for d in domains],
            "rubric": rubric_pooled.get(m),
        }
        for m in models
    ]
    blocks = [{"name": d, **board["domains"][d]} for d in domains]
    rubric_rows = []
    if rubric:
        for m in models:
            cells = [(rubric["domains"].get(d) or {}).get("models", {}).get(m) for d in domains]
            rubric_rows.append({"model": m, "reference": m in references, "cells": cells, "pooled": rubric_pooled.get(m)})
    # One axis for every plot: the lowest and highest interval end of any fit, with a margin.
    ends = [
        v
        for block in [*blocks, pooled]
        for e in block["models"].values()
        for v in (e["rating"], *(e["ci"] or ()))
        if v is not None
    ] + [RATING_CENTRE]
    lo, hi = min(ends), max(ends)
    pad = (hi - lo) * 0.06 or 50.0
    axis = (lo - pad, hi + pad)

    def plot(block: dict[str, Any], series: str) -> Any:  # noqa: ANN401
        entries = block["models"]
        return interval_plot(
            [
                (
                    gettext("%(model)s (Reference)") % {"model": m} if m in references else m,
                    series,
                    (entries.get(m) or {}).get("rating"),
                    (entries.get(m) or {}).get("ci"),
                )
                for m in models
            ],
            domain=axis,
            digits=0,
            reference=RATING_CENTRE,
            tick_digits=0,
            number=_plain,
            left=230,
            row=26,
        )

    plots = [
        {"name": b["name"], "slug": f"domain-{i}", "plot": plot(b, formatting.domain_label(str(b["name"])))}
        for i, b in enumerate(blocks)
    ]
    plots.append({"name": "pooled", "slug": "pooled", "plot": plot(pooled, gettext("pooled fit"))})
    diverged = [b["name"] for b in blocks if b["point_diverged"] or b["diverged_replicates"]]
    if pooled["point_diverged"] or pooled["diverged_replicates"]:
        diverged.append("pooled")
    return {
        "domains": domains,
        "blocks": blocks,
        "pooled": pooled,
        "rows": rows,
        "rubric_rows": rubric_rows,
        "plots": plots,
        "diverged": diverged,
        "method": board["method"],
    }


@require_GET
@researcher_required
def leaderboard_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """The HypoArena leaderboard of one arena run, in the layout of the paper's main table: a row per model, a column per
    domain (rating with its 95% interval), Avg (the mean of the domain ratings, as the paper prints it, beside the pooled
    fit's rating), WR and the rank with its interval; ν, consistency and the modal ranking per domain; the rubric's score,
    rank and Δ beside the arena rank. The Reference is marked (a researcher page). Polls itself while the run is active.

    ``?run=`` picks an arena run (default: the first); ``?replicates=`` and ``?seed=`` the case bootstrap's."""
    benchmark = hypoarena_benchmark_get(benchmark_id=benchmark_id)
    runs = arena_runs(benchmark=benchmark)
    context: dict[str, Any] = {"benchmark": benchmark, "runs": runs}
    if not runs:
        return render(request, "hypoarena/leaderboard.html", context | {"state": "no-runs"})
    run = _pick(runs, request.GET.get("run"), "run") or runs[0]
    problems: list[str] = []
    replicates, seed, cap = _bootstrap_options(request, problems)
    live = run.status in JudgeRun.ACTIVE_STATUSES
    context |= {
        "state": "report",
        "run": run,
        "replicates": replicates,
        "seed": seed,
        "cap": cap,
        "problems": problems,
        "live": live,
        "query": urlencode({"run": run.pk, "replicates": replicates, "seed": seed}),
    }
    try:
        doc = hypoarena_report_cached(benchmark=benchmark, run=run, replicates=replicates, seed=seed)
    except ReportError as exc:
        context["report_problem"] = str(exc)
    else:
        context |= {"doc": doc, **leaderboard_sections(doc)}
    template = "hypoarena/leaderboard.html#board" if request.htmx else "hypoarena/leaderboard.html"
    return render(request, template, context)


# --------------------------------------------------------------------------- inter-judge agreement


def agreement_sections(doc: dict[str, Any]) -> dict[str, Any]:
    """The agreement document as rows: one per domain and a pooled row (ranking-level figures beside the pairwise verdict
    agreement), the pooled confusion of outcomes, and both judges' ratings per model (rows) and domain (columns)."""
    agreement, pairwise = doc["agreement"], doc["pairwise"]
    summary = [
        {"name": d, "pooled": False, "ranking": block, "pairwise": pairwise["domains"].get(d)}
        for d, block in agreement["domains"].items()
    ]
    summary.append({"name": "pooled", "pooled": True, "ranking": agreement["pooled"], "pairwise": pairwise["pooled"]})
    for row in summary:  # the top-k overlap as the paper prints it: a count ("4"; pooled "4.5"), not a share
        row["top_k_text"] = top_k_overlap_text(row["ranking"]["top_k_overlap"])
    domains = list(doc["ratings"])
    models = sorted({m for by_model in doc["ratings"].values() for m in by_model})
    mean_rank = {
        m: sum(doc["ratings"][d][m]["rank_a"] for d in domains if m in doc["ratings"][d])
        / max(1, sum(1 for d in domains if m in doc["ratings"][d]))
        for m in models
    }
    references = set(doc["reference_models"])
    ratings = [
        {"model": m, "reference": m in references, "cells": [doc["ratings"][d].get(m) for d in domains]}
        for m in sorted(models, key=lambda m: (mean_rank[m], m))
    ]
    labels = [("A", gettext("shown-A wins")), ("B", gettext("shown-B wins")), ("tie", gettext("tie"))]
    confusion = [{"label": label, "counts": [pairwise["pooled"]["confusion"][x][y] for y, _ in labels]} for x, label in labels]
    return {
        "summary": summary,
        "domains": domains,
        "ratings": ratings,
        "confusion": confusion,
        "outcome_labels": [label for _, label in labels],
        "boot": doc["pooled_spearman"],
        "top_k": doc["method"]["top_k"],
    }


@require_GET
@researcher_required
def agreement_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """Inter-judge agreement of two arena runs of a benchmark (``?run_a=``, ``?run_b=``; default its first two): per
    domain and pooled Spearman ρ, Kendall τ, mean |Δrank|, top-5 overlap (a count) and pairwise verdict agreement with its counts,
    the pooled ρ's case-bootstrap interval, and both judges' ratings per model and domain."""
    benchmark = hypoarena_benchmark_get(benchmark_id=benchmark_id)
    runs = arena_runs(benchmark=benchmark)
    context: dict[str, Any] = {"benchmark": benchmark, "runs": runs}
    if len(runs) < 2:
        return render(request, "hypoarena/agreement.html", context | {"state": "no-runs" if not runs else "one-run"})
    chosen_a = _pick(runs, request.GET.get("run_a"), "run A")
    chosen_b = _pick(runs, request.GET.get("run_b"), "run B")
    problems: list[str] = []
    replicates, seed, cap = _bootstrap_options(request, problems)
    context |= {"state": "report", "replicates": replicates, "seed": seed, "cap": cap, "problems": problems}
    try:
        run_a, run_b = agreement_runs_pick(
            benchmark=benchmark, run_a=chosen_a.pk if chosen_a else None, run_b=chosen_b.pk if chosen_b else None
        )
    except ReportError as exc:  # the same run twice: show the pickers and say so
        context |= {"run_a": chosen_a, "run_b": chosen_b, "report_problem": str(exc)}
        return render(request, "hypoarena/agreement.html", context)
    live = any(r.status in JudgeRun.ACTIVE_STATUSES for r in (run_a, run_b))
    context |= {
        "run_a": run_a,
        "run_b": run_b,
        "live": live,
        "query": urlencode({"run_a": run_a.pk, "run_b": run_b.pk, "replicates": replicates, "seed": seed}),
    }
    try:
        doc = hypoarena_agreement_cached(benchmark=benchmark, run_a=run_a, run_b=run_b, replicates=replicates, seed=seed)
    except ReportError as exc:
        context["report_problem"] = str(exc)
    else:
        context |= {"doc": doc, **agreement_sections(doc)}
    template = "hypoarena/agreement.html#agreement" if request.htmx else "hypoarena/agreement.html"
    return render(request, template, context)
