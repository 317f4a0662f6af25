"""Lit2Test's API: the leaderboard document of a benchmark, and the agreement of two of its judge runs."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.apis import MAX_PSEUDO_COUNT, MAX_SEED, QueryParams, api_responses, get_or_not_found, id_field
from arena.extensions import human_figures_for
from arena.models import PAIRS, Benchmark, JudgeRun
from arena.permissions import IsResearcher
from arena.protocols import protocol_phrase
from arena.selectors import (
    LEADERBOARD_PSEUDO_COUNT,
    LEADERBOARD_REPLICATES,
    LEADERBOARD_SEED,
    STYLE_REPLICATES,
    run_default,
    run_leaderboard,
    runs_agreement,
)

from .judging import PROTOCOL
from .readers import DEFAULT_SCALE, SCALES, leaderboard_for_readers, style_choice
from .style_inputs import run_side_features

#: The style features ``style_control`` may name (``arena.stats.style_leaderboard.STYLE_FEATURES``, written out here so
#: that loading the API does not load numpy; tests/lit2test/test_leaderboard_honest_style.py holds them equal).
STYLE_CHOICES = "length|citations|structure|words|headers|lists|bold"


class LeaderboardApi(APIView):
    """The same document as ``manage.py leaderboard BENCHMARK --json`` (``?scale=`` as its ``--scale``,
    ``?style_control=`` as its ``--style-control``), with when the newest verdict in it was stored (``last_updated``).

    The work of a request is bounded: at most ``LIT2TEST_LEADERBOARD_MAX_REPLICATES`` bootstrap replicates,
    a finite pseudo-count in [0, 100]; a document is cached by its parameters and the verdicts it comes from.
    """

    permission_classes = [IsResearcher]

    class InputSerializer(QueryParams):
        run = id_field(required=False, help_text="A holistic run of this benchmark (default: its canonical run).")
        seed = serializers.IntegerField(required=False, min_value=0, max_value=MAX_SEED, default=LEADERBOARD_SEED)
        pseudo_count = serializers.FloatField(
            required=False,
            min_value=0.0,
            max_value=MAX_PSEUDO_COUNT,
            default=LEADERBOARD_PSEUDO_COUNT,
            help_text="Added to every off-diagonal win count of the Bradley–Terry fits; finite, 0 to 100.",
        )
        scale = serializers.ChoiceField(
            choices=list(SCALES),
            required=False,
            default=DEFAULT_SCALE,
            help_text="The strengths' scale: log-ability (the BT strength) or elo (1500 + 400·θ/ln 10, as HypoArena's "
            "ratings); the document's 'scale' says which.",
        )
        style_control = serializers.CharField(  # given empty, an error naming it (QueryParams), as every parameter
            required=False,
            default="",
            # The schema states the grammar (what a client may send), the validator below names an unknown feature.
            validators=[
                RegexValidator(
                    rf"^\s*({STYLE_CHOICES})\s*(,\s*({STYLE_CHOICES})\s*)*$",
                    message="unknown style feature(s) in '%(value)s': give a comma-separated list of "
                    + STYLE_CHOICES.replace("|", ", "),
                    flags=re.IGNORECASE,
                )
            ],
            help_text="Comma-separated style features (length, citations, structure, words, headers, lists, bold): adds "
            "'style_control', the style-controlled ranking beside the plain one with a rank Δ, as the command's "
            "--style-control.",
        )

        def validate_style_control(self, value: str) -> tuple[str, ...]:
            try:
                return style_choice(value)
            except ValueError as exc:
                raise serializers.ValidationError(str(exc)) from None

        def get_fields(self) -> dict[str, serializers.Field]:
            # The cap (each replicate costs the web process CPU time) is a setting, read per request, so that the
            # schema and the message both name it.
            return super().get_fields() | {
                "replicates": serializers.IntegerField(
                    required=False,
                    min_value=1,
                    max_value=settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES,
                    default=LEADERBOARD_REPLICATES,
                    help_text="Bootstrap replicates (server-side cap).",
                    error_messages={
                        "max_value": "Ensure this value is less than or equal to {max_value} "
                        "(the server's cap on bootstrap replicates per request)."
                    },
                ),
                "style_replicates": serializers.IntegerField(
                    required=False,
                    min_value=1,
                    max_value=settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES,
                    default=STYLE_REPLICATES,
                    help_text="Context-bootstrap replicates of the style-controlled fit (server-side cap).",
                ),
            }

    @extend_schema(
        summary="Lit2Test leaderboard of a benchmark",
        parameters=[InputSerializer],
        responses=api_responses(OpenApiTypes.OBJECT, 400, 404),
    )
    def get(self, request: Request, benchmark_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        benchmark = get_or_not_found(Benchmark.objects, f"no benchmark {benchmark_id}", pk=benchmark_id)
        if benchmark.protocol != PROTOCOL:
            raise NotFound(
                f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark: the Lit2Test leaderboard does not apply; "
                f"its figures are at /api/benchmarks/{benchmark.pk}/{benchmark.protocol}/"
            )
        if "run" in params.validated_data:
            run_id = params.validated_data["run"]
            run = get_or_not_found(
                JudgeRun.objects.filter(subjects=PAIRS),
                f"run {run_id} is not a leaderboard run of benchmark {benchmark_id}",
                pk=run_id,
                benchmark=benchmark,
            )
        else:
            run = run_default(benchmark=benchmark)
            if run is None:
                raise NotFound(f"{benchmark} has no judge run yet")
        document = run_leaderboard(
            run=run,
            human=human_figures_for(benchmark),  # human figures are passed in to the leaderboard
            replicates=params.validated_data["replicates"],
            seed=params.validated_data["seed"],
            pseudo_count=params.validated_data["pseudo_count"],
            style=params.validated_data["style_control"],
            style_replicates=params.validated_data["style_replicates"],
            side_features=run_side_features,
        )
        return Response(leaderboard_for_readers(run=run, document=document, scale=params.validated_data["scale"]))


class RunAgreementApi(APIView):
    """Agreement of runs ``run_id`` and ``with`` on the pairs both judged, anchored on the primary judge (the
    canonical run when one of them is, else the earlier run) whichever is given first: ordered agreement on the
    primary's stable cases and case-folded agreement with case-bootstrap 95% CIs, and the disagreeing pairs."""

    permission_classes = [IsResearcher]

    class InputSerializer(QueryParams):
        def get_fields(self) -> dict[str, serializers.Field]:
            # "with" is a Python keyword, so the field cannot be declared as a class attribute.
            return {"with": id_field(help_text="The other run, of the same benchmark.")}

    @extend_schema(
        summary="Agreement of two judge runs",
        parameters=[InputSerializer],
        responses=api_responses(OpenApiTypes.OBJECT, 400, 404),
    )
    def get(self, request: Request, run_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        # Runs that judged canonical pairs (a controls, arena or rubric run has none to compare: it "agreed" on 0
        # pairs), and two of them: a run against itself agrees by construction (review).
        pairs_runs = JudgeRun.objects.filter(subjects=PAIRS)
        first = get_or_not_found(pairs_runs, f"no run {run_id} that judged canonical pairs", pk=run_id)
        other_id = params.validated_data["with"]
        if other_id == run_id:
            raise NotFound(f"run {run_id} is compared with itself: give another run of its benchmark as 'with'")
        second = get_or_not_found(
            pairs_runs,
            f"run {other_id} is not a run of the benchmark of run {run_id} that judged canonical pairs",
            pk=other_id,
            benchmark_id=first.benchmark_id,
        )
        return Response(runs_agreement(first=first, second=second))
