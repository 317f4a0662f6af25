"""Lit2Test's pages: the benchmark page, the leaderboard (Table 1 and every figure of the leaderboard document), the
release export and the dashboard's release upload, the run page of a judge run over the canonical pairs, the
comparison of two judges, new benchmark versions and generation runs."""

from __future__ import annotations

import io
import tempfile
import zipfile
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Exists, OuterRef, Q
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from arena.charts import Forest, forest_plot, heat_map
from arena.extensions import human_figures_for, import_files_in
from arena.models import PAIRS, Benchmark, Context, JudgeRun, OrderedJudgment, Proposal
from arena.numbers import whole_number
from arena.permissions import researcher_required
from arena.selectors import (
    RUN_PAGE_SIZE,
    benchmark_list,
    paper_provenance_audit,
    run_default,
    run_leaderboard,
    run_pair_ids,
    runs_agreement,
)
from arena.views import protocol_only
from jobs.lifecycle import AlreadyLaunched, RunError
from jobs.prompts import PROMPTS
from jobs.verdicts import POLL, VerdictListForm, is_feed_poll, verdict_feed
from jobs.views import run_page_url, translate_filters

from .forms import GenerationRunForm, ReleaseUploadForm
from .generation import generation_run_create, generation_run_launch
from .judging import PROTOCOL
from .prompts import render_judge_task
from .published import published_table, rounding_differences
from .readers import SCALES, figures_spec, leaderboard_for_readers, scale_choice, strength_text, style_choice
from .release import ReleaseImportError, release_export, release_files, release_import
from .selectors import STABILITY_CHOICES, judgments_stability, run_judgments, run_tasks_by_key
from .style_inputs import run_side_features
from .versions import benchmark_new_version


def lit2test_only(request: HttpRequest, benchmark: Benchmark, page: str) -> HttpResponse | None:
    """None for a Lit2Test benchmark; for another protocol's, a 404 page naming its protocol and linking its pages."""
    return protocol_only(request, benchmark, PROTOCOL, page)


#: Names of archives an upload may be mistaken for a release folder in (the dashboard's export is a zip).
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tgz", ".gz", ".7z", ".rar")


def upload_panel(request: HttpRequest, posted: bool) -> tuple[dict[str, Any], HttpResponse | None]:
    """The dashboard's release upload: its form, and the answer when the dashboard's POST is for it (a redirect once
    imported)."""
    form = ReleaseUploadForm(request.POST, request.FILES) if posted else ReleaseUploadForm()
    if not posted or not form.is_valid():
        return {"form": form}, None
    with tempfile.TemporaryDirectory() as folder:
        for upload in form.cleaned_data["files"]:
            # Only the base name is kept (the form refuses two files of one name): an upload
            # cannot write outside the folder, nor replace another upload.
            (Path(folder) / Path(upload.name).name).write_bytes(upload.read())
        known = {p.name for paths in release_files(Path(folder)).values() for p in paths}
        known |= {p.name for p in import_files_in(Path(folder)).values()}  # an export's controls.jsonl, say
        ignored = sorted({Path(u.name).name for u in form.cleaned_data["files"]} - known)
        archives = [name for name in ignored if name.lower().endswith(ARCHIVE_SUFFIXES)]
        if archives and not known:  # the dashboard's own download is a zip: say what to do with it
            form.add_error(
                "files",
                gettext(
                    "%(files)s: archives are not read; unzip them and upload the files inside (the .jsonl files and benchmark.json)"
                )
                % {"files": ", ".join(archives)},
            )
            return {"form": form}, None
        try:
            summary = release_import(
                directory=Path(folder),
                benchmark_name=form.cleaned_data["benchmark"],
                version=form.cleaned_data["version"],
                source="the uploaded files",
            )
        except ReleaseImportError as exc:
            form.add_error("files", [str(p) for p in exc.problems[:50]])
            return {"form": form}, None
    messages.success(request, summary.line())
    if ignored:
        ignored_text = gettext("ignored files that are not release files: %(files)s")
        messages.warning(request, ignored_text % {"files": ", ".join(ignored)})
    return {"form": form}, redirect("arena:dashboard")


def benchmark_page(request: HttpRequest, benchmark: Benchmark) -> HttpResponse:
    """A Lit2Test benchmark's page, at the dashboard's benchmark URL: runs, invalid proposals, the provenance audit."""
    benchmark = get_object_or_404(benchmark_list(), pk=benchmark.pk)
    proposals = Proposal.objects.filter(context__benchmark=benchmark).select_related("context", "participant")
    return render(
        request,
        "lit2test/benchmark_detail.html",
        {
            "benchmark": benchmark,
            "runs": benchmark.runs.all(),
            "invalid_proposals": [p for p in proposals if p.validation_status != Proposal.Status.VALID],
            "n_proposals": len(proposals),
            "repeated_papers": paper_provenance_audit(benchmark=benchmark),
        },
    )


@require_GET
@researcher_required
def benchmark_export(request: HttpRequest, benchmark_id: int) -> FileResponse:
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    if (elsewhere := lit2test_only(request, benchmark, "release export")) is not None:
        return elsewhere
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as folder:
        release_export(benchmark=benchmark, directory=Path(folder))
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(Path(folder).iterdir()):
                archive.write(path, arcname=path.name)
    buffer.seek(0)
    filename = f"{benchmark.name}-v{benchmark.version}-export.zip"
    return FileResponse(buffer, as_attachment=True, filename=filename, content_type="application/zip")


FITS = {
    "ordered": (
        gettext_lazy("Ordered"),
        gettext_lazy("every ordered judgment is one comparison (two per pair); the fit the paper’s Table 1 prints"),
    ),
    "folded": (
        gettext_lazy("Folded"),
        gettext_lazy("an order-stable pair is one win; an order-sensitive pair is half a win to each side"),
    ),
    "stable": (gettext_lazy("Stable-only"), gettext_lazy("order-stable pairs only; order-sensitive pairs are left out")),
}
DIGITS = (2, 3)


@require_GET
@researcher_required
def leaderboard(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """Table 1 of a run (any of its three fits, two or three decimals), every other figure of the leaderboard
    document, and its plots; polls itself while the run is in progress."""
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    if (elsewhere := lit2test_only(request, benchmark, "leaderboard")) is not None:
        return elsewhere
    runs = leaderboard_runs(benchmark=benchmark)
    canonical = run_default(benchmark=benchmark)
    run_id = request.GET.get("run")
    if run_id:
        is_id = whole_number(run_id) and len(run_id) <= 18  # within a bigint
        run = benchmark.runs.filter(subjects=PAIRS, pk=int(run_id)).first() if is_id else None
        if run is None:
            raise Http404(f"{benchmark} has no judge run {run_id} over its pairs: a leaderboard ranks those only")
        if run not in runs:  # asked for by its id (a failed run with no verdict): shown, and in the picker as chosen
            runs = sorted([*runs, run], key=lambda r: (not r.is_canonical, r.created_at, r.pk))
    elif canonical is not None and canonical.is_canonical:
        run = canonical
    else:  # no canonical judge: the newest run with a leaderboard (not a newer run that failed before any answer)
        run = max(runs, key=lambda r: (r.created_at, r.pk)) if runs else None
    if run is None:
        ended = benchmark.runs.filter(subjects=PAIRS).order_by("-created_at", "-id")
        return render(request, "lit2test/leaderboard_empty.html", {"benchmark": benchmark, "ended": ended})
    fit = request.GET.get("fit") if request.GET.get("fit") in FITS else "ordered"
    digits = 3 if request.GET.get("digits") == "3" else 2
    scale = scale_choice(request.GET.get("scale"))
    figures = figures_spec(scale, digits)
    style = style_choice(request.GET.get("style"), strict=False)
    computed = run_leaderboard(run=run, human=human_figures_for(benchmark), style=style, side_features=run_side_features)
    doc = leaderboard_for_readers(run=run, document=computed, scale=scale)
    context = {
        "benchmark": benchmark,
        "runs": runs,
        "run": run,
        "doc": doc,
        "fit": fit,
        "fits": [(key, label, help_) for key, (label, help_) in FITS.items()],
        "fit_label": FITS[fit][0],
        "fit_help": FITS[fit][1],
        "digits": digits,
        "scale": scale,
        "figures": figures,
        "precise": figures_spec(scale, 5),
        "scales": scale_links(request, scale),
        **last_updated_context(doc),
        "query": urlencode(
            {"run": run.pk, "scale": scale, "fit": fit, "digits": digits} | ({"style": ",".join(style)} if style else {})
        ),
        "style": ",".join(style),
        "style_links": style_links(request, style),
        "live": run.status in JudgeRun.ACTIVE_STATUSES,
        "human": doc.get("human_win_rate_detail"),
        **leaderboard_sections(doc, fit=fit),
        "forest": scaled_forest(doc, fit, scale=scale, figures=figures, digits=digits),
        "heat": translated_heat_map(doc),
        "comparisons_map": comparison_map(doc),
    }
    # The printed Table 1 is on the log-ability scale: it is set against the unscaled document.
    published = published_table(computed, benchmark_name=benchmark.name, is_canonical=run.is_canonical)
    if published:
        context["published"] = published
        context["rounding"] = rounding_differences(computed, published)
    if canonical is not None and canonical.pk != run.pk and canonical.is_canonical:
        # A second judge is read beside the canonical run on the same pairs, with their agreement.
        pairs = run_pair_ids(run=run)
        if pairs:
            beside = leaderboard_for_readers(run=canonical, document=run_leaderboard(run=canonical, pair_ids=pairs), scale=scale)
            context["canonical"] = {"run": canonical, "doc": beside, "table": leaderboard_table(beside, fit=fit)}
            context["agreement"] = runs_agreement(first=canonical, second=run)
    template = "lit2test/leaderboard.html#board" if request.htmx else "lit2test/leaderboard.html"
    return render(request, template, context)


#: The style-control link's features: the issue's three (``--style-control`` alone means the same).
DEFAULT_STYLE = "length,citations,structure"


def style_links(request: HttpRequest, style: tuple[str, ...]) -> dict[str, str]:
    """Links that add the style-controlled ranking (``?style=length,citations,structure``) or leave it out, keeping
    the page's other parameters."""
    on, off = request.GET.copy(), request.GET.copy()
    on["style"] = DEFAULT_STYLE
    off.pop("style", None)
    return {"on": f"{request.path}?{on.urlencode()}", "off": f"{request.path}?{off.urlencode()}"}


def leaderboard_runs(*, benchmark: Benchmark) -> list[JudgeRun]:
    """The runs that have a leaderboard, for the run picker: every judge run over the canonical pairs, holistic or
    structured (a structured verdict names a winner too), that has an accepted verdict or may still get one; an
    ended run without one (failed at its first call, cancelled before any answer) has nothing to rank. The canonical
    run first, then by age."""
    answered = OrderedJudgment.objects.filter(run=OuterRef("pk"), status=OrderedJudgment.Status.ACCEPTED)
    runs = benchmark.runs.filter(subjects=PAIRS).filter(Q(status__in=JudgeRun.ACTIVE_STATUSES) | Exists(answered))
    return list(runs.order_by("-is_canonical", "created_at", "id"))


def last_updated_context(doc: dict) -> dict[str, Any]:
    """The "last updated" line's values: when the newest verdict in the figures was stored, as a ``<time>`` element
    whose ``datetime`` is the document's ``last_updated.judgment_stored_at`` exactly (shown in the site's time zone)."""
    stored = (doc.get("last_updated") or {}).get("judgment_stored_at")
    if not stored:
        return {"updated_at": None, "updated_time": ""}
    updated_at = datetime.fromisoformat(stored)
    shown = date_format(timezone.localtime(updated_at), "DATETIME_FORMAT")
    return {"updated_at": updated_at, "updated_time": format_html('<time datetime="{}">{}</time>', stored, shown)}


def scale_links(request: HttpRequest, scale: str) -> list[dict[str, Any]]:
    """The scale switch: a link per scale keeping the page's other parameters (``?scale=``), the current one marked."""
    links = []
    for key, label in SCALES.items():
        params = request.GET.copy()
        params["scale"] = key
        links.append({"key": key, "label": label, "url": f"{request.path}?{params.urlencode()}", "current": key == scale})
    return links


def scaled_forest(doc: dict, fit: str, *, scale: str, figures: str, digits: int) -> Forest | None:
    """The forest plot of one fit on the page's scale: the dashed line at the scale's centre (0, or 1500), numbers as
    Table 1 writes them."""
    from arena.stats.scales import ELO, ELO_CENTER

    def number(value: float, places: int) -> str:
        return strength_text(value, f"{scale}:{places}")

    centre, places = (ELO_CENTER, int(figures.rpartition(":")[2])) if scale == ELO else (0.0, digits)
    return forest_plot(doc, fit, digits=places, reference=centre, number=number, tick_digits=0 if scale == ELO else None)


def translated_heat_map(doc: dict) -> dict[str, Any] | None:
    """:func:`arena.charts.heat_map` with each cell's tooltip in the active language (the chart writes it in English;
    the diagonal's tooltip is the model's name)."""
    heat = heat_map(doc)
    if heat is None:
        return None
    models, folded = heat["models"], _pair_lookup(doc.get("head_to_head", []))
    cells = []
    for i, cell in enumerate(heat["cells"]):
        row, col = models[i // len(models)], models[i % len(models)]
        if row != col:
            wins, losses, sensitive = folded.get((row, col), (0, 0, 0))
            title = gettext("%(row)s vs %(col)s: %(wins)s stable wins, %(losses)s stable losses, %(sensitive)s order-sensitive")
            numbers = {"wins": wins, "losses": losses, "sensitive": sensitive}
            cell = replace(cell, title=title % {"row": row, "col": col, **numbers})
        cells.append(cell)
    return heat | {"cells": cells}


#: Shades of the comparisons map: a cell's count in tenths of the largest pair's (``cmp-0`` … ``cmp-9`` in app.css).
COMPARISON_SHADES = 10


def comparison_map(doc: dict) -> dict[str, Any] | None:
    """The comparisons heat map: a row and a column per model (rank order), each cell the number of ordered judgments
    of that pair in the figures and the row model's share of those that were not a TIE, shaded by the count
    (``shade`` 0–9 of the largest pair's). Read from the document's ``comparisons`` (no query); None below two models."""
    models = doc.get("models", [])
    comparisons = doc.get("comparisons") or {}
    if len(models) < 2 or not comparisons:
        return None
    pairs: dict[tuple[str, str], tuple[int, float | None]] = {}
    for p in comparisons.get("pairs", []):
        share = p["a_share"]
        pairs[(p["a"], p["b"])] = (p["judgments"], share)
        pairs[(p["b"], p["a"])] = (p["judgments"], None if share is None else 1.0 - share)
    largest = max((n for n, _ in pairs.values()), default=0)
    rows = []
    for row_model in models:
        cells = []
        for col_model in models:
            if col_model == row_model:
                cells.append(None)
                continue
            n, share = pairs.get((row_model, col_model), (0, None))
            shade = min(COMPARISON_SHADES - 1, n * COMPARISON_SHADES // largest) if largest else 0
            cells.append({"model": col_model, "judgments": n, "share": share, "shade": shade})
        rows.append({"model": row_model, "judgments": comparisons.get("models", {}).get(row_model), "cells": cells})
    return {"models": models, "rows": rows, "largest": largest, "unit": comparisons.get("unit")}


def _pair_lookup(rows: list[dict], *, a: str = "a_wins", b: str = "b_wins", c: str = "sensitive") -> dict[tuple[str, str], tuple]:
    """Both directions of each pair's counts: ``(x, y)`` gives x's wins, y's wins and the third count."""
    pairs: dict[tuple[str, str], tuple] = {}
    for h in rows:
        pairs[(h["a"], h["b"])] = (h[a], h[b], h[c])
        pairs[(h["b"], h["a"])] = (h[b], h[a], h[c])
    return pairs


def leaderboard_table(doc: dict, *, fit: str = "ordered") -> list[dict]:
    """Rows of Table 1: strength and CI of one fit, its bootstrap rank interval, the model's ordered judgments in the
    figures, stable W–L–T, the folded head-to-head against each model, and the human win rate with its count and CI
    when a formal study has one."""
    folded = _pair_lookup(doc.get("head_to_head", []))
    human = (doc.get("human_win_rate_detail") or {}).get("models", {})
    ranks = ((doc.get("bootstrap") or {}).get("fits") or {}).get(fit, {}).get("rank_intervals", {})
    # The simultaneous rank sets are the ordered fit's (its context bootstrap): shown in Table 1 for that fit only.
    rank_sets = ((doc.get("honest_intervals") or {}).get("rank_sets") or {}).get("sets", {}) if fit == "ordered" else {}
    judgments = (doc.get("comparisons") or {}).get("models", {})
    rows = []
    for model in doc.get("models", []):
        bt = doc["bt"].get(fit, {}).get(model, {})
        rows.append(
            {
                "model": model,
                "strength": bt.get("strength"),
                "ci": bt.get("ci") or [None, None],
                "rank_interval": ranks.get(model),
                "rank_set": rank_sets.get(model),
                "judgments": judgments.get(model),
                "wlt": doc["stable_wlt"][model],
                "h2h": [None if other == model else folded.get((model, other)) for other in doc["models"]],
                "human": human.get(model),
            }
        )
    return rows


def leaderboard_sections(doc: dict, *, fit: str) -> dict:
    """Every other part of the document as rows the template prints as they are (models in rank order)."""
    models = doc.get("models", [])
    ordered = _pair_lookup(doc.get("ordered_head_to_head", []), c="ties")
    folded_pairs = _pair_lookup(doc.get("head_to_head", []))
    boot, cluster = doc.get("bootstrap", {}), doc.get("cluster_bootstrap", {})
    case_ci = doc.get("bt", {}).get(fit, {})
    cluster_ci = (cluster.get("fits", {}).get(fit) or {}).get("ci", {})
    cluster_rows = []
    for m in models:
        case, clus = (case_ci.get(m) or {}).get("ci"), cluster_ci.get(m)
        ratio = (clus[1] - clus[0]) / (case[1] - case[0]) if case and clus and case[1] > case[0] else None
        cluster_rows.append({"model": m, "case_ci": case, "cluster_ci": clus, "ratio": ratio})
    condorcet = doc.get("condorcet", {})
    return {
        "table": leaderboard_table(doc, fit=fit),
        "fit_rows": [{"model": m, "fits": [(doc["bt"].get(kind, {}).get(m) or {}) for kind in FITS]} for m in models],
        "fit_summary": [
            {
                "kind": kind,
                "label": label,
                "agrees": True if kind == "ordered" else doc.get("diagnostic", {}).get("orderings_agree", {}).get(kind),
                "boot": boot.get("fits", {}).get(kind, {}),
                "cluster": cluster.get("fits", {}).get(kind, {}),
                "fit": doc.get("diagnostic", {}).get("fits", {}).get(kind, {}),
            }
            for kind, (label, _help) in FITS.items()
        ],
        "ordered_h2h": [{"model": m, "cells": [None if o == m else ordered.get((m, o)) for o in models]} for m in models],
        "rank_rows": [{"model": m, "probabilities": boot.get("rank_probabilities", {}).get(m, [])} for m in models],
        "top1": [(m, boot.get("top1", {}).get(m)) for m in models if m in boot.get("top1", {})],
        "cluster_top1": [(m, cluster.get("top1", {}).get(m)) for m in models if m in cluster.get("top1", {})],
        "cluster_rows": cluster_rows,
        "undecided": [{"a": a, "b": b, "counts": folded_pairs.get((a, b))} for a, b in condorcet.get("undecided", [])],
        "honest_rows": honest_rows(doc),
    }


def honest_rows(doc: dict) -> list[dict]:
    """Rows of the honest-intervals table (ordered fit): Table 1's strength and CI, the cluster-robust SE and its Wald
    CI, the rank range, the simultaneous rank set, and the simulated coverage of both CIs; [] when there is none."""
    honest = doc.get("honest_intervals") or {}
    if not honest:
        return []
    sandwich, coverage = honest.get("sandwich") or {}, honest.get("coverage") or {}
    sets = (honest.get("rank_sets") or {}).get("sets", {})
    ranges = (doc.get("bootstrap") or {}).get("rank_intervals", {})
    return [
        {
            "model": m,
            "strength": (doc["bt"]["ordered"].get(m) or {}).get("strength"),
            "ci": (doc["bt"]["ordered"].get(m) or {}).get("ci"),
            "se": (sandwich.get("se") or {}).get(m),
            "wald": (sandwich.get("ci") or {}).get(m),
            "rank_range": ranges.get(m),
            "rank_set": sets.get(m),
            "coverage": (coverage.get("bootstrap") or {}).get(m),
            "wald_coverage": (coverage.get("sandwich") or {}).get(m),
        }
        for m in doc.get("models", [])
    ]


#: The run page's own filters' words in the active language (``jobs.views.translate_filters``).
FILTER_LABELS = {"winner": gettext_lazy("Winner"), "order": gettext_lazy("Order"), "stability": gettext_lazy("Pair")}
FILTER_CHOICES = {
    "any winner": gettext_lazy("any winner"),
    "TIE": gettext_lazy("TIE"),
    "any order": gettext_lazy("any order"),
    "original": pgettext_lazy("presentation order", "original"),
    "reverse": pgettext_lazy("presentation order", "reverse"),
    "any pair": gettext_lazy("any pair"),
    "order-stable": gettext_lazy("order-stable"),
    "order-sensitive": gettext_lazy("order-sensitive"),
    "incomplete": gettext_lazy("incomplete"),
}


class JudgmentFilterForm(VerdictListForm):
    """The run page's search, filters and order (GET parameters): the engine's (``jobs.verdicts``: answer, latency,
    tokens, cost, order) and the pairs' own (winner, presentation order, the pair's stability); a value that is not a
    choice is ignored."""

    winner = forms.ChoiceField(required=False)
    order = forms.ChoiceField(required=False, choices=[("", "any order"), ("original", "original"), ("reverse", "reverse")])
    stability = forms.ChoiceField(
        required=False,
        label="Pair",
        choices=[("", "any pair"), *((s, f"order-{s}" if s != "incomplete" else s) for s in STABILITY_CHOICES)],
    )
    field_order = ["q", "winner", "verdict", "order", "stability", "status"]

    def __init__(self, data: object, *, run: JudgeRun) -> None:
        super().__init__(
            data,
            parameters=run.parameters or {},
            search_label=gettext("context ids, fields and texts, and answers"),
            verdicts=list(OrderedJudgment.Verdict.choices),
        )
        participants = run.benchmark.participants.order_by("name").values_list("pk", "name")
        self.fields["winner"].choices = [("", "any winner"), ("tie", "TIE"), *((str(pk), name) for pk, name in participants)]

    def pair_filters(self) -> dict[str, str]:
        """The filters ``run_judgments`` applies; the engine's are applied by ``apply``."""
        values = self.values()
        return {name: values.get(name) or "" for name in ("winner", "order", "stability")}


#: Where the run page's search looks besides the raw answer: the context (its id, field and texts), the pair's
#: public id and the judge's reason.
JUDGMENT_SEARCH = (
    "pair__context__external_id",
    "pair__context__field",
    "pair__context__research_context",
    "pair__context__open_problem",
    "pair__public_id",
    "main_reason",
)


def _judgment_items(run: JudgeRun, judgments: list[OrderedJudgment]) -> list[tuple[OrderedJudgment, Any, Any]]:
    """Each judgment with its rendered prompt and its task (calls, failed calls), its context's text and papers and
    its pair's stability, in a number of queries that does not grow with the judgments."""
    template = PROMPTS.get(run.prompt_version)
    context_ids = {j.pair.context_id for j in judgments}
    contexts = {
        c.pk: c
        for c in Context.objects.filter(pk__in=context_ids, has_text=True).select_related("batch").prefetch_related("papers")
    }
    proposals: dict[int, dict[int, Proposal]] = {}
    for p in Proposal.objects.filter(context_id__in=contexts):
        proposals.setdefault(p.context_id, {})[p.participant_id] = p
    tasks = run_tasks_by_key(run=run, pair_ids={j.pair_id for j in judgments})
    stability = judgments_stability(run=run, pair_ids={j.pair_id for j in judgments})
    items = []
    for j in judgments:
        j.stability = stability[j.pair_id]
        prompt = None
        by_participant = proposals.get(j.pair.context_id, {})
        if j.pair.context_id in contexts:
            j.pair.context = contexts[j.pair.context_id]
        if template is not None and j.pair.participant_a_id in by_participant and j.pair.participant_b_id in by_participant:
            prompt = render_judge_task(pair=j.pair, order=j.order, template=template, proposals=by_participant)
        items.append((j, prompt, tasks.get((j.pair_id, j.order))))
    return items


def pairs_run_page(request: HttpRequest, run: JudgeRun, context: dict[str, Any]) -> HttpResponse:
    """The page of a judge run over the canonical pairs: progress and controls (``context``, the engine's), and every
    ordered judgment with its context, both proposals' models, rendered prompt, raw answer, parse result, calls,
    latency, tokens and cost; searched, filtered and ordered (``JudgmentFilterForm``), and live while the run works:
    new judgments come on top of the first page, newest first (``jobs.verdicts.verdict_feed``)."""
    filters = translate_filters(JudgmentFilterForm(request.GET, run=run), labels=FILTER_LABELS, choices=FILTER_CHOICES)
    filters.fields["q"].help_text = gettext("looks in %(where)s") % {"where": filters.fields["q"].widget.attrs["placeholder"]}
    pair_filters = filters.pair_filters()
    shown = filters.apply(run_judgments(run=run, **pair_filters), search=JUDGMENT_SEARCH).select_related(
        "pair__context__batch", "pair__participant_a", "pair__participant_b", "shown_a", "winner"
    )
    page_number = request.GET.get("page") or "1"
    # A stability filter is not a property of one judgment: the second order of a pair can move the first into it.
    on_top = filters.chosen_sort == "" and page_number == "1" and not pair_filters["stability"]
    feed = verdict_feed(
        request, run_verdicts=OrderedJudgment.objects.filter(run=run), shown=shown, live=context["live"], on_top=on_top
    )
    values = context | {"feed": feed, "poll": POLL, "filters": filters, "filtered": filters.narrowed()}
    if is_feed_poll(request):
        values |= {"items": _judgment_items(run, feed.new), "verdict_count": shown.count()}
        return render(request, "lit2test/run_detail.html#feed", values)
    page = Paginator(shown, RUN_PAGE_SIZE).get_page(page_number)
    others = run.benchmark.runs.filter(subjects=run.subjects).exclude(pk=run.pk).order_by("-is_canonical", "-created_at")
    values |= {"page": page, "items": _judgment_items(run, list(page)), "verdict_count": page.paginator.count, "others": others}
    return render(request, "lit2test/run_detail.html", values)


def _judge_run(run_id: int) -> JudgeRun:
    return get_object_or_404(JudgeRun.objects.select_related("benchmark", "launched_by"), pk=run_id)


@require_GET
@researcher_required
def run_compare(request: HttpRequest, run_id: int, other_id: int) -> HttpResponse:
    first, second = _judge_run(run_id), _judge_run(other_id)
    if first.benchmark_id != second.benchmark_id:
        return render(request, "lit2test/run_compare.html", {"error": "The two runs belong to different benchmarks."}, status=400)
    return render(
        request,
        "lit2test/run_compare.html",
        {"first": first, "second": second, "agreement": runs_agreement(first=first, second=second)},
    )


@require_POST
@researcher_required
def benchmark_version_new(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    try:
        new = benchmark_new_version(benchmark=benchmark)
    except AlreadyLaunched as exc:
        messages.info(request, gettext("%(problem)s. Launch its canonical judge now.") % {"problem": exc})
        return redirect(f"{reverse('jobs:run-new')}?benchmark={exc.run.pk}")
    except RunError as exc:
        messages.error(request, str(exc))
        return redirect("arena:benchmark", benchmark_id=benchmark.pk)
    created = gettext("Created %(version)s: same contexts, proposals and pairs, no runs. Launch its canonical judge now.")
    messages.success(request, created % {"version": new})
    return redirect(f"{reverse('jobs:run-new')}?benchmark={new.pk}")


@require_http_methods(["GET", "POST"])
@researcher_required
def generation_new(request: HttpRequest) -> HttpResponse:
    form = GenerationRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            run = generation_run_create(
                benchmark=d["benchmark"],
                base_url=d["base_url"],
                api_key_env=d["api_key_env"] or None,
                contexts=d["contexts"],
                temperature=d["temperature"],
                max_tokens=d["max_tokens"],
                concurrency=d["concurrency"],
                launched_by=request.user,
            )
            generation_run_launch(run=run)
        except RunError as exc:
            form.add_error(None, str(exc))
        else:
            launched = gettext("Generation run %(id)s launched: %(n)s proposals to elicit.")
            messages.success(request, launched % {"id": run.pk, "n": run.tasks.count()})
            return redirect(run_page_url(run))  # its page: progress, controls, log, tasks and the pairing step
    return render(request, "lit2test/generation_new.html", {"form": form})
