from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from annotation.models import Study
from annotation.services import StudyCreateError, eligible_contexts, study_create
from arena.models import Benchmark

DEMO_ANNOTATORS = ("annotator1", "annotator2", "annotator3")


class Command(BaseCommand):
    help = "Create the demo's formal study (annotator1..3, all available text contexts) unless the benchmark already has one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--benchmark", default="lit2test")
        parser.add_argument("--contexts", type=int, default=13)
        parser.add_argument("--seed", type=int, default=20260101)

    def handle(self, *args: object, **options: object) -> None:
        benchmark = Benchmark.objects.filter(name=options["benchmark"]).order_by("-created_at", "-id").first()
        if benchmark is None:
            self.stdout.write(f"no benchmark {options['benchmark']!r}: import the release first; no study created")
            return
        existing = Study.objects.filter(benchmark=benchmark, round=Study.Round.FORMAL).first()
        if existing:
            self.stdout.write(f"study: {existing.pk} (already there)")
            return
        users = list(get_user_model().objects.filter(username__in=DEMO_ANNOTATORS).order_by("username"))
        if not users:
            self.stdout.write("no demo annotators (run demo_setup first); no study created")
            return
        available = len(eligible_contexts(benchmark=benchmark, exclude_round=Study.Round.PRACTICE)[0])
        try:
            study = study_create(
                benchmark=benchmark,
                n_contexts=min(int(options["contexts"]), available),
                annotators=users,
                round=Study.Round.FORMAL,
                n_naive_controls=min(2, available),
                seed=int(options["seed"]),
                name="Demo formal round",
            )
        except StudyCreateError as exc:
            self.stderr.write(f"demo study not created: {exc}")
            return
        self.stdout.write(f"study: {study.pk}")
        self.stdout.write(f"{study.items.count()} items for {', '.join(u.username for u in users)}")
