from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from arena.commands import VersionedBenchmarkCommand
from lit2test.release import ReleaseImportError, release_import


class Command(VersionedBenchmarkCommand):
    help = "Import Lit2Test release files (contexts, proposals, folded pairs, ordered judgments) from DIR."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument("--benchmark", default=None, help="benchmark name (default: lit2test)")
        parser.add_argument("--version", dest="benchmark_version", default=None, help="benchmark version (default: 1)")

    def handle(
        self, *args: object, directory: Path, benchmark: str | None, benchmark_version: str | None, **options: object
    ) -> None:
        if not directory.exists():
            raise CommandError(f"{directory}: no such directory")
        if not directory.is_dir():
            raise CommandError(f"{directory}: not a directory; name the folder that holds the release files")
        try:
            summary = release_import(directory=directory, benchmark_name=benchmark, version=benchmark_version)
        except ReleaseImportError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(summary.line())
