"""The diagnostic controls report as JSON, for researchers (issue 11): ``GET /api/benchmarks/<id>/controls/``."""

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
from arena.models import Benchmark, JudgeRun
from arena.permissions import IsResearcher
from arena.protocols import protocol_phrase

from .models import CONTROLS, LIT2TEST
from .reports import DEFAULT_REPLICATES, ControlReportError, controls_report, controls_run_default, controls_run_missing


class ControlsReportApi(APIView):
    """The same document as ``manage.py controls_report BENCHMARK --json``: clear and subtle corruption with the sham
    gate, rendering, falsifier ablation, naive controls and the dimension audit of a controls judge run.

    Without ``run``, the benchmark's newest completed holistic controls run. ``structured_run`` (a structured controls
    run) adds target-score drops, non-target drifts and the audit; without it they are null. The bootstrap's work is
    bounded by the server's cap on replicates (the leaderboard's).
    """

    permission_classes = [IsResearcher]

    class InputSerializer(QueryParams):
        run = id_field(required=False, help_text="A controls run of this benchmark (default: its newest completed holistic one).")
        structured_run = id_field(required=False, help_text="A structured controls run of this benchmark, for the 0–4 scores.")
        seed = serializers.IntegerField(required=False, min_value=0, max_value=MAX_SEED, default=0)
        sham_tolerance = serializers.FloatField(
            required=False,
            min_value=0.0,
            max_value=1.0,
            default=0.0,
            help_text="Share of clean-vs-sham judgments that may be decisive for the sham gate to pass (0: every one a tie).",
        )

        def get_fields(self) -> dict[str, serializers.Field]:
            # The same cap as the leaderboard's, read per request so that the schema and the message both name it.
            return super().get_fields() | {
                "replicates": serializers.IntegerField(
                    required=False,
                    min_value=1,
                    max_value=settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES,
                    default=DEFAULT_REPLICATES,
                    help_text="Case bootstrap replicates (server-side cap).",
                    error_messages={
                        "max_value": "Ensure this value is less than or equal to {max_value} "
                        "(the server's cap on bootstrap replicates per request)."
                    },
                )
            }

    @extend_schema(
        summary="Diagnostic controls report of a benchmark",
        parameters=[InputSerializer],
        responses=api_responses(OpenApiTypes.OBJECT, 400, 404),
    )
    def get(self, request: Request, benchmark_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        given = params.validated_data
        benchmark = get_or_not_found(Benchmark.objects, f"no benchmark {benchmark_id}", pk=benchmark_id)
        if benchmark.protocol != LIT2TEST:
            raise NotFound(
                f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark: Lit2Test's diagnostic controls do not apply"
            )
        controls = JudgeRun.objects.filter(benchmark=benchmark, subjects=CONTROLS)
        if "run" in given:
            run = get_or_not_found(
                controls, f"run {given['run']} is not a controls run of benchmark {benchmark_id}", pk=given["run"]
            )
        else:
            run = controls_run_default(benchmark=benchmark)
            if run is None:
                raise NotFound(controls_run_missing(benchmark))
        structured = None
        if "structured_run" in given:
            structured = get_or_not_found(
                controls,
                f"run {given['structured_run']} is not a controls run of benchmark {benchmark_id}",
                pk=given["structured_run"],
            )
            if structured.run_type != "structured":
                # 404, not 400: the id is well formed, it names no structured controls run (as a pairs run is no controls run).
                raise NotFound(
                    f"run {structured.pk} is a {structured.run_type} run, not a structured controls run of benchmark {benchmark_id}"
                )
        try:
            document = controls_report(
                benchmark=benchmark,
                run=run,
                structured_run=structured,
                replicates=given["replicates"],
                seed=given["seed"],
                sham_tolerance=given["sham_tolerance"],
            )
        except ControlReportError as exc:  # what is left: the run has no accepted verdict yet
            raise NotFound(str(exc)) from None
        return Response(document)
