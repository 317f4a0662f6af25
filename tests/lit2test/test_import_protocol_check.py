"""Every import entry checks the benchmark's protocol first (issue 22, item 2): Lit2Test release files and diagnostic
controls go only into Lit2Test benchmarks, and a refusal names the benchmark's protocol and the command that imports
its own files. Nothing is written."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from arena.models import Benchmark, Context, Participant
from controls.import_export import controls_import
from controls.models import ControlVariant
from controls.services import ControlError
from lit2test.release import ReleaseImportError, release_import
from tests.arena import builders as b
from tests.clients import client_for

pytestmark = pytest.mark.django_db

REFUSAL = (
    "recon v1 is a Reconstruction benchmark: Lit2Test release files go into a new benchmark name (or another version); "
    "its own files are imported with import_reconstruction"
)


@pytest.fixture
def recon() -> Benchmark:
    return Benchmark.objects.create(name="recon", version="1", protocol="reconstruction")


def test_a_release_import_into_another_protocols_benchmark_is_refused_naming_it(tmp_path: Path, recon: Benchmark) -> None:
    folder = b.write(tmp_path / "r", b.small_release())
    with pytest.raises(ReleaseImportError) as refused:
        release_import(directory=folder, benchmark_name="recon", version="1")
    assert [str(p) for p in refused.value.problems] == [f"arguments: benchmark: {REFUSAL}"]
    assert not Context.objects.exists() and not Participant.objects.exists()


def test_the_import_command_and_the_dashboard_upload_refuse_it_too(tmp_path: Path, recon: Benchmark, researcher) -> None:  # noqa: ANN001
    folder = b.write(tmp_path / "r", b.small_release())
    with pytest.raises(CommandError, match="recon v1 is a Reconstruction benchmark: Lit2Test release files go into"):
        call_command("import_lit2test", str(folder), "--benchmark", "recon", "--version", "1", stdout=io.StringIO())
    from django.core.files.uploadedfile import SimpleUploadedFile

    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(folder.iterdir())]
    page = client_for(researcher).post(reverse("arena:dashboard"), {"files": files, "benchmark": "recon", "version": "1"})
    assert page.status_code == 200 and REFUSAL in page.content.decode()
    assert not Context.objects.exists() and not Participant.objects.exists()


def test_the_same_files_still_go_into_a_new_benchmark_name(tmp_path: Path, recon: Benchmark) -> None:
    folder = b.write(tmp_path / "r", b.small_release())
    summary = release_import(directory=folder, benchmark_name="recon", version="2")
    assert summary.benchmark.protocol == "lit2test" and Context.objects.filter(benchmark=summary.benchmark).exists()


def test_controls_are_refused_by_a_benchmark_of_another_protocol(tmp_path: Path, recon: Benchmark) -> None:
    path = tmp_path / "controls.jsonl"
    path.write_text(json.dumps({"control_id": "c1", "kind": "naive"}) + "\n", encoding="utf-8")
    expected = (
        "recon v1 is a Reconstruction benchmark: diagnostic controls go into a new benchmark name (or another version); "
        "its own files are imported with import_reconstruction"
    )
    with pytest.raises(ControlError) as refused:
        controls_import(benchmark=recon, path=path)
    assert str(refused.value) == expected
    with pytest.raises(CommandError, match="recon v1 is a Reconstruction benchmark: diagnostic controls"):
        call_command("import_controls", "recon@1", str(path), stdout=io.StringIO())
    assert not ControlVariant.objects.exists()
