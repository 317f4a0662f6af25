"""A real Celery worker process for end-to-end tests: started in its own process group, watched through its
log, stopped or SIGKILLed as a whole (pool children included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
CELERY = Path(sys.executable).parent / "celery"


class CeleryWorker:
    """``celery -A lit2test_web worker`` followed by ``options``, with ``env`` as its whole environment."""

    def __init__(self, options: list[str], env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        with log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [str(CELERY), "-A", "lit2test_web", "worker", *options],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise AssertionError(f"the Celery worker exited with {self.process.returncode}:\n{self.log()[-3000:]}")
            if " ready." in self.log():
                return
            time.sleep(0.1)
        self.kill()
        raise AssertionError(f"the Celery worker was not ready after {timeout}s:\n{self.log()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL the worker's whole process group: no shutdown, no acknowledgement, no cleanup."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.alive():
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # whatever of the group is left
        except ProcessLookupError:
            pass
        self.process.wait(timeout=10)


def require_services() -> None:
    """Skip (fail in CI, where LIT2TEST_REQUIRE_SERVICES is set) unless the tests run on PostgreSQL and Redis."""
    import pytest
    from django.conf import settings
    from django.db import connection

    problems = []
    if connection.vendor != "postgresql":
        problems.append(f"the database is {connection.vendor}")
    if not settings.CELERY_BROKER_URL.startswith("redis"):
        problems.append(f"the broker is {settings.CELERY_BROKER_URL.split(':', 1)[0]}")
    if problems:
        message = "a real Celery worker needs PostgreSQL and Redis: " + ", ".join(problems)
        if os.environ.get("LIT2TEST_REQUIRE_SERVICES"):
            pytest.fail(message)
        pytest.skip(message)


def test_database_url() -> str:
    """The URL of the database this test session created (test_<name>), for a worker process."""
    from django.db import connection

    db = connection.settings_dict
    auth = quote(db.get("USER") or "", safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"], safe="")
    host = quote(db.get("HOST") or "127.0.0.1", safe="")
    return f"postgres://{auth}@{host}:{db.get('PORT') or 5432}/{quote(db['NAME'], safe='')}"


test_database_url.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


class SessionWorker(CeleryWorker):
    """A threads-pool worker on the test session's database and broker, with the tests' settings (and apps)."""

    def __init__(self, log_path: Path) -> None:
        env = os.environ | {
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": test_database_url(),
            "DJANGO_ALLOW_ASYNC_UNSAFE": "true",
            "CELERY_TASK_ALWAYS_EAGER": "false",
        }
        options = [
            "--pool=threads", "--concurrency=4", "--loglevel=INFO", "-Q", "celery", "-n", f"jobs-test-{uuid.uuid4().hex[:8]}@%h",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        super().__init__(options, env, log_path)
