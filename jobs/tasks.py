"""Celery tasks: thin wrappers that take ids and call services.

Delivery is at-least-once (acks_late, reject_on_worker_lost): a redelivered or duplicated
task is harmless because the services claim work by conditional updates.
"""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def judge_run_execute_task(run_id: int) -> str:
    return services.judge_run_execute(run_id=run_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def generation_run_execute_task(run_id: int) -> str:
    return services.generation_run_execute(run_id=run_id)
