from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.selectors import benchmark_resolve
from hypoarena.exporting import hypoarena_export
from hypoarena.services import HypoArenaError


class Command(BaseCommand):
    help = "Write a HypoArena benchmark's JSONL files (hypoarena/FORMAT.md) into a folder; import_hypoarena reads them back."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument(
            "out_dir", type=Path, help="the folder to write (created if needed; files of the same name are replaced)"
        )

    def handle(self, *args: object, benchmark: str, out_dir: Path, **options: object) -> None:
        try:
            chosen = benchmark_resolve(reference=benchmark)
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if out_dir.exists() and not out_dir.is_dir():
            raise CommandError(f"{out_dir}: not a folder; name the folder to write the files into")
        try:
            written = hypoarena_export(benchmark=chosen, directory=out_dir)
        except HypoArenaError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"wrote {', '.join(f'{n} lines to {name}' for name, n in written.items())} in {out_dir}")
