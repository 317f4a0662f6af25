from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.commands import seed_argument
from arena.errors import AppError
from intrinsic.demo import DEMO_NAME, SEED, demo_build, demo_live_build


class Command(BaseCommand):
    help = (
        f"Create the synthetic Intrinsic-scoring demo benchmark {DEMO_NAME!r} (intrinsic/demo.py): generated papers and "
        "candidates, and scores drawn by a seeded generator, not by a language model. Running it again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--seed", type=seed_argument, default=SEED, help=f"generator seed (default {SEED})")
        parser.add_argument("--name", default=DEMO_NAME, help=f"benchmark name (default {DEMO_NAME})")

    def handle(self, *args: object, seed: int, name: str, **options: object) -> None:
        try:  # a refusal (another demo build made the benchmark at the same moment, say) is a message, not a traceback
            self.stdout.write(demo_build(seed=seed, name=name).line())
            self.stdout.write(demo_live_build(seed=seed).line())
        except AppError as exc:
            raise CommandError(str(exc)) from None
