"""The shared dashboard and the pages every benchmark has: the benchmark list (a table per protocol, whose columns,
links and import panel come from the protocol registry), the benchmark page (each protocol's own), the blindness audit and a
participant's aliases."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from .aliases import BRAND, EXACT, MODE_HELP, PROPER, WORD, AliasError
from .blindness import benchmark_blindness, benchmark_redact, participant_aliases, participant_aliases_update
from .forms import ParticipantAliasesForm
from .models import Benchmark, Participant
from .permissions import researcher_required
from .protocols import ProtocolSpec, benchmark_protocols, protocol_label, protocol_phrase, protocols

#: The alias modes' help (``arena.aliases.MODE_HELP``, English there) as the blindness pages print it.
MODE_HELP_SHOWN = {
    WORD: gettext_lazy("any capitalisation, plural included"),
    PROPER: gettext_lazy("only with a capital first letter"),
    BRAND: gettext_lazy("a common word: only capitalised and in an identifying position (version, 'AI', 'model', 'by …')"),
    EXACT: gettext_lazy("case-sensitive"),
}


def alias_modes() -> dict[str, str]:
    """Each alias mode with its help in the active language (a mode added without a translation reads in English)."""
    return {mode: MODE_HELP_SHOWN.get(mode, text) for mode, text in MODE_HELP.items()}


def _panels(request: HttpRequest) -> tuple[list[dict[str, Any]], HttpResponse | None]:
    """Each protocol's dashboard panel (a release upload, say) with its context; a POST goes to the panel it names
    (``panel``), else to the first panel there is, and its answer (a redirect once done) is the page's."""
    named = request.POST.get("panel", "") if request.method == "POST" else ""
    with_panel = [s for s in protocols.values() if s.panel is not None]
    target = next((s.name for s in with_panel if not named or s.name == named), None) if request.method == "POST" else None
    panels, answer = [], None
    for spec in with_panel:
        assert spec.panel is not None
        context, response = spec.panel(request, spec.name == target)
        panels.append({"spec": spec, "template": spec.panel_template, **context})
        answer = answer or response
    return panels, answer


def _links(benchmark: Benchmark, spec: ProtocolSpec | None) -> list[dict[str, str]]:
    out = []
    for link in spec.links if spec is not None else ():
        try:
            out.append({"label": link.label, "url": reverse(link.url_name, args=[benchmark.pk]), "css": link.css_class})
        except NoReverseMatch:
            continue
    return out


def _table(spec: ProtocolSpec, benchmarks: list[Benchmark]) -> dict[str, Any]:
    """A protocol's table: a row per benchmark with the protocol's own figures (one grouped query per figure, whatever
    the number of benchmarks) and its links."""
    ids = [b.pk for b in benchmarks]
    columns = [(figure, figure.values(ids)) for figure in spec.figures]
    rows = [
        {
            "benchmark": b,
            "cells": [{"value": values.get(b.pk, 0 if f.numeric else ""), "numeric": f.numeric} for f, values in columns],
            "links": _links(b, spec),
        }
        for b in benchmarks
    ]
    return {"spec": spec, "figures": spec.figures, "rows": rows}


def _benchmark_tables() -> tuple[list[dict[str, Any]], list[ProtocolSpec], list[Benchmark]]:
    """The dashboard's benchmarks: a table per installed protocol that has benchmarks here (in registration order),
    the installed protocols without one (with the command that imports their benchmarks), and benchmarks of a
    protocol no installed app registers (listed by name only)."""
    by_protocol: dict[str, list[Benchmark]] = defaultdict(list)
    for benchmark in Benchmark.objects.order_by("name", "version"):
        by_protocol[benchmark.protocol].append(benchmark)
    tables, empty = [], []
    for spec in benchmark_protocols():
        held = by_protocol.pop(spec.name, [])
        if held:
            tables.append(_table(spec, held))
        else:
            empty.append(spec)
    return tables, empty, [b for held in by_protocol.values() for b in held]


@require_http_methods(["GET", "POST"])
@researcher_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Every benchmark, in a table per protocol with what that protocol's benchmarks hold and its links; each
    protocol's panel (a release upload, say)."""
    panels, answer = _panels(request)
    if answer is not None:
        return answer
    tables, empty, unknown = _benchmark_tables()
    actions = [a for spec in protocols.values() for a in spec.actions]
    return render(
        request,
        "arena/dashboard.html",
        {"tables": tables, "empty": empty, "unknown": unknown, "panels": panels, "actions": actions},
    )


def protocol_home(benchmark: Benchmark) -> str | None:
    """The URL of a benchmark's own page (its protocol's), if that protocol's app is installed."""
    spec = protocols.get(benchmark.protocol)
    if spec is None or not spec.benchmark_page:
        return reverse("arena:benchmark", args=[benchmark.pk]) if spec is not None and spec.benchmark_view else None
    try:
        return reverse(spec.benchmark_page, args=[benchmark.pk])
    except NoReverseMatch:
        return None


def protocol_only(request: HttpRequest, benchmark: Benchmark, protocol: str, page: str) -> HttpResponse | None:
    """None for a benchmark of ``protocol``; for another protocol's, a 404 page naming its protocol and linking its
    own page (a protocol's page calls this before anything else)."""
    if benchmark.protocol == protocol:
        return None
    context = {
        "benchmark": benchmark,
        "page": page,
        "home": protocol_home(benchmark),
        "wanted": protocol_label(protocol),
        "wanted_phrase": protocol_phrase(protocol),
    }
    return render(request, "arena/other_protocol.html", context, status=404)


@require_GET
@researcher_required
def benchmark_detail(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """A benchmark's own page: its protocol renders it here, or this redirects to the protocol's page."""
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    spec = protocols.get(benchmark.protocol)
    if spec is not None and spec.benchmark_view is not None:
        return spec.benchmark_view(request, benchmark)
    if spec is not None and spec.benchmark_page:
        try:
            return redirect(reverse(spec.benchmark_page, args=[benchmark.pk]))
        except NoReverseMatch:
            pass
    return redirect("arena:dashboard")


# --------------------------------------------------------------------------- blindness (arena/blindness.py)


@require_GET
@researcher_required
def benchmark_blindness_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """Each model's aliases, and every proposal with redactions: what was replaced, where, and the text around it."""
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    return render(
        request,
        "arena/blindness.html",
        {"benchmark": benchmark, "modes": alias_modes()} | benchmark_blindness(benchmark=benchmark),
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
            saved = gettext("aliases of %(name)s saved; %(summary)s")
            messages.success(request, saved % {"name": participant.name, "summary": summary.line()})
            return redirect("arena:blindness", benchmark_id=participant.benchmark_id)
    return render(
        request,
        "arena/participant_aliases.html",
        {
            "participant": participant,
            "benchmark": participant.benchmark,
            "aliases": current,
            "form": form,
            "modes": alias_modes(),
        },
    )
