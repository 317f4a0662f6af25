from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema

from arena.models import Benchmark
from arena.protocol_reports import ProtocolReportApi

from .models import PROTOCOL
from .reports import ToyReportError, toy_report


@extend_schema(summary="Toy report of a benchmark")
class ToyReportApi(ProtocolReportApi):
    """The toy report of a benchmark, as ``toy_report --json`` prints it."""

    protocol = PROTOCOL
    error = ToyReportError

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        return toy_report(benchmark=benchmark, replicates=replicates, seed=seed)
