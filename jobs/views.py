"""The runs pages: every run with live progress, the judge-run launch form (its run types, options and selection
grammar from the protocol registry), a run's page and its controls.

Every run kind has a page: a judge run's shows its verdicts, live while the run works (its task kind may render the
page its own way: the canonical pairs' does); a run of another kind (generation, scoring ...: ``jobs.kinds``) has the
engine's page, with its progress, controls, log, the step that follows it and its tasks."""

from __future__ import annotations

import json
import secrets
from typing import Any

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db import models
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods

from arena.models import Benchmark, JudgeRun
from arena.numbers import whole_number
from arena.permissions import researcher_required
from arena.protocols import protocols
from arena.selectors import RUN_PAGE_SIZE
from arena.templatetags.doc_text import SUBJECT_NAMES, SUBJECT_WORDS
from arena.templatetags.doc_text import TASK_STATUSES as TASK_WORDS

from .adaptive import AdaptiveError, adaptive_parameters, adaptive_summary
from .cost_to_precision import cost_to_precision
from .forms import JudgeRunForm
from .kinds import RunKindSpec, run_kind_of, run_kinds
from .lifecycle import AlreadyLaunched, RunError, run_cancel, run_pause, run_resume, runs_listed
from .models import RunKind, RunStep, TaskStatus
from .selectors import run_log, run_progress
from .services import JudgeRunRequest, judge_run_create, judge_run_launch
from .subjects import subjects_of
from .verdicts import POLL, VerdictListForm, is_feed_poll, subject_search, verdict_choices, verdict_feed


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
    # Every kind's other runs (generation, elicitation, scoring ...) share the second table, each linked to its page.
    generations = [(gettext(title), run, progress, run_page_url(run)) for title, run, progress in runs_listed(20)]
    live = any(not p.settled for _, p in rows) or any(not p.settled for _, _, p, _ in generations)
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
        call_cache=bool(data.get("call_cache")),
        sample=data.get("sample") or 0,
        adaptive=data.get("adaptive_settings"),
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
            messages.info(
                request, gettext("Run %(id)s was launched from this form already; nothing new was made.") % {"id": exc.run.pk}
            )
            return redirect("jobs:run", run_id=exc.run.pk)
        except RunError as exc:
            form.add_error(None, str(exc))
            url = _new_version_url(d["benchmark"])
            if "new benchmark version" in str(exc) and url:
                offer_version = {"benchmark": d["benchmark"], "url": url}
        else:
            kind = subjects_of(run)
            note = f" {skipped} {kind.skipped_note}." if skipped else ""
            n = kind.task_model.objects.filter(run=run).count()
            launched = (
                gettext("Run %(id)s launched: %(n)s ordered tasks.")
                if kind.ordered
                else gettext("Run %(id)s launched: %(n)s tasks.")
            )
            messages.success(request, (launched % {"id": run.pk, "n": n}) + note)
            return redirect("jobs:run", run_id=run.pk)
    return render(request, "jobs/run_new.html", {"form": form, "offer_version": offer_version})


#: The judge and endpoint a cost-to-precision question plans with when the form has none yet: nothing is called.
_PROJECTION_JUDGE, _PROJECTION_URL = "cost-to-precision", "http://127.0.0.1:9/v1"


#: The cost-to-precision question's text parameters: PostgreSQL refuses a NUL in a text value, so one is refused here.
_PROJECTION_TEXTS = ("judge_model", "select", "run_type", "adaptive_target")


def _projection_refusal(q: Any) -> tuple[Benchmark | None, str, int]:  # noqa: ANN401
    """The benchmark a cost-to-precision question names, or what is wrong with the question and its status (400: not
    a benchmark's id, or a text parameter holding a NUL; 404: no such benchmark). The id is read as the leaderboard
    reads ``?run=``: ASCII digits ("²" is a digit to str.isdigit() but no number) within a bigint."""
    raw = q.get("benchmark", "")
    if not (whole_number(raw) and len(raw) <= 18):
        message = gettext("benchmark must be a benchmark's id (a whole number such as 3), not %(value)s: choose a benchmark")
        return None, message % {"value": repr(raw[:40])}, 400
    nul = next((name for name in _PROJECTION_TEXTS if "\x00" in q.get(name, "")), None)
    if nul is not None:
        message = gettext("%(field)s holds a NUL character (\\x00), which no text may hold: remove it and ask again")
        return None, message % {"field": nul}, 400
    benchmark = Benchmark.objects.filter(pk=int(raw)).first()
    if benchmark is None:
        return None, gettext("no benchmark %(id)s: choose one of the benchmarks listed on the form") % {"id": raw}, 404
    return benchmark, "", 200


def _projection_response(request: HttpRequest, figures: dict[str, Any], status: int) -> HttpResponse:
    """The figures, or the error, as the form's fragment (htmx: always 200, since htmx swaps in no 4xx answer and the
    error would not be seen) or as JSON with the status."""
    if request.htmx:
        return render(request, "jobs/_cost_to_precision.html", {"figures": figures})
    return JsonResponse(figures, status=status)


@require_GET
@researcher_required
def run_cost_to_precision(request: HttpRequest) -> HttpResponse:
    """Before launch: the full run's calls and expected CI width and the adaptive projection, for the benchmark,
    selection and adaptive fields given (the launch form's, sent by htmx: a fragment; otherwise JSON). A question that
    names no benchmark by its id, or none that exists, is answered with its error (400, 404), as a bad selection is."""
    q = request.GET
    benchmark, refusal, status = _projection_refusal(q)
    if benchmark is None:
        return _projection_response(request, {"error": refusal}, status)
    spec = protocols.get(benchmark.protocol)
    run_type = q.get("run_type") or (spec.run_types[0].name if spec is not None and spec.run_types else "holistic")
    try:
        settings = adaptive_parameters(
            target=q.get("adaptive_target") or "top-k:1",
            alpha=float(q.get("adaptive_alpha") or 0.05),
            batch=int(q.get("adaptive_batch") or 8),
        )
        figures = cost_to_precision(
            request=JudgeRunRequest(
                benchmark=benchmark,
                judge_model=(q.get("judge_model") or "").strip() or _PROJECTION_JUDGE,
                base_url=_PROJECTION_URL,
                run_type=run_type,
                select=q.get("select") or "all",
                adaptive=settings,
            )
        )
    except (RunError, AdaptiveError, ValueError) as exc:
        figures = {"error": str(exc)}
    return _projection_response(request, figures, 400 if "error" in figures else 200)


# --------------------------------------------------------------------------- every run kind: progress and controls


def run_page_url(run: Any) -> str:  # noqa: ANN401
    """A run's page, whatever its kind: a judge run's at its id, another kind's at its kind and id (ids are per kind)."""
    spec = run_kind_of(run)
    if spec.kind == RunKind.JUDGE:
        return reverse("jobs:run", args=[run.pk])
    return reverse("jobs:engine-run", args=[spec.kind, run.pk])


def _control_url(spec: RunKindSpec, run: Any, action: str) -> str:  # noqa: ANN401
    if spec.kind == RunKind.JUDGE:
        return reverse("jobs:run-control", args=[run.pk, action])
    return reverse("jobs:engine-run-control", args=[spec.kind, run.pk, action])


def _noun(spec: RunKindSpec, run: Any) -> str:  # noqa: ANN401
    """How messages name the run: "Run 4", "Scoring run 4", "HypoArena generation run 2" (in the page's language: an
    elicitation kind's noun is its title and "run", so it is translated as the two)."""
    if spec.title and spec.noun == f"{spec.title} run":
        name = gettext("%(kind)s run %(id)s") % {"kind": gettext(spec.title), "id": run.pk}
    elif spec.noun == "run":
        name = gettext("Run %(id)s") % {"id": run.pk}
    else:
        name = f"{gettext(spec.noun)} {run.pk}"
    return name[:1].upper() + name[1:]


#: Cancelling asks first: (what the dialog says after the question, what the confirmation page says), by whether the
#: kind resumes a cancelled run (``RunKindSpec.resumes_cancelled``). A POST without ``confirm=yes`` (no JavaScript), or a
#: GET, shows the confirmation page; with JavaScript, app.js asks in a dialog (data-confirm) and sends ``confirm=yes``.
CANCEL_TEXTS = {
    False: (
        _(
            "A cancelled run cannot be resumed. Tasks not yet started are skipped; calls already sent still finish and are billed."
        ),
        _(
            "Cancelling cannot be undone: a cancelled run cannot be resumed. Tasks not yet started are skipped; calls already "
            "sent still finish, are stored and are billed. To stop for a while instead, pause the run."
        ),
    ),
    True: (
        _("Tasks not yet started are skipped (Resume reopens them); calls already sent still finish and are billed."),
        _(
            "Tasks not yet started are skipped, and Resume reopens them; calls already sent still finish, are stored and are "
            "billed. To stop for a while instead, pause the run."
        ),
    ),
}


def _cancel_question(spec: RunKindSpec, run: Any) -> str:  # noqa: ANN401
    return gettext("Cancel %(run)s #%(id)s?") % {"run": spec.noun, "id": run.pk}


def _controls(spec: RunKindSpec, run: Any, progress: Any) -> dict[str, str]:  # noqa: ANN401
    """The controls the run's state allows (as ``jobs.lifecycle`` does): the URL each posts to, and their words."""
    status, out = run.status, {}
    if status == JudgeRun.Status.RUNNING:
        out["pause"] = _control_url(spec, run, "pause")
    if spec.resumes_cancelled:
        resumable = status in (JudgeRun.Status.PAUSED, JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED)
    else:  # a judge run whose drivers all died resumes at once, without waiting for the watchdog
        stuck = status == JudgeRun.Status.RUNNING and not progress.drivers_alive and progress.remaining
        resumable = status in (JudgeRun.Status.PAUSED, JudgeRun.Status.FAILED) or bool(stuck)
    if resumable:
        out["resume"] = _control_url(spec, run, "resume")
        out["resume_label"] = gettext("Resume now") if status == JudgeRun.Status.RUNNING else gettext("Resume")
    if status in JudgeRun.ACTIVE_STATUSES:
        out["cancel"] = _control_url(spec, run, "cancel")
        out["cancel_question"] = f"{_cancel_question(spec, run)} {CANCEL_TEXTS[spec.resumes_cancelled][0]}"
    return out


DONE_HINTS = {
    True: _(
        "Done tasks have a stored verdict, accepted or invalid (unparseable after three answers); failed tasks got no "
        "answer from the endpoint, and Resume retries them; skipped tasks were cancelled before any call."
    ),
    False: _(
        "Done tasks have a stored answer (invalid ones were unusable after three answers and stored nothing); failed "
        "tasks got no answer from the endpoint, and Resume retries them; skipped tasks were cancelled before any call, and "
        "Resume reopens them."
    ),
}


def _engine_values(run: Any) -> dict[str, Any]:  # noqa: ANN401
    """What every run page shows and its progress section polls: progress, log, controls, whatever the kind."""
    spec = run_kind_of(run)
    progress = spec.progress(run)
    return {
        "run": run,
        "spec": spec,
        "progress": progress,
        "events": run_log(run=run),
        "active": run.status in JudgeRun.ACTIVE_STATUSES,
        # Poll until nothing can change: after a pause or cancel, calls in flight still return and are billed.
        "live": not progress.settled,
        "progress_url": f"{run_page_url(run)}?part=progress",
        "run_controls": _controls(spec, run, progress),
        "done_hint": DONE_HINTS[spec.kind == RunKind.JUDGE],
        # an adaptive run's target and figures, as its steps recorded them (nothing is computed on a poll)
        "adaptive": adaptive_summary(run, progress.calls),
    }


def _progress_values(run: JudgeRun) -> dict[str, Any]:
    """A judge run's page values: the engine's, and what it judged (``jobs.subjects``)."""
    kind = subjects_of(run)
    parameters = run.parameters or {}
    return _engine_values(run) | {
        "selection_label": kind.selection_key.replace("_", " ").capitalize(),
        "selection": parameters.get(kind.selection_key),
        "skipped": parameters.get("skipped") or parameters.get("skipped_without_text"),
        "skipped_note": kind.skipped_note,
    }


# --------------------------------------------------------------------------- a judge run's page


@require_GET
@researcher_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    """Progress, controls and the run's verdicts, live while it works; a task kind with a page of its own (the
    canonical pairs') shows them its way."""
    run = _get_run(run_id)
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "jobs/_progress.html", _engine_values(run))
    kind = subjects_of(run)
    if kind.page is not None:
        return kind.page(request, run, _progress_values(run))
    return _subject_run_detail(request, run)


#: The words of a verdict list's search, filters and order (``jobs.verdicts.VerdictListForm``, written in English there)
#: as the page prints them in the active language: field labels by field name, choices by their English label. A kind
#: adds its own filters' words (``translate_filters``'s ``labels`` and ``choices``); a word not listed is shown as it is.
FILTER_LABELS = {
    "q": _("Search"),
    "status": _("Answer"),
    "slower_than": _("Slower than (s)"),
    "more_tokens_than": _("More tokens than"),
    "costlier_than": _("Costlier than ($)"),
    "sort": _("Sort"),
    "verdict": _("Verdict"),
}
FILTER_CHOICES = {
    "any answer": _("any answer"),
    "accepted": pgettext_lazy("verdict status", "accepted"),
    "invalid": pgettext_lazy("verdict status", "invalid"),
    "newest first": _("newest first"),
    "oldest first": _("oldest first"),
    "slowest first": _("slowest first"),
    "fastest first": _("fastest first"),
    "most tokens first": _("most tokens first"),
    "costliest first": _("costliest first"),
    "any verdict": _("any verdict"),
}


def translate_filters(
    form: VerdictListForm, *, subject: str = "", labels: dict[str, Any] | None = None, choices: dict[str, Any] | None = None
) -> VerdictListForm:
    """The verdict list's form with its labels, choices and search hint in the active language (the English ones stay
    exactly as ``jobs.verdicts`` writes them). ``subject`` is the verbose name of what the search looks in besides the
    answers; ``labels`` and ``choices`` are a kind's own filters' words."""
    labels, choices = FILTER_LABELS | (labels or {}), FILTER_CHOICES | (choices or {})
    for name, field in form.fields.items():
        field.label = labels.get(name, field.label)
        if isinstance(field, forms.ChoiceField):
            field.choices = [(value, choices.get(label, label)) for value, label in field.choices]
    if subject:
        hint = gettext("the %(subject)s and the answers") % {"subject": SUBJECT_NAMES.get(subject, subject)}
        form.fields["q"].help_text = gettext("looks in %(where)s") % {"where": hint}
        form.fields["q"].widget.attrs["placeholder"] = hint
    return form


def _subject_rows(kind: Any, verdicts: list[Any]) -> list[dict[str, Any]]:  # noqa: ANN401
    rows = []
    for j in verdicts:
        label, link = kind.describe(j) if kind.describe else (str(getattr(j, kind.subject_field)), "")
        outcome = getattr(j, "winner", "") or getattr(j, "verdict", "")
        reason = getattr(j, "main_reason", "") or getattr(j, "reasons", "")
        rows.append({"j": j, "label": label, "link": link, "outcome": outcome or "", "reason": reason})
    return rows


def _subject_run_detail(request: HttpRequest, run: JudgeRun) -> HttpResponse:
    """The page of a run whose kind has no page of its own: progress, controls and its verdicts (newest first, live,
    sorted, filtered and searched as ``jobs.verdicts`` does), each with what was compared; the figures are on that
    kind's report page."""
    values = _progress_values(run)
    kind = subjects_of(run)
    run_verdicts = kind.judgment_model.objects.filter(run=run)
    search, search_label = subject_search(run_verdicts, kind.subject_field)
    filters = VerdictListForm(
        request.GET, parameters=run.parameters or {}, search_label=search_label, verdicts=verdict_choices(run_verdicts)
    )
    subject = kind.judgment_model._meta.get_field(kind.subject_field).related_model._meta.verbose_name
    translate_filters(filters, subject=str(subject))
    shown = filters.apply(run_verdicts.select_related(kind.subject_field), search=search)
    page_number = request.GET.get("page") or "1"
    on_top = filters.chosen_sort == "" and page_number == "1"
    feed = verdict_feed(request, run_verdicts=run_verdicts, shown=shown, live=values["live"], on_top=on_top)
    values |= {"feed": feed, "poll": POLL, "filters": filters, "filtered": filters.narrowed()}
    if is_feed_poll(request):
        values |= {"subject_rows": _subject_rows(kind, feed.new), "verdict_count": shown.count()}
        return render(request, "jobs/run_detail.html#subject-feed", values)
    page = Paginator(shown, RUN_PAGE_SIZE).get_page(page_number)
    others = run.benchmark.runs.filter(subjects=run.subjects).exclude(pk=run.pk).order_by("-created_at")
    report_link, report_label = kind.report(run) if kind.report is not None else ("", "")
    return render(
        request,
        "jobs/run_detail.html",
        values
        | {
            "subject_page": page,
            "subject_rows": _subject_rows(kind, list(page)),
            "verdict_count": page.paginator.count,
            "subjects": SUBJECT_WORDS.get(run.get_subjects_display(), run.get_subjects_display()),
            "others": others,
            "report_link": report_link,
            "report_label": SUBJECT_WORDS.get(report_label, report_label),
        },
    )


# --------------------------------------------------------------------------- a run of another kind: the engine's page


def _get_engine_run(kind: str, run_id: int) -> tuple[RunKindSpec, Any]:
    spec = run_kinds.get(kind)
    if spec is None:
        raise Http404(f"no run kind {kind!r}; the kinds are {', '.join(run_kinds.names())}")
    related = [f.name for f in spec.run_model._meta.get_fields() if f.many_to_one and f.name in ("benchmark", "launched_by")]
    return spec, get_object_or_404(spec.run_model.objects.select_related(*related), pk=run_id)


def _subject_fields(task_model: type[models.Model]) -> list[str]:
    """What a task is about, read from its model: its foreign keys but the run (a case, a participant ...)."""
    return [f.name for f in task_model._meta.get_fields() if f.many_to_one and f.concrete and f.name != "run"]


TASK_STATUSES = [("", _("any state")), *((value, TASK_WORDS.get(value, label)) for value, label in TaskStatus.choices)]
TASKS_PER_PAGE = 50


def _task_values(request: HttpRequest, spec: RunKindSpec, run: Any) -> dict[str, Any]:  # noqa: ANN401
    """A page of the run's tasks in a stable order (so that a live refresh changes states, not places), filtered by
    state, each with what it is about, its calls, tokens and latest error."""
    task_model = spec.task_model_of(run.pk)
    fields = _subject_fields(task_model)
    status = request.GET.get("status") if request.GET.get("status") in TaskStatus.values else ""
    tasks = task_model.objects.filter(run_id=run.pk).order_by("id")
    if status:
        tasks = tasks.filter(status=status)
    page = Paginator(tasks.select_related(*fields), TASKS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [
        {
            "task": t,
            "about": " · ".join(str(getattr(t, name)) for name in fields if getattr(t, f"{name}_id", None) is not None),
            "tokens": (getattr(t, "prompt_tokens", 0) or 0) + (getattr(t, "completion_tokens", 0) or 0),
        }
        for t in page
    ]
    return {"task_page": page, "task_rows": rows, "task_status": status, "task_statuses": TASK_STATUSES}


def _step_values(spec: RunKindSpec, run: Any) -> dict[str, Any]:  # noqa: ANN401
    """The step that follows the run once its tasks are done (``jobs.kinds.Step``), and how it went if it came."""
    step = spec.step(run) if spec.step is not None else None
    record = RunStep.objects.filter(kind=spec.kind, run_id=run.pk).first()
    return {"step_title": step.title if step else (record.title if record else ""), "step_record": record}


def _benchmark_url(run: Any) -> str:  # noqa: ANN401
    benchmark_id = getattr(run, "benchmark_id", None)
    return reverse("arena:benchmark", args=[benchmark_id]) if benchmark_id else ""


@require_GET
@researcher_required
def engine_run_detail(request: HttpRequest, kind: str, run_id: int) -> HttpResponse:
    """The page of a run of any kind but a judge run's (generation, scoring ...): its parameters, progress, controls,
    log, the step that follows it and its tasks, live until the run settles. A judge run's address leads to its own
    page."""
    if kind == RunKind.JUDGE:
        return redirect("jobs:run", run_id=run_id)
    spec, run = _get_engine_run(kind, run_id)
    values = _engine_values(run)
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "jobs/_progress.html", values)
    values |= _task_values(request, spec, run) | {"poll": POLL}
    if request.htmx and request.GET.get("part") == "tasks":
        return render(request, "jobs/engine_run_detail.html#tasks", values)
    parameters = run.parameters or {}
    shown = ("base_url", "api_key_env", "concurrency", "rate_per_second", "timeout")
    values |= _step_values(spec, run) | {
        "title": gettext(spec.title) if spec.title else spec.kind,
        "benchmark_url": _benchmark_url(run),
        "parameters": parameters,
        "other_parameters": [
            (k, json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v)
            for k, v in sorted(parameters.items())
            if k not in shown and v not in ("", None, {}, [])
        ],
    }
    return render(request, "jobs/engine_run_detail.html", values)


# --------------------------------------------------------------------------- controls


def _control(request: HttpRequest, spec: RunKindSpec, run: Any, action: str) -> HttpResponse:  # noqa: ANN401
    """Pause, resume or cancel a run of any kind; cancelling asks first (``CANCEL_TEXTS``)."""
    page = run_page_url(run)
    if action not in ("pause", "resume", "cancel"):
        return HttpResponse(status=404)
    if action == "cancel" and run.status not in JudgeRun.ACTIVE_STATUSES:
        messages.error(
            request,
            gettext("%(run)s has already ended (%(status)s): there is nothing to cancel.")
            % {"run": _noun(spec, run), "status": run.status},
        )
        return redirect(page)
    if action == "cancel" and (request.method == "GET" or request.POST.get("confirm") != "yes"):
        return render(
            request,
            "jobs/run_confirm.html",
            {
                "run": run,
                "title": _cancel_question(spec, run),
                "text": CANCEL_TEXTS[spec.resumes_cancelled][1],
                "yes": gettext("Yes, cancel the run"),
                "no": gettext("Keep the run"),
                "action_url": _control_url(spec, run, action),
                "back_url": page,
            },
        )
    if request.method == "GET":
        return HttpResponseNotAllowed(["POST"])
    try:
        if action == "pause":
            run_pause(run=run)
        elif action == "resume":
            todo = run_resume(run=run)
            if spec.kind == RunKind.JUDGE:
                done = gettext("%(run)s resumed: %(n)s tasks left to do.")
            else:
                done = gettext("%(run)s resumed: %(n)s tasks reopened.")
            messages.success(request, done % {"run": _noun(spec, run), "n": todo})
        else:
            run_cancel(run=run)
            messages.success(
                request,
                gettext("%(run)s cancelled: calls already sent still finish and are billed; this page follows them.")
                % {"run": _noun(spec, run)},
            )
    except RunError as exc:
        messages.error(request, str(exc))
    return redirect(page)


@require_http_methods(["GET", "POST"])
@researcher_required
def run_control(request: HttpRequest, run_id: int, action: str) -> HttpResponse:
    run = _get_run(run_id)
    return _control(request, run_kind_of(run), run, action)


@require_http_methods(["GET", "POST"])
@researcher_required
def engine_run_control(request: HttpRequest, kind: str, run_id: int, action: str) -> HttpResponse:
    if kind == RunKind.JUDGE:
        return run_control(request, run_id, action)
    spec, run = _get_engine_run(kind, run_id)
    return _control(request, spec, run, action)
