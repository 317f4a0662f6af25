"""Read queries over runs: progress for the dashboard, the command line and the API."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import Count, Exists, Max, Min, OuterRef, Q, QuerySet, Sum
from django.utils import timezone

from arena.models import JudgeRun

from .call_cache import cache_hits
from .execution import drivers_alive, run_events, stale_seconds
from .models import RunEvent, RunKind, TaskStatus
from .steps import step_pending
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
    # calls under way (and billed, even after a pause or cancel): the tasks live drivers hold, at most as many as the run's
    # concurrency lets them send at once (a driver claims about two rounds ahead; the rest wait for a slot)
    in_flight: int = 0
    failed_calls: int = 0  # calls that ended in an HTTP error or timeout (retried, or the task failed)
    imported: bool = False  # verdicts imported from a release file: no model was called by this app
    cached: int = 0  # tasks answered from the call cache (jobs.call_cache): no call, no tokens, no cost
    step: str = ""  # the follow-up step a running run with every task done waits for (jobs.steps), as its page says it

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


def task_counts(tasks: QuerySet, **extra: Any) -> dict[str, Any]:
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
    tasks = task_counts(
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
    # Discarded answers were paid for too.
    cost = run_cost(run.parameters, prompt + (tasks["discarded_prompt"] or 0), completion + (tasks["discarded_completion"] or 0))
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
        **run_health(RunKind.JUDGE, run, tasks),
    )


def run_health(kind: str, run: Any, tasks: dict[str, Any]) -> dict[str, Any]:
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
    step = ""
    if run.status == JudgeRun.Status.RUNNING and not tasks["remaining"]:
        pending = step_pending(kind, run.pk)
        if pending is not None:
            step = f"Every task is done; the step that follows — {pending.title} — is under way: the run ends with it."
            if pending.last_error:
                reason = (
                    f"the step that follows ({pending.title}) did not finish (latest: {pending.last_error}); a worker's "
                    "watchdog tries it again: is a Celery worker running (celery -A lit2test_web worker)?"
                )
    return {
        "step": step,
        "calls": tasks["calls"] or 0,
        "discarded": tasks["discarded"] or 0,
        "failed_calls": tasks["failed_calls"] or 0,
        "in_flight": calls_in_flight(run, claimed=tasks["claimed"], drivers=alive),
        "discarded_prompt_tokens": tasks["discarded_prompt"] or 0,
        "discarded_completion_tokens": tasks["discarded_completion"] or 0,
        "drivers_alive": alive,
        "status_reason": reason,
        "cached": cache_hits(kind=kind, run=run),
    }


def calls_in_flight(run: Any, *, claimed: int, drivers: int) -> int:  # noqa: ANN401
    """How many calls of the run are under way: its claimed tasks while a driver is alive, but no more than its
    concurrency. Drivers claim about two rounds of tasks ahead so that calls never wait on the database; the calls
    themselves share the endpoint's slots, ``concurrency`` in all for the run's drivers together (a replay has no
    endpoint: each of its drivers sends up to ``concurrency`` answers at once)."""
    if not drivers:
        return 0
    concurrency = int((run.parameters or {}).get("concurrency") or 8)
    slots = concurrency * drivers if run.provider == JudgeRun.Provider.RECORDED else concurrency
    return min(claimed, slots)


def run_log(*, run: Any, limit: int = 20) -> list[RunEvent]:  # noqa: ANN401
    """The newest lines of a run's log, whatever its kind."""
    from .kinds import run_kind_of

    return run_events(kind=run_kind_of(run).kind, run_id=run.pk, limit=limit)


def engine_progress(*, kind: str, run: Any, tasks_qs: QuerySet, invalid: int = 0) -> Progress:  # noqa: ANN401
    """The progress of a run whose tasks keep their own tokens (``prompt_tokens`` and ``completion_tokens`` on the
    task: elicitation and scoring runs), with its cost when the run is priced (answers discarded after a takeover were
    paid for too). ``invalid`` of the done tasks stored nothing."""
    tasks = task_counts(tasks_qs, prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
    prompt, completion = tasks["prompt"] or 0, tasks["completion"] or 0
    errors = list(tasks_qs.exclude(last_error="").order_by("-updated_at").values_list("last_error", flat=True)[:5])
    return Progress(
        total=tasks["total"],
        done=tasks["done"],
        accepted=tasks["done"] - invalid,
        invalid=invalid,
        failed=tasks["failed"],
        remaining=tasks["remaining"],
        skipped=tasks["skipped"],
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=run_cost(
            run.parameters, prompt + (tasks["discarded_prompt"] or 0), completion + (tasks["discarded_completion"] or 0)
        ),
        eta_seconds=None,
        recent_errors=errors,
        status=run.status,
        replay=False,
        **run_health(kind, run, tasks),
    )


def priced(parameters: dict[str, Any]) -> bool:
    """Whether the run has prices, so that its tokens (and verdicts) have a cost."""
    return parameters.get("price_per_1k_prompt") is not None or parameters.get("price_per_1k_completion") is not None


def run_cost(parameters: dict[str, Any], prompt_tokens: int, completion_tokens: int) -> float | None:
    """What these tokens cost at the run's prices (US dollars per 1,000); None when the run is not priced."""
    p = parameters
    if not priced(p):
        return None
    return prompt_tokens / 1000 * float(p.get("price_per_1k_prompt") or 0) + completion_tokens / 1000 * float(
        p.get("price_per_1k_completion") or 0
    )
