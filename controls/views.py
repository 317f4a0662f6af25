"""Researchers' review of control variants before they are judged (issue 11): a benchmark's variants, filtered
by kind and status, and one variant beside its clean source, with its text editable and Approve / Reject.

Only approved variants enter a judge run (:func:`controls.selectors.benchmark_controls`), so this page is where a
model-made draft becomes usable, and where a researcher takes a bad one out. Writes go through
:func:`controls.services.control_variant_review`, which checks an edit like an import.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from arena.models import Benchmark
from arena.permissions import researcher_required

from .forms import ACTIONS, ControlFilterForm, ControlReviewForm
from .models import ControlVariant
from .selectors import benchmark_controls
from .services import ControlError, control_variant_review
from .variants import SIX

PER_PAGE = 50


@require_GET
@researcher_required
def control_list(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """Every variant of a benchmark, whatever its status, with kind, target, context, status and provenance."""
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    filters = ControlFilterForm(request.GET)
    filters.is_valid()
    chosen = filters.values()
    variants = benchmark_controls(
        benchmark=benchmark,
        kinds=[chosen["kind"]] if "kind" in chosen else None,
        statuses=[chosen["status"]] if "status" in chosen else None,
    )
    page = Paginator(variants, PER_PAGE).get_page(request.GET.get("page"))
    counts = dict(ControlVariant.objects.filter(benchmark=benchmark).values_list("status").annotate(n=Count("id")).order_by())
    by_status = [(label, counts.get(value, 0)) for value, label in ControlVariant.Status.choices]
    return render(
        request,
        "controls/control_list.html",
        {"benchmark": benchmark, "page": page, "filters": filters, "filtered": bool(chosen), "by_status": by_status},
    )


def _rows(variant: ControlVariant, form: ControlReviewForm) -> list[dict[str, Any]]:
    """One row per field: the clean source's text, the variant's form field, and whether the variant changes it."""
    source = variant.source.content or {}
    content = variant.content or {}
    expected = variant.target_field or ("falsifying_result" if variant.kind == ControlVariant.Kind.FALSIFIER_OFF else None)
    rows = []
    for name in SIX:
        rows.append(
            {
                "name": name,
                "source": source.get(name, ""),
                "field": form[name] if name in form.fields else None,
                "changed": variant.kind != ControlVariant.Kind.RENDERING and content.get(name) != source.get(name),
                "expected": name == expected,
            }
        )
    return rows


def _render_detail(request: HttpRequest, variant: ControlVariant, form: ControlReviewForm, status: int = 200) -> HttpResponse:
    context = {
        "variant": variant,
        "form": form,
        "rows": _rows(variant, form),
        "rendering": variant.kind == ControlVariant.Kind.RENDERING,
        "attempts": list(variant.attempts.order_by("round", "created_at", "id")),
    }
    return render(request, "controls/control_detail.html", context, status=status)


@require_http_methods(["GET", "POST"])
@researcher_required
def control_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A variant beside its clean source; POST approves it with the text as edited, or rejects it.

    A refused edit re-renders the page with each problem beside its field and nothing saved; a decision redirects
    back here (post/redirect/get) with a message.
    """
    variant = get_object_or_404(ControlVariant.objects.select_related("benchmark", "context", "source__participant"), pk=pk)
    if request.method != "POST":
        return _render_detail(request, variant, ControlReviewForm(variant=variant))
    form = ControlReviewForm(request.POST, variant=variant)
    if not form.is_valid():
        return _render_detail(request, variant, form)
    action = form.cleaned_data["action"]
    content, prose, changed = form.edited() if action == "approve" else (None, None, False)
    try:
        control_variant_review(variant=variant, status=ACTIONS[action], content=content, prose=prose)
    except ControlError as exc:  # the form checks the same rules first; this is the service's word if they ever differ
        form.add_error(None, str(exc))
        return _render_detail(request, variant, form)
    if action == "approve":
        messages.success(request, f"{variant.control_id} approved{' with your edits' if changed else ''}: judge runs with controls include it.")
    else:
        messages.success(request, f"{variant.control_id} rejected: no judge run includes it.")
    return redirect("controls:variant", pk=variant.pk)
