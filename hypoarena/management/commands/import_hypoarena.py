from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.protocol_reports import name_and_version
from hypoarena.importing import FILES, HypoArenaImportError, hypoarena_import, import_files
from hypoarena.services import HypoArenaError


class Command(BaseCommand):
    help = (
        "Import a HypoArena benchmark from JSONL files (hypoarena/FORMAT.md): "
        f"{', '.join(f'{k}.jsonl' for k in FILES)}, given as a folder or as files. Creates the benchmark (protocol "
        "hypoarena) if needed. All or nothing; re-importing the same files changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name, or name@version (version 1 when not given)")
        parser.add_argument("paths", nargs="+", type=Path, help="a folder holding the files, or the files themselves")
        parser.add_argument("--description", default="", help="the new benchmark's description")

    def handle(self, *args: object, name: str, paths: list[Path], description: str, **options: object) -> None:
        name, version = name_and_version(name)
        try:
            summary = hypoarena_import(name=name, version=version, files=import_files(paths), description=description)
        except (HypoArenaError, HypoArenaImportError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(summary.line())
