"""A Celery worker loads what it runs, not the pages: its start-up (Django's set-up, then Celery's import of the task
modules, which is when Celery's Django fixup runs) must not import the page modules, numpy or the statistics. They
cost a third of a second or more of each worker's start-up (issue 25 item 4) and a worker never renders a page.

What the apps register for pages is named (``arena.registry.Lazy``) and imported at its first use: every name given
must import, and be what the pages call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.extensions import export_files, human_figures
from arena.protocols import judge_subjects, protocols
from arena.registry import Lazy

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ["numpy", "pandas", "scipy", "lit2test.views", "arena.views", "jobs.views", "lit2test_web.urls", "controls.import_export"]

WORKER_START = """
import json, sys
from lit2test_web.celery import app
import django
django.setup()
app.loader.import_default_modules()  # what a worker does before it takes tasks (Celery's Django fixup runs here)
print(json.dumps(sorted(m for m in sys.argv[1:] if m in sys.modules)))
"""


def test_a_worker_starts_without_the_pages_numpy_or_the_statistics() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CELERY_SKIP_CHECKS"}
    env.update(DJANGO_SETTINGS_MODULE="lit2test_web.settings", DEBUG="1", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", WORKER_START, *HEAVY], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == [], (
        f"a worker's start-up imported {loaded}: register pages as arena.registry.Lazy('module.name') in the app's "
        "ready(), and keep page-only imports out of the modules the engine loads"
    )


def _lazies() -> list[tuple[str, Lazy]]:
    found: list[tuple[str, Lazy]] = []
    for name, spec in protocols.items():
        for field in ("benchmark_view", "panel"):
            value = getattr(spec, field)
            if isinstance(value, Lazy):
                found.append((f"protocol {name}: {field}", value))
    for name, kind in judge_subjects.items():
        if isinstance(kind.page, Lazy):
            found.append((f"judging task kind {name}: page", kind.page))
    for registry in (human_figures, export_files):
        for name, value in registry.items():
            if isinstance(value, Lazy):
                found.append((f"{registry.what} {name}", value))
    return found


def test_the_named_callables_import_and_are_the_pages() -> None:
    lazies = dict(_lazies())
    assert {"protocol lit2test: benchmark_view", "protocol lit2test: panel", "judging task kind pairs: page"} <= set(lazies)
    for where, lazy in lazies.items():
        assert callable(lazy.target()), f"{where}: {lazy.path} is not callable"
    from lit2test import views

    assert lazies["protocol lit2test: benchmark_view"].target() is views.benchmark_page
    assert lazies["judging task kind pairs: page"].target() is views.pairs_run_page


def test_a_lazy_of_a_wrong_name_says_which() -> None:
    with pytest.raises(ImportError, match="'lit2test.views.no_such_page' cannot be imported"):
        Lazy("lit2test.views.no_such_page")()
    assert Lazy("a.b") == Lazy("a.b") and hash(Lazy("a.b")) == hash(Lazy("a.b"))
