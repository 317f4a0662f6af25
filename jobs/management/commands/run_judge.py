from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.models import JudgeRun
from arena.selectors import benchmark_resolve
from jobs.selectors import run_progress
from jobs.services import JudgeRunRequest, RunError, judge_run_create, judge_run_launch

from ._progress import wait_with_bar


class Command(BaseCommand):
    help = "Create and launch a judge run through Celery, exactly as the dashboard does."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("--model", required=True, help="the judge model as the endpoint names it")
        parser.add_argument("--base-url", default="", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1")
        parser.add_argument("--api-key-env", default=None, help="environment variable holding the API key")
        parser.add_argument("--replay-of", type=int, default=None, help="replay a stored run instead of calling an endpoint")
        parser.add_argument("--pairs", default="all", help="all | batch:NAME | sample:N")
        parser.add_argument("--orders", default="original,reverse")
        parser.add_argument("--run-type", default="holistic", choices=["holistic", "structured"])
        parser.add_argument("--prompt-version", default=None)
        parser.add_argument("--concurrency", type=int, default=8)
        parser.add_argument("--rate", type=float, default=None, help="requests per second to the endpoint")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-tokens", type=int, default=1024)
        parser.add_argument("--timeout", type=float, default=120.0)
        parser.add_argument("--canonical", action="store_true", help="this run is the version's canonical judge")
        parser.add_argument("--drivers", type=int, default=1, help="driver tasks to spread over workers")
        parser.add_argument("--label", default=None)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--wait", action="store_true", help="show progress and exit when the run ends")

    def handle(self, *args: object, **o: object) -> None:
        try:
            benchmark = benchmark_resolve(reference=str(o["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        replay = None
        if o["replay_of"]:
            replay = JudgeRun.objects.filter(pk=o["replay_of"], benchmark=benchmark).first()
            if replay is None:
                raise CommandError(f"{benchmark} has no run {o['replay_of']} to replay")
        request = JudgeRunRequest(
            benchmark=benchmark, judge_model=str(o["model"]), base_url=str(o["base_url"]),
            provider=JudgeRun.Provider.RECORDED if replay else JudgeRun.Provider.OPENAI_COMPATIBLE, replay_of=replay,
            api_key_env=o["api_key_env"], run_type=str(o["run_type"]), prompt_version=o["prompt_version"],  # type: ignore[arg-type]
            pairs=str(o["pairs"]), orders=tuple(str(o["orders"]).split(",")), concurrency=int(o["concurrency"]),  # type: ignore[call-overload]
            rate_per_second=o["rate"], temperature=o["temperature"], max_tokens=o["max_tokens"],  # type: ignore[arg-type]
            timeout=float(o["timeout"]), canonical=bool(o["canonical"]), label=o["label"], seed=int(o["seed"]),  # type: ignore[arg-type, call-overload]
        )
        try:
            run, skipped = judge_run_create(request=request)
            judge_run_launch(run=run, drivers=int(o["drivers"]))  # type: ignore[call-overload]
        except RunError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"run: {run.pk}")
        total = run.tasks.count()
        self.stdout.write(
            f"{total} ordered tasks" + (f"; {skipped} pairs skipped: their proposals have no text" if skipped else "")
            + (" (replay of stored judgments)" if replay else "")
        )
        if not o["wait"]:
            return
        final = wait_with_bar(lambda: run_progress(run=JudgeRun.objects.get(pk=run.pk)), self.stdout.write)
        self.stdout.write(f"run {run.pk} {final.status}: {final.accepted} accepted, {final.invalid} invalid, {final.failed} failed")
        if final.status != "completed":
            raise CommandError(f"run {run.pk} ended {final.status}" + (f": {final.status_reason}" if final.status_reason else ""))
