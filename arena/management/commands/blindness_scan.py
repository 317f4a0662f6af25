from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.blindness import benchmark_redact
from arena.models import Benchmark


class Command(BaseCommand):
    help = (
        "Redact every model alias from the proposals of all benchmarks (or of one), as an import does: "
        "needed once after upgrading, and after launching a run with a new judge."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--benchmark", default=None, help="only this benchmark (name)")

    def handle(self, *args: object, benchmark: str | None, **options: object) -> None:
        chosen = Benchmark.objects.all() if benchmark is None else Benchmark.objects.filter(name=benchmark)
        if benchmark is not None and not chosen.exists():
            raise CommandError(f"no benchmark named {benchmark!r}")
        for b in chosen.order_by("name", "version"):
            self.stdout.write(f"{b}: {benchmark_redact(benchmark=b).line()}")
