from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.selectors import benchmark_resolve
from intrinsic.exporting import intrinsic_export
from intrinsic.importing import IntrinsicError


class Command(BaseCommand):
    help = "Write an Intrinsic-scoring benchmark's JSONL files (intrinsic/FORMAT.md) into a folder; importing them reproduces it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("directory", type=Path)

    def handle(self, *args: object, benchmark: str, directory: Path, **options: object) -> None:
        try:
            found = benchmark_resolve(reference=benchmark)
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        try:
            written = intrinsic_export(benchmark=found, directory=directory)
        except IntrinsicError as exc:
            raise CommandError(str(exc)) from None
        left_out = written.pop("partial (scorer, paper) left out", 0)
        self.stdout.write(", ".join(f"{n} lines in {f}" for f, n in written.items()))
        if left_out:
            self.stdout.write(
                f"{left_out} (scorer, paper) left out: scored in part (a run ended with failed candidates); resume the run, then export again"
            )
