"""Concurrent command-line imports of one folder into one new benchmark name (issue 22, item 3), for every protocol
whose importer creates its benchmark: one benchmark, everything written once, and each other import either finds
the benchmark made (and changes nothing) or says the other import made it - never a traceback. Needs PostgreSQL,
whose unique index makes the second insert wait for the first."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connections

from arena.models import Benchmark
from hypoarena.models import Case
from intrinsic.models import Candidate
from reconstruction.models import Reference
from tests.clients import needs_postgresql
from tests.hypoarena import helpers as hypoarena
from tests.intrinsic import helpers as intrinsic
from tests.reconstruction import helpers as reconstruction

pytestmark = pytest.mark.django_db(transaction=True)
TIMES = 4


def intrinsic_folder(tmp: Path) -> Path:
    tmp.mkdir(parents=True)
    (tmp / "papers.jsonl").write_text("".join(f"{json.dumps(line)}\n" for line in intrinsic.paper_lines()))
    return tmp


IMPORTS: dict[str, tuple[Callable[[Path], Path], Callable[[], int], Callable[[], int]]] = {
    # command: (a folder of valid files, the rows one import writes, their count now)
    "import_reconstruction": (
        reconstruction.folder,
        lambda: len(reconstruction.references()),
        lambda: Reference.objects.count(),
    ),
    "import_hypoarena": (hypoarena.folder, lambda: len(hypoarena.cases()), lambda: Case.objects.count()),
    "import_intrinsic": (
        intrinsic_folder,
        lambda: sum(len(p["texts"]) for p in intrinsic.PAPERS),
        lambda: Candidate.objects.count(),
    ),
}


@pytest.mark.parametrize("command", sorted(IMPORTS))
def test_imports_at_once_into_one_new_name_make_one_import_and_clear_messages(command: str, tmp_path: Path) -> None:
    needs_postgresql("concurrent inserts that wait for each other's unique key need PostgreSQL")
    make_folder, expected_rows, rows = IMPORTS[command]
    folder = make_folder(tmp_path / "in")
    start = threading.Barrier(TIMES)
    outcomes: list[str] = []

    def run() -> None:
        out = StringIO()
        try:
            start.wait()
            call_command(command, "at-once", str(folder), stdout=out)
            outcomes.append("imported")
        except CommandError as exc:
            outcomes.append(f"refused: {exc}")
        except BaseException as exc:  # noqa: BLE001 - what the issue saw: a raw traceback
            outcomes.append(f"crashed: {type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(TIMES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert len(outcomes) == TIMES and not [o for o in outcomes if o.startswith("crashed")], outcomes
    assert "imported" in outcomes
    for outcome in outcomes:
        assert outcome == "imported" or outcome == (
            "refused: benchmark at-once v1 was created by another import while this one ran; nothing was written: "
            "run this import again to add its files to that benchmark"
        ), outcome
    assert Benchmark.objects.filter(name="at-once").count() == 1
    assert rows() == expected_rows()  # written once
