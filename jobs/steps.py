"""Durable follow-up steps: what must happen after a run's tasks are done happens exactly once, whatever dies.

A run kind may name a :class:`~jobs.kinds.Step` (HypoArena and Lit2Test generation pair what they elicited; a Swiss
round run moves its selection on). When a driver or the watchdog finds a run's tasks all done
(``jobs.driving.run_finish``), the same transaction records a pending :class:`~jobs.models.RunStep` instead of
ending the run; :func:`step_carry_out` then, in one transaction, ends the run with the status it earned, carries the
step out and marks it done. So:

- a worker SIGKILLed or a database stopped in the middle of the step rolls all of it back: the run is still
  ``running`` with its step pending, and the next driver or the watchdog (which finishes every running run with no
  open task and no live driver) tries it again — no manual step, nothing done twice;
- a run never reads ``completed`` (and a ``--wait`` never returns) before its step is done, and its page says the
  step is pending (``step_pending``);
- a step that keeps failing for another reason than a database outage is tried :data:`STEP_ATTEMPTS` times, then
  the run ends ``failed`` with the step's error and what to do; resuming the run tries the step again.

Steps must be idempotent (a step's own effects are rolled back with it, but what it enqueues after commit, or a
step repeated after a resume, must not act twice) and may take row locks: two runs of one Swiss round finishing at
once serialise on the selection, and the second sees the first ended.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from arena.models import JudgeRun

from .execution import run_event_add, run_fail
from .kinds import run_kinds
from .models import RunEvent, RunStep, TaskStatus
from .signals import run_closed_send

log = logging.getLogger(__name__)

#: A step failing for a reason other than a database outage is tried this many times before its run fails.
STEP_ATTEMPTS = 5
RUNNING = JudgeRun.Status.RUNNING


def step_record(*, kind: str, run_id: int, title: str, outcome: str) -> None:
    """Inside the transaction that found the run's tasks all done: the step is pending (again, after a resume); a
    step already pending keeps its count of failed tries."""
    row = RunStep.objects.select_for_update().filter(kind=kind, run_id=run_id).first()
    if row is not None and row.status == RunStep.Status.PENDING:
        if row.outcome != outcome:
            row.outcome = outcome
            row.save(update_fields=["outcome"])
        return
    RunStep.objects.update_or_create(
        kind=kind,
        run_id=run_id,
        defaults={"title": title[:200], "outcome": outcome, "status": RunStep.Status.PENDING, "attempts": 0, "last_error": ""},
    )


def run_closed_events(*, kind: str, run_id: int, task_model: type[Any], step: str = "", ended: bool = True) -> None:
    """The run's log line for how it ended: the failed tasks with the latest reason, or every task done; and, once
    the transaction that ended it commits, :data:`jobs.signals.run_closed` — unless its step set it running again
    (``ended`` False: an adaptive run's next round)."""
    if ended:
        transaction.on_commit(functools.partial(run_closed_send, kind, run_id))
    failed = task_model.objects.filter(run_id=run_id, status=TaskStatus.FAILED)
    n_failed = failed.count()
    after = f"; then {step}: done" if step else ""
    if n_failed:
        latest = failed.order_by("-updated_at").values_list("last_error", flat=True).first() or "no reason recorded"
        run_event_add(
            kind=kind,
            run_id=run_id,
            code="tasks_failed",
            level=RunEvent.Level.ERROR,
            message=f"{n_failed} task(s) failed (latest: {latest}){after}; fix the cause and resume the run to retry only them",
        )
    else:
        run_event_add(kind=kind, run_id=run_id, code="completed", message=f"every task is done{after}")


def step_carry_out(kind: str, run_id: int) -> str:
    """End the run and carry out its pending step in one transaction; returns the run's status (still ``running``
    when the step could not be done now: it is tried again)."""
    spec = run_kinds[kind]
    try:
        with transaction.atomic():
            run = spec.run_model.objects.select_for_update().get(pk=run_id)
            row = RunStep.objects.select_for_update().filter(kind=kind, run_id=run_id).first()
            if row is None or row.status != RunStep.Status.PENDING or run.status != RUNNING:
                return run.status  # done already, or paused / cancelled meanwhile: a resume brings the step back
            step = spec.step(run) if spec.step is not None else None
            run.status, run.finished_at = row.outcome, timezone.now()
            run.save(update_fields=["status", "finished_at"])
            if step is not None:
                step.carry_out(run)
            row.status, row.done_at = RunStep.Status.DONE, timezone.now()
            row.save(update_fields=["status", "done_at"])
            ended = run.status in (JudgeRun.Status.COMPLETED, JudgeRun.Status.FAILED)
            run_closed_events(kind=kind, run_id=run_id, task_model=spec.task_model_of(run_id), step=row.title, ended=ended)
            return run.status
    except Exception as exc:  # noqa: BLE001 - whatever it was, the step stays pending and the run says why
        log.exception("the step after %s run %s did not finish", kind, run_id)
        return _step_failed(kind, run_id, exc)


def _step_failed(kind: str, run_id: int, exc: Exception) -> str:
    outage = isinstance(exc, (OperationalError, InterfaceError))
    error = f"{type(exc).__name__}: {exc}".strip()[:2000]
    try:
        with transaction.atomic():
            row = RunStep.objects.select_for_update().filter(kind=kind, run_id=run_id, status=RunStep.Status.PENDING).first()
            if row is None:
                return RUNNING
            row.last_error = error
            row.attempts += 0 if outage else 1
            if row.attempts < STEP_ATTEMPTS:
                row.save(update_fields=["last_error", "attempts"])
                run_event_add(
                    kind=kind,
                    run_id=run_id,
                    code="step_retry",
                    level=RunEvent.Level.WARNING,
                    message=f"every task is done, but the step that follows ({row.title}) did not finish ({error}); "
                    "it is tried again by a worker's watchdog within a minute"
                    + ("" if outage else f" (try {row.attempts} of {STEP_ATTEMPTS})"),
                )
                return RUNNING
            row.status = RunStep.Status.FAILED
            row.save(update_fields=["last_error", "attempts", "status"])
            run_fail(
                kind=kind,
                run_id=run_id,
                code="step_failed",
                reason=f"every task is done, but the step that follows ({row.title}) failed {row.attempts} times "
                f"(latest: {error}); fix the cause and resume the run: its answers are kept and the step is tried again",
            )
            return JudgeRun.Status.FAILED
    except Exception:  # noqa: BLE001 - the database is still away: the watchdog tries the step again later
        log.exception("could not record why the step after %s run %s did not finish", kind, run_id)
        return RUNNING


def step_pending(kind: str, run_id: int) -> RunStep | None:
    """The run's step while it waits to be carried out (for its page), else None."""
    return RunStep.objects.filter(kind=kind, run_id=run_id, status=RunStep.Status.PENDING).first()
