from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.models import Benchmark
from reconstruction.exporting import reconstruction_export
from reconstruction.services import ReconstructionError


class Command(BaseCommand):
    help = (
        "Write a Reconstruction benchmark's JSONL files (reconstruction/FORMAT.md) into a folder; importing them reproduces it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark name, or name@version (version 1 when not given)")
        parser.add_argument("directory", type=Path)

    def handle(self, *args: object, benchmark: str, directory: Path, **options: object) -> None:
        name, _, version = benchmark.partition("@")
        found = Benchmark.objects.filter(name=name, version=version or "1").first()
        if found is None:
            raise CommandError(f"no benchmark {name!r} version {version or '1'}")
        try:
            written = reconstruction_export(benchmark=found, directory=directory)
        except ReconstructionError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(", ".join(f"{n} lines in {f}" for f, n in written.items()))
