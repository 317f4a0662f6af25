"""Read queries over runs: progress for the dashboard, the command line and the API."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import Count, Max, Min, Q, QuerySet, Sum
from django.utils import timezone

from arena.models import JudgeRun, OrderedJudgment

from .models import GenerationRun, GenerationTask, JudgeTask, TaskStatus


@dataclass
class Progress:
    total: int
    done: int
    accepted: int
    invalid: int
    failed: int
    remaining: int
    skipped: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    eta_seconds: float | None
    recent_errors: list[str]
    status: str
    replay: bool

    @property
    def fraction(self) -> float:
        return (self.done + self.failed) / self.total if self.total else 1.0

    def as_dict(self) -> dict:
        return asdict(self) | {"fraction": self.fraction}


def _eta(done: int, remaining: int, first, last) -> float | None:  # noqa: ANN001
    if not done or not remaining or first is None or last is None:
        return None
    elapsed = max((timezone.now() - first).total_seconds(), (last - first).total_seconds(), 1e-3)
    return remaining * elapsed / done


def _task_counts(tasks: QuerySet, **extra: Any) -> dict[str, Any]:
    """Task totals by state in one query (plus any extra aggregates)."""
    return tasks.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(status=TaskStatus.DONE)),
        failed=Count("id", filter=Q(status=TaskStatus.FAILED)),
        remaining=Count("id", filter=Q(status__in=[TaskStatus.PENDING, TaskStatus.CLAIMED])),
        skipped=Count("id", filter=Q(status=TaskStatus.SKIPPED)),
        **extra,
    )


def run_progress(*, run: JudgeRun) -> Progress:
    tasks = _task_counts(JudgeTask.objects.filter(run=run))
    judgments = OrderedJudgment.objects.filter(run=run).aggregate(
        accepted=Count("id", filter=Q(status="accepted")),
        invalid=Count("id", filter=Q(status="invalid")),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        first=Min("created_at"),
        last=Max("created_at"),
    )
    if not tasks["total"]:  # an imported run has judgments but no task list
        tasks |= {"total": judgments["accepted"] + judgments["invalid"], "done": judgments["accepted"] + judgments["invalid"]}
    prompt, completion = judgments["prompt"] or 0, judgments["completion"] or 0
    p = run.parameters
    cost = None
    if p.get("price_per_1k_prompt") is not None or p.get("price_per_1k_completion") is not None:
        cost = prompt / 1000 * float(p.get("price_per_1k_prompt") or 0) + completion / 1000 * float(p.get("price_per_1k_completion") or 0)
    errors = list(
        JudgeTask.objects.filter(run=run).exclude(last_error="").order_by("-updated_at").values_list("last_error", flat=True)[:5]
    )
    return Progress(
        total=tasks["total"], done=tasks["done"], accepted=judgments["accepted"], invalid=judgments["invalid"],
        failed=tasks["failed"], remaining=tasks["remaining"], skipped=tasks["skipped"], prompt_tokens=prompt,
        completion_tokens=completion, cost=cost, eta_seconds=_eta(tasks["done"], tasks["remaining"], judgments["first"], judgments["last"]),
        recent_errors=errors, status=run.status, replay=run.provider == JudgeRun.Provider.RECORDED,
    )


def generation_progress(*, run: GenerationRun) -> Progress:
    tasks = _task_counts(GenerationTask.objects.filter(run=run), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
    errors = list(GenerationTask.objects.filter(run=run).exclude(last_error="").values_list("last_error", flat=True)[:5])
    return Progress(
        total=tasks["total"], done=tasks["done"], accepted=tasks["done"], invalid=0, failed=tasks["failed"],
        remaining=tasks["remaining"], skipped=tasks["skipped"], prompt_tokens=tasks["prompt"] or 0,
        completion_tokens=tasks["completion"] or 0, cost=None, eta_seconds=None, recent_errors=errors, status=run.status, replay=False,
    )
