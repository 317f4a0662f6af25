"""Lit2Test's work for a worker: the leaderboard of a judge run over the canonical pairs, stored as the run ends.

Computing a leaderboard (two 10,000-replicate bootstraps, the honest intervals) takes seconds at thousands of
contexts; a worker does it once, as the run ends, and keeps it in the cache and the database
(``arena.caching.stored_document``), so the first reader, and any reader after the cache lost it, reads it in
milliseconds (issue 25, item 1). Nothing depends on it: a run whose document was not stored (a worker that died, a
broker away) has it computed by its first reader, as before.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

log = logging.getLogger(__name__)


def leaderboard_store_after_run(sender: str, run_id: int, **_: object) -> None:
    """Receiver of ``jobs.signals.run_closed``: a judge run over the canonical pairs that ended with verdicts has its
    leaderboard stored by a worker (``LIT2TEST_STORE_LEADERBOARD_ON_CLOSE``, on by default)."""
    from jobs.models import RunKind

    if sender != RunKind.JUDGE or not settings.LIT2TEST_STORE_LEADERBOARD_ON_CLOSE:
        return
    from arena.models import PAIRS, JudgeRun

    ended = (JudgeRun.Status.COMPLETED, JudgeRun.Status.FAILED)
    if JudgeRun.objects.filter(pk=run_id, subjects=PAIRS, status__in=ended).exists():
        leaderboard_store_enqueue(run_id)


def leaderboard_store_enqueue(run_id: int) -> None:
    """Publish the task once, failing at once while the broker is away (the default publish retry policy and kombu's
    connection retries held the closing driver ~6 s): the run's first reader computes the leaderboard instead."""
    try:
        with leaderboard_store_task.app.connection_for_write(transport_options={"max_retries": 0}) as connection:
            leaderboard_store_task.apply_async((run_id,), retry=False, connection=connection)
    except Exception as exc:  # noqa: BLE001 - optional work: say why, never fail the run's end
        log.warning("the leaderboard of judge run %s is not stored now (%s); its first reader computes it", run_id, exc)


@shared_task(
    name="lit2test.leaderboard_store",
    ignore_result=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=5,
    max_retries=3,
)
def leaderboard_store_task(run_id: int) -> bool:
    """Compute and keep the leaderboard of judge run ``run_id`` with the parameters its pages and API use by default.
    Returns whether there was one to store (a run deleted meanwhile, or without a verdict, has none)."""
    from arena.models import JudgeRun, OrderedJudgment
    from arena.selectors import run_leaderboard

    run = JudgeRun.objects.select_related("benchmark").filter(pk=run_id).first()
    if run is None or not run.judgments.filter(status=OrderedJudgment.Status.ACCEPTED).exists():
        return False
    run_leaderboard(run=run)
    log.info("the leaderboard of judge run %s is stored", run_id)
    return True
