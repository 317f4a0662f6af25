from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from arena.models import Benchmark
from arena.release import release_export

from ._base import VersionedBenchmarkCommand


class Command(VersionedBenchmarkCommand):
    help = "Export a benchmark's contexts, proposals, ordered judgments and folded cases as JSONL and CSV."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("outdir", type=Path)
        parser.add_argument("--benchmark", default="lit2test")
        parser.add_argument("--version", dest="benchmark_version", default=None)

    def handle(self, *args: object, outdir: Path, benchmark: str, benchmark_version: str | None, **options: object) -> None:
        found = Benchmark.objects.filter(name=benchmark)
        if benchmark_version:
            found = found.filter(version=benchmark_version)
        chosen = found.order_by("-created_at").first()
        if chosen is None:
            raise CommandError(f"no benchmark named {benchmark!r}" + (f" version {benchmark_version!r}" if benchmark_version else ""))
        counts = release_export(benchmark=chosen, directory=outdir)
        self.stdout.write(
            f"exported {chosen}: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items()) + f" to {outdir}"
        )
