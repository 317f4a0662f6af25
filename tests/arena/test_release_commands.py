"""What ``import_lit2test`` and ``export_lit2test`` say when the folder they are given is not a usable folder:
a message that names it, as a CommandError (no traceback), and nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from arena.models import Benchmark
from lit2test.release import release_import

from . import builders as b

pytestmark = pytest.mark.django_db


def test_importing_a_folder_that_does_not_exist_says_so_and_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-release"
    with pytest.raises(CommandError) as caught:
        call_command("import_lit2test", str(missing))
    assert str(caught.value) == f"{missing}: no such directory"
    assert not Benchmark.objects.exists()


def test_importing_a_file_says_it_is_not_a_directory(tmp_path: Path) -> None:
    file = b.write(tmp_path / "release", b.small_release()) / "contexts.jsonl"
    with pytest.raises(CommandError) as caught:
        call_command("import_lit2test", str(file))
    assert str(caught.value) == f"{file}: not a directory; name the folder that holds the release files"
    assert not Benchmark.objects.exists()


@pytest.fixture
def small(tmp_path: Path) -> Benchmark:
    return release_import(directory=b.write(tmp_path / "release", b.small_release())).benchmark


@pytest.mark.usefixtures("small")
def test_exporting_to_a_file_is_refused_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    target = tmp_path / "export.zip"
    target.write_bytes(b"keep me")
    with pytest.raises(CommandError) as caught:
        call_command("export_lit2test", str(target))
    assert str(caught.value) == f"{target}: is a file, not a directory; name a directory (it is created if missing)"
    assert target.read_bytes() == b"keep me"


@pytest.mark.usefixtures("small")
def test_exporting_below_a_file_says_what_could_not_be_written(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    target = tmp_path / "a-file" / "export"
    with pytest.raises(CommandError) as caught:
        call_command("export_lit2test", str(target))
    assert str(caught.value) == f"cannot write {target}: Not a directory"


@pytest.mark.usefixtures("small")
def test_exporting_to_a_new_folder_creates_it(tmp_path: Path) -> None:
    target = tmp_path / "new" / "export"
    call_command("export_lit2test", str(target))
    assert {"benchmark.json", "contexts.jsonl", "judgments.csv", "folded_cases.csv"} <= {p.name for p in target.iterdir()}
