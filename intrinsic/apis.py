"""Intrinsic scoring's API: the report of a benchmark (``/api/benchmarks/<id>/intrinsic/``), the same document as
``manage.py intrinsic_report BENCHMARK --json``. Researcher-only: it names the models."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema

from arena.models import Benchmark
from arena.protocol_reports import ProtocolReportApi

from .models import PROTOCOL
from .reports import ReportError, intrinsic_report_cached


@extend_schema(summary="Intrinsic scoring report of a benchmark")
class IntrinsicReportApi(ProtocolReportApi):
    """The same document as ``manage.py intrinsic_report BENCHMARK --json``: Hit@1/2/3/5, MRR and the (strict)
    gold-beats-distractor rate per scorer and discipline (and pooled, ``all``) with paper-bootstrap intervals (a
    listwise scorer: Hit@k and beats, with why MRR is not reported), the "All models" rows pooled per criterion, the
    papers each scorer left out, pooled paired differences of every pair of scorers, cross-model agreement per
    criterion, the gold-rank distributions and the sum-aggregate length check.

    At most ``LIT2TEST_LEADERBOARD_MAX_REPLICATES`` bootstrap replicates a request."""

    protocol = PROTOCOL
    error = ReportError

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        return intrinsic_report_cached(benchmark=benchmark, replicates=replicates, seed=seed)
