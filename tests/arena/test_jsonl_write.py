"""Files an export writes (arena.jsonl.jsonl_write): whole or not at all, and readable as any file the user writes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from arena.jsonl import jsonl_write


def test_an_exported_file_gets_the_mode_of_any_new_file_not_a_private_one(tmp_path: Path) -> None:
    """An import review of 2026-12-06: the JSONL files of an export were 0600 (a temporary file's mode) while the
    CSVs beside them were 0644: colleagues could not read a shared export's files to import them."""
    plain = tmp_path / "plain.csv"
    plain.write_text("a,b\n")  # as the CSV exports write theirs
    written = jsonl_write(tmp_path / "contexts.jsonl", [{"context_id": "c1"}, {"context_id": "c2"}])
    assert written == 2
    assert stat.S_IMODE((tmp_path / "contexts.jsonl").stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    assert [json.loads(line) for line in (tmp_path / "contexts.jsonl").read_text().splitlines()] == [
        {"context_id": "c1"},
        {"context_id": "c2"},
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contexts.jsonl", "plain.csv"]  # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    target = tmp_path / "pairs.jsonl"
    target.write_text('{"old": true}\n')

    def rows():  # noqa: ANN202
        yield {"pair_id": "p1"}
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError):
        jsonl_write(target, rows())
    assert target.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["pairs.jsonl"]
