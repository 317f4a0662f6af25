"""The watchdog every Celery worker runs, so that no run is left "running" with nobody working on it.

Started as a worker bootstep (registered in ``lit2test_web.celery``), so the README's plain
``celery -A lit2test_web worker`` command is all a deployment needs: no beat process. Every
``LIT2TEST_WATCHDOG_SECONDS`` it finishes running runs whose work is all done and relaunches a
driver for running runs whose drivers have all gone quiet (a SIGKILLed worker, a lost broker
message). Several workers may run it at once: a row lock on the run lets one act.

It runs in a thread of the worker's main process, not in the pool: a pool whose every slot is
busy with long drivers would otherwise starve it.
"""

from __future__ import annotations

import logging
import threading

from celery import bootsteps
from django.conf import settings

log = logging.getLogger(__name__)


class RunsWatchdog(bootsteps.StartStopStep):
    requires = {"celery.worker.components:Pool"}

    def __init__(self, parent: object, **kwargs: object) -> None:
        super().__init__(parent, **kwargs)
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self, parent: object) -> None:
        interval = float(getattr(settings, "LIT2TEST_WATCHDOG_SECONDS", 15))
        if interval <= 0:
            log.info("runs watchdog disabled (LIT2TEST_WATCHDOG_SECONDS=%s)", interval)
            return
        self.thread = threading.Thread(target=self._loop, args=(interval,), name="lit2test-watchdog", daemon=True)
        self.thread.start()
        log.info("runs watchdog: checking running runs every %.0f s", interval)

    def stop(self, parent: object) -> None:
        self.stopping.set()

    def _loop(self, interval: float) -> None:
        from django.db import close_old_connections, connection

        from jobs.execution import runs_watchdog

        while not self.stopping.wait(interval):
            try:
                close_old_connections()
                for line in runs_watchdog():
                    log.warning("runs watchdog: %s", line)
                connection.close()  # between rounds the watchdog holds no connection (nor a pool slot)
            except Exception:  # noqa: BLE001 - the database may be down; try again next round
                log.warning("runs watchdog: this round failed; trying again in %.0f s", interval, exc_info=True)
                try:
                    connection.close()
                except Exception:  # noqa: BLE001
                    pass
