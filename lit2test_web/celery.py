from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lit2test_web.settings")

app = Celery("lit2test_web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _add_watchdog() -> None:
    from jobs.worker import RunsWatchdog

    app.steps["worker"].add(RunsWatchdog)


_add_watchdog()

# Celery beat (``celery -A lit2test_web beat``, beside the workers; README "Scheduled sentinel checks"): every few
# minutes it asks for the scheduled drift-sentinel checks that are due. The task itself decides which are (each
# benchmark's own interval) and launches each slot's check once, so a beat that fires twice does no harm.
app.conf.beat_schedule = {
    "sentinels-check-due": {"task": "jobs.sentinels_check_due", "schedule": 300.0},
}
