from __future__ import annotations

import argparse

from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Study
from annotation.services import MAX_CAP_MINUTES, StudyCreateError, study_create
from arena.selectors import benchmark_resolve


def at_least(minimum: int):  # noqa: ANN201
    """An argparse type: a whole number of at least ``minimum``, refused with a message that says so."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number of at least {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


class Command(BaseCommand):
    help = "Create a blind human calibration study (the same service as the dashboard's study form). Prints `study: ID` first."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, NAME@VERSION, or NAME (newest version)")
        parser.add_argument(
            "--contexts", type=at_least(1), required=True, metavar="N", help="number of contexts to sample (at least 1)"
        )
        parser.add_argument(
            "--annotators",
            required=True,
            metavar="USER,USER",
            help="comma-separated usernames (active members of the annotators group)",
        )
        parser.add_argument(
            "--round",
            choices=Study.Round.values,
            default=Study.Round.FORMAL,
            help="practice or formal (default formal); contexts of the other round's studies are held out",
        )
        parser.add_argument(
            "--naive-controls",
            type=at_least(0),
            default=2,
            metavar="N",
            help="hidden naive controls, one per context (default 2)",
        )
        parser.add_argument(
            "--pairs-per-context",
            type=at_least(1),
            default=None,
            metavar="K",
            help="items shown per context: K real pairs, or K-1 and the hidden control in a control context, chosen so that "
            "the control's proposal is not the odd one out by appearance count (at most 5 with controls for four models; "
            "the release showed 90 of 120 real pairs). Default: every real pair, and a control adds one more item",
        )
        parser.add_argument(
            "--cap-minutes",
            type=at_least(1),
            default=10,
            metavar="MINUTES",
            help=f"hard time cap per item, 1 to {MAX_CAP_MINUTES} (default 10)",
        )
        parser.add_argument("--per-item", type=at_least(1), default=None, metavar="N", help="annotators per item (default: all)")
        parser.add_argument(
            "--seed",
            type=at_least(0),
            default=None,
            metavar="S",
            help="seed of the sample, the controls, each annotator's order and A/B sides (default: random, recorded on the study)",
        )
        parser.add_argument("--name", default="", help="shown to the annotators (default: benchmark, version and date)")

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
                pairs_per_context=options["pairs_per_context"],
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
        k = options["pairs_per_context"]
        shown = "every pair of each context" if k is None else f"{k} items per context"
        self.stdout.write(
            f"{study.name}: {study.round}, {study.n_contexts} contexts ({shown}), {n_items - n_controls} real pairs + "
            f"{n_controls} hidden controls, {study.assignments.count()} assignments for {', '.join(names)}; "
            f"cap {study.cap_minutes} min; seed {study.seed}"
        )
        for stratum, info in study.stratification.get("strata", {}).items():
            self.stdout.write(f"  stratum {stratum}: {len(info['chosen'])} of {info['eligible']}")
        if n_controls and k is None:
            self.stderr.write(
                "warning: every real pair is shown, so each control's naive proposal appears once where every real one appears "
                "several times: annotators can spot it by counting. Use --pairs-per-context (e.g. 5) for a formal round."
            )
