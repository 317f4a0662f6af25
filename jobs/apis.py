from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.apis import MAX_SEED, QueryParams, api_responses, get_or_not_found, id_field
from arena.models import JudgeRun
from arena.permissions import IsResearcher

from .selectors import run_progress


class RunProgressApi(APIView):
    """A run's judge model and provider, whether it replays a stored run, and its progress as the run page shows it:
    status; tasks done (accepted or invalid), failed, remaining and skipped; calls, tokens, cost and the time left."""

    permission_classes = [IsResearcher]

    @extend_schema(summary="Progress of a run", responses=api_responses(OpenApiTypes.OBJECT, 404))
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


RELIABILITY_MAX_REPLICATES = 2000


class _IdList(serializers.ListField):
    """Run ids, repeated parameters; a bad one is named by its position in a flat list of messages (the API's 400
    shape: a list of strings per parameter, not DRF's nested ``{"0": [...]}``)."""

    def to_internal_value(self, data: Any) -> list[int]:  # noqa: ANN401
        try:
            return super().to_internal_value(data)
        except ValidationError as exc:
            if not isinstance(exc.detail, dict):
                raise
            raise ValidationError([f"value {int(k) + 1}: {m}" for k, messages in exc.detail.items() for m in messages]) from None


class RunReliabilityApi(APIView):
    """The judge-reliability panel of a run, the document ``manage.py judge_reliability BENCHMARK --run N --json``
    prints: position consistency, first-shown share and preference fairness, the order effect γ and self-preference δ
    fitted inside Bradley–Terry with item-bootstrap intervals (or why each is not estimable), the content-blind
    baselines (longer wins, shorter wins, first shown wins) and invalid answers with a few examples. It names
    participants and shows raw answers: researchers only."""

    permission_classes = [IsResearcher]

    class InputSerializer(QueryParams):
        reference = _IdList(
            child=id_field(),
            required=False,
            default=list,
            help_text="Runs of the same items by judges of other families (repeat the parameter): they make "
            "self-preference estimable.",
        )
        seed = serializers.IntegerField(required=False, min_value=0, max_value=MAX_SEED, default=None, allow_null=True)

        def get_fields(self) -> dict[str, serializers.Field]:
            return super().get_fields() | {
                "replicates": serializers.IntegerField(
                    required=False,
                    min_value=0,
                    # The bootstrap's work grows with items × replicates: a request stays within seconds at 100,000
                    # verdicts (bench/bench_reliability.py: 400 replicates in about a second).
                    max_value=min(settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES, RELIABILITY_MAX_REPLICATES),
                    default=None,
                    allow_null=True,
                    help_text="Item-bootstrap replicates (default 400; server-side cap).",
                )
            }

    @extend_schema(
        summary="Judge reliability of a run", parameters=[InputSerializer], responses=api_responses(OpenApiTypes.OBJECT, 400, 404)
    )
    def get(self, request: Request, run_id: int) -> Response:
        from .reliability import run_reliability  # numpy loads with the first panel, not with the URLconf

        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        run = get_or_not_found(JudgeRun.objects.select_related("benchmark"), f"no run {run_id}", pk=run_id)
        references = []
        for ref_id in data["reference"]:
            references.append(
                get_or_not_found(JudgeRun.objects.select_related("benchmark"), f"no reference run {ref_id}", pk=ref_id)
            )
        try:
            document = run_reliability(run, references=references, replicates=data["replicates"], seed=data["seed"])
        except ValueError as exc:
            raise ValidationError({"reference": [str(exc)]}) from None
        return Response(document)
