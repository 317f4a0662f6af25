from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from intrinsic.services import FILES, IntrinsicError, IntrinsicImportError, import_files, intrinsic_import


class Command(BaseCommand):
    help = (
        f"Import an Intrinsic-scoring benchmark from a folder of JSONL files (intrinsic/FORMAT.md): {', '.join(f'{k}.jsonl' for k in FILES)}. "
        "All or nothing; re-importing the same files changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name, or name@version (version 1 when not given)")
        parser.add_argument("directory", type=Path, help="the folder holding the files")
        parser.add_argument("--description", default="", help="the new benchmark's description")

    def handle(self, *args: object, name: str, directory: Path, description: str, **options: object) -> None:
        name, sep, version = name.partition("@")
        if not name.strip() or (sep and not version.strip()):
            raise CommandError(f"{name + sep + version!r}: give a benchmark name, or name@version")
        try:
            summary = intrinsic_import(name=name, version=version or "1", files=import_files(directory), description=description)
        except (IntrinsicError, IntrinsicImportError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(summary.line())
