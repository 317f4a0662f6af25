from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.apis import QueryParams, api_responses, get_or_not_found, id_field
from arena.models import JudgeRun
from arena.permissions import IsResearcher
from arena.selectors import runs_agreement

from .selectors import run_progress


class RunProgressApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=api_responses(OpenApiTypes.OBJECT, 404))
    def get(self, request: Request, run_id: int) -> Response:
        run = get_or_not_found(JudgeRun.objects, f"no run {run_id}", pk=run_id)
        return Response(
            {
                "id": run.pk,
                "judge_model": run.judge_model,
                "provider": run.provider,
                "replay": run.provider == JudgeRun.Provider.RECORDED,
            }
            | run_progress(run=run).as_dict()
        )


class RunAgreementApi(APIView):
    """Agreement of runs ``run_id`` and ``with`` on the pairs both judged, anchored on the primary judge (the
    canonical run when one of them is, else the earlier run) whichever is given first: ordered agreement on the
    primary's stable cases and case-folded agreement with case-bootstrap 95% CIs, and the disagreeing pairs."""

    permission_classes = [IsResearcher]

    class InputSerializer(QueryParams):
        def get_fields(self) -> dict[str, serializers.Field]:
            # "with" is a Python keyword, so the field cannot be declared as a class attribute.
            return {"with": id_field(help_text="The other run, of the same benchmark.")}

    @extend_schema(parameters=[InputSerializer], responses=api_responses(OpenApiTypes.OBJECT, 400, 404))
    def get(self, request: Request, run_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        first = get_or_not_found(JudgeRun.objects, f"no run {run_id}", pk=run_id)
        other_id = params.validated_data["with"]
        second = get_or_not_found(
            JudgeRun.objects,
            f"run {other_id} is not a run of the benchmark of run {run_id}",
            pk=other_id,
            benchmark_id=first.benchmark_id,
        )
        return Response(runs_agreement(first=first, second=second))
