from __future__ import annotations

import argparse

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.commands import seed_argument
from arena.selectors import benchmark_resolve
from controls.llm import LlmSettings
from controls.services import KINDS, ControlError, controls_generate


def _kinds(raw: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = [k for k in chosen if k not in KINDS]
    if not chosen or unknown:
        raise argparse.ArgumentTypeError(f"{raw!r}: the kinds are {', '.join(KINDS)}, one or more separated by commas")
    return chosen


def _positive(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


class Command(BaseCommand):
    help = (
        "Make diagnostic control variants of a seeded choice of contexts. Template kinds (clear, rendering, "
        "falsifier_off, naive) need no model; subtle and sham are written by a model (--model, --base-url, "
        "--api-key-env), validated by a second call, with up to 4 rounds and then a reserve template."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("--kinds", type=_kinds, required=True, metavar="KIND[,KIND...]", help=f"any of {', '.join(KINDS)}")
        parser.add_argument("--contexts", type=int, required=True, help="how many contexts (one source proposal each)")
        parser.add_argument(
            "--seed", type=seed_argument, default=0, help="seed of the choice of contexts and sources (default: 0)"
        )
        parser.add_argument("--model", default=None, help="(subtle, sham) the model that writes the variants")
        parser.add_argument("--base-url", default=None, help="(subtle, sham) OpenAI-compatible endpoint")
        parser.add_argument(
            "--api-key-env",
            default=None,
            help="(subtle, sham) environment variable holding the API key, e.g. X_API_KEY (omit for a local endpoint that takes none)",
        )
        parser.add_argument(
            "--validator-model", default=None, help="(subtle, sham) the model that validates each edit (default: --model)"
        )
        parser.add_argument(
            "--templates-only",
            action="store_true",
            help="(subtle, sham) make them with the deterministic reserve templates instead of a model: no network, but "
            "weaker and less natural edits than a model's (see controls/variants.py); for offline use and the demo",
        )
        parser.add_argument(
            "--concurrency", type=_positive, default=8, help="(subtle, sham) calls in flight at most (default: 8)"
        )

    def handle(self, *args: object, **o: object) -> None:
        kinds: tuple[str, ...] = o["kinds"]  # type: ignore[assignment]
        settings = LlmSettings(
            model=o["model"] or None,  # type: ignore[arg-type]
            base_url=o["base_url"] or None,  # type: ignore[arg-type]
            api_key_env=o["api_key_env"] or None,  # type: ignore[arg-type]
            validator_model=o["validator_model"] or None,  # type: ignore[arg-type]
            concurrency=int(o["concurrency"]),  # type: ignore[call-overload]
        )
        try:
            benchmark = benchmark_resolve(reference=str(o["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        try:
            summary = controls_generate(
                benchmark=benchmark,
                kinds=kinds,
                contexts=int(o["contexts"]),
                seed=int(o["seed"]),
                llm_settings=settings,  # type: ignore[call-overload]
                templates_only=bool(o["templates_only"]),
            )
        except ControlError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(summary.line())
