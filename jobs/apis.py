from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.models import JudgeRun
from arena.permissions import IsResearcher
from arena.selectors import runs_agreement

from .selectors import run_progress


class RunProgressApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, run_id: int) -> Response:
        run = get_object_or_404(JudgeRun, pk=run_id)
        return Response(
            {"id": run.pk, "judge_model": run.judge_model, "provider": run.provider, "replay": run.provider == JudgeRun.Provider.RECORDED}
            | run_progress(run=run).as_dict()
        )


class RunAgreementApi(APIView):
    """Second-judge agreement of run ``run_id`` (first) with run ``with`` on the pairs both judged."""

    permission_classes = [IsResearcher]

    class InputSerializer(serializers.Serializer):
        with_ = serializers.IntegerField(min_value=1)

        def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
            super().__init__(*args, **kwargs)
            self.fields["with"] = self.fields.pop("with_")

    @extend_schema(parameters=[OpenApiParameter("with", int, required=True)], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, run_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        first = get_object_or_404(JudgeRun, pk=run_id)
        second = get_object_or_404(JudgeRun, pk=params.validated_data["with"], benchmark_id=first.benchmark_id)
        return Response(runs_agreement(first=first, second=second))
