"""``reconstruction_swiss``: start a Swiss selection (per seed and slot, a Swiss tournament among the proposers'
hypotheses, round by round as judge runs on the shared engine), move one on, or show where it stands.

It prints the selection's summary as one JSON line; a finished selection's champions drawn by lot are listed in it
(``drawn_by_lot``) and, one line each, on stderr: a champion no vote decided is not a judged one."""

from __future__ import annotations

import json
import time

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.models import JudgeRun
from arena.protocols import protocol_phrase
from arena.selectors import benchmark_resolve
from jobs.forms import argument_type
from jobs.services import RunError
from reconstruction.forms import SwissSelectionForm
from reconstruction.models import PROTOCOL, SWISS_KIND, SwissSelection
from reconstruction.swiss import selection_advance, selection_create, selection_lots

from .reconstruction_propose import pairs_option


def selection_summary(selection: SwissSelection) -> dict[str, object]:
    tournaments = list(selection.tournaments.all())
    return {
        "selection": selection.pk,
        "name": selection.participant.name,
        "status": selection.status,
        "round": selection.round,
        "tournaments": len(tournaments),
        "champions": sum(t.champion_id is not None for t in tournaments),
        "rounds": max((t.rounds for t in tournaments), default=0),
        "problem": selection.parameters.get("problem", ""),
        "drawn_by_lot": [{k: lot[k] for k in ("seed", "slot", "votes", "why")} for lot in selection_lots(selection)],
    }


class Command(BaseCommand):
    help = (
        "Start a Swiss selection among proposers' hypotheses (--name, --proposers, --judges MODEL=FAMILY,...), or move one "
        "on (--advance ID: after a failed round run was resumed), or show one (--status ID)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="a Reconstruction benchmark: id, name or name@version")
        parser.add_argument("--name", default="", help="the selection system's name (its champions' participant)")
        parser.add_argument("--proposers", default="", help="comma-separated participant names whose hypotheses compete")
        parser.add_argument("--judges", default="", help="MODEL=FAMILY,...: the judges and their model families")
        parser.add_argument("--base-url", default="", help="the judges' OpenAI-compatible endpoint")
        parser.add_argument("--api-key-env", default=None, help="environment variable holding the API key (never stored)")
        # Numbers are checked by the launch page's own fields: a bad value is refused in the form's words.
        fields = SwissSelectionForm.base_fields
        parser.add_argument("--seed", type=argument_type(fields["seed"]), default=0, help="seeds the pairing and tie-break lots")
        parser.add_argument("--concurrency", type=argument_type(fields["concurrency"]), default=8)
        parser.add_argument("--timeout", type=argument_type(fields["timeout"]), default=120.0, help="seconds per call")
        parser.add_argument("--advance", type=int, default=None, metavar="ID")
        parser.add_argument("--status", type=int, default=None, metavar="ID")
        parser.add_argument("--wait", action="store_true", help="wait until the selection completes or waits for a resume")

    def handle(self, *args: object, **o: object) -> None:
        try:
            benchmark = benchmark_resolve(reference=str(o["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if benchmark.protocol != PROTOCOL:
            raise CommandError(
                f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not a Reconstruction one; Swiss selections run on Reconstruction benchmarks"
            )
        try:
            if o["advance"] or o["status"]:
                selection = SwissSelection.objects.filter(pk=o["advance"] or o["status"], benchmark=benchmark).first()
                if selection is None:
                    raise CommandError(f"{benchmark} has no Swiss selection {o['advance'] or o['status']}")
                if o["advance"]:
                    selection_advance(selection_id=selection.pk)
            else:
                judges = [{"model": m, "family": f} for m, f in pairs_option(str(o["judges"]), "--judges").items()]
                selection = selection_create(
                    benchmark=benchmark,
                    name=str(o["name"]),
                    proposers=str(o["proposers"]).split(","),
                    judges=judges,
                    seed=int(o["seed"]),
                    base_url=str(o["base_url"]),
                    api_key_env=o["api_key_env"] or None,  # type: ignore[call-overload, arg-type]
                    concurrency=int(o["concurrency"]),
                    timeout=float(o["timeout"]),  # type: ignore[call-overload, arg-type]
                )
        except RunError as exc:
            raise CommandError(str(exc)) from None
        while o["wait"]:
            selection.refresh_from_db()
            if selection.status != SwissSelection.Status.RUNNING:
                break
            time.sleep(1)
        selection.refresh_from_db()
        self.stdout.write(json.dumps(selection_summary(selection)))
        for lot in selection_lots(selection):
            self.stderr.write(f"Swiss selection {selection.pk}, seed {lot['seed']} slot {lot['slot']}: {lot['why']}")
        if selection.status == SwissSelection.Status.WAITING and selection.parameters.get("problem"):
            raise CommandError(
                f"Swiss selection {selection.pk} waits: {selection.parameters['problem']}; fix that, then run "
                f"reconstruction_swiss {benchmark.pk} --advance {selection.pk}"
            )
        if selection.status == SwissSelection.Status.WAITING:
            failed = JudgeRun.objects.filter(
                subjects=SWISS_KIND,
                parameters__options__selection=selection.pk,
                status__in=[JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED],
            ).values_list("pk", flat=True)
            raise CommandError(
                f"Swiss selection {selection.pk} waits: round run(s) {', '.join(map(str, failed))} ended without completing; "
                "resume them (dashboard or run page), and the selection moves on when they complete"
            )
