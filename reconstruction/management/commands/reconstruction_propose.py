"""``reconstruction_propose``: create and launch a proposer run (five hypotheses per proposer and frozen seed) on the
shared engine (``reconstruction.runs``)."""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.launch import name_values
from arena.protocols import protocol_phrase
from arena.selectors import benchmark_resolve
from jobs.elicitation import elicit_progress, elicit_resume
from jobs.forms import ElicitRunFields, JudgeRunForm, argument_type
from jobs.progress_bar import wait_with_bar
from jobs.services import RunError
from reconstruction.models import PROTOCOL, ProposerRun
from reconstruction.runs import KIND, proposer_run_create, proposer_run_launch


def pairs_option(raw: str, what: str) -> dict[str, str]:
    """``NAME=VALUE,...`` as a dict (``arena.launch.name_values``), refusing malformed entries by name."""
    try:
        return name_values(raw, what)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


class Command(BaseCommand):
    help = (
        "Create and launch a Reconstruction proposer run: each proposer returns exactly five hypotheses citing the "
        "anonymous reference ids of each frozen seed bibliography it has none for yet (at most two retries, then invalid)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="a Reconstruction benchmark: id, name or name@version")
        parser.add_argument("--proposers", default="", help="comma-separated participant names (created when new)")
        parser.add_argument(
            "--families", default="", help="NAME=FAMILY,... model families for the judges' recusal (default: the name)"
        )
        parser.add_argument("--base-url", default="", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1")
        parser.add_argument("--api-key-env", default=None, help="environment variable holding the API key (never stored)")
        parser.add_argument("--model-map", default="", help="NAME=endpoint-model,... when the endpoint names models differently")
        parser.add_argument("--seeds", default="all", help="all | domain:NAME")
        gen, judge = ElicitRunFields.base_fields, JudgeRunForm.base_fields
        parser.add_argument("--concurrency", type=argument_type(gen["concurrency"]), default=8)
        parser.add_argument("--temperature", type=argument_type(gen["temperature"]), default=1.0)
        parser.add_argument("--max-tokens", type=argument_type(gen["max_tokens"]), default=2000)
        parser.add_argument("--timeout", type=argument_type(judge["timeout"]), default=300.0, help="seconds per call")
        parser.add_argument(
            "--resume", type=int, default=None, metavar="RUN", help="resume a paused, failed or cancelled proposer run"
        )
        parser.add_argument("--wait", action="store_true", help="show progress and exit when the run ends")

    def handle(self, *args: object, **o: object) -> None:
        try:
            benchmark = benchmark_resolve(reference=str(o["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if benchmark.protocol != PROTOCOL:
            raise CommandError(
                f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not a Reconstruction one; proposers run on Reconstruction benchmarks"
            )
        try:
            if o["resume"]:
                run = ProposerRun.objects.filter(pk=o["resume"], benchmark=benchmark).first()
                if run is None:
                    raise CommandError(f"{benchmark} has no proposer run {o['resume']}")
                reopened = elicit_resume(kind=KIND, run=run)
                self.stdout.write(f"run: {run.pk} resumed, {reopened} tasks reopened")
            else:
                run = proposer_run_create(
                    benchmark=benchmark,
                    base_url=str(o["base_url"]),
                    proposers=str(o["proposers"]).split(","),
                    families=pairs_option(str(o["families"]), "--families"),
                    seeds=str(o["seeds"]),
                    api_key_env=o["api_key_env"] or None,
                    model_names=pairs_option(str(o["model_map"]), "--model-map"),  # type: ignore[arg-type]
                    temperature=float(o["temperature"]),
                    max_tokens=int(o["max_tokens"]),  # type: ignore[arg-type, call-overload]
                    concurrency=int(o["concurrency"]),
                    timeout=float(o["timeout"]),  # type: ignore[call-overload, arg-type]
                )
                total = run.tasks.count()
                proposer_run_launch(run=run)
                self.stdout.write(f"run: {run.pk}")
                skipped = run.parameters.get("unfrozen_skipped") or 0
                self.stdout.write(
                    f"{total} hypothesis sets to elicit"
                    + (f"; {skipped} seeds skipped: no frozen bibliography" if skipped else "")
                )
        except RunError as exc:
            raise CommandError(str(exc)) from None
        if not o["wait"]:
            return
        final = wait_with_bar(lambda: elicit_progress(kind=KIND, run=ProposerRun.objects.get(pk=run.pk)), self.stdout.write)
        self.stdout.write(
            f"proposer run {run.pk} {final.status}: {final.accepted} sets of five stored, {final.invalid} invalid after every "
            f"attempt (those seeds are excluded for that proposer), {final.failed} failed"
        )
        if final.status != "completed":
            raise CommandError(
                f"proposer run {run.pk} ended {final.status}" + (f": {final.status_reason}" if final.status_reason else "")
            )
