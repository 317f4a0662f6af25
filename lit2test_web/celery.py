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
