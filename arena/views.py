from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from .aliases import MODE_HELP, WORD, AliasError
from .blindness import benchmark_blindness, benchmark_redact, participant_aliases, participant_aliases_update
from .caching import human_win_rate_report_cached
from .charts import forest_plot, heat_map
from .forms import ParticipantAliasesForm, ReleaseUploadForm
from .models import Benchmark, JudgeRun, Participant, Proposal
from .permissions import researcher_required, user_is_researcher
from .published import published_table, rounding_differences
from .release import ReleaseImportError, release_export, release_files, release_import
from .selectors import benchmark_list, paper_provenance_audit, run_default, run_leaderboard, run_pair_ids, runs_agreement


def protocol_home(benchmark: Benchmark) -> str | None:
    """The page of a benchmark of another protocol: its app's ``<protocol>:benchmark`` page, if that app is installed
    (arena never imports a protocol app; the URL name is the convention)."""
    try:
        return reverse(f"{benchmark.protocol}:benchmark", args=[benchmark.pk])
    except NoReverseMatch:
        return None


def lit2test_only(request: HttpRequest, benchmark: Benchmark, page: str) -> HttpResponse | None:
    """None for a Lit2Test benchmark; for another protocol's, a 404 page naming its protocol and linking its pages."""
    if benchmark.protocol == Benchmark.Protocol.LIT2TEST:
        return None
    context = {"benchmark": benchmark, "page": page, "home": protocol_home(benchmark)}
    return render(request, "arena/other_protocol.html", context, status=404)


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    if user_is_researcher(request.user):
        return redirect("arena:dashboard")
    from annotation.selectors import assignments_for_user

    if assignments_for_user(user=request.user).exists():
        return redirect("annotation:home")
    return render(request, "arena/welcome.html")


@require_http_methods(["GET", "POST"])
@researcher_required
def dashboard(request: HttpRequest) -> HttpResponse:
    form = ReleaseUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        with tempfile.TemporaryDirectory() as folder:
            for upload in form.cleaned_data["files"]:
                # Only the base name is kept (the form refuses two files of one name): an upload
                # cannot write outside the folder, nor replace another upload.
                (Path(folder) / Path(upload.name).name).write_bytes(upload.read())
            known = {p.name for paths in release_files(Path(folder)).values() for p in paths}
            ignored = sorted({Path(u.name).name for u in form.cleaned_data["files"]} - known)
            try:
                summary = release_import(
                    directory=Path(folder),
                    benchmark_name=form.cleaned_data["benchmark"],
                    version=form.cleaned_data["version"],
                )
            except ReleaseImportError as exc:
                form.add_error("files", [str(p) for p in exc.problems[:50]])
            else:
                messages.success(request, summary.line())
                if ignored:
                    messages.warning(request, f"ignored files that are not release files: {', '.join(ignored)}")
                return redirect("arena:dashboard")
    return render(request, "arena/dashboard.html", {"benchmarks": benchmark_list(), "form": form})


@require_GET
@researcher_required
def benchmark_detail(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    benchmark = get_object_or_404(benchmark_list(), pk=benchmark_id)
    if benchmark.protocol != Benchmark.Protocol.LIT2TEST:
        return redirect(protocol_home(benchmark) or "arena:dashboard")
    proposals = Proposal.objects.filter(context__benchmark=benchmark).select_related("context", "participant")
    return render(
        request,
        "arena/benchmark_detail.html",
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
    "ordered": ("Ordered", "every ordered judgment is one comparison (two per pair); the fit the paper’s Table 1 prints"),
    "folded": ("Folded", "an order-stable pair is one win; an order-sensitive pair is half a win to each side"),
    "stable": ("Stable-only", "order-stable pairs only; order-sensitive pairs are left out"),
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
    runs = list(
        benchmark.runs.filter(run_type="holistic", subjects=JudgeRun.Subjects.PAIRS).order_by("-is_canonical", "created_at", "id")
    )
    canonical = run_default(benchmark=benchmark)
    run_id = request.GET.get("run")
    if run_id:
        run = next((r for r in runs if str(r.pk) == run_id), None)
        if run is None:
            raise Http404("no such run in this benchmark")
    else:
        run = canonical
    if run is None:
        return render(request, "arena/leaderboard_empty.html", {"benchmark": benchmark})
    fit = request.GET.get("fit") if request.GET.get("fit") in FITS else "ordered"
    digits = 3 if request.GET.get("digits") == "3" else 2
    doc = run_leaderboard(run=run, human=human_win_rate_report_cached(benchmark=benchmark))
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
        "query": urlencode({"run": run.pk, "fit": fit, "digits": digits}),
        "live": run.status in JudgeRun.ACTIVE_STATUSES,
        "human": doc.get("human_win_rate_detail"),
        **leaderboard_sections(doc, fit=fit),
        "forest": forest_plot(doc, fit, digits=digits),
        "heat": heat_map(doc),
    }
    published = published_table(doc, benchmark_name=benchmark.name, is_canonical=run.is_canonical)
    if published:
        context["published"] = published
        context["rounding"] = rounding_differences(doc, published)
    if canonical is not None and canonical.pk != run.pk and canonical.is_canonical:
        # A second judge is read beside the canonical run on the same pairs, with their agreement.
        pairs = run_pair_ids(run=run)
        if pairs:
            beside = run_leaderboard(run=canonical, pair_ids=pairs)
            context["canonical"] = {"run": canonical, "doc": beside, "table": leaderboard_table(beside, fit=fit)}
            context["agreement"] = runs_agreement(first=canonical, second=run)
    template = "arena/leaderboard.html#board" if request.htmx else "arena/leaderboard.html"
    return render(request, template, context)


def _pair_lookup(rows: list[dict], *, a: str = "a_wins", b: str = "b_wins", c: str = "sensitive") -> dict[tuple[str, str], tuple]:
    """Both directions of each pair's counts: ``(x, y)`` gives x's wins, y's wins and the third count."""
    pairs: dict[tuple[str, str], tuple] = {}
    for h in rows:
        pairs[(h["a"], h["b"])] = (h[a], h[b], h[c])
        pairs[(h["b"], h["a"])] = (h[b], h[a], h[c])
    return pairs


def leaderboard_table(doc: dict, *, fit: str = "ordered") -> list[dict]:
    """Rows of Table 1: strength and CI of one fit, stable W–L–T, the folded head-to-head against each model,
    and the human win rate with its count and CI when a formal study has one."""
    folded = _pair_lookup(doc.get("head_to_head", []))
    human = (doc.get("human_win_rate_detail") or {}).get("models", {})
    rows = []
    for model in doc.get("models", []):
        bt = doc["bt"].get(fit, {}).get(model, {})
        rows.append(
            {
                "model": model,
                "strength": bt.get("strength"),
                "ci": bt.get("ci") or [None, None],
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
    }


# --------------------------------------------------------------------------- blindness (arena/blindness.py)


@require_GET
@researcher_required
def benchmark_blindness_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """Each model's aliases, and every proposal with redactions: what was replaced, where, and the text around it."""
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    return render(
        request, "arena/blindness.html", {"benchmark": benchmark, "modes": MODE_HELP} | benchmark_blindness(benchmark=benchmark)
    )


@require_POST
@researcher_required
def benchmark_blindness_rescan(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    messages.success(request, benchmark_redact(benchmark=benchmark).line())
    return redirect("arena:blindness", benchmark_id=benchmark.pk)


@require_http_methods(["GET", "POST"])
@researcher_required
def participant_aliases_edit(request: HttpRequest, participant_id: int) -> HttpResponse:
    """Edit one participant's aliases; saving redacts the benchmark's proposals again."""
    participant = get_object_or_404(Participant.objects.select_related("benchmark"), pk=participant_id)
    current = participant_aliases(participant)
    initial = "\n".join(a.text if a.mode == WORD else f"{a.text} | {a.mode}" for a in current)
    form = ParticipantAliasesForm(request.POST or None, initial={"aliases": initial})
    if request.method == "POST" and form.is_valid():
        try:
            summary = participant_aliases_update(participant=participant, text=form.cleaned_data["aliases"])
        except AliasError as exc:
            form.add_error("aliases", exc.problems)
        else:
            messages.success(request, f"aliases of {participant.name} saved; {summary.line()}")
            return redirect("arena:blindness", benchmark_id=participant.benchmark_id)
    return render(
        request,
        "arena/participant_aliases.html",
        {"participant": participant, "benchmark": participant.benchmark, "aliases": current, "form": form, "modes": MODE_HELP},
    )
