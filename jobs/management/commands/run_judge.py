from __future__ import annotations

import argparse

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.models import Benchmark, JudgeRun
from arena.selectors import benchmark_resolve
from jobs.forms import JudgeRunForm, argument_type
from jobs.selectors import run_progress
from jobs.services import ORDERS, JudgeRunRequest, RunError, judge_run_create, judge_run_launch
from jobs.subjects import subjects_of

from ._progress import wait_with_bar


def _orders(raw: str) -> tuple[str, ...]:
    chosen = tuple(part.strip() for part in raw.split(","))
    if not all(order in ORDERS for order in chosen):
        raise argparse.ArgumentTypeError(
            f"{raw!r}: the orders are {' and '.join(map(repr, ORDERS))}, one of them or both separated by a comma"
        )
    return chosen


def _kind_and_type(benchmark: Benchmark, task_kind: str | None, run_type: str | None) -> tuple[str | None, str]:
    """The task kind and run type a run gets when the command does not name them: a HypoArena benchmark's runs judge its
    matches (``arena``) or score its submissions (``--run-type rubric``); a Lit2Test benchmark's judge its pairs or, with
    ``--pairs controls``, its controls (the service decides that from ``pairs``); an Intrinsic benchmark's rank its
    papers' candidates (``listwise``). An explicit kind on a benchmark of
    the other protocol is passed on: the service refuses it, saying why."""
    if task_kind is None and benchmark.protocol == Benchmark.Protocol.HYPOARENA:
        task_kind = JudgeRun.Subjects.HYPOARENA_RUBRIC if run_type == "rubric" else JudgeRun.Subjects.HYPOARENA
    if task_kind is None and benchmark.protocol == Benchmark.Protocol.RECONSTRUCTION:
        task_kind = JudgeRun.Subjects.RECONSTRUCTION_MATCH
    if task_kind is None and benchmark.protocol == Benchmark.Protocol.INTRINSIC:
        task_kind = JudgeRun.Subjects.INTRINSIC_LISTWISE
    if run_type is None:
        run_type = {
            JudgeRun.Subjects.HYPOARENA: "arena",
            JudgeRun.Subjects.HYPOARENA_RUBRIC: "rubric",
            JudgeRun.Subjects.RECONSTRUCTION_MATCH: "match",
            JudgeRun.Subjects.RECONSTRUCTION_SWISS: "swiss",
            JudgeRun.Subjects.INTRINSIC_LISTWISE: "listwise",
        }.get(task_kind or "", "holistic")
    return task_kind, run_type


class Command(BaseCommand):
    help = "Create and launch a judge run through Celery, exactly as the dashboard does."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("--model", required=True, help="the judge model as the endpoint names it")
        parser.add_argument("--base-url", default="", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1")
        parser.add_argument("--api-key-env", default=None, help="environment variable holding the API key")
        parser.add_argument("--replay-of", type=int, default=None, help="replay a stored run instead of calling an endpoint")
        parser.add_argument(
            "--pairs",
            default="all",
            help="all | batch:NAME | sample:N | controls | controls:KIND,KIND (the approved diagnostic control variants, each "
            "against its clean source; their verdicts go to controls_report, never to a leaderboard); on a HypoArena "
            "benchmark: all | domain:NAME | sample:N (matches, or submissions for a rubric run); on a Reconstruction "
            "benchmark: all | domain:NAME | system:NAME | sample:N (hypotheses to match-judge); on an Intrinsic benchmark: "
            "all | discipline:NAME | sample:N (papers to rank)",
        )
        parser.add_argument(
            "--orders",
            type=_orders,
            default=ORDERS,
            metavar="{original,reverse}[,...]",
            help="the presentation orders to judge each pair in: original (A as the benchmark orients it), reverse "
            "(A and B swapped) or both, comma-separated (default: original,reverse)",
        )
        parser.add_argument(
            "--run-type",
            default=None,
            choices=["holistic", "structured", "arena", "rubric", "match", "listwise"],
            help="holistic (default) or structured for a Lit2Test benchmark; arena (default) or rubric for a HypoArena one; "
            "match for a Reconstruction one; listwise for an Intrinsic one",
        )
        parser.add_argument(
            "--judge-family",
            default="",
            help="the judge's model family (Reconstruction match runs: the judge recuses on hypotheses of its own family)",
        )
        parser.add_argument(
            "--task-kind",
            default=None,
            choices=JudgeRun.Subjects.values,
            help="what the run judges (default: from the benchmark's protocol, --run-type and --pairs)",
        )
        parser.add_argument("--prompt-version", default=None)
        # Numbers are checked by the run form's own fields: the command accepts exactly what the dashboard does.
        field = JudgeRunForm.base_fields
        parser.add_argument("--concurrency", type=argument_type(field["concurrency"]), default=8)
        parser.add_argument(
            "--rate", type=argument_type(field["rate_per_second"]), default=None, help="requests per second to the endpoint"
        )
        parser.add_argument("--temperature", type=argument_type(field["temperature"]), default=0.0)
        parser.add_argument("--max-tokens", type=argument_type(field["max_tokens"]), default=1024)
        parser.add_argument("--timeout", type=argument_type(field["timeout"]), default=120.0, help="seconds per call")
        for name in ("price_per_1k_prompt", "price_per_1k_completion"):
            parser.add_argument(
                "--" + name.replace("_", "-"),
                type=argument_type(field[name]),
                default=None,
                metavar="USD",
                help=field[name].help_text,
            )
        parser.add_argument("--canonical", action="store_true", help="this run is the version's canonical judge")
        parser.add_argument("--drivers", type=int, default=1, help="driver tasks to spread over workers")
        parser.add_argument("--label", default=None)
        parser.add_argument(
            "--seed",
            type=int,
            default=0,
            help="seed of the random draw for --pairs sample:N (default: 0; the same seed draws the same pairs)",
        )
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
        task_kind, run_type = _kind_and_type(benchmark, o["task_kind"], o["run_type"])  # type: ignore[arg-type]
        request = JudgeRunRequest(
            benchmark=benchmark,
            task_kind=task_kind,
            judge_model=str(o["model"]),
            base_url=str(o["base_url"]),
            provider=JudgeRun.Provider.RECORDED if replay else JudgeRun.Provider.OPENAI_COMPATIBLE,
            replay_of=replay,
            api_key_env=o["api_key_env"],
            run_type=run_type,
            prompt_version=o["prompt_version"],  # type: ignore[arg-type]
            pairs=str(o["pairs"]),
            orders=o["orders"],
            concurrency=int(o["concurrency"]),  # type: ignore[arg-type, call-overload]
            rate_per_second=o["rate"],
            temperature=o["temperature"],
            max_tokens=o["max_tokens"],  # type: ignore[arg-type]
            timeout=float(o["timeout"]),
            canonical=bool(o["canonical"]),
            label=o["label"],
            seed=int(o["seed"]),  # type: ignore[arg-type, call-overload]
            price_per_1k_prompt=o["price_per_1k_prompt"],
            price_per_1k_completion=o["price_per_1k_completion"],  # type: ignore[arg-type]
            options={"judge_family": str(o["judge_family"])} if o["judge_family"] else {},
        )
        try:
            run, skipped = judge_run_create(request=request)
            judge_run_launch(run=run, drivers=int(o["drivers"]))  # type: ignore[call-overload]
        except RunError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"run: {run.pk}")
        total = subjects_of(run).task_model.objects.filter(run=run).count()
        self.stdout.write(
            f"{total} {'ordered tasks' if subjects_of(run).ordered else 'tasks'}"
            + (f"; {skipped} pairs skipped: their proposals have no text" if skipped else "")
            + (" (replay of stored judgments)" if replay else "")
        )
        if not o["wait"]:
            return
        final = wait_with_bar(lambda: run_progress(run=JudgeRun.objects.get(pk=run.pk)), self.stdout.write)
        self.stdout.write(
            f"run {run.pk} {final.status}: {final.accepted} accepted, {final.invalid} invalid, {final.failed} failed"
        )
        if final.status != "completed":
            raise CommandError(f"run {run.pk} ended {final.status}" + (f": {final.status_reason}" if final.status_reason else ""))
