"""Researchers' review of control variants before they are judged (issue 11): a benchmark's variants, filtered
by kind and status, and one variant beside its clean source, with its text editable and Approve / Reject.

Only approved variants enter a judge run (:func:`controls.selectors.benchmark_controls`), so this page is where a
model-made draft becomes usable, and where a researcher takes a bad one out. Writes go through
:func:`controls.services.control_variant_review`, which checks an edit like an import.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods

from arena.caching import report_cached, run_rows_fingerprint
from arena.charts import interval_plot
from arena.models import Benchmark, JudgeRun
from arena.permissions import researcher_required
from arena.protocol_reports import int_option
from arena.schemas import JUDGE_DIMENSIONS as DIMENSIONS
from arena.views import protocol_only
from jobs.selectors import run_progress

from .demo import TIE_WITHIN, WORDS_PER_POINT, is_demo_run
from .forms import ACTIONS, ControlFilterForm, ControlReviewForm
from .models import LIT2TEST, ControlJudgment, ControlVariant
from .reports import DEFAULT_REPLICATES, ControlReportError, controls_report, controls_run_default, controls_runs
from .selectors import benchmark_controls
from .services import ControlError, control_variant_review
from .variants import SIX

PER_PAGE = 50


@require_GET
@researcher_required
def control_list(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """Every variant of a benchmark, whatever its status, with kind, target, context, status and provenance."""
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    if (elsewhere := protocol_only(request, benchmark, LIT2TEST, "diagnostic controls")) is not None:
        return elsewhere
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
        if changed:
            done = gettext("%(id)s approved with your edits: judge runs with controls include it.")
        else:
            done = gettext("%(id)s approved: judge runs with controls include it.")
    else:
        done = gettext("%(id)s rejected: no judge run includes it.")
    messages.success(request, done % {"id": variant.control_id})
    return redirect("controls:variant", pk=variant.pk)


# --------------------------------------------------------------------------- the Controls page (the report)

MIN_REPLICATES = 100  # fewer makes the percentile interval's ends noise
MAX_SEED = 2**32 - 1  # the API's (arena.apis.MAX_SEED)
NO_STRUCTURED = "none"


def _report_cached(
    *, benchmark: Benchmark, run: JudgeRun, structured: JudgeRun | None, replicates: int, seed: int
) -> dict[str, Any]:
    """``controls.reports.controls_report``, cached by the runs' fingerprints (status, accepted verdicts), the replicates
    and the seed. The demo's report (48 verdicts, a structured run beside) takes about 0.1 s on one core; a
    release-sized one several times that, on every poll of a running run's page: hence the cache."""
    runs = [
        run_rows_fingerprint(r, ControlJudgment.objects.filter(run=r, status="accepted"))
        for r in (run, structured)
        if r is not None
    ]
    return report_cached(
        namespace="controls-report:v2",
        benchmark=benchmark,
        parts=[*runs, replicates, seed],
        make=lambda: controls_report(benchmark=benchmark, run=run, structured_run=structured, replicates=replicates, seed=seed),
    )


def _pick(runs: list[JudgeRun], raw: str | None, what: str) -> JudgeRun | None:
    found = next((r for r in runs if str(r.pk) == raw), None)
    if found is None:
        raise Http404(f"no controls {what} {raw!r} in this benchmark")
    return found


def _estimate(block: dict[str, Any] | None, key: str = "mean") -> tuple[float | None, list[float] | None]:
    if not block:
        return None, None
    return block.get(key), block.get("ci")


def demo_description() -> str:
    """The demo judge's description (:data:`controls.demo.HEURISTIC_DESCRIPTION`, stored in English with its runs) in
    the active language; in English it is that text exactly."""
    return gettext(
        "Demo heuristic judge, not a language model: the proposal with more words wins (a tie when the counts differ "
        "by at most %(tie)s of the larger); each dimension is scored min(4, words // %(per_point)s) of its own field "
        "(a prose rendering: a fifth of its words per dimension). It fails the rendering control by design: prose is "
        "longer."
    ) % {"tie": f"{TIE_WITHIN:.0%}", "per_point": WORDS_PER_POINT}


def report_sections(document: dict[str, Any]) -> dict[str, Any]:
    """The document as rows the template prints as they are, and the geometry of the two plots (Figure 3's style)."""
    from arena.stats.controls import TARGETS

    clear, subtle = document["clear"], document["subtle"]
    labels = dict(ControlVariant.Target.choices)
    clear_rows = [{"dimension": t, "label": labels.get(t, t), **clear[t]} for t in TARGETS]
    subtle_rows = [{"dimension": t, "label": labels.get(t, t), **subtle[t]} for t in TARGETS]
    drop_rows = []
    for t in TARGETS:
        for kind, section in (("clear", clear), ("subtle", subtle)):
            value, ci = _estimate(section[t].get("target_drop"))
            drop_rows.append((t, kind, value, ci))
    adjusted_rows = [(t, "subtle − sham", subtle[t]["adjusted"]["value"], subtle[t]["adjusted"]["ci"]) for t in TARGETS]
    audit = document["dimension_audit"]
    by_role = audit.get("mean_scores_by_role") or {}
    audit_rows = [
        {
            "dimension": d,
            "all": (audit.get("mean_scores") or {}).get(d),
            "clean": (by_role.get("clean") or {}).get(d),
            "variant": (by_role.get("variant") or {}).get(d),
        }
        for d in DIMENSIONS
    ]
    return {
        "clear_rows": clear_rows,
        "subtle_rows": subtle_rows,
        "has_subtle": any(r["subtle_ordered"] or r["sham_gate"]["ordered"] for r in subtle_rows),
        "has_scores": any(r["target_drop"] is not None for r in clear_rows + subtle_rows),
        "audit_rows": audit_rows,
        "has_audit": bool(audit.get("mean_scores")) or audit.get("structured_vs_holistic_agreement") is not None,
        "drop_table": [{"dimension": t, "kind": k, "value": v, "ci": ci} for t, k, v, ci in drop_rows if v is not None],
        "adjusted_table": [{"dimension": t, "value": v, "ci": ci} for t, _, v, ci in adjusted_rows if v is not None],
        "drop_plot": interval_plot([(f"{t} · {k}", k, v, ci) for t, k, v, ci in drop_rows]),
        "adjusted_plot": interval_plot([(t, k, v, ci) for t, k, v, ci in adjusted_rows], domain=(-1.0, 1.0)),
    }


@require_GET
@researcher_required
def controls_report_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """The Controls page: the diagnostic controls report of a controls run (``controls.reports.controls_report``), in
    tables and two plots, beside the leaderboard; polls itself while a run it reads is in progress.

    ``?run=`` picks a controls run (default: the newest completed holistic one, else the newest); ``?structured=`` a
    structured controls run for the target drops and the dimension audit (default: the newest completed structured one
    when ``run`` is holistic; ``none`` for none); ``?replicates=`` and ``?seed=`` the case bootstrap's.
    """
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    if (elsewhere := protocol_only(request, benchmark, LIT2TEST, "diagnostic controls")) is not None:
        return elsewhere
    runs = controls_runs(benchmark=benchmark)
    variants = dict(ControlVariant.objects.filter(benchmark=benchmark).values_list("status").annotate(n=Count("id")).order_by())
    context: dict[str, Any] = {
        "benchmark": benchmark,
        "runs": runs,
        "n_variants": sum(variants.values()),
        "n_approved": variants.get(ControlVariant.Status.APPROVED, 0),
        "pairs_spec": "controls",
    }
    if not runs:
        state = "no-variants" if not context["n_variants"] else "no-approved" if not context["n_approved"] else "no-runs"
        return render(request, "controls/report.html", context | {"state": state})

    if request.GET.get("run"):
        run = _pick(runs, request.GET["run"], "run")
    else:
        run = controls_run_default(benchmark=benchmark) or runs[0]
    structured_runs = [r for r in runs if r.run_type == "structured" and r.pk != run.pk]
    raw_structured = request.GET.get("structured", "")
    if raw_structured == str(run.pk):  # the run picker moved to the run the structured picker held: read its own scores
        raw_structured = ""
    if raw_structured == NO_STRUCTURED or run.run_type == "structured" and not raw_structured:
        structured = None
    elif raw_structured:
        structured = _pick(structured_runs, raw_structured, "structured run")
    else:
        default = controls_run_default(benchmark=benchmark, run_type="structured")
        structured = default if default is not None and default.pk != run.pk else None

    problems: list[str] = []
    # The same cap on the bootstrap's work as the leaderboard's and the API's.
    cap = settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES
    replicates_range = (min(MIN_REPLICATES, cap), cap)
    replicates = int_option(request, "replicates", min(DEFAULT_REPLICATES, replicates_range[1]), *replicates_range, problems)
    seed = int_option(request, "seed", 0, 0, MAX_SEED, problems)
    live = any(r.status in JudgeRun.ACTIVE_STATUSES for r in (run, structured) if r is not None)
    query = {"run": run.pk, "structured": structured.pk if structured else NO_STRUCTURED, "replicates": replicates, "seed": seed}
    context |= {
        "state": "report",
        "run": run,
        "structured": structured,
        "structured_runs": structured_runs,
        "replicates": replicates,
        "seed": seed,
        "problems": problems,
        "live": live,
        "query": urlencode(query),
        "progress": run_progress(run=run) if run.status in JudgeRun.ACTIVE_STATUSES else None,
        "structured_progress": run_progress(run=structured)
        if structured and structured.status in JudgeRun.ACTIVE_STATUSES
        else None,
        "demo": is_demo_run(run) or is_demo_run(structured),
        "demo_description": demo_description(),
        "replicates_range": replicates_range,
    }
    try:
        document = _report_cached(benchmark=benchmark, run=run, structured=structured, replicates=replicates, seed=seed)
    except ControlReportError as exc:
        context["report_problem"] = str(exc)
    else:
        context |= {"doc": document, **report_sections(document)}
    template = "controls/report.html#report" if request.htmx else "controls/report.html"
    return render(request, template, context)
