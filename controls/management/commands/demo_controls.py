"""``manage.py demo_controls BENCHMARK``: the demo's controls runs (``make demo``), made by the demo heuristic judge,
which is not a language model (``controls.demo``). No network, no model; a second run adds nothing."""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.selectors import benchmark_resolve
from controls.demo import DemoControlsError, demo_controls_record


class Command(BaseCommand):
    help = (
        "Demo only: record a holistic and a structured controls run of the benchmark's approved control variants, judged by "
        "a deterministic word-count heuristic (not a language model), and replay the holistic one through the run engine, "
        "so the Controls page has content. Runs already there are kept; nothing is added twice."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name (newest version) or name@version")

    def handle(self, *args: object, **options: object) -> None:
        try:
            benchmark = benchmark_resolve(reference=str(options["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        try:
            summary = demo_controls_record(benchmark=benchmark)
        except DemoControlsError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(summary.line())
