"""Concurrent writers need PostgreSQL's row locks; .ci/run provides it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.db import connection, connections

from arena.models import CanonicalPair, OrderedJudgment
from lit2test.release import release_import

from . import builders as b

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]


@pytest.fixture(autouse=True)
def _postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL, as .ci/run does)")


def test_two_simultaneous_imports_of_the_same_files_write_everything_once(tmp_path: Path) -> None:
    folder = b.write(tmp_path, b.small_release())
    lines: list[str] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def worker() -> None:
        try:
            barrier.wait()
            lines.append(release_import(directory=folder).line())
        except BaseException as exc:  # noqa: BLE001  (reported by the assertion below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert sorted(line.split(":")[0].split(" ")[0] for line in lines) == ["created", "nothing"]
    assert OrderedJudgment.objects.count() == 12
    assert CanonicalPair.objects.count() == 6
