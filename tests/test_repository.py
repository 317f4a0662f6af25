"""What git keeps out of the repository: files the running app writes in the working tree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("path", ["control/celery.exchange", "control/celery.pidbox.exchange", "var/db.sqlite3"])
def test_broker_and_demo_files_are_ignored(path: str) -> None:
    # Kombu's filesystem broker once wrote control/*.exchange at the root, and they were committed.
    result = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"{path} is not ignored by .gitignore"
