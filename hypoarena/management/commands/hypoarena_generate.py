"""``hypoarena_generate``: create and launch a HypoArena generation run (K hypothesis–evidence pairs per participant
and case) through the same services the engine drives (``hypoarena.generation``), as ``run_generation`` does for
Lit2Test's six-field proposals."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.protocols import protocol_phrase
from arena.selectors import benchmark_resolve
from hypoarena.generation import DEFAULT_K, KIND, generation_run_create, generation_run_launch
from hypoarena.models import PROTOCOL, GenerationRun
from jobs.elicitation import elicit_progress
from jobs.forms import ElicitRunFields, JudgeRunForm, argument_type
from jobs.progress_bar import wait_with_bar
from jobs.services import RunError

# K's bounds are the service's (generation_run_create refuses anything else); checked here first so that a bad
# value is refused by the parser, before the benchmark is even looked up.
K_FIELD = forms.IntegerField(min_value=1, max_value=20)


class Command(BaseCommand):
    help = (
        "Create and launch a HypoArena generation run: each participant (default: all but the source-derived Reference) "
        "proposes K hypothesis-evidence pairs for each case it has no submission for (one pair in a singleton domain)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="a HypoArena benchmark: id, name or name@version")
        parser.add_argument("--base-url", required=True, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1")
        parser.add_argument(
            "--api-key-env", default=None, help="environment variable holding the API key (the key is never stored)"
        )
        parser.add_argument(
            "--participants", default="", help="comma-separated participant names (default: all but the Reference)"
        )
        parser.add_argument("--model-map", default="", help="NAME=endpoint-model,... when the endpoint names models differently")
        parser.add_argument("--cases", default="all", help="all | domain:NAME")
        # Numbers are checked by form fields: the generation form's, the judge form's for the rate-free timeout, and
        # K's own bounds; a bad value is refused in the form's words.
        gen, judge = ElicitRunFields.base_fields, JudgeRunForm.base_fields
        parser.add_argument(
            "--k", type=argument_type(K_FIELD), default=DEFAULT_K, help=f"pairs per submission, 1 to 20 (default {DEFAULT_K})"
        )
        parser.add_argument("--concurrency", type=argument_type(gen["concurrency"]), default=8)
        parser.add_argument("--temperature", type=argument_type(gen["temperature"]), default=1.0)
        parser.add_argument("--max-tokens", type=argument_type(gen["max_tokens"]), default=1600)
        parser.add_argument("--timeout", type=argument_type(judge["timeout"]), default=300.0, help="seconds per call")
        parser.add_argument("--wait", action="store_true", help="show progress and exit when the run ends")

    def handle(self, *args: object, **o: object) -> None:
        try:
            benchmark = benchmark_resolve(reference=str(o["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if benchmark.protocol != PROTOCOL:
            own = {
                "lit2test": "elicit its proposals with run_generation",
                "reconstruction": "elicit its hypotheses with reconstruction_propose",
            }
            raise CommandError(
                f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not a HypoArena one; "
                + own.get(benchmark.protocol, "HypoArena generation runs on HypoArena benchmarks only")
            )
        mapping: dict[str, str] = {}
        for item in filter(None, str(o["model_map"]).split(",")):
            name, sep, model = item.partition("=")
            if not sep or not name.strip() or not model.strip():
                raise CommandError(f"--model-map entries look like NAME=MODEL, got {item!r}")
            mapping[name.strip()] = model.strip()
        participants = [p.strip() for p in str(o["participants"]).split(",") if p.strip()] or None
        try:
            run = generation_run_create(
                benchmark=benchmark,
                base_url=str(o["base_url"]),
                api_key_env=o["api_key_env"] or None,  # type: ignore[arg-type]
                participants=participants,
                cases=str(o["cases"]),
                k=int(o["k"]),  # type: ignore[call-overload]
                temperature=float(o["temperature"]),
                max_tokens=int(o["max_tokens"]),  # type: ignore[arg-type, call-overload]
                concurrency=int(o["concurrency"]),
                timeout=float(o["timeout"]),
                model_names=mapping,  # type: ignore[call-overload, arg-type]
            )
            total = run.tasks.count()
            generation_run_launch(run=run)
        except RunError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"run: {run.pk}")
        self.stdout.write(f"{total} submissions to elicit (K = {o['k']}; 1 in singleton domains)")
        if not o["wait"]:
            return
        final = wait_with_bar(lambda: elicit_progress(kind=KIND, run=GenerationRun.objects.get(pk=run.pk)), self.stdout.write)
        self.stdout.write(
            f"HypoArena generation run {run.pk} {final.status}: {final.accepted} submissions stored, "
            f"{final.invalid} invalid after every attempt, {final.failed} failed"
        )
        if final.status != "completed":
            raise CommandError(
                f"HypoArena generation run {run.pk} ended {final.status}"
                + (f": {final.status_reason}" if final.status_reason else "")
            )
