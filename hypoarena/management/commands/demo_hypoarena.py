from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.commands import seed_argument
from arena.errors import AppError
from hypoarena.demo import CASES_PER_DOMAIN, DEMO_NAME, SEED, demo_build


class Command(BaseCommand):
    help = (
        f"Create the synthetic HypoArena demo benchmark {DEMO_NAME!r} (seeded: domains, cases, K-pair submissions, two "
        "recorded judge runs drawn from known strengths, rubric scores; see hypoarena/demo.py). Running it again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cases", type=int, default=CASES_PER_DOMAIN, help=f"cases per domain (default {CASES_PER_DOMAIN})")
        parser.add_argument("--seed", type=seed_argument, default=SEED, help=f"generator seed (default {SEED})")
        parser.add_argument("--name", default=DEMO_NAME, help=f"benchmark name (default {DEMO_NAME})")

    def handle(self, *args: object, cases: int, seed: int, name: str, **options: object) -> None:
        if not 1 <= cases <= 1000:
            raise CommandError(f"--cases must be from 1 to 1000, not {cases}")
        try:  # a refusal (another demo build made the benchmark at the same moment, say) is a message, not a traceback
            self.stdout.write(demo_build(cases_per_domain=cases, seed=seed, name=name).line())
        except AppError as exc:
            raise CommandError(str(exc)) from None
