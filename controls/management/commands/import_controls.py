from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.selectors import benchmark_resolve
from controls.import_export import ControlImportError, controls_import
from controls.services import ControlError


class Command(BaseCommand):
    help = (
        "Import diagnostic control variants from a JSONL file, one a line: "
        '{"control_id", "kind", "context_id", "source_model", "target", "proposal": {six fields}} '
        '("prose" instead of "proposal" for a rendering). All or nothing; re-importing the same file changes nothing.'
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("file", type=Path, help="the JSONL file (e.g. controls.jsonl of an export)")

    def handle(self, *args: object, benchmark: str, file: Path, **options: object) -> None:
        try:
            chosen = benchmark_resolve(reference=benchmark)
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if not file.is_file():
            raise CommandError(f"{file}: no such file" if not file.exists() else f"{file}: not a file; name the JSONL file")
        try:
            summary = controls_import(benchmark=chosen, path=file)
        except (ControlImportError, ControlError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(summary.line())
