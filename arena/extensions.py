"""What apps supply to figures and files of the shared core without the core importing them.

- **Human figures.** A leaderboard shows the human win rate beside the judge's figures. The human calibration app
  registers a provider (``human_figures_register``) in its ``AppConfig.ready()``; leaderboards ask
  :func:`human_figures_for`, so ``arena`` never imports ``annotation``.
- **Export files.** A benchmark's release export writes its own files and, for each registered extra file (the
  diagnostic controls' ``controls.jsonl``, say), the rows its provider gives.
- **Import files.** A release import reads its own files and hands each registered extra file it finds in the
  folder to that file's importer, in the same transaction: an export imports back whole.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .registry import Registry

if TYPE_CHECKING:
    from .models import Benchmark

HumanFigures = Callable[["Benchmark"], dict[str, Any] | None]
ExportRows = Callable[["Benchmark"], list[dict[str, Any]]]

human_figures: Registry[HumanFigures] = Registry("human figures provider")
export_files: Registry[ExportRows] = Registry("export file")
#: ``importer(benchmark=..., path=...)``: imports the file into the benchmark (all or nothing, raising an error that
#: names each problem) and returns its summary line.
ImportFile = Callable[..., str]
import_files: Registry[ImportFile] = Registry("import file")


def human_figures_register(name: str, provider: HumanFigures) -> None:
    """Register a provider of the human win-rate report of a benchmark (``{"models": {model: {"rate", "n", ...}},
    "study", "method", ...}``, or None when there is none)."""
    human_figures.register(name, provider)


def human_figures_for(benchmark: Benchmark) -> dict[str, Any] | None:
    """The first registered provider's report for the benchmark; None when no provider has one."""
    for provider in human_figures.values():
        report = provider(benchmark)
        if report is not None:
            return report
    return None


def export_file_register(name: str, rows: ExportRows) -> None:
    """Register an extra export file ``<name>.jsonl`` (and its CSV copy) and the provider of its rows."""
    export_files.register(name, rows)


def import_file_register(name: str, importer: ImportFile) -> None:
    """Register the importer of an extra release file ``<name>.jsonl`` (one an export writes: :func:`export_file_register`)."""
    import_files.register(name, importer)


def import_files_in(directory: Path) -> dict[str, Path]:
    """The registered extra files present in ``directory``, by name."""
    return {name: directory / f"{name}.jsonl" for name in import_files.names() if (directory / f"{name}.jsonl").is_file()}
