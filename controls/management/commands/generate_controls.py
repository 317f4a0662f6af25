from __future__ import annotations

import argparse

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.selectors import benchmark_resolve
from controls.services import KINDS, LLM_KINDS, ControlError, controls_generate, llm_kinds_error


def _kinds(raw: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = [k for k in chosen if k not in KINDS]
    if not chosen or unknown:
        raise argparse.ArgumentTypeError(
            f"{raw!r}: the kinds are {', '.join(KINDS)}, one or more separated by commas"
        )
    return chosen


class Command(BaseCommand):
    help = (
        "Make diagnostic control variants of a seeded choice of contexts. Template kinds (clear, rendering, "
        "falsifier_off, naive) need no model; subtle and sham are written by a model."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("--kinds", type=_kinds, required=True, metavar="KIND[,KIND...]", help=f"any of {', '.join(KINDS)}")
        parser.add_argument("--contexts", type=int, required=True, help="how many contexts (one source proposal each)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the choice of contexts and sources (default: 0)")
        parser.add_argument("--model", default=None, help="(subtle, sham) the model that writes the variants")
        parser.add_argument("--base-url", default=None, help="(subtle, sham) OpenAI-compatible endpoint")
        parser.add_argument("--api-key-env", default=None, help="(subtle, sham) environment variable holding the API key")

    def handle(self, *args: object, **o: object) -> None:
        kinds: tuple[str, ...] = o["kinds"]  # type: ignore[assignment]
        needs_model = [k for k in kinds if k in LLM_KINDS]
        if needs_model:
            raise CommandError(llm_kinds_error(needs_model))
        try:
            benchmark = benchmark_resolve(reference=str(o["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        try:
            summary = controls_generate(benchmark=benchmark, kinds=kinds, contexts=int(o["contexts"]), seed=int(o["seed"]))  # type: ignore[call-overload]
        except ControlError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(summary.line())
