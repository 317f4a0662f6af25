from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from .models import Benchmark, JudgeRun
from .permissions import IsResearcher
from .release import ReleaseImportError
from .selectors import (
    LEADERBOARD_PSEUDO_COUNT,
    LEADERBOARD_REPLICATES,
    LEADERBOARD_SEED,
    benchmark_list,
    run_default,
    run_leaderboard,
)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus our application errors as clear 400 JSON errors."""
    if isinstance(exc, ReleaseImportError):
        return Response({"detail": "import failed, nothing was written", "problems": [str(p) for p in exc.problems]}, status=400)
    return drf_exception_handler(exc, context)


class BenchmarkListApi(APIView):
    permission_classes = [IsResearcher]

    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()
        version = serializers.CharField()
        canonical_judge = serializers.CharField()
        verdict_rule = serializers.CharField()
        n_contexts = serializers.IntegerField()
        n_text_contexts = serializers.IntegerField()
        n_participants = serializers.IntegerField()
        n_pairs = serializers.IntegerField()
        n_runs = serializers.IntegerField()

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(benchmark_list(), many=True).data)


class LeaderboardApi(APIView):
    """The same document as ``manage.py leaderboard BENCHMARK --json``."""

    permission_classes = [IsResearcher]

    class InputSerializer(serializers.Serializer):
        run = serializers.IntegerField(required=False, min_value=1)
        replicates = serializers.IntegerField(required=False, min_value=1, max_value=100_000, default=LEADERBOARD_REPLICATES)
        seed = serializers.IntegerField(required=False, min_value=0, default=LEADERBOARD_SEED)
        pseudo_count = serializers.FloatField(required=False, min_value=0.0, default=LEADERBOARD_PSEUDO_COUNT)

    @extend_schema(parameters=[InputSerializer], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, benchmark_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
        if "run" in params.validated_data:
            run = get_object_or_404(JudgeRun, pk=params.validated_data["run"], benchmark=benchmark)
        else:
            run = run_default(benchmark=benchmark)
            if run is None:
                raise NotFound(f"{benchmark} has no judge run yet")
        document = run_leaderboard(
            run=run,
            replicates=params.validated_data["replicates"],
            seed=params.validated_data["seed"],
            pseudo_count=params.validated_data["pseudo_count"],
        )
        return Response(document)
