from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from arena.models import Benchmark, Context, JudgeRun, Proposal
from arena.permissions import researcher_required
from arena.selectors import runs_agreement

from .elicitation import elicit_runs_listed
from .forms import GenerationRunForm, JudgeRunForm
from .models import GenerationRun
from .prompts import PROMPTS, render_judge_task
from .selectors import (
    STABILITY_CHOICES,
    Progress,
    generation_progress,
    judgments_stability,
    run_judgments,
    run_log,
    run_progress,
    run_tasks_by_key,
)
from .services import (
    JudgeRunRequest,
    RunError,
    benchmark_new_version,
    generation_run_create,
    generation_run_launch,
    judge_run_cancel,
    judge_run_create,
    judge_run_launch,
    judge_run_pause,
    judge_run_resume,
)
from .subjects import subjects_of

#: Runs of other kinds for the runs page's second table, registered by the apps that own them (an Intrinsic scoring
#: run, say): each callable takes a limit and gives its newest runs as (title, run, progress).
RUN_LISTINGS: list[Callable[[int], list[tuple[str, Any, Progress]]]] = []


def run_listing_register(listed: Callable[[int], list[tuple[str, Any, Progress]]]) -> None:
    if listed not in RUN_LISTINGS:
        RUN_LISTINGS.append(listed)


def _elicitations_listed(limit: int) -> list[tuple[str, Any, Progress]]:
    """Every protocol's elicitation runs (HypoArena submissions, Reconstruction proposals ...)."""
    return [(kind.title, g, p) for kind, g, p in elicit_runs_listed(limit)]


run_listing_register(_elicitations_listed)


def _get_run(run_id: int) -> JudgeRun:
    return get_object_or_404(JudgeRun.objects.select_related("benchmark", "launched_by"), pk=run_id)


@require_GET
@researcher_required
def run_list(request: HttpRequest) -> HttpResponse:
    """All runs with live progress; the fragment polls itself until every run has settled (ended, no call in flight)."""
    runs = list(JudgeRun.objects.select_related("benchmark").order_by("-created_at", "-id")[:100])
    rows = [(run, run_progress(run=run)) for run in runs]
    generations = [
        ("Lit2Test generation", g, generation_progress(run=g)) for g in GenerationRun.objects.select_related("benchmark")[:20]
    ]
    # Every protocol's other runs (elicitation, Intrinsic scoring ...) share the table.
    for listed in RUN_LISTINGS:
        generations += listed(20)
    live = any(not p.settled for _, p in rows) or any(not p.settled for _, _, p in generations)
    context = {"rows": rows, "generations": generations, "live": live}
    template = "jobs/run_list.html#runs" if request.htmx else "jobs/run_list.html"
    return render(request, template, context)


@require_http_methods(["GET", "POST"])
@researcher_required
def run_new(request: HttpRequest) -> HttpResponse:
    newest = Benchmark.objects.order_by("-created_at", "-id").first()
    form = JudgeRunForm(
        request.POST or None, initial={"benchmark": request.GET.get("benchmark") or (newest.pk if newest else None)}
    )
    offer_version: Benchmark | None = None
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        replay = d["replay_of"]
        req = JudgeRunRequest(
            benchmark=d["benchmark"],
            judge_model=d["judge_model"],
            base_url=d["base_url"] or "",
            provider=JudgeRun.Provider.RECORDED if replay else JudgeRun.Provider.OPENAI_COMPATIBLE,
            replay_of=replay,
            api_key_env=d["api_key_env"] or None,
            run_type=d["run_type"],
            task_kind=d["task_kind"],
            prompt_version=d["prompt_version"] or None,
            pairs=d["pairs"],
            orders=tuple(d["orders"]),
            concurrency=d["concurrency"],
            rate_per_second=d["rate_per_second"],
            temperature=d["temperature"],
            max_tokens=d["max_tokens"],
            timeout=d["timeout"],
            canonical=d["canonical"],
            price_per_1k_prompt=d["price_per_1k_prompt"],
            price_per_1k_completion=d["price_per_1k_completion"],
            options={"judge_family": d["judge_family"].strip()} if d["judge_family"].strip() else {},
        )
        try:
            run, skipped = judge_run_create(request=req, launched_by=request.user)
            judge_run_launch(run=run)
        except RunError as exc:
            form.add_error(None, str(exc))
            if "new benchmark version" in str(exc):
                offer_version = d["benchmark"]
        else:
            note = f" {skipped} pairs were skipped because their proposals have no text." if skipped else ""
            unit = "ordered tasks" if subjects_of(run).ordered else "tasks"
            messages.success(
                request, f"Run {run.pk} launched: {subjects_of(run).task_model.objects.filter(run=run).count()} {unit}.{note}"
            )
            return redirect("jobs:run", run_id=run.pk)
    return render(request, "jobs/run_new.html", {"form": form, "offer_version": offer_version})


@require_POST
@researcher_required
def benchmark_version_new(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    try:
        new = benchmark_new_version(benchmark=benchmark)
    except RunError as exc:
        messages.error(request, str(exc))
        return redirect("arena:benchmark", benchmark_id=benchmark.pk)
    messages.success(request, f"Created {new}: same contexts, proposals and pairs, no runs. Launch its canonical judge now.")
    return redirect(f"{reverse('jobs:run-new')}?benchmark={new.pk}")


class JudgmentFilterForm(forms.Form):
    """The run page's filters (GET parameters); a value that is not a choice is ignored."""

    winner = forms.ChoiceField(required=False)
    order = forms.ChoiceField(required=False, choices=[("", "any order"), ("original", "original"), ("reverse", "reverse")])
    stability = forms.ChoiceField(
        required=False,
        label="Pair",
        choices=[("", "any pair"), *((s, f"order-{s}" if s != "incomplete" else s) for s in STABILITY_CHOICES)],
    )
    status = forms.ChoiceField(
        required=False, label="Answer", choices=[("", "any answer"), ("accepted", "accepted"), ("invalid", "invalid")]
    )

    def __init__(self, data: object, *, run: JudgeRun) -> None:
        super().__init__(data)
        participants = run.benchmark.participants.order_by("name").values_list("pk", "name")
        self.fields["winner"].choices = [("", "any winner"), ("tie", "TIE"), *((str(pk), name) for pk, name in participants)]

    def values(self) -> dict[str, str]:
        """The valid filters; an invalid parameter counts as absent."""
        self.is_valid()
        return {name: self.cleaned_data.get(name) or "" for name in self.fields if name not in self.errors}


def _progress_context(run: JudgeRun) -> dict[str, object]:
    progress = run_progress(run=run)
    return {
        "run": run,
        "progress": progress,
        "events": run_log(run=run),
        "active": run.status in JudgeRun.ACTIVE_STATUSES,
        # Poll until nothing can change: after a pause or cancel, calls in flight still return and are billed.
        "live": not progress.settled,
    }


@require_GET
@researcher_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    """Progress, controls, and every ordered judgment with its context, both proposals' models, rendered prompt,
    raw answer, parse result and calls, filtered by winner, order, stability and answer status."""
    run = _get_run(run_id)
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "jobs/run_detail.html#progress", _progress_context(run))
    if run.subjects != JudgeRun.Subjects.PAIRS:
        return _subject_run_detail(request, run)
    filters = JudgmentFilterForm(request.GET, run=run)
    judgments = run_judgments(run=run, **filters.values()).select_related(
        "pair__context__batch", "pair__participant_a", "pair__participant_b", "shown_a", "winner"
    )
    page = Paginator(judgments, 25).get_page(request.GET.get("page"))
    template = PROMPTS.get(run.prompt_version)
    judgments_on_page = list(page)
    context_ids = {j.pair.context_id for j in judgments_on_page}
    contexts = {
        c.pk: c
        for c in Context.objects.filter(pk__in=context_ids, has_text=True).select_related("batch").prefetch_related("papers")
    }
    proposals: dict[int, dict[int, Proposal]] = {}
    for p in Proposal.objects.filter(context_id__in=contexts):
        proposals.setdefault(p.context_id, {})[p.participant_id] = p
    tasks = run_tasks_by_key(run=run, pair_ids={j.pair_id for j in judgments_on_page})
    stability = judgments_stability(run=run, pair_ids={j.pair_id for j in judgments_on_page})
    items = []
    for j in judgments_on_page:
        j.stability = stability[j.pair_id]
        prompt = None
        by_participant = proposals.get(j.pair.context_id, {})
        if j.pair.context_id in contexts:
            j.pair.context = contexts[j.pair.context_id]
        if template is not None and j.pair.participant_a_id in by_participant and j.pair.participant_b_id in by_participant:
            prompt = render_judge_task(pair=j.pair, order=j.order, template=template, proposals=by_participant)
        items.append((j, prompt, tasks.get((j.pair_id, j.order))))
    others = run.benchmark.runs.filter(subjects=run.subjects).exclude(pk=run.pk).order_by("-is_canonical", "-created_at")
    filtered = any(filters.values().values())
    return render(
        request,
        "jobs/run_detail.html",
        _progress_context(run) | {"page": page, "items": items, "others": others, "filters": filters, "filtered": filtered},
    )


def _subject_run_detail(request: HttpRequest, run: JudgeRun) -> HttpResponse:
    """The page of a run that judged something other than the leaderboard's pairs (diagnostic controls): progress,
    controls and its verdicts, each with what was compared; the figures are on that subject's own report page."""
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
    return render(
        request,
        "jobs/run_detail.html",
        _progress_context(run)
        | {
            "subject_run": True,
            "subject_page": page,
            "subject_rows": rows,
            "subjects": run.get_subjects_display(),
            "others": others,
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


@require_GET
@researcher_required
def run_compare(request: HttpRequest, run_id: int, other_id: int) -> HttpResponse:
    first, second = _get_run(run_id), _get_run(other_id)
    if first.benchmark_id != second.benchmark_id:
        return render(request, "jobs/run_compare.html", {"error": "The two runs belong to different benchmarks."}, status=400)
    return render(
        request,
        "jobs/run_compare.html",
        {"first": first, "second": second, "agreement": runs_agreement(first=first, second=second)},
    )


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
            messages.success(request, f"Generation run {run.pk} launched: {run.tasks.count()} proposals to elicit.")
            return redirect("jobs:runs")
    return render(request, "jobs/generation_new.html", {"form": form})
