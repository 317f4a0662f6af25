"""The runs pages: every run with live progress, the judge-run launch form (its run types, options and selection
grammar from the protocol registry), a run's page (its task kind may render its own) and its controls."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET, require_http_methods

from arena.models import Benchmark, JudgeRun
from arena.permissions import researcher_required
from arena.protocols import protocols

from .forms import JudgeRunForm
from .lifecycle import AlreadyLaunched, RunError, runs_listed
from .selectors import run_log, run_progress
from .services import JudgeRunRequest, judge_run_cancel, judge_run_create, judge_run_launch, judge_run_pause, judge_run_resume
from .subjects import subjects_of


def _get_run(run_id: int) -> JudgeRun:
    return get_object_or_404(JudgeRun.objects.select_related("benchmark", "launched_by"), pk=run_id)


def _actions() -> list[dict[str, str]]:
    """Every protocol's launch links that take no benchmark ("Launch a generation run")."""
    out = []
    for spec in protocols.values():
        for link in spec.actions:
            try:
                out.append({"label": link.label, "url": reverse(link.url_name), "css": link.css_class})
            except NoReverseMatch:
                continue
    return out


@require_GET
@researcher_required
def run_list(request: HttpRequest) -> HttpResponse:
    """All runs with live progress; the fragment polls itself until every run has settled (ended, no call in flight)."""
    runs = list(JudgeRun.objects.select_related("benchmark").order_by("-created_at", "-id")[:100])
    rows = [(run, run_progress(run=run)) for run in runs]
    # Every kind's other runs (generation, elicitation, scoring ...) share the second table.
    generations = runs_listed(20)
    live = any(not p.settled for _, p in rows) or any(not p.settled for _, _, p in generations)
    values = {"rows": rows, "generations": generations, "live": live, "actions": _actions()}
    template = "jobs/run_list.html#runs" if request.htmx else "jobs/run_list.html"
    return render(request, template, values)


def _request_of(data: dict[str, Any]) -> JudgeRunRequest:
    replay = data["replay_of"]
    return JudgeRunRequest(
        benchmark=data["benchmark"],
        judge_model=data["judge_model"],
        base_url=data["base_url"] or "",
        provider=JudgeRun.Provider.RECORDED if replay else JudgeRun.Provider.OPENAI_COMPATIBLE,
        replay_of=replay,
        api_key_env=data["api_key_env"] or None,
        run_type=data["run_type"],
        task_kind=data["task_kind"],
        prompt_version=data["prompt_version"] or None,
        select=data["select"],
        orders=tuple(data["orders"]),
        concurrency=data["concurrency"],
        rate_per_second=data["rate_per_second"],
        temperature=data["temperature"],
        max_tokens=data["max_tokens"],
        timeout=data["timeout"],
        canonical=data["canonical"],
        price_per_1k_prompt=data["price_per_1k_prompt"],
        price_per_1k_completion=data["price_per_1k_completion"],
        options=data["options"],
        launch_key=data.get("launch_key") or "",
    )


def _new_version_url(benchmark: Benchmark) -> str | None:
    """Where the benchmark's next version is made, when its protocol has such a page."""
    spec = protocols.get(benchmark.protocol)
    if spec is None or not spec.new_version_url:
        return None
    try:
        return reverse(spec.new_version_url, args=[benchmark.pk])
    except NoReverseMatch:
        return None


@require_http_methods(["GET", "POST"])
@researcher_required
def run_new(request: HttpRequest) -> HttpResponse:
    newest = Benchmark.objects.order_by("-created_at", "-id").first()
    form = JudgeRunForm(
        request.POST or None,
        initial={
            "benchmark": request.GET.get("benchmark") or (newest.pk if newest else None),
            "launch_key": secrets.token_urlsafe(24),
        },
    )
    offer_version: dict[str, Any] | None = None
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            run, skipped = judge_run_create(request=_request_of(d), launched_by=request.user)
            judge_run_launch(run=run)
        except AlreadyLaunched as exc:
            messages.info(request, f"Run {exc.run.pk} was launched from this form already; nothing new was made.")
            return redirect("jobs:run", run_id=exc.run.pk)
        except RunError as exc:
            form.add_error(None, str(exc))
            url = _new_version_url(d["benchmark"])
            if "new benchmark version" in str(exc) and url:
                offer_version = {"benchmark": d["benchmark"], "url": url}
        else:
            kind = subjects_of(run)
            note = f" {skipped} {kind.skipped_note}." if skipped else ""
            unit = "ordered tasks" if kind.ordered else "tasks"
            messages.success(request, f"Run {run.pk} launched: {kind.task_model.objects.filter(run=run).count()} {unit}.{note}")
            return redirect("jobs:run", run_id=run.pk)
    return render(request, "jobs/run_new.html", {"form": form, "offer_version": offer_version})


def _progress_values(run: JudgeRun) -> dict[str, Any]:
    progress = run_progress(run=run)
    kind = subjects_of(run)
    parameters = run.parameters or {}
    return {
        "run": run,
        "progress": progress,
        "events": run_log(run=run),
        "active": run.status in JudgeRun.ACTIVE_STATUSES,
        # Poll until nothing can change: after a pause or cancel, calls in flight still return and are billed.
        "live": not progress.settled,
        "selection_label": kind.selection_key.replace("_", " ").capitalize(),
        "selection": parameters.get(kind.selection_key),
        "skipped": parameters.get("skipped") or parameters.get("skipped_without_text"),
        "skipped_note": kind.skipped_note,
    }


@require_GET
@researcher_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    """Progress, controls and the run's verdicts; a task kind with a page of its own (the canonical pairs') shows them
    its way."""
    run = _get_run(run_id)
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "jobs/run_detail.html#progress", _progress_values(run))
    kind = subjects_of(run)
    if kind.page is not None:
        return kind.page(request, run, _progress_values(run))
    return _subject_run_detail(request, run)


def _subject_run_detail(request: HttpRequest, run: JudgeRun) -> HttpResponse:
    """The page of a run whose kind has no page of its own: progress, controls and its verdicts, each with what was
    compared; the figures are on that kind's report page."""
    kind = subjects_of(run)
    verdicts = (
        kind.judgment_model.objects.filter(run=run)
        .select_related(kind.subject_field)
        .order_by(f"{kind.subject_field}_id", "order")
    )
    page = Paginator(verdicts, 50).get_page(request.GET.get("page"))
    rows = []
    for j in page:
        label, link = kind.describe(j) if kind.describe else (str(getattr(j, kind.subject_field)), "")
        outcome = getattr(j, "winner", "") or getattr(j, "verdict", "")
        reason = getattr(j, "main_reason", "") or getattr(j, "reasons", "")
        rows.append({"j": j, "label": label, "link": link, "outcome": outcome or "", "reason": reason})
    others = run.benchmark.runs.filter(subjects=run.subjects).exclude(pk=run.pk).order_by("-created_at")
    report_link, report_label = kind.report(run) if kind.report is not None else ("", "")
    return render(
        request,
        "jobs/run_detail.html",
        _progress_values(run)
        | {
            "subject_page": page,
            "subject_rows": rows,
            "subjects": run.get_subjects_display(),
            "others": others,
            "report_link": report_link,
            "report_label": report_label,
        },
    )


# Actions that cannot be undone ask first: a POST without ``confirm=yes`` (no JavaScript), or a GET, shows a
# confirmation page; with JavaScript, app.js asks in a dialog (data-confirm) and sends ``confirm=yes`` itself.
CONFIRM = {
    "cancel": (
        "Cancel run #{id}?",
        "Cancelling cannot be undone: a cancelled run cannot be resumed. Tasks not yet started are skipped; calls already "
        "sent still finish, are stored and are billed. To stop for a while instead, pause the run.",
        "Yes, cancel the run",
        "Keep the run",
    ),
}


@require_http_methods(["GET", "POST"])
@researcher_required
def run_control(request: HttpRequest, run_id: int, action: str) -> HttpResponse:
    run = _get_run(run_id)
    if action not in ("pause", "resume", "cancel"):
        return HttpResponse(status=404)
    if action in CONFIRM and run.status not in JudgeRun.ACTIVE_STATUSES:
        messages.error(request, f"Run {run.pk} has already ended ({run.status}): there is nothing to {action}.")
        return redirect("jobs:run", run_id=run.pk)
    if action in CONFIRM and (request.method == "GET" or request.POST.get("confirm") != "yes"):
        title, text, yes, no = CONFIRM[action]
        return render(
            request,
            "jobs/run_confirm.html",
            {"run": run, "action": action, "title": title.format(id=run.pk), "text": text, "yes": yes, "no": no},
        )
    if request.method == "GET":
        return HttpResponseNotAllowed(["POST"])
    try:
        if action == "pause":
            judge_run_pause(run=run)
        elif action == "resume":
            todo = judge_run_resume(run=run)
            messages.success(request, f"Run {run.pk} resumed: {todo} tasks left to do.")
        else:
            judge_run_cancel(run=run)
            messages.success(
                request, f"Run {run.pk} cancelled: calls already sent still finish and are billed; this page follows them."
            )
    except RunError as exc:
        messages.error(request, str(exc))
    return redirect("jobs:run", run_id=run.pk)
