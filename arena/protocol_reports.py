"""What every protocol's report shares: the ``<protocol>_report BENCHMARK [--replicates N] [--seed S] [--json]``
command and the ``/api/benchmarks/<id>/<protocol>/`` view that returns the same document; and what its import
command shares (``import_<protocol> NAME[@VERSION] DIR``, :class:`ProtocolImportCommand`).

A protocol subclasses :class:`ProtocolReportCommand` and :class:`ProtocolReportApi`, naming its protocol, its report
function ``(benchmark=, replicates=, seed=) -> dict`` and the exception that function raises when there is nothing to
report; the command adds how its document reads as text tables (``tables``). Both check the benchmark's protocol, the
bounds of replicates and seed, and say what to do when they refuse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .apis import MAX_SEED, QueryParams, api_responses, get_or_not_found
from .models import Benchmark
from .permissions import IsResearcher
from .protocols import protocol_phrase
from .selectors import benchmark_resolve

Report = Callable[..., dict[str, Any]]


def protocol_benchmark_or_404(benchmark_id: int, protocol: str) -> Benchmark:
    """The benchmark of that id for a protocol's page; a 404 naming its protocol when it is another protocol's."""
    from django.http import Http404

    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        raise Http404(f"no benchmark {benchmark_id}")
    if benchmark.protocol != protocol:
        raise Http404(f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not {protocol_phrase(protocol)} one")
    return benchmark


def int_option(request: Any, name: str, default: int, low: int, high: int, problems: list[str]) -> int:  # noqa: ANN401
    """A whole-number query option of a page in [low, high]; anything else shows ``default`` and says so in
    ``problems`` (a page, unlike the API, shows what it can rather than refusing)."""
    raw = request.GET.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        problems.append(f"{name} must be a whole number from {low:,} to {high:,}, not {raw!r}; showing {default:,}.")
        return default
    return value


def share_text(value: Any, ci: list[Any] | None = None, digits: int = 3) -> str:  # noqa: ANN401
    """``0.200 [0.000, 0.400]``; a missing value is ``—``; a string (``"inf"``) stays as written."""

    def one(v: Any) -> str:  # noqa: ANN401
        return "—" if v is None else (v if isinstance(v, str) else f"{v:.{digits}f}")

    if ci is None:
        return one(value)
    return f"{one(value)} [{one(ci[0])}, {one(ci[1])}]"


def text_table(rows: list[list[str]]) -> list[str]:
    """Rows as left-aligned columns (the first row is the header)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def name_and_version(raw: str) -> tuple[str, str]:
    """``name`` or ``name@version`` (version 1 when not given); raises ``CommandError`` saying the shape."""
    name, sep, version = raw.partition("@")
    if not name.strip() or (sep and not version.strip()):
        raise CommandError(f"{raw!r}: give a benchmark name, or name@version")
    if name != name.strip() or version != version.strip():
        # "lit2test " made a whole second benchmark that reads as "lit2test v1" (the upload form strips it).
        raise CommandError(f"{raw!r}: the benchmark name or version starts or ends with white space; names are compared exactly")
    return name, version or "1"


class ProtocolImportCommand(BaseCommand):
    """``import_<protocol> NAME[@VERSION] DIR [--description D]``: all or nothing; the summary line, or the problems."""

    errors: ClassVar[tuple[type[Exception], ...]] = ()

    def import_folder(self, *, name: str, version: str, directory: Any, description: str) -> Any:  # noqa: ANN401
        raise NotImplementedError

    def add_arguments(self, parser: CommandParser) -> None:
        from pathlib import Path

        parser.add_argument("name", help="benchmark name, or name@version (version 1 when not given)")
        parser.add_argument("directory", type=Path, help="the folder holding the files")
        parser.add_argument("--description", default="", help="the new benchmark's description")

    def handle(self, *args: object, name: str, directory: Any, description: str, **options: object) -> None:  # noqa: ANN401
        name, version = name_and_version(name)
        try:
            summary = self.import_folder(name=name, version=version, directory=directory, description=description)
        except self.errors as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(summary.line())


class ProtocolReportCommand(BaseCommand):
    protocol: ClassVar[str]
    import_command: ClassVar[str]  # how such benchmarks get here, for the refusal
    replicates_default: ClassVar[int] = 2000
    seed_default: ClassVar[int] = 0
    error: ClassVar[type[Exception]] = ValueError

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        raise NotImplementedError

    def tables(self, document: dict[str, Any]) -> None:
        raise NotImplementedError

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument(
            "--replicates",
            type=int,
            default=self.replicates_default,
            help=f"paper-bootstrap replicates (default {self.replicates_default})",
        )
        parser.add_argument("--seed", type=int, default=self.seed_default, help=f"bootstrap seed (default {self.seed_default})")
        parser.add_argument(
            "--json",
            dest="as_json",
            action="store_true",
            help="print the whole document as one JSON object (the API returns the same)",
        )

    def handle(self, *args: object, benchmark: str, replicates: int, seed: int, as_json: bool, **options: object) -> None:
        try:
            chosen = benchmark_resolve(reference=benchmark)
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if chosen.protocol != self.protocol:
            raise CommandError(
                f"{chosen} is {protocol_phrase(chosen.protocol)} benchmark, not {protocol_phrase(self.protocol)} one; "
                f"name a benchmark imported with {self.import_command}"
            )
        if replicates < 1 or seed < 0:
            raise CommandError(f"--replicates must be 1 or more (got {replicates}) and --seed 0 or more (got {seed})")
        try:
            document = self.report(chosen, replicates, seed)
        except self.error as exc:
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False))
            return
        self.tables(document)


class ProtocolReportApi(APIView):
    """A protocol's report as JSON, for researchers; at most ``LIT2TEST_LEADERBOARD_MAX_REPLICATES`` replicates a request."""

    permission_classes = [IsResearcher]
    protocol: ClassVar[str]
    replicates_default: ClassVar[int] = 2000
    seed_default: ClassVar[int] = 0
    error: ClassVar[type[Exception]] = ValueError

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        raise NotImplementedError

    class InputSerializer(QueryParams):
        seed = serializers.IntegerField(required=False, min_value=0, max_value=MAX_SEED, default=0)

        def get_fields(self) -> dict[str, serializers.Field]:
            # The cap is a setting, read per request (as the other reports'): the schema and the message name it.
            return super().get_fields() | {
                "replicates": serializers.IntegerField(
                    required=False,
                    min_value=1,
                    max_value=settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES,
                    default=min(2000, settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES),
                    help_text="Paper-bootstrap replicates (server-side cap).",
                )
            }

    @extend_schema(parameters=[InputSerializer], responses=api_responses(OpenApiTypes.OBJECT, 400, 404))
    def get(self, request: Request, benchmark_id: int) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        benchmark = get_or_not_found(Benchmark.objects, f"no benchmark {benchmark_id}", pk=benchmark_id)
        if benchmark.protocol != self.protocol:
            raise NotFound(
                f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not {protocol_phrase(self.protocol)} one"
            )
        data = params.validated_data
        try:
            document = self.report(benchmark, data["replicates"], data["seed"])
        except self.error as exc:
            raise NotFound(str(exc)) from None
        return Response(document)
