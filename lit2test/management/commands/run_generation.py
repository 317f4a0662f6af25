from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.selectors import benchmark_resolve
from jobs.lifecycle import RunError
from jobs.progress_bar import wait_with_bar
from lit2test.generation import generation_run_create, generation_run_launch
from lit2test.models import GenerationRun
from lit2test.selectors import generation_progress


class Command(BaseCommand):
    help = "Create and launch a generation run: each participant writes a six-field proposal for each context with text."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark")
        parser.add_argument("--base-url", required=True)
        parser.add_argument("--api-key-env", default=None)
        parser.add_argument("--participants", default="", help="comma-separated names (default: all)")
        parser.add_argument("--model-map", default="", help="NAME=endpoint-model,... when the endpoint names models differently")
        parser.add_argument("--contexts", default="all", help="all | batch:NAME")
        parser.add_argument("--temperature", type=float, default=1.0)
        parser.add_argument("--max-tokens", type=int, default=1600)
        parser.add_argument("--concurrency", type=int, default=8)
        parser.add_argument("--timeout", type=float, default=300.0)
        parser.add_argument("--wait", action="store_true")

    def handle(self, *args: object, **o: object) -> None:
        try:
            benchmark = benchmark_resolve(reference=str(o["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        mapping = {}
        for item in filter(None, str(o["model_map"]).split(",")):
            name, sep, model = item.partition("=")
            if not sep:
                raise CommandError(f"--model-map entries look like NAME=MODEL, got {item!r}")
            mapping[name.strip()] = model.strip()
        try:
            run = generation_run_create(
                benchmark=benchmark,
                base_url=str(o["base_url"]),
                api_key_env=o["api_key_env"],  # type: ignore[arg-type]
                participants=[p.strip() for p in str(o["participants"]).split(",") if p.strip()] or None,
                contexts=str(o["contexts"]),
                temperature=float(o["temperature"]),
                max_tokens=int(o["max_tokens"]),  # type: ignore[arg-type, call-overload]
                concurrency=int(o["concurrency"]),
                timeout=float(o["timeout"]),
                model_names=mapping,  # type: ignore[call-overload, arg-type]
            )
            generation_run_launch(run=run)
        except RunError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"run: {run.pk}")
        self.stdout.write(f"{run.tasks.count()} proposals to elicit")
        if not o["wait"]:
            return
        final = wait_with_bar(lambda: generation_progress(run=GenerationRun.objects.get(pk=run.pk)), self.stdout.write)
        self.stdout.write(f"generation run {run.pk} {final.status}: {final.done} stored, {final.failed} failed")
        if final.status != "completed":
            raise CommandError(
                f"generation run {run.pk} ended {final.status}" + (f": {final.status_reason}" if final.status_reason else "")
            )
