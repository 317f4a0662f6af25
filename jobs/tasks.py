"""Celery tasks: thin wrappers that take ids and call services.

A driver message is only a nudge: the run's state lives in the database, and the watchdog in
every worker (``jobs.worker``) launches a new driver for any running run that nobody works on.
So messages are acknowledged when a worker takes them (``acks_late=False``): a message that
stayed unacknowledged across a broker restart made the worker crash on its late ack, and one
held by a killed worker waited for the broker's visibility timeout (an hour on Redis) before
anyone saw it again. A delivered-twice message is harmless: work is claimed by conditional updates.

A database that is briefly unreachable when a driver starts or ends is retried by Celery; inside
the driver, the engine rides out outages itself.
"""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from . import services
from .kinds import run_kinds

#: The options of every driver task (a protocol that declares its own driver task uses them too).
DRIVER_TASK_OPTIONS = {
    "acks_late": False,
    "ignore_result": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": 30,
}


@shared_task(**DRIVER_TASK_OPTIONS)
def judge_run_execute_task(run_id: int) -> str:
    return services.judge_run_execute(run_id=run_id)


@shared_task(name="jobs.run_execute", **DRIVER_TASK_OPTIONS)
def run_execute_task(kind: str, run_id: int) -> str:
    """Drive a run of any registered kind (``jobs.kinds``); a kind whose app is not installed here is left to the
    watchdog of a worker that has it."""
    spec = run_kinds.get(kind)
    if spec is None:
        return f"unknown run kind {kind!r}"
    return spec.execute(run_id)


@shared_task(name="jobs.sentinels_check_due", ignore_result=True, autoretry_for=(OperationalError, InterfaceError), max_retries=3)
def sentinels_check_due_task() -> list[int]:
    """Celery beat's periodic nudge (``lit2test_web.celery``): launch every scheduled sentinel check that is due.
    Idempotent: each schedule slot's check has a unique launch key, so a repeated or doubled beat launches nothing."""
    from .sentinels import sentinels_check_due

    return sentinels_check_due()
