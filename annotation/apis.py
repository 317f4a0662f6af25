from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.apis import QueryParams, api_responses, get_or_not_found
from arena.permissions import IsResearcher

from .models import Study
from .selectors import study_agreement


class StudyAgreementApi(APIView):
    """The agreement figures of the study page as JSON (researchers only; it names the models)."""

    permission_classes = [IsResearcher]

    class InputSerializer(QueryParams):
        include_over_time = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        summary="Agreement figures of a human study",
        parameters=[InputSerializer],
        responses=api_responses(OpenApiTypes.OBJECT, 400, 404),
    )
    def get(self, request: Request, study_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        study = get_or_not_found(Study.objects, f"no study {study_id}", pk=study_id)
        return Response(study_agreement(study=study, include_over_time=params.validated_data["include_over_time"]))
