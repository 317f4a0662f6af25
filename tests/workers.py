"""A real Celery worker process for end-to-end tests: started in its own process group, watched through its
log, stopped or SIGKILLed as a whole (pool children included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

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
