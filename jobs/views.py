from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from arena.models import Benchmark, Context, JudgeRun, OrderedJudgment, Proposal
from arena.permissions import researcher_required
from arena.selectors import runs_agreement

from .forms import GenerationRunForm, JudgeRunForm
from .models import GenerationRun
from .prompts import PROMPTS, render_judge_task
from .selectors import generation_progress, run_log, run_progress
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


def _get_run(run_id: int) -> JudgeRun:
    return get_object_or_404(JudgeRun.objects.select_related("benchmark", "launched_by"), pk=run_id)


@require_GET
@researcher_required
def run_list(request: HttpRequest) -> HttpResponse:
    """All runs with live progress; the fragment polls itself while any run is active."""
    runs = list(JudgeRun.objects.select_related("benchmark").order_by("-created_at", "-id")[:100])
    rows = [(run, run_progress(run=run)) for run in runs]
    generations = [(g, generation_progress(run=g)) for g in GenerationRun.objects.select_related("benchmark")[:20]]
    live = any(r.status in JudgeRun.ACTIVE_STATUSES for r in runs) or any(g.status in JudgeRun.ACTIVE_STATUSES for g, _ in generations)
    context = {"rows": rows, "generations": generations, "live": live}
    template = "jobs/run_list.html#runs" if request.htmx else "jobs/run_list.html"
    return render(request, template, context)


@require_http_methods(["GET", "POST"])
@researcher_required
def run_new(request: HttpRequest) -> HttpResponse:
    newest = Benchmark.objects.order_by("-created_at", "-id").first()
    form = JudgeRunForm(request.POST or None, initial={"benchmark": request.GET.get("benchmark") or (newest.pk if newest else None)})
    offer_version: Benchmark | None = None
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        replay = d["replay_of"]
        req = JudgeRunRequest(
            benchmark=d["benchmark"], judge_model=d["judge_model"], base_url=d["base_url"] or "",
            provider=JudgeRun.Provider.RECORDED if replay else JudgeRun.Provider.OPENAI_COMPATIBLE, replay_of=replay,
            api_key_env=d["api_key_env"] or None, run_type=d["run_type"], prompt_version=d["prompt_version"] or None,
            pairs=d["pairs"], orders=tuple(d["orders"]), concurrency=d["concurrency"], rate_per_second=d["rate_per_second"],
            temperature=d["temperature"], max_tokens=d["max_tokens"], timeout=d["timeout"], canonical=d["canonical"],
            price_per_1k_prompt=d["price_per_1k_prompt"], price_per_1k_completion=d["price_per_1k_completion"],
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
            messages.success(request, f"Run {run.pk} launched: {run.tasks.count()} ordered tasks.{note}")
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


@require_GET
@researcher_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    """Progress, controls, and every ordered judgment with its rendered prompt, raw answer and parse result."""
    run = _get_run(run_id)
    progress = run_progress(run=run)
    active = run.status in JudgeRun.ACTIVE_STATUSES
    events = run_log(run=run)
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "jobs/run_detail.html#progress", {"run": run, "progress": progress, "active": active, "events": events})
    judgments = (
        OrderedJudgment.objects.filter(run=run)
        .select_related("pair__context", "pair__participant_a", "pair__participant_b", "shown_a", "winner")
        .order_by("-id")
    )
    page = Paginator(judgments, 25).get_page(request.GET.get("page"))
    template = PROMPTS.get(run.prompt_version)
    judgments_on_page = list(page)
    context_ids = {j.pair.context_id for j in judgments_on_page}
    contexts = {c.pk: c for c in Context.objects.filter(pk__in=context_ids, has_text=True).prefetch_related("papers")}
    proposals: dict[int, dict[int, Proposal]] = {}
    for p in Proposal.objects.filter(context_id__in=contexts):
        proposals.setdefault(p.context_id, {})[p.participant_id] = p
    items = []
    for j in judgments_on_page:
        prompt = None
        by_participant = proposals.get(j.pair.context_id, {})
        if template is not None and j.pair.participant_a_id in by_participant and j.pair.participant_b_id in by_participant:
            j.pair.context = contexts[j.pair.context_id]
            prompt = render_judge_task(pair=j.pair, order=j.order, template=template, proposals=by_participant)
        items.append((j, prompt))
    others = run.benchmark.runs.exclude(pk=run.pk).order_by("-is_canonical", "-created_at")
    return render(
        request, "jobs/run_detail.html",
        {"run": run, "progress": progress, "active": active, "page": page, "items": items, "others": others, "events": events},
    )


@require_POST
@researcher_required
def run_control(request: HttpRequest, run_id: int, action: str) -> HttpResponse:
    run = _get_run(run_id)
    try:
        if action == "pause":
            judge_run_pause(run=run)
        elif action == "resume":
            todo = judge_run_resume(run=run)
            messages.success(request, f"Run {run.pk} resumed: {todo} tasks left to do.")
        elif action == "cancel":
            judge_run_cancel(run=run)
        else:
            return HttpResponse(status=404)
    except RunError as exc:
        messages.error(request, str(exc))
    return redirect("jobs:run", run_id=run.pk)


@require_GET
@researcher_required
def run_compare(request: HttpRequest, run_id: int, other_id: int) -> HttpResponse:
    first, second = _get_run(run_id), _get_run(other_id)
    if first.benchmark_id != second.benchmark_id:
        return render(request, "jobs/run_compare.html", {"error": "The two runs belong to different benchmarks."}, status=400)
    return render(request, "jobs/run_compare.html", {"first": first, "second": second, "agreement": runs_agreement(first=first, second=second)})


@require_http_methods(["GET", "POST"])
@researcher_required
def generation_new(request: HttpRequest) -> HttpResponse:
    form = GenerationRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            run = generation_run_create(
                benchmark=d["benchmark"], base_url=d["base_url"], api_key_env=d["api_key_env"] or None, contexts=d["contexts"],
                temperature=d["temperature"], max_tokens=d["max_tokens"], concurrency=d["concurrency"], launched_by=request.user,
            )
            generation_run_launch(run=run)
        except RunError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Generation run {run.pk} launched: {run.tasks.count()} proposals to elicit.")
            return redirect("jobs:runs")
    return render(request, "jobs/generation_new.html", {"form": form})
