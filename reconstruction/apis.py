"""Reconstruction's API: the report of a benchmark (``/api/benchmarks/<id>/reconstruction/``), the same document as
``manage.py reconstruction_report BENCHMARK --json``. Researcher-only: it names the systems."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from arena.apis import api_responses
from arena.models import Benchmark
from arena.protocol_reports import ProtocolReportApi

from .models import PROTOCOL
from .reports import LABEL_RULES, RATE_RULES, ReportError, benchmark_reconstruction_report


class ReconstructionReportApi(ProtocolReportApi):
    """The same document as ``manage.py reconstruction_report BENCHMARK --json``: Match rate and success@5 per system
    and domain (and pooled, ``all``) with paper-bootstrap intervals, paired rate ratios with intervals, exact sign tests
    over paper rates, and the slot oracle, top-5 oracle and best-single controls over the proposers. A ratio whose
    denominator rate is 0 is written ``"inf"``. ``label_rule`` and ``rate`` choose the rules, as the command's
    ``--label-rule`` and ``--rate``; the document's ``method`` names those in force.

    At most ``LIT2TEST_LEADERBOARD_MAX_REPLICATES`` bootstrap replicates a request."""

    protocol = PROTOCOL
    error = ReportError

    class InputSerializer(ProtocolReportApi.InputSerializer):
        label_rule = serializers.ChoiceField(
            choices=list(LABEL_RULES),
            required=False,
            default=LABEL_RULES[0],
            help_text="majority (a strict majority of the non-recused judges; a tie is not a Match) or fraction (the "
            "paper's: the fraction of them saying Match).",
        )
        rate = serializers.ChoiceField(
            choices=list(RATE_RULES),
            required=False,
            default=RATE_RULES[0],
            help_text="pooled (scores / labelled hypotheses over the papers) or paper-mean (the paper's: mean of the papers' rates).",
        )

    @extend_schema(
        summary="Reconstruction report of a benchmark",
        parameters=[InputSerializer],
        responses=api_responses(OpenApiTypes.OBJECT, 400, 404),
    )
    def get(self, request: Request, benchmark_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        self.rules = {"label_rule": params.validated_data["label_rule"], "rate": params.validated_data["rate"]}
        return super().get(request, benchmark_id)

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        return benchmark_reconstruction_report(benchmark=benchmark, replicates=replicates, seed=seed, **self.rules)
