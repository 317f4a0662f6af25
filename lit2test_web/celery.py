from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lit2test_web.settings")
# Celery's Django fixup runs every system check when a worker starts and throws the messages away; the URL checks
# alone import every page's module (numpy, the statistics, the forms) that a worker never uses: a third of a second
# of each worker's start-up for nothing. `manage.py check` and the web server still run them all.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

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
