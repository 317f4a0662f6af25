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
from arena.protocols import protocol_phrase
from arena.selectors import LEADERBOARD_REPLICATES, LEADERBOARD_SEED

from .models import PROTOCOL
from .reports import ReportError, agreement_runs_pick, arena_run_pick, hypoarena_agreement_cached, hypoarena_report_cached


class _BootstrapParams(QueryParams):
    """``seed`` and ``replicates`` of a HypoArena document's case bootstrap."""

    seed = serializers.IntegerField(required=False, min_value=0, max_value=MAX_SEED, default=LEADERBOARD_SEED)

    def get_fields(self) -> dict[str, serializers.Field]:
        # The cap is a setting, read per request (as the Lit2Test leaderboard's): the schema and the message name it.
        return super().get_fields() | {
            "replicates": serializers.IntegerField(
                required=False,
                min_value=1,
                max_value=settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES,
                default=min(LEADERBOARD_REPLICATES, settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES),
                help_text="Bootstrap replicates (server-side cap).",
            )
        }


def _hypoarena_benchmark(benchmark_id: int, *, elsewhere: str) -> Benchmark:
    """The HypoArena benchmark of that id, else a JSON 404 naming what it is and (``elsewhere``, formatted with its id)
    where its figures are."""
    benchmark = get_or_not_found(Benchmark.objects, f"no benchmark {benchmark_id}", pk=benchmark_id)
    if benchmark.protocol != PROTOCOL:
        raise NotFound(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not a HypoArena one; "
            + elsewhere.format(id=benchmark.pk)
        )
    return benchmark


class HypoArenaLeaderboardApi(APIView):
    """The same document as ``manage.py hypoarena_leaderboard BENCHMARK --json``: Bradley–Terry–Davidson ratings per
    domain and pooled with case-bootstrap intervals, win rate, consistency, the tie parameter, and rubric ranks.

    At most ``LIT2TEST_LEADERBOARD_MAX_REPLICATES`` bootstrap replicates a request."""

    permission_classes = [IsResearcher]

    class InputSerializer(_BootstrapParams):
        run = id_field(required=False, help_text="An arena run of this benchmark (default: its first arena run).")

    @extend_schema(
        summary="HypoArena leaderboard of a benchmark",
        parameters=[InputSerializer],
        responses=api_responses(OpenApiTypes.OBJECT, 400, 404),
    )
    def get(self, request: Request, benchmark_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        benchmark = _hypoarena_benchmark(benchmark_id, elsewhere="its leaderboard is at /api/benchmarks/{id}/leaderboard/")
        data = params.validated_data
        try:
            run = arena_run_pick(benchmark=benchmark, run_id=data.get("run"))
            document = hypoarena_report_cached(benchmark=benchmark, run=run, replicates=data["replicates"], seed=data["seed"])
        except ReportError as exc:
            raise NotFound(str(exc)) from None
        return Response(document)


class HypoArenaAgreementApi(APIView):
    """The same document as ``manage.py hypoarena_agreement BENCHMARK --run-a A --run-b B --json``: per domain and
    pooled Spearman ρ, Kendall τ, mean |Δrank| and top-5 overlap of two arena runs' ratings, their pairwise verdict
    agreement on shared matches, a case-bootstrap interval for the pooled ρ, and both runs' ratings per model and domain.

    At most ``LIT2TEST_LEADERBOARD_MAX_REPLICATES`` bootstrap replicates a request."""

    permission_classes = [IsResearcher]

    class InputSerializer(_BootstrapParams):
        run_a = id_field(required=False, help_text="Judge A: an arena run of this benchmark (default: its first arena run).")
        # The same run twice is answered like a run that is not there (404, naming it), not as a bad parameter: the
        # schema cannot say that two parameters must differ, so a 400 would refuse a request it calls valid.
        run_b = id_field(
            required=False,
            help_text="Judge B: another arena run of this benchmark (default: the first arena run that is not run_a).",
        )

    @extend_schema(
        summary="Agreement of two HypoArena judge runs",
        parameters=[InputSerializer],
        responses=api_responses(OpenApiTypes.OBJECT, 400, 404),
    )
    def get(self, request: Request, benchmark_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        benchmark = _hypoarena_benchmark(
            benchmark_id, elsewhere="two of its runs' agreement is at /api/runs/<run_id>/agreement/?with=<other_run_id>"
        )
        data = params.validated_data
        try:
            run_a, run_b = agreement_runs_pick(benchmark=benchmark, run_a=data.get("run_a"), run_b=data.get("run_b"))
            document = hypoarena_agreement_cached(
                benchmark=benchmark, run_a=run_a, run_b=run_b, replicates=data["replicates"], seed=data["seed"]
            )
        except ReportError as exc:
            raise NotFound(str(exc)) from None
        return Response(document)
