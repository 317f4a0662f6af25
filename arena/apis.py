from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from drf_spectacular.views import SCHEMA_KWARGS, SpectacularAPIView
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import AppError
from .permissions import IsResearcher
from .selectors import benchmark_list

# Ids are PostgreSQL bigints; a larger one can name nothing, and is refused as a bad parameter.
MAX_ID = 2**63 - 1
MAX_SEED = 2**32 - 1
MAX_PSEUDO_COUNT = 100.0  # 0.5 is the protocol's; far beyond 100 the fit is the prior, not the data


def get_or_not_found(queryset: QuerySet, message: str, **filters: Any) -> Any:  # noqa: ANN401
    """The one row ``filters`` pick from ``queryset``, or a JSON 404 saying ``message``."""
    found = queryset.filter(**filters).first()
    if found is None:
        raise NotFound(message)
    return found


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus every application error (``arena.errors.AppError``, of any protocol) as a clear JSON error
    with its own status.

    Every error body is one of the shapes declared by :data:`ERROR_RESPONSES`: ``{"detail": "..."}`` (a refused
    import adds its ``problems``), or for bad parameters ``{"<parameter>": ["message", ...]}``.
    """
    if isinstance(exc, AppError):
        return Response(exc.payload(), status=exc.status_code)
    response = drf_exception_handler(exc, context)
    if response is not None:
        # Plain strings: DRF's ErrorDetail is a string to the JSON renderer but a {string, code} mapping to the schema's
        # YAML renderer (/api/schema/ answered its 403, 404 and 406 with a "detail" the schema says is a string: review).
        response.data = _plain(response.data)
    return response


def _plain(data: Any) -> Any:  # noqa: ANN401
    """``data`` with every string subclass (DRF's ErrorDetail) a plain ``str``, in lists and mappings too."""
    if isinstance(data, str):
        return str(data)
    if isinstance(data, dict):
        return {str(k): _plain(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_plain(v) for v in data]
    return data


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in words.")
    problems = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="A refused release import: every problem, with its file, line and field.",
    )


PARAMETER_ERRORS_SCHEMA = {
    "type": "object",
    "description": "Each invalid parameter, named, with what is wrong with it.",
    "additionalProperties": {"type": "array", "items": {"type": "string"}},
    "example": {"replicates": ["Ensure this value is less than or equal to 20000."]},
}

ERROR_RESPONSES: dict[int, OpenApiResponse] = {
    400: OpenApiResponse(PARAMETER_ERRORS_SCHEMA, description="A parameter is missing, malformed or out of range."),
    403: OpenApiResponse(ErrorSerializer, description="Not signed in, or not a researcher."),
    404: OpenApiResponse(ErrorSerializer, description="No such object (or not in this benchmark)."),
    406: OpenApiResponse(ErrorSerializer, description="The Accept header names no type this operation serves."),
    503: OpenApiResponse(ErrorSerializer, description="The database is busy; retry after the Retry-After seconds."),
}


def api_responses(ok: Any, *codes: int) -> dict[int, Any]:  # noqa: ANN401
    """The ``responses`` of an operation: ``ok`` for 200, and the error responses it can give."""
    return {200: ok} | {code: ERROR_RESPONSES[code] for code in (*codes, 403, 503)}


def id_field(**kwargs: Any) -> serializers.IntegerField:  # noqa: ANN401
    return serializers.IntegerField(min_value=1, max_value=MAX_ID, **kwargs)


class QueryParams(serializers.Serializer):
    """Query parameters. A parameter given empty (``?seed=``) is an error naming it, not its default
    (DRF reads an empty optional form value as absent)."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:  # noqa: ANN401
        blank = {name: ["This parameter may not be empty."] for name in self.fields if data.get(name) == ""}
        if blank:
            raise serializers.ValidationError(blank)
        return super().to_internal_value(data)


class BenchmarkListApi(APIView):
    """Every benchmark: its name, version, canonical judge and verdict rule, and how many contexts (and of them with
    text), participants, canonical pairs and judge runs it has."""

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

    @extend_schema(summary="List of benchmarks", responses=api_responses(OutputSerializer(many=True)))
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(benchmark_list(), many=True).data)


class SchemaApi(SpectacularAPIView):
    """The OpenAPI schema of this API, for researchers (it names every operation); others get 403."""

    class InputSerializer(QueryParams):
        lang = serializers.ChoiceField(choices=[code for code, _ in settings.LANGUAGES], required=False)
        format = serializers.ChoiceField(choices=["json", "yaml"], required=False)  # read by DRF's content negotiation

    # 404: an unknown ?format=; 406: an Accept header naming neither JSON nor YAML (DRF's content negotiation).
    @extend_schema(
        **(
            SCHEMA_KWARGS
            | {"summary": "OpenAPI schema of this API", "responses": api_responses(OpenApiTypes.OBJECT, 400, 404, 406)}
        )
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:  # noqa: ANN401
        params = self.InputSerializer(data=request.query_params)
        if not params.is_valid():
            # Plain lists of strings: the schema's YAML renderer cannot represent DRF's error objects.
            return Response({name: [str(m) for m in messages] for name, messages in params.errors.items()}, status=400)
        return super().get(request, *args, **kwargs)
