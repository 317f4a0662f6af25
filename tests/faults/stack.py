"""A throwaway deployment for fault tests: a private PostgreSQL cluster and Redis server on free loopback
ports, the app's commands run as subprocesses against them, and Celery workers started with the README's
command. Nothing here touches the test session's own database, so the services can be stopped and
killed at will.

Needs Debian's postgresql and redis-server packages (``.ci/run`` installs them).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.pgcluster import Postgres, free_port, postgres_bin
from tests.workers import ROOT, CeleryWorker


def missing_binaries() -> list[str]:
    missing = [] if postgres_bin() else ["PostgreSQL (initdb)"]
    if not shutil.which("redis-server"):
        missing.append("redis-server")
    return missing


class Redis:
    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="lit2test-faults-redis-"))
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        """Gone at once, like a crashed or restarting server (and, without persistence, its queues with it)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Stack:
    """The app deployed on a private PostgreSQL and Redis, with the release sample imported."""

    def __init__(self, release_dir: Path, work: Path) -> None:
        self.work = work
        self.pg = Postgres(databases=("lit2test",))
        self.redis = Redis()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("LIT2TEST_", "DJANGO_", "CELERY_", "DATABASE_URL", "CACHE_URL", "PYTEST", "X_API_KEY"))
        } | {
            "DJANGO_SETTINGS_MODULE": "lit2test_web.settings",
            "SECRET_KEY": secrets.token_urlsafe(40),
            "DEBUG": "0",
            "DATABASE_URL": self.pg.url(),
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{self.redis.port}/0",
            "CACHE_URL": f"rediscache://127.0.0.1:{self.redis.port}/1",
            "LIT2TEST_VAR_DIR": str(work / "var"),
            "PYTHONUNBUFFERED": "1",
        }
        self.workers: list[Worker] = []
        self.manage("migrate", "--no-input", "-v0")
        self.manage("import_lit2test", str(release_dir))

    def manage(
        self, *args: str, env: dict[str, str] | None = None, check: bool = True, timeout: float = 300
    ) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env | (env or {}),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"manage.py {' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
        return result

    def worker(self, env: dict[str, str] | None = None) -> Worker:
        worker = Worker(self, env or {}, self.work / f"worker-{len(self.workers)}.log")
        self.workers.append(worker)
        worker.wait_ready()
        return worker

    def destroy(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.redis.destroy()
        self.pg.destroy()

    # ------------------------------------------------------------------ reading the private database

    def run_status(self, run_id: int) -> str:
        return self.pg.value("SELECT status FROM arena_judgerun WHERE id = %s", run_id)

    def accepted(self, run_id: int) -> list[tuple[int, str]]:
        return self.pg.query(
            "SELECT pair_id, \"order\" FROM arena_orderedjudgment WHERE run_id = %s AND status = 'accepted'", run_id
        )

    def judgments(self, run_id: int) -> int:
        return self.pg.value("SELECT count(*) FROM arena_orderedjudgment WHERE run_id = %s", run_id)

    def calls(self, run_id: int) -> int:
        return self.pg.value("SELECT coalesce(sum(calls), 0) FROM jobs_judgetask WHERE run_id = %s", run_id)

    def events(self, run_id: int) -> list[tuple[str, str]]:
        return self.pg.query("SELECT code, message FROM jobs_runevent WHERE kind = 'judge' AND run_id = %s ORDER BY id", run_id)


class Worker(CeleryWorker):
    """``celery -A lit2test_web worker`` as the README gives it (the prefork pool), plus a node name."""

    def __init__(self, stack: Stack, env: dict[str, str], log_path: Path) -> None:
        self.name = f"faults-{len(stack.workers)}-{secrets.token_hex(3)}@%h"
        super().__init__(["--loglevel=INFO", "-n", self.name], stack.env | env, log_path)
