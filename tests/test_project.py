"""The project as an operator meets it: migrations, production settings, the commands' exit codes."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # The embedded defaults (SQLite in a temporary folder), so the CI database is left to pytest-django, and the
    # production settings (pytest-django exports the test settings' name), with a key of their own.
    dropped = (
        "DEBUG",
        "SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "CACHE_URL",
        "DJANGO_ALLOW_ASYNC_UNSAFE",
        "DJANGO_SETTINGS_MODULE",
    )
    environment = {k: v for k, v in os.environ.items() if k not in dropped} | {"SECRET_KEY": secrets.token_urlsafe(50)} | env
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


def test_migrations_are_complete() -> None:
    result = manage("makemigrations", "--check", "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_settings_pass_the_deploy_check_with_debug_off(tmp_path: Path) -> None:
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "ERROR",
        DEBUG="0",
        SECRET_KEY="x" * 20 + "a-long-random-production-secret-value",
        LIT2TEST_VAR_DIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_deploy_check_refuses_the_development_key(tmp_path: Path) -> None:
    result = manage("check", "--deploy", "--fail-level", "ERROR", DEBUG="0", SECRET_KEY="", LIT2TEST_VAR_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "lit2test.E001" in result.stderr + result.stdout


def test_the_import_command_exits_non_zero_and_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "contexts.jsonl").write_text('{"context_id": "c1", "papers": [')
    env = {"LIT2TEST_VAR_DIR": str(tmp_path)}
    assert manage("migrate", "-v0", **env).returncode == 0
    result = manage("import_lit2test", str(tmp_path / "data"), **env)
    assert result.returncode == 1
    assert "contexts.jsonl, line 1: invalid JSON" in result.stderr
