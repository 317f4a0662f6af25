"""Import and export of Lit2Test release files (PROTOCOL.md §1).

``release_import`` reads every release format present in a folder, checks all of it before writing anything, and
then writes in one transaction: an import is atomic (all or nothing) and idempotent (a second import of the same
files creates nothing). Problems are reported with the file, the line and the field they concern (reading:
``reading.py``; writing: ``writing.py``). ``release_export`` writes what a benchmark holds in the same formats
(plus CSV copies), so that importing an export into an empty database reproduces the benchmark (``exporting.py``).
"""

from __future__ import annotations

from arena.jsonl import Problem, ReleaseImportError

from .exporting import export_rows, release_export
from .reading import BENCHMARK_FILE, FOLDED_FILE, JUDGMENTS_FILE, RELEASE_JUDGE, TIE, ImportSummary, release_files
from .writing import release_import

__all__ = [
    "BENCHMARK_FILE",
    "FOLDED_FILE",
    "JUDGMENTS_FILE",
    "RELEASE_JUDGE",
    "TIE",
    "ImportSummary",
    "Problem",
    "ReleaseImportError",
    "export_rows",
    "release_export",
    "release_files",
    "release_import",
]
