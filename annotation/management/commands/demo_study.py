from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from annotation.demo import LABELLERS, STUDY_NAME, demo_labellers, demo_labels_seed
from annotation.models import Study
from annotation.services import StudyCreateError, eligible_contexts, study_create
from arena.commands import seed_argument
from arena.models import Benchmark

DEMO_ANNOTATORS = ("annotator1", "annotator2", "annotator3")
# The demo's own studies are found by these names, never as "the newest study of a round": a study a researcher
# creates in the demo is theirs, and a second `make demo` must neither report it nor skip the demo's.
PRACTICE_NAME = "Demo practice round"
FORMAL_NAME = "Demo formal round"


class Command(BaseCommand):
    help = (
        "Create the demo's formal study and its practice study on contexts the formal round does not use "
        "(annotator1..3), as the protocol runs a practice round on held-out cases before the formal round. "
        "Each is created once; a second run reports the demo's own studies. With --synthetic-labels, also a formal "
        "study on the same items labelled by a word-count rule (annotation/demo.py): demo data, not human judgments."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--benchmark", default="lit2test")
        parser.add_argument(
            "--practice-contexts", type=int, default=2, help="contexts held out for the practice round (default 2)"
        )
        parser.add_argument(
            "--contexts",
            type=int,
            default=13,
            help="formal round: at most this many contexts (default 13), leaving the practice round its contexts",
        )
        parser.add_argument("--pairs-per-context", type=int, default=5, help="items per context (default 5, as in create_study)")
        parser.add_argument("--seed", type=seed_argument, default=20260101)
        parser.add_argument(
            "--synthetic-labels",
            action="store_true",
            help=f"also create the study {STUDY_NAME!r}, labelled by the synthetic accounts {', '.join(LABELLERS)} with a "
            "word-count rule (annotation/demo.py), so that agreement figures and the leaderboard's Human WR have content "
            "on a fresh demo; scripts/demo.sh passes it",
        )

    def handle(self, *args: object, **options: object) -> None:
        benchmark = Benchmark.objects.filter(name=options["benchmark"]).order_by("-created_at", "-id").first()
        if benchmark is None:
            self.stdout.write(f"no benchmark {options['benchmark']!r}: import the release first; no study created")
            return
        users = list(get_user_model().objects.filter(username__in=DEMO_ANNOTATORS).order_by("username"))
        if not users:
            self.stdout.write("no demo annotators (run demo_setup first); no study created")
            return
        k = int(options["pairs_per_context"])
        n_practice = int(options["practice_contexts"])
        # The formal study leaves n_practice contexts unused, and the practice study is created second on those
        # (study_create holds each round's contexts out of the other): the newer study is listed first to the
        # annotators, so they meet the practice round first, as the protocol has it.
        with transaction.atomic():
            # Two at once queue here (PostgreSQL): the second finds the first's studies by their names.
            benchmark.lock()
            reserve = 0 if self._existing(benchmark, Study.Round.PRACTICE, PRACTICE_NAME) else n_practice
            formal = int(options["contexts"])
            if options["synthetic_labels"]:
                # Before the formal round, drawn like it (same contexts and items): once someone labels the formal
                # round, that newer study is the leaderboard's Human WR and the synthetic labels step aside.
                self._synthetic(benchmark, formal, k, options, reserve=reserve)
            self._study(benchmark, users, Study.Round.FORMAL, FORMAL_NAME, formal, 2, k, options, reserve=reserve)
            self._study(benchmark, users, Study.Round.PRACTICE, PRACTICE_NAME, n_practice, 0, k, options)

    @staticmethod
    def _existing(benchmark: Benchmark, round: str, name: str) -> Study | None:
        return Study.objects.filter(benchmark=benchmark, round=round, name=name).order_by("created_at", "id").first()

    def _synthetic(self, benchmark: Benchmark, n_contexts: int, k: int, options: dict, *, reserve: int) -> None:
        if self._existing(benchmark, Study.Round.FORMAL, STUDY_NAME) is None:
            labellers = demo_labellers()
        else:
            labellers = []  # the study is there: _study reports it
        study = self._study(
            benchmark,
            labellers,
            Study.Round.FORMAL,
            STUDY_NAME,
            n_contexts,
            2,
            k,
            options,
            reserve=reserve,
            label="synthetic labels",
        )
        if study is not None:
            made = demo_labels_seed(study=study)
            self.stdout.write(f"  {made} synthetic labels (a word-count rule, not human judgments; annotation/demo.py)")

    def _study(  # noqa: ANN001
        self, benchmark, users, round, name, n_contexts, n_controls, k, options, *, reserve: int = 0, label: str = ""
    ) -> Study | None:
        """The study made, or None (it was there already, or could not be made: the output says which)."""
        label = label or f"{round} study"
        existing = self._existing(benchmark, round, name)
        if existing:
            self.stdout.write(f"{label}: {existing.pk} (already there)")
            return None
        other = Study.Round.FORMAL if round == Study.Round.PRACTICE else Study.Round.PRACTICE
        available = len(eligible_contexts(benchmark=benchmark, exclude_round=other)[0])
        if available == 0:
            self.stderr.write(f"demo {label} not created: the benchmark's {other} studies use every context with text")
            return None
        n = min(n_contexts, available - reserve) if available > reserve else min(n_contexts, available)
        try:
            study = study_create(
                benchmark=benchmark,
                n_contexts=n,
                annotators=users,
                round=round,
                n_naive_controls=min(n_controls, n),
                pairs_per_context=k,
                seed=int(options["seed"]),
                name=name,
            )
        except StudyCreateError as exc:
            self.stderr.write(f"demo {label} not created: {exc}")
            return None
        items = study.items.count()
        self.stdout.write(f"{label}: {study.pk}")
        self.stdout.write(
            f"  {name}: {study.n_contexts} contexts, {items} items ({study.n_naive_controls} hidden controls) "
            f"for {', '.join(u.username for u in users)}"
        )
        return study
