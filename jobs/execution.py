"""What every run kind shares when it executes: claims and leases, driver liveness, the call
ledger, the run's event log, failing a run with its reason, and the watchdog.

A run kind (``jobs.kinds``) says which models hold its runs and tasks, how to enqueue a driver and
how to close a run whose work is done. This module knows nothing about what a task is about.

Liveness: a driver writes a ``RunDriver`` row before it claims anything and renews it (with the
leases of the tasks it holds) every heartbeat. A claim is taken over when its lease ran out or
when the driver holding it is no longer alive, so a dead worker's work is redone once and at once.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connections, models, router, transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from arena.models import JudgeRun

from .kinds import run_kinds
from .models import RunDriver, RunEvent, TaskStatus

log = logging.getLogger(__name__)

RUNNING = JudgeRun.Status.RUNNING
OPEN = (TaskStatus.PENDING, TaskStatus.CLAIMED)
LAUNCH_CODES = ("launched", "resumed", "relaunched")


def _setting(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


def lease_seconds() -> float:
    """How long a claim lasts without its driver's heartbeat (default for new runs)."""
    return _setting("LIT2TEST_LEASE_SECONDS", 60)


def heartbeat_seconds() -> float:
    return _setting("LIT2TEST_HEARTBEAT_SECONDS", 5)


def stale_seconds() -> float:
    """A driver not heard from for this long is taken for dead."""
    return _setting("LIT2TEST_DRIVER_STALE_SECONDS", 30)


def relaunch_backoff_seconds() -> float:
    """How long a launch may wait in the broker's queue before the watchdog launches again."""
    return _setting("LIT2TEST_RELAUNCH_BACKOFF_SECONDS", 120)


def db_patience_seconds() -> float:
    return _setting("LIT2TEST_DB_PATIENCE_SECONDS", 300)


def worker_identity() -> str:
    return f"{socket.gethostname()} pid {os.getpid()}"


# --------------------------------------------------------------------------- events


def run_event_add(*, kind: str, run_id: int, code: str, message: str, level: str = RunEvent.Level.INFO) -> None:
    RunEvent.objects.create(kind=kind, run_id=run_id, code=code, message=message, level=level)
    getattr(log, "error" if level == RunEvent.Level.ERROR else "warning" if level == RunEvent.Level.WARNING else "info")(
        "%s run %s: %s", kind, run_id, message
    )


def run_events(*, kind: str, run_id: int, limit: int = 20) -> list[RunEvent]:
    return list(RunEvent.objects.filter(kind=kind, run_id=run_id).order_by("-created_at", "-id")[:limit])


def run_fail(*, kind: str, run_id: int, reason: str, code: str = "failed") -> bool:
    """Mark a running (or paused) run failed with its reason; False if it had already ended."""
    spec = run_kinds[kind]
    with transaction.atomic():
        changed = spec.run_model.objects.filter(pk=run_id, status__in=[RUNNING, JudgeRun.Status.PAUSED]).update(
            status=JudgeRun.Status.FAILED, finished_at=timezone.now()
        )
        if changed:
            run_event_add(kind=kind, run_id=run_id, code=code, message=reason, level=RunEvent.Level.ERROR)
    return bool(changed)


# --------------------------------------------------------------------------- drivers and claims


def driver_register(*, kind: str, run_id: int, token: str) -> None:
    RunDriver.objects.create(kind=kind, run_id=run_id, token=token, worker=worker_identity(), seen_at=timezone.now())


def driver_end(*, token: str, outcome: str) -> None:
    RunDriver.objects.filter(token=token).update(ended_at=timezone.now(), outcome=outcome[:200])


def _live_tokens(kind: str, run_id: int, now: datetime) -> models.QuerySet:
    return RunDriver.objects.filter(
        kind=kind, run_id=run_id, ended_at__isnull=True, seen_at__gte=now - timedelta(seconds=stale_seconds())
    ).values("token")


def drivers_alive(*, kind: str, run_id: int) -> int:
    return _live_tokens(kind, run_id, timezone.now()).count()


def _abandoned(kind: str, run_id: int, now: datetime) -> Q:
    """Claims whose lease ran out or whose driver is gone."""
    expired = Q(lease_until__isnull=True) | Q(lease_until__lt=now) | ~Q(claimed_by__in=_live_tokens(kind, run_id, now))
    return Q(status=TaskStatus.CLAIMED) & expired


def _claimable(kind: str, run_id: int, now: datetime) -> Q:
    return Q(status=TaskStatus.PENDING) | _abandoned(kind, run_id, now)


def tasks_claim(
    *, kind: str, task_model: type[models.Model], run_id: int, token: str, lease: float, n: int, held: frozenset[int]
) -> list[int]:
    """Take up to n claimable tasks, never one this driver holds already. One claimer wins each task."""
    now = timezone.now()
    claimable = _claimable(kind, run_id, now)
    with transaction.atomic():
        ids_free = list(
            task_model.objects.select_for_update(skip_locked=True)
            .filter(run_id=run_id)
            .filter(claimable)
            .exclude(id__in=held)
            .order_by("id")
            .values_list("id", flat=True)[:n]
        )
        if not ids_free:
            return []
        task_model.objects.filter(id__in=ids_free).filter(claimable).update(
            status=TaskStatus.CLAIMED, claimed_by=token, lease_until=now + timedelta(seconds=lease)
        )
        return list(
            task_model.objects.filter(id__in=ids_free, claimed_by=token, status=TaskStatus.CLAIMED).values_list("id", flat=True)
        )


def driver_heartbeat(*, task_model: type[models.Model], token: str, lease: float, held: list[int]) -> None:
    """Renew the leases of the tasks this driver holds, and its own liveness."""
    now = timezone.now()
    with transaction.atomic():
        if held:
            task_model.objects.filter(id__in=held, claimed_by=token, status=TaskStatus.CLAIMED).update(
                lease_until=now + timedelta(seconds=lease)
            )
        RunDriver.objects.filter(token=token).update(seen_at=now)


def tasks_open_elsewhere(*, task_model: type[models.Model], run_id: int, held: frozenset[int]) -> bool:
    return task_model.objects.filter(run_id=run_id, status__in=OPEN).exclude(id__in=held).exists()


def calls_count(*, task_model: type[models.Model], counts: dict[int, int]) -> None:
    """Add calls about to be made; one UPDATE per distinct count (almost always one: then no transaction is opened,
    the single statement being atomic by itself).

    Plain SQL: every group of calls waits for this write before it is sent, hundreds of times a minute per driver,
    and compiling the ORM's ``update(calls=F("calls") + n)`` (with its transaction) cost seven times the statement."""
    by_count: dict[int, list[int]] = defaultdict(list)
    for task_id, n in counts.items():
        by_count[n].append(task_id)
    connection = connections[router.db_for_write(task_model)]
    quote = connection.ops.quote_name
    meta = task_model._meta
    calls = quote(meta.get_field("calls").column)
    update = f"UPDATE {quote(meta.db_table)} SET {calls} = {calls} + %s WHERE {quote(meta.pk.column)} IN "

    def execute() -> None:
        with connection.cursor() as cursor:
            for n, ids in by_count.items():
                cursor.execute(update + f"({', '.join(['%s'] * len(ids))})", [n, *ids])

    if len(by_count) > 1:
        with transaction.atomic(using=connection.alias):
            execute()
    else:
        execute()


def calls_failed_record(*, task_model: type[models.Model], failures: dict[int, tuple[int, str]]) -> None:
    """Add calls that ended in an HTTP error or timeout, with the latest error, to their tasks."""
    with transaction.atomic():
        for task_id, (n, message) in failures.items():
            task_model.objects.filter(id=task_id).update(failed_calls=F("failed_calls") + n, last_call_error=message[:2000])


def answer_discard(*, task_model: type[models.Model], task_id: int, prompt_tokens: int, completion_tokens: int) -> None:
    """Count an answer that came back but cannot be stored (its task is someone else's now, or the run ended)."""
    task_model.objects.filter(id=task_id).update(
        discarded=F("discarded") + 1,
        discarded_prompt_tokens=F("discarded_prompt_tokens") + max(0, prompt_tokens),
        discarded_completion_tokens=F("discarded_completion_tokens") + max(0, completion_tokens),
    )


def tasks_reclaim(*, kind: str, task_model: type[models.Model], run_id: int) -> int:
    """For a resume: failed tasks, and claims whose lease ran out or whose driver is gone, become pending."""
    return (
        task_model.objects.filter(run_id=run_id)
        .filter(Q(status=TaskStatus.FAILED) | _abandoned(kind, run_id, timezone.now()))
        .update(status=TaskStatus.PENDING, claimed_by="", lease_until=None)
    )


# --------------------------------------------------------------------------- watchdog


def _relaunch_due(kind: str, run_id: int, now: datetime) -> tuple[bool, str]:
    """Whether a running run with open work and no live driver should get a new driver now."""
    last_seen = RunDriver.objects.filter(kind=kind, run_id=run_id).aggregate(last=Max("seen_at"))["last"]
    launches = RunEvent.objects.filter(kind=kind, run_id=run_id, code__in=LAUNCH_CODES)
    last_launch = launches.aggregate(last=Max("created_at"))["last"]
    unsent = RunEvent.objects.filter(kind=kind, run_id=run_id, code="broker_unreachable").aggregate(last=Max("created_at"))[
        "last"
    ]
    if last_launch is not None and unsent is not None and unsent >= last_launch:
        return True, "the last launch could not reach the message broker"
    if last_launch is None or (last_seen is not None and last_seen >= last_launch):
        quiet = f"no driver heard from since {last_seen:%H:%M:%S} UTC" if last_seen else "no driver has started"
        return True, quiet
    # A launch no driver has taken up yet may still be waiting for a free worker: back off, doubling.
    unanswered = launches.filter(created_at__gt=last_seen) if last_seen else launches
    wait = min(relaunch_backoff_seconds() * 2 ** max(0, unanswered.count() - 1), 1800)
    if (now - last_launch).total_seconds() >= wait:
        return True, f"the launch at {last_launch:%H:%M:%S} UTC was not taken up by any worker within {wait:.0f} s"
    return False, ""


def runs_watchdog() -> list[str]:
    """Finish or relaunch running runs that nobody is working on. Safe to run in every worker at once.

    Returns what it did, one line per run it touched.
    """
    did: list[str] = []
    for kind, spec in run_kinds.items():
        for run_id in list(spec.run_model.objects.filter(status=RUNNING).values_list("pk", flat=True)):
            now = timezone.now()
            if _live_tokens(kind, run_id, now).exists():
                continue
            try:
                task_model = spec.task_model_of(run_id)
            except (spec.run_model.DoesNotExist, LookupError):  # deleted meanwhile, or its task kind's app is not installed
                continue
            if not task_model.objects.filter(run_id=run_id, status__in=OPEN).exists():
                status = spec.finish(run_id)  # its last driver died between its last answer and closing the run
                if status != RUNNING:
                    did.append(f"{kind} run {run_id}: closed as {status}")
                continue
            with transaction.atomic():
                # One watchdog at a time per run (the others skip it); the check is repeated under the lock.
                locked = spec.run_model.objects.select_for_update(skip_locked=True).filter(pk=run_id, status=RUNNING).first()
                if locked is None or _live_tokens(kind, run_id, now).exists():
                    continue
                due, why = _relaunch_due(kind, run_id, now)
                if not due:
                    continue
                run_event_add(
                    kind=kind,
                    run_id=run_id,
                    code="relaunched",
                    level=RunEvent.Level.WARNING,
                    message=f"the watchdog launched a new driver: {why}; open work is taken over once",
                )
                transaction.on_commit(lambda run_id=run_id, kind=kind: driver_enqueue(kind, run_id))
            did.append(f"{kind} run {run_id}: relaunched ({why})")
    return did


def _broker_errors() -> tuple[type[BaseException], ...]:
    from kombu.exceptions import OperationalError as KombuOperationalError

    errors: tuple[type[BaseException], ...] = (KombuOperationalError, ConnectionError, OSError, TimeoutError)
    try:
        from redis.exceptions import RedisError
    except ImportError:  # pragma: no cover - redis is a runtime dependency
        return errors
    return (*errors, RedisError)


def enqueue(send: Callable[[], Any], *, kind: str, run_id: int) -> None:
    """Publish a driver message; if the broker is unreachable, say so on the run: the watchdog launches it later.

    Only failures to reach the broker are caught: anything else (a driver's own error when Celery runs eagerly)
    propagates.
    """
    try:
        send()
    except _broker_errors() as exc:
        log.exception("could not enqueue a driver for %s run %s", kind, run_id)
        try:
            run_event_add(
                kind=kind,
                run_id=run_id,
                code="broker_unreachable",
                level=RunEvent.Level.WARNING,
                message=f"the message broker could not be reached ({type(exc).__name__}); a worker's watchdog starts the run "
                "once the broker is back",
            )
        except Exception:  # noqa: BLE001
            log.exception("could not record the broker failure")


def driver_enqueue(kind: str, run_id: int) -> None:
    """Publish one driver message for a run of ``kind`` (its own task, or the engine's generic one)."""
    spec = run_kinds[kind]
    if spec.enqueue is not None:
        spec.enqueue(run_id)
        return
    from .tasks import run_execute_task

    enqueue(lambda: run_execute_task.delay(kind, run_id), kind=kind, run_id=run_id)
