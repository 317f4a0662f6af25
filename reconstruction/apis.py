"""Reconstruction's API: the report of a benchmark (``/api/benchmarks/<id>/reconstruction/``), the same document as
``manage.py reconstruction_report BENCHMARK --json``. Researcher-only: it names the systems."""

from __future__ import annotations

from typing import Any

from arena.models import Benchmark
from arena.protocol_reports import ProtocolReportApi

from .models import PROTOCOL
from .reports import ReportError, benchmark_reconstruction_report


class ReconstructionReportApi(ProtocolReportApi):
    """The same document as ``manage.py reconstruction_report BENCHMARK --json``: Match rate and success@5 per system
    and domain (and pooled, ``all``) with paper-bootstrap intervals, paired rate ratios with intervals, exact sign tests
    over papers, and the slot and top-5 oracle controls. A ratio whose denominator rate is 0 is written ``"inf"``.

    At most ``LIT2TEST_LEADERBOARD_MAX_REPLICATES`` bootstrap replicates a request."""

    protocol = PROTOCOL
    error = ReportError

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        return benchmark_reconstruction_report(benchmark=benchmark, replicates=replicates, seed=seed)
