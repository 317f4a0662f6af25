"""Read queries over runs: progress for the dashboard, the command line and the API."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import Count, Exists, F, Max, Min, OuterRef, Q, QuerySet, Subquery, Sum
from django.utils import timezone

from arena.models import JudgeRun, OrderedJudgment

from .execution import drivers_alive, run_events, stale_seconds
from .models import GenerationRun, GenerationTask, JudgeTask, RunEvent, RunKind, TaskStatus
from .subjects import subjects_of


@dataclass
class Progress:
    """A run's counts. ``done`` tasks have a stored judgment, ``accepted`` or ``invalid`` (done = accepted +
    invalid); ``failed`` tasks have none (the endpoint gave up; resume retries them); ``remaining`` are pending or
    in flight; ``skipped`` were cancelled before any call. total = done + failed + remaining + skipped."""

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
    calls: int = 0  # HTTP calls started, all attempts, counted before they were sent
    discarded: int = 0  # answers received but not stored (their task had passed to another driver, or the run ended)
    discarded_prompt_tokens: int = 0
    discarded_completion_tokens: int = 0
    drivers_alive: int = 0
    status_reason: str = ""  # why the run failed, or what is wrong while it runs (no worker, say)
    in_flight: int = 0  # tasks a live driver holds: their calls are under way (and billed) even after a pause or cancel
    failed_calls: int = 0  # calls that ended in an HTTP error or timeout (retried, or the task failed)
    imported: bool = False  # verdicts imported from a release file: no model was called by this app

    @property
    def settled(self) -> bool:
        """Nothing will change any more: the run has ended and no call of it is in flight."""
        return self.status not in JudgeRun.ACTIVE_STATUSES and not self.in_flight

    @property
    def fraction(self) -> float:
        return (self.done + self.failed) / self.total if self.total else 1.0

    def as_dict(self) -> dict:
        return asdict(self) | {"fraction": self.fraction, "settled": self.settled}


def _eta(done: int, remaining: int, first, last) -> float | None:  # noqa: ANN001
    if not done or not remaining or first is None or last is None:
        return None
    elapsed = max((timezone.now() - first).total_seconds(), (last - first).total_seconds(), 1e-3)
    return remaining * elapsed / done


def _task_counts(tasks: QuerySet, **extra: Any) -> dict[str, Any]:
    """Task totals by state and what they cost, in one query (plus any extra aggregates)."""
    return tasks.aggregate(
        total=Count("id"),
        calls=Sum("calls"),
        failed_calls=Sum("failed_calls"),
        discarded=Sum("discarded"),
        discarded_prompt=Sum("discarded_prompt_tokens"),
        discarded_completion=Sum("discarded_completion_tokens"),
        done=Count("id", filter=Q(status=TaskStatus.DONE)),
        failed=Count("id", filter=Q(status=TaskStatus.FAILED)),
        remaining=Count("id", filter=Q(status__in=[TaskStatus.PENDING, TaskStatus.CLAIMED])),
        claimed=Count("id", filter=Q(status=TaskStatus.CLAIMED)),
        skipped=Count("id", filter=Q(status=TaskStatus.SKIPPED)),
        **extra,
    )


def run_progress(*, run: JudgeRun) -> Progress:
    # Accepted and invalid are counted over the done tasks in the same query as the task states (one snapshot):
    # counted in a second query, a batch stored between the two showed "8 done (9 accepted, ...)".
    kind = subjects_of(run)
    subject = f"{kind.subject_field}_id"
    has_accepted = Exists(
        kind.judgment_model.objects.filter(
            run_id=OuterRef("run_id"), order=OuterRef("order"), status="accepted", **{subject: OuterRef(subject)}
        )
    )
    tasks = _task_counts(
        kind.task_model.objects.filter(run=run).annotate(has_accepted=has_accepted),
        accepted=Count("id", filter=Q(status=TaskStatus.DONE, has_accepted=True)),
    )
    tasks["invalid"] = tasks["done"] - tasks["accepted"]
    judgments = kind.judgment_model.objects.filter(run=run).aggregate(
        accepted=Count("id", filter=Q(status="accepted")),
        invalid=Count("id", filter=Q(status="invalid")),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        first=Min("created_at"),
        last=Max("created_at"),
    )
    imported = run.is_imported
    if not tasks["total"]:  # an imported run has judgments but no task list
        done = judgments["accepted"] + judgments["invalid"]
        tasks |= {"total": done, "done": done, "accepted": judgments["accepted"], "invalid": judgments["invalid"]}
    prompt, completion = judgments["prompt"] or 0, judgments["completion"] or 0
    p = run.parameters
    cost = None
    if p.get("price_per_1k_prompt") is not None or p.get("price_per_1k_completion") is not None:
        # Discarded answers were paid for too.
        paid_in, paid_out = prompt + (tasks["discarded_prompt"] or 0), completion + (tasks["discarded_completion"] or 0)
        cost = paid_in / 1000 * float(p.get("price_per_1k_prompt") or 0) + paid_out / 1000 * float(
            p.get("price_per_1k_completion") or 0
        )
    errors = list(
        kind.task_model.objects.filter(run=run)
        .exclude(last_error="")
        .order_by("-updated_at")
        .values_list("last_error", flat=True)[:5]
    )
    # Only a running run has an ETA: a paused one waits for the researcher, an ended one for nothing.
    eta = (
        _eta(tasks["done"], tasks["remaining"], judgments["first"], judgments["last"])
        if run.status == JudgeRun.Status.RUNNING
        else None
    )
    return Progress(
        total=tasks["total"],
        done=tasks["done"],
        accepted=tasks["accepted"],
        invalid=tasks["invalid"],
        failed=tasks["failed"],
        remaining=tasks["remaining"],
        skipped=tasks["skipped"],
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost,
        eta_seconds=eta,
        recent_errors=errors,
        status=run.status,
        replay=run.is_replay,
        imported=imported,
        **_health(RunKind.JUDGE, run, tasks),
    )


def _health(kind: str, run: JudgeRun | GenerationRun, tasks: dict[str, Any]) -> dict[str, Any]:
    """Costs beyond the stored answers, live drivers and their calls in flight, and the reason a run failed or is stuck.

    Drivers are counted whatever the status: after a pause or a cancel the calls already sent still come back
    (and are paid for), and the page keeps updating until they have.
    """
    alive = drivers_alive(kind=kind, run_id=run.pk) if tasks["claimed"] or run.status == JudgeRun.Status.RUNNING else 0
    reason = ""
    if run.status == JudgeRun.Status.FAILED:
        latest = (
            RunEvent.objects.filter(kind=kind, run_id=run.pk, level=RunEvent.Level.ERROR).order_by("-created_at", "-id").first()
        )
        reason = latest.message if latest else ""
    elif run.status == JudgeRun.Status.RUNNING and not alive and tasks["remaining"]:
        latest = RunEvent.objects.filter(kind=kind, run_id=run.pk).order_by("-created_at", "-id").first()
        # A driver needs a moment to be taken up; only a quiet spell longer than a heartbeat gap is news.
        if latest is None or (timezone.now() - latest.created_at).total_seconds() > stale_seconds():
            since = f" (last: {latest.message})" if latest and latest.level != RunEvent.Level.INFO else ""
            reason = (
                "no worker is working on this run right now" + since + ": is a Celery worker running "
                "(celery -A lit2test_web worker)? A worker's watchdog takes the run up within a minute of starting."
            )
    return {
        "calls": tasks["calls"] or 0,
        "discarded": tasks["discarded"] or 0,
        "failed_calls": tasks["failed_calls"] or 0,
        "in_flight": tasks["claimed"] if alive else 0,
        "discarded_prompt_tokens": tasks["discarded_prompt"] or 0,
        "discarded_completion_tokens": tasks["discarded_completion"] or 0,
        "drivers_alive": alive,
        "status_reason": reason,
    }


def run_log(*, run: JudgeRun | GenerationRun, limit: int = 20) -> list[RunEvent]:
    kind = RunKind.JUDGE if isinstance(run, JudgeRun) else RunKind.GENERATION
    return run_events(kind=kind, run_id=run.pk, limit=limit)


def generation_progress(*, run: GenerationRun) -> Progress:
    tasks = _task_counts(GenerationTask.objects.filter(run=run), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
    errors = list(GenerationTask.objects.filter(run=run).exclude(last_error="").values_list("last_error", flat=True)[:5])
    return Progress(
        total=tasks["total"],
        done=tasks["done"],
        accepted=tasks["done"],
        invalid=0,
        failed=tasks["failed"],
        remaining=tasks["remaining"],
        skipped=tasks["skipped"],
        prompt_tokens=tasks["prompt"] or 0,
        completion_tokens=tasks["completion"] or 0,
        cost=None,
        eta_seconds=None,
        recent_errors=errors,
        status=run.status,
        replay=False,
        **_health(RunKind.GENERATION, run, tasks),
    )


STABILITY_CHOICES = ("stable", "sensitive", "incomplete")


def _pair_outcomes(run: JudgeRun) -> QuerySet:
    """Per pair of the run, one GROUP BY row: accepted verdicts in each order and each order's winner (the database
    keeps at most one accepted verdict per pair and order)."""
    accepted = OrderedJudgment.objects.filter(run_id=run.pk, status=OrderedJudgment.Status.ACCEPTED)
    return (
        accepted.values("pair_id")
        .annotate(
            original_n=Count("id", filter=Q(order="original")),
            reverse_n=Count("id", filter=Q(order="reverse")),
            original_w=Max("winner_id", filter=Q(order="original")),
            reverse_w=Max("winner_id", filter=Q(order="reverse")),
        )
        .order_by()
    )


def _stable(outcomes: QuerySet) -> QuerySet:
    return outcomes.filter(original_n__gt=0, reverse_n__gt=0, original_w__isnull=False, original_w=F("reverse_w"))


def _complete(outcomes: QuerySet) -> QuerySet:
    return outcomes.filter(original_n__gt=0, reverse_n__gt=0)


def judgments_stability(*, run: JudgeRun, pair_ids: set[int]) -> dict[int, str]:
    """The ``stability`` of these pairs in this run (see :func:`run_judgments`), in one grouped query."""
    out = dict.fromkeys(pair_ids, "incomplete")
    for row in _pair_outcomes(run).filter(pair_id__in=pair_ids):
        if row["original_n"] and row["reverse_n"]:
            same = row["original_w"] is not None and row["original_w"] == row["reverse_w"]
            out[row["pair_id"]] = "stable" if same else "sensitive"
    return out


def run_judgments(
    *, run: JudgeRun, winner: str = "", order: str = "", stability: str = "", status: str = ""
) -> QuerySet[OrderedJudgment]:
    """The run's ordered judgments, newest first, filtered; :func:`judgments_stability` gives a page's stability.

    ``winner``: a participant id, or ``"tie"``; ``order``: original | reverse; ``stability``: stable (both orders
    accepted and naming the same model), sensitive (both accepted, the winner flips or either says TIE) or
    incomplete (an order has no accepted verdict yet, or only an invalid one); ``status``: accepted | invalid.
    Empty values do not filter.

    The stability filter is one uncorrelated, grouped subquery over the run's accepted verdicts (linear in the run):
    per-row correlated subqueries were planned as nested sequential scans on a table that had not been analysed yet
    (right after a release import), and a 2,400-verdict run page took minutes.
    """
    judgments = OrderedJudgment.objects.filter(run=run)
    outcomes = _pair_outcomes(run)
    if stability == "stable":
        judgments = judgments.filter(pair_id__in=Subquery(_stable(outcomes).values("pair_id")))
    elif stability == "sensitive":
        judgments = judgments.filter(pair_id__in=Subquery(_complete(outcomes).values("pair_id"))).exclude(
            pair_id__in=Subquery(_stable(outcomes).values("pair_id"))
        )
    elif stability == "incomplete":
        judgments = judgments.exclude(pair_id__in=Subquery(_complete(outcomes).values("pair_id")))
    if winner == "tie":
        judgments = judgments.filter(status=OrderedJudgment.Status.ACCEPTED, is_tie=True)
    elif winner:
        judgments = judgments.filter(winner_id=int(winner))
    if order:
        judgments = judgments.filter(order=order)
    if status:
        judgments = judgments.filter(status=status)
    return judgments.order_by("-id")


def run_tasks_by_key(*, run: JudgeRun, pair_ids: set[int]) -> dict[tuple[int, str], JudgeTask]:
    """The run's tasks of these pairs by (pair id, order): calls and failed calls of each judgment."""
    return {(t.pair_id, t.order): t for t in JudgeTask.objects.filter(run=run, pair_id__in=pair_ids)}
