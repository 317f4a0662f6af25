from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from arena.commands import VersionedBenchmarkCommand
from arena.models import Benchmark
from lit2test.release import release_export


class Command(VersionedBenchmarkCommand):
    help = "Export a benchmark's contexts, proposals, ordered judgments and folded cases as JSONL and CSV."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("outdir", type=Path, help="directory to write to (created if missing)")
        parser.add_argument("--benchmark", default="lit2test", help="benchmark name (default: lit2test)")
        parser.add_argument("--version", dest="benchmark_version", default=None, help="benchmark version (default: the newest)")

    def handle(self, *args: object, outdir: Path, benchmark: str, benchmark_version: str | None, **options: object) -> None:
        found = Benchmark.objects.filter(name=benchmark)
        if benchmark_version:
            found = found.filter(version=benchmark_version)
        chosen = found.order_by("-created_at").first()
        if chosen is None:
            raise CommandError(
                f"no benchmark named {benchmark!r}" + (f" version {benchmark_version!r}" if benchmark_version else "")
            )
        if outdir.exists() and not outdir.is_dir():
            raise CommandError(f"{outdir}: is a file, not a directory; name a directory (it is created if missing)")
        try:
            counts = release_export(benchmark=chosen, directory=outdir)
        except OSError as exc:  # a parent that is a file, no permission, a full disk
            raise CommandError(f"cannot write {exc.filename or outdir}: {exc.strerror or exc}") from None
        self.stdout.write(
            f"exported {chosen}: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items()) + f" to {outdir}"
        )
