from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Study
from annotation.services import StudyCreateError, study_create
from arena.selectors import benchmark_resolve


class Command(BaseCommand):
    help = "Create a blind human calibration study (the same service as the dashboard's study form). Prints `study: ID` first."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, NAME@VERSION, or NAME (newest version)")
        parser.add_argument("--contexts", type=int, required=True, help="number of contexts to sample")
        parser.add_argument("--annotators", required=True, help="comma-separated usernames (members of the annotators group)")
        parser.add_argument("--round", choices=Study.Round.values, default=Study.Round.FORMAL)
        parser.add_argument("--naive-controls", type=int, default=2)
        parser.add_argument("--cap-minutes", type=int, default=10)
        parser.add_argument("--per-item", type=int, default=None, help="annotators per item (default: all)")
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--name", default="")

    def handle(self, *args: object, **options: object) -> None:
        try:
            benchmark = benchmark_resolve(reference=str(options["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from exc
        names = [n.strip() for n in str(options["annotators"]).split(",") if n.strip()]
        users = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
        missing = [n for n in names if n not in users]
        if missing:
            raise CommandError(f"unknown users: {', '.join(missing)}")
        try:
            study = study_create(
                benchmark=benchmark,
                n_contexts=int(options["contexts"]),
                annotators=[users[n] for n in names],
                round=str(options["round"]),
                n_naive_controls=int(options["naive_controls"]),
                cap_minutes=int(options["cap_minutes"]),
                annotators_per_item=options["per_item"],
                seed=options["seed"],
                name=str(options["name"]),
            )
        except StudyCreateError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"study: {study.pk}")
        n_items = study.items.count()
        n_controls = study.items.filter(is_control=True).count()
        self.stdout.write(
            f"{study.name}: {study.round}, {study.n_contexts} contexts, {n_items - n_controls} real pairs + {n_controls} hidden controls, "
            f"{study.assignments.count()} assignments for {', '.join(names)}; cap {study.cap_minutes} min; seed {study.seed}"
        )
        for stratum, info in study.stratification.get("strata", {}).items():
            self.stdout.write(f"  stratum {stratum}: {len(info['chosen'])} of {info['eligible']}")
