"""The statistics package as it was at a given commit, importable beside today's: the same-run reference of a bench.

Benchmarks on this shared machine report ratios against the code before a change, measured in the same run. Where
the old path spans several modules (not one function to copy into the bench), :func:`reference_stats` extracts
``arena/stats`` at ``commit`` with ``git archive`` (read-only: no checkout, no change to the working tree) into a
temporary directory and imports it under its own package name, so both versions run in one process.
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def reference_stats(commit: str, module: str) -> ModuleType:
    """``arena.stats.<module>`` as of ``commit`` (a package ``ref_<commit[:10]>.stats`` in a temporary directory)."""
    package = f"ref_{commit[:10]}"
    if package not in sys.modules:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "arena/stats"], check=True, capture_output=True
        ).stdout
        base = Path(tempfile.mkdtemp(prefix="bench_reference_"))
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(base / "extracted", filter="data")
        (base / package).mkdir()
        (base / package / "__init__.py").write_text("")
        (base / "extracted" / "arena" / "stats").rename(base / package / "stats")
        sys.path.insert(0, str(base))
    return importlib.import_module(f"{package}.stats.{module}")
