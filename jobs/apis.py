from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.apis import api_responses, get_or_not_found
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
