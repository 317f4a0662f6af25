"""Intrinsic scoring's researcher pages: the papers of a benchmark (discipline, question, candidates, which one is
gold) and its scorers (model, criterion, coverage); and the report (the document of ``manage.py intrinsic_report
--json``: the main table with its "All models" rows, the per-discipline heat map with the all-models columns, the
gold-rank distributions, cross-model agreement and paired differences). Researcher-side only: they show the gold and
the scorers' model names."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods

from arena import formatting
from arena.apis import MAX_SEED
from arena.models import Benchmark
from arena.permissions import researcher_required
from arena.protocol_reports import int_option, protocol_benchmark_or_404

from .models import LISTWISE_TOP, PROTOCOL, Candidate, Paper, Scorer
from .reports import REPORT_REPLICATES, REPORT_SEED, ReportError, intrinsic_report_cached


def _benchmark_get(benchmark_id: int) -> Benchmark:
    return protocol_benchmark_or_404(benchmark_id, PROTOCOL)


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
    context = {
        "benchmark": benchmark,
        "papers": papers,
        "disciplines": sorted(disciplines.items()),
        "scorers": scorers,
        "listwise_top": LISTWISE_TOP,
    }
    return render(request, "intrinsic/paper_list.html", context)


# --------------------------------------------------------------------------- the report

#: Colour steps of the heat map (Hit@1 in tenths); every cell also prints its value (colour is never the only cue).
HEAT_STEPS = 10
#: Size of a gold-rank distribution chart (SVG user units): bar width, gap, plot height, label band.
BAR_W, BAR_GAP, PLOT_H, LABEL_H = 14, 3, 60, 16
CRITERION_LABELS = {"nll": "NLL", "energy": "energy", "listwise": "listwise"}


def _pct(value: float | None) -> str:
    return formatting.NONE if value is None else formatting.number(100 * value, 1)


def _ci_pct(ci: list[float | None] | None) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return formatting.NONE
    return f"[{_pct(ci[0])}, {_pct(ci[1])}]"


def _cell(metric: dict[str, Any] | None, percent: bool) -> dict[str, Any] | None:
    """A metric as the page prints it: the value and its interval, in percent (shares) or to three places (MRR)."""
    if metric is None:
        return None
    if percent:
        return {"text": _pct(metric["value"]), "ci_text": _ci_pct(metric["ci"]), "value": metric["value"]}
    return {
        "text": formatting.number(metric["value"], 3),
        "ci_text": formatting.interval(metric["ci"], 3),
        "value": metric["value"],
    }


def _flipped(diff: dict[str, Any] | None) -> dict[str, Any] | None:
    """b − a from a − b: the value negated and the interval's ends negated and swapped (percentile intervals of the
    negated replicates, exactly)."""
    if diff is None:
        return None
    lo, hi = diff["ci"]
    return diff | {
        "value": None if diff["value"] is None else -diff["value"],
        "ci": [None if hi is None else -hi, None if lo is None else -lo],
    }


def _signed_pct(metric: dict[str, Any] | None, percent: bool = True) -> dict[str, Any] | None:
    """A difference in percentage points (or MRR units) with its sign; the interval's ends likewise, and whether the
    interval excludes 0."""
    if metric is None or metric["value"] is None:
        return None
    scale, digits = (100, 1) if percent else (1, 3)

    def signed(v: float | None) -> str:
        if v is None:
            return formatting.NONE
        text = formatting.number(scale * v, digits)
        return text if text.startswith(formatting.MINUS) or float(text.replace(",", "")) == 0 else "+" + text

    lo, hi = metric["ci"]
    clear = lo is not None and hi is not None and (lo > 0 or hi < 0)
    return {"text": signed(metric["value"]), "ci_text": f"[{signed(lo)}, {signed(hi)}]", "clear": clear}


def _distribution_plot(counts: list[int], listwise_width: int | None, terminal_label: str) -> dict[str, Any]:
    """A bar per gold rank (for a listwise scorer: ranks 1..w and one bar for the unlisted golds, at the terminal rank),
    scaled to the largest count; positions in SVG user units. With mixed candidate counts the terminal rank is each
    paper's own count, so the unlisted bar sums every rank past w."""
    n = len(counts)
    w = listwise_width if listwise_width is not None and listwise_width < n else None  # None: every rank has a bar
    ranks = list(range(1, n + 1)) if w is None else [*range(1, w + 1), n]
    heights = [counts[r - 1] for r in ranks] if w is None else [*counts[:w], sum(counts[w:])]
    top = max([*heights, 1])
    bars = []
    for i, (r, c) in enumerate(zip(ranks, heights, strict=True)):
        h = round(PLOT_H * c / top, 1)
        terminal = w is not None and i == w
        bars.append(
            {
                "rank": r,
                "count": c,
                "x": 4 + i * (BAR_W + BAR_GAP),
                "y": round(4 + PLOT_H - h, 1),
                "height": h,
                "label": f"{r}" if not terminal else terminal_label,
                "label_x": 4 + i * (BAR_W + BAR_GAP) + BAR_W / 2,
                "terminal": terminal,
            }
        )
    width = 8 + len(ranks) * (BAR_W + BAR_GAP)
    return {
        "bars": bars,
        "width": width,
        "height": 4 + PLOT_H + LABEL_H,
        "base_y": 4 + PLOT_H,
        "label_y": 4 + PLOT_H + LABEL_H - 3,
    }


def candidates_label(doc: dict[str, Any]) -> str:
    """``16``, or ``3–16`` when the papers have different candidate counts (``method.candidate_counts``)."""
    counts = [c["candidates"] for c in doc["method"]["candidate_counts"]]
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"


def report_sections(doc: dict[str, Any]) -> dict[str, Any]:
    """The document as the page's rows: the main table (a row per scorer, pooled metrics with intervals, then the "All
    models" rows pooled per criterion), the heat map (a row per discipline and the pooled row, a column per scorer and
    per all-models group: Hit@1), the gold-rank distributions (an SVG bar chart and the counts per scorer), cross-model
    agreement (a row per criterion, a cell per scope), each scoring scorer against the listwise baseline, and the best
    scorer (pooled Hit@1, then MRR; picked after the fact) against every other. One step per section, each reading
    only the part of the document it shows."""
    from arena.stats.intrinsic import HIT_KS, POOLED

    scorers = doc["scorers"]
    by_key = {(r["discipline"], r["scorer"]): r for r in doc["results"]}
    pooled = {s["name"]: by_key[(POOLED, s["name"])] for s in scorers}
    hit_names = [f"hit_at_{k}" for k in HIT_KS]
    scoring = [s for s in scorers if s["kind"] == "scoring"]
    best = _best_scorer(scoring, pooled)
    main = _main_rows(scorers, pooled, hit_names, best)
    groups = [g for g in doc["all_models"] if g["discipline"] == POOLED]
    differences = _Differences(doc, hit_names)
    baseline = doc["baselines"][0] if doc["baselines"] else None
    vs_baseline = [x for x in (differences.row(s["name"], baseline) for s in scoring) if x] if baseline else []
    vs_best = [x for x in (differences.row(best, s["name"]) for s in scorers if s["name"] != best) if x] if best else []
    return {
        "main_rows": main,
        "group_rows": [_group_cells(g, hit_names) for g in groups],
        "n_label": candidates_label(doc),
        "mixed_counts": len(doc["method"]["candidate_counts"]) > 1,
        "hit_ks": HIT_KS,
        "best": best,
        "baseline": baseline,
        "heat_rows": _heat_rows(doc, by_key),
        "heat_legend": [{"step": i, "text": f"{10 * i}–{10 * (i + 1)}%"} for i in range(HEAT_STEPS)],
        "heat_scorers": scorers,
        "heat_groups": [_group_key(g) | {"label": g["label"], "criterion": g["criterion"]} for g in groups],
        "distributions": _distributions(scorers, pooled, candidates_label(doc)),
        "agreement_rows": _agreement_rows(doc),
        "vs_baseline": vs_baseline,
        "vs_best": vs_best,
        "listwise_note": pooled[baseline]["not_reported"].get("mrr") if baseline else None,
        "length_rows": _length_rows(doc, pooled),
    }


def _best_scorer(scoring: list[dict[str, Any]], pooled: dict[str, dict[str, Any]]) -> str | None:
    """The scoring scorer of the highest pooled Hit@1, then MRR (None without one): the row the page marks and compares
    every other against. Picked after the fact, which the page says."""
    if not scoring:
        return None

    def strength(s: dict[str, Any]) -> tuple[float, float]:
        m = pooled[s["name"]]["metrics"]
        return (m["hit_at_1"]["value"] or 0.0, (m["mrr"] or {}).get("value") or 0.0)

    return max(scoring, key=strength)["name"]


def _main_rows(
    scorers: list[dict[str, Any]], pooled: dict[str, dict[str, Any]], hit_names: list[str], best: str | None
) -> list[dict[str, Any]]:
    """The main table: a row per scorer with its pooled Hit@k, MRR and gold-beats rate, each with its interval."""
    main = []
    for s in scorers:
        r = pooled[s["name"]]
        m = r["metrics"]
        main.append(
            {
                "scorer": s,
                "criterion": CRITERION_LABELS.get(s["criterion"], s["criterion"]),
                "result": r,
                "hits": [_cell(m[h], True) for h in hit_names],
                "mrr": _cell(m["mrr"], False),
                "beats": _cell(m["beats"], True),
                "best": s["name"] == best,
            }
        )
    return main


def _group_key(group: dict[str, Any]) -> dict[str, str]:
    """The ``data-group`` of an all-models row or column: its criterion (``every`` across criteria) and aggregate."""
    return {"key": f"{group['criterion'] or 'every'}|{group['aggregate'] or ''}"}


def _group_cells(group: dict[str, Any], hit_names: list[str]) -> dict[str, Any]:
    """An "All models" row of the main table: the pooled Hit@k, MRR and gold-beats rate with their intervals."""
    m = group["metrics"]
    return (
        _group_key(group)
        | {"group": group, "criterion": CRITERION_LABELS.get(group["criterion"] or "", group["criterion"] or "every intrinsic")}
        | {"hits": [_cell(m[h], True) for h in hit_names], "mrr": _cell(m["mrr"], False), "beats": _cell(m["beats"], True)}
    )


def _heat_cell(row: dict[str, Any], name: str) -> dict[str, Any]:
    """A heat-map cell: a row's Hit@1 with its interval and colour step (``n_ranked`` of ``n_papers``, or of every
    (model, paper) pair for an all-models column)."""
    hit = row["metrics"]["hit_at_1"]
    v = None if hit is None else hit["value"]
    return {
        "scorer": name,
        "value": v,
        "text": _pct(v),
        "ci_text": _ci_pct(None if hit is None else hit["ci"]),
        "step": None if v is None else min(HEAT_STEPS - 1, int(v * HEAT_STEPS)),
        "n_ranked": row["n_ranked"],
        "n_papers": row["n_ranked"] + row["n_excluded"],
    }


def _heat_rows(doc: dict[str, Any], by_key: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """The heat map: a row per discipline (and the pooled row), a Hit@1 cell per scorer, then per all-models group,
    with its colour step; every cell prints its value too, so colour is never the only cue."""
    from arena.stats.intrinsic import POOLED

    groups: dict[str, list[dict[str, Any]]] = {}
    for g in doc["all_models"]:
        groups.setdefault(g["discipline"], []).append(g)
    heat_rows = []
    for d in doc["disciplines"]:
        cells = [_heat_cell(by_key[(d, s["name"])], s["name"]) for s in doc["scorers"]]
        group_cells = [_heat_cell(g, _group_key(g)["key"]) for g in groups.get(d, [])]
        heat_rows.append(
            {
                "discipline": d,
                "label": "all disciplines" if d == POOLED else d,
                "pooled": d == POOLED,
                "cells": cells,
                "group_cells": group_cells,
                "n_papers": doc["n_papers"][d],
            }
        )
    return heat_rows


def _distributions(scorers: list[dict[str, Any]], pooled: dict[str, dict[str, Any]], n_label: str) -> list[dict[str, Any]]:
    """Each scorer's gold-rank distribution: the bar chart and the same counts in words (for a screen reader)."""
    distributions = []
    for s in scorers:
        counts = pooled[s["name"]]["rank_distribution"]
        plot = _distribution_plot(counts, s["listwise_width"], f"{n_label}*")
        distributions.append(
            {
                "scorer": s,
                "counts": counts,
                "plot": plot,
                "described": "; ".join(
                    ("not listed" if b["terminal"] else f"rank {b['rank']}") + f": {b['count']}" for b in plot["bars"]
                ),
            }
        )
    return distributions


def _agreement_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Cross-model agreement: a row per (criterion, aggregate), a cell per discipline in the heat map's order."""
    agreement: dict[tuple[str, str | None], dict[str, Any]] = {}
    for a in doc["agreement"]:
        row = agreement.setdefault(
            (a["criterion"], a["aggregate"]),
            {"criterion": CRITERION_LABELS.get(a["criterion"], a["criterion"]), "models": a["models"], "cells": {}},
        )
        row["cells"][a["discipline"]] = a | {"text": _pct(a["share"]), "ci_text": _ci_pct(a["ci"])}
    return [r | {"cells": [r["cells"].get(d) for d in doc["disciplines"]]} for r in agreement.values()]


class _Differences:
    """Pooled paired differences between two scorers, either way round: the document holds each pair once (a − b),
    the page asks for b − a too (against the baseline, against the best)."""

    def __init__(self, doc: dict[str, Any], hit_names: list[str]) -> None:
        from arena.stats.intrinsic import POOLED

        self.pairs = {(p["a"], p["b"]): p for p in doc["pairs"] if p["discipline"] == POOLED}
        self.hit_names = hit_names

    def difference(self, a: str, b: str) -> tuple[dict[str, Any] | None, int | None]:
        """a − b per metric (None when that pair was not computed) and the papers both ranked."""
        pairs = self.pairs
        if (a, b) in pairs:
            return pairs[(a, b)]["differences"], pairs[(a, b)]["n_papers"]
        if (b, a) in pairs:
            return {m: _flipped(v) for m, v in pairs[(b, a)]["differences"].items()}, pairs[(b, a)]["n_papers"]
        return None, None

    def row(self, a: str, b: str) -> dict[str, Any] | None:
        diffs, n_both = self.difference(a, b)
        if diffs is None:
            return None
        return {
            "a": a,
            "b": b,
            "n_papers": n_both,
            "hits": [_signed_pct(diffs[h]) for h in self.hit_names],
            "mrr": _signed_pct(diffs["mrr"], percent=False),
            "beats": _signed_pct(diffs["beats"]),
        }


def _length_rows(doc: dict[str, Any], pooled: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The length check: each scoring scorer ranked by the sum, beside its Hit@1 ranked by the mean."""
    return [
        r
        | {
            "hit1": _cell(r["metrics"]["hit_at_1"], True),
            "mrr_cell": _cell(r["metrics"]["mrr"], False),
            "mean_hit1": _cell(pooled[r["scorer"]]["metrics"]["hit_at_1"], True),
        }
        for r in doc["length_check"]
    ]


@require_GET
@researcher_required
def report_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """The report of a benchmark in the layout of the paper's main table (a row per scorer: model, criterion, Hit@1,
    2, 3, 5, MRR and the gold-beats rate with paper-bootstrap intervals; the listwise baseline with Hit@k only), a
    per-discipline heat map of Hit@1, the gold-rank distributions, cross-model agreement and paired differences.
    ``?replicates=`` and ``?seed=`` choose the bootstrap (bounded as the API's). Cached with the API's document.
    Names the models: researcher-side only."""
    benchmark = _benchmark_get(benchmark_id)
    problems: list[str] = []
    cap = settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES
    replicates = int_option(request, "replicates", min(REPORT_REPLICATES, cap), 1, cap, problems)
    seed = int_option(request, "seed", REPORT_SEED, 0, MAX_SEED, problems)
    context: dict[str, Any] = {
        "benchmark": benchmark,
        "replicates": replicates,
        "seed": seed,
        "cap": cap,
        "problems": problems,
        "query": urlencode({"replicates": replicates, "seed": seed}),
    }
    try:
        doc = intrinsic_report_cached(benchmark=benchmark, replicates=replicates, seed=seed)
    except ReportError as exc:
        context["report_problem"] = str(exc)
    else:
        context |= {"doc": doc, **report_sections(doc)}
    return render(request, "intrinsic/report.html", context)


@require_http_methods(["GET", "POST"])
@researcher_required
def launch_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """Launch a scoring run with the service ``intrinsic_score`` uses; a refusal (a criterion the endpoint's mode
    cannot give, a missing key, nothing left to score ...) is shown on the form and nothing is made. Listwise runs
    are launched from the judge-run form."""
    from jobs.services import AlreadyLaunched, RunError
    from jobs.views import run_page_url

    from .forms import ScoringRunForm
    from .scoring import scoring_run_create, scoring_run_launch

    benchmark = _benchmark_get(benchmark_id)
    form = ScoringRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            run = scoring_run_create(
                benchmark=benchmark,
                model=d["model"],
                criterion=d["criterion"],
                logprobs_mode=d["logprobs_mode"],
                base_url=d["base_url"],
                api_key_env=d["api_key_env"] or None,
                papers=d["papers"],
                concurrency=d["concurrency"],
                rate_per_second=d["rate_per_second"],
                timeout=d["timeout"],
                call_cache=d["call_cache"],
                launched_by=request.user,
            )
            scoring_run_launch(run=run)
        except AlreadyLaunched as exc:
            messages.info(request, f"{exc}.")
            return redirect(run_page_url(exc.run))
        except RunError as exc:
            form.add_error(None, str(exc))
        else:
            launched = gettext("Scoring run %(id)s launched: %(n)s candidates to score for %(scorer)s.")
            messages.success(request, launched % {"id": run.pk, "n": run.tasks.count(), "scorer": run.scorer.name})
            return redirect(run_page_url(run))  # its page: progress, controls, log and tasks
    return render(request, "intrinsic/launch.html", {"benchmark": benchmark, "form": form})
