"""Reconstruction's API: the report of a benchmark (``/api/benchmarks/<id>/reconstruction/``), the same document as
``manage.py reconstruction_report BENCHMARK --json``. Researcher-only: it names the systems."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.apis import MAX_SEED, QueryParams, api_responses, get_or_not_found
from arena.models import Benchmark
from arena.permissions import IsResearcher

from .reports import REPORT_REPLICATES, REPORT_SEED, ReportError, benchmark_reconstruction_report


class ReconstructionReportApi(APIView):
    """The same document as ``manage.py reconstruction_report BENCHMARK --json``: Match rate and success@5 per system
    and domain (and pooled, ``all``) with paper-bootstrap intervals, paired rate ratios with intervals, exact sign tests
    over papers, and the slot and top-5 oracle controls. A ratio whose denominator rate is 0 is written ``"inf"``.

    At most ``LIT2TEST_LEADERBOARD_MAX_REPLICATES`` bootstrap replicates a request."""

    permission_classes = [IsResearcher]

    class InputSerializer(QueryParams):
        seed = serializers.IntegerField(required=False, min_value=0, max_value=MAX_SEED, default=REPORT_SEED)

        def get_fields(self) -> dict[str, serializers.Field]:
            # The cap is a setting, read per request (as the other reports'): the schema and the message name it.
            return super().get_fields() | {
                "replicates": serializers.IntegerField(
                    required=False, min_value=1, max_value=settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES,
                    default=min(REPORT_REPLICATES, settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES),
                    help_text="Paper-bootstrap replicates (server-side cap).",
                )
            }

    @extend_schema(parameters=[InputSerializer], responses=api_responses(OpenApiTypes.OBJECT, 400, 404))
    def get(self, request: Request, benchmark_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        benchmark = get_or_not_found(Benchmark.objects, f"no benchmark {benchmark_id}", pk=benchmark_id)
        if benchmark.protocol != Benchmark.Protocol.RECONSTRUCTION:
            raise NotFound(f"{benchmark} is a {benchmark.get_protocol_display()} benchmark, not a Reconstruction one")
        data = params.validated_data
        try:
            document = benchmark_reconstruction_report(benchmark=benchmark, replicates=data["replicates"], seed=data["seed"])
        except ReportError as exc:
            raise NotFound(str(exc)) from None
        return Response(document)
