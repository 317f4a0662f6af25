from __future__ import annotations

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.apis import MAX_SEED, QueryParams, api_responses, get_or_not_found, id_field
from arena.models import Benchmark
from arena.permissions import IsResearcher
from arena.selectors import LEADERBOARD_REPLICATES, LEADERBOARD_SEED

from .reports import ReportError, arena_run_pick, hypoarena_report


class HypoArenaLeaderboardApi(APIView):
    """The same document as ``manage.py hypoarena_leaderboard BENCHMARK --json``: Bradley–Terry–Davidson ratings per
    domain and pooled with case-bootstrap intervals, win rate, consistency, the tie parameter, and rubric ranks.

    At most ``LIT2TEST_LEADERBOARD_MAX_REPLICATES`` bootstrap replicates a request."""

    permission_classes = [IsResearcher]

    class InputSerializer(QueryParams):
        run = id_field(required=False, help_text="An arena run of this benchmark (default: its first arena run).")
        seed = serializers.IntegerField(required=False, min_value=0, max_value=MAX_SEED, default=LEADERBOARD_SEED)

        def get_fields(self) -> dict[str, serializers.Field]:
            # The cap is a setting, read per request (as the Lit2Test leaderboard's): the schema and the message name it.
            return super().get_fields() | {
                "replicates": serializers.IntegerField(
                    required=False, min_value=1, max_value=settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES,
                    default=min(LEADERBOARD_REPLICATES, settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES),
                    help_text="Bootstrap replicates (server-side cap).",
                )
            }

    @extend_schema(parameters=[InputSerializer], responses=api_responses(OpenApiTypes.OBJECT, 400, 404))
    def get(self, request: Request, benchmark_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        benchmark = get_or_not_found(Benchmark.objects, f"no benchmark {benchmark_id}", pk=benchmark_id)
        if benchmark.protocol != Benchmark.Protocol.HYPOARENA:
            raise NotFound(
                f"{benchmark} is a {benchmark.get_protocol_display()} benchmark, not a HypoArena one; "
                f"its leaderboard is at /api/benchmarks/{benchmark.pk}/leaderboard/"
            )
        data = params.validated_data
        try:
            run = arena_run_pick(benchmark=benchmark, run_id=data.get("run"))
            document = hypoarena_report(benchmark=benchmark, run=run, replicates=data["replicates"], seed=data["seed"])
        except ReportError as exc:
            raise NotFound(str(exc)) from None
        return Response(document)
