from __future__ import annotations

from typing import Any

from arena.models import Benchmark
from arena.protocol_reports import ProtocolReportCommand

from ...models import PROTOCOL
from ...reports import ToyReportError, toy_report


class Command(ProtocolReportCommand):
    help = "The toy report of a benchmark: each run's share of yes answers with a bootstrap interval."
    protocol = PROTOCOL
    import_command = "import_toy"
    replicates_default = 200
    error = ToyReportError

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        return toy_report(benchmark=benchmark, replicates=replicates, seed=seed)

    def tables(self, document: dict[str, Any]) -> None:
        for row in document["runs"]:
            self.stdout.write(f"run {row['run']} {row['judge']}: {row['yes']} yes, {row['no']} no, {row['invalid']} invalid")
