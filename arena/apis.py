from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, exception_handler as drf_exception_handler

from .permissions import IsResearcher
from .release import ReleaseImportError
from .selectors import benchmark_list


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

    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(benchmark_list(), many=True).data)
