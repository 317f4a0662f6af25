from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.errors import AppError
from reconstruction.demo import DEMO_NAME, SEED, demo_build, demo_swiss


class Command(BaseCommand):
    help = f"Create the synthetic Reconstruction demo benchmark {DEMO_NAME!r} (reconstruction/demo.py). Running it again changes nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--seed", type=int, default=SEED, help=f"generator seed (default {SEED})")
        parser.add_argument("--name", default=DEMO_NAME, help=f"benchmark name (default {DEMO_NAME})")

    def handle(self, *args: object, seed: int, name: str, **options: object) -> None:
        try:  # a refusal (another demo build made the benchmark at the same moment, say) is a message, not a traceback
            self.stdout.write(demo_build(seed=seed, name=name).line())
            self.stdout.write(demo_swiss(name=name, seed=seed))
        except AppError as exc:
            raise CommandError(str(exc)) from None
