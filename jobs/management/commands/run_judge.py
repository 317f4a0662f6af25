from __future__ import annotations

import argparse

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.models import Benchmark, JudgeRun
from arena.protocols import all_run_options, all_run_types, protocols, selection_options
from arena.selectors import benchmark_resolve
from jobs.adaptive import AdaptiveError, adaptive_parameters
from jobs.forms import JudgeRunForm, argument_type, run_types_help, selection_help
from jobs.progress_bar import wait_with_bar
from jobs.selectors import run_progress
from jobs.services import ORDERS, JudgeRunRequest, RunError, judge_run_create, judge_run_launch
from jobs.subjects import subjects_all, subjects_named, subjects_of


def _orders(raw: str) -> tuple[str, ...]:
    chosen = tuple(part.strip() for part in raw.split(","))
    if not all(order in ORDERS for order in chosen):
        raise argparse.ArgumentTypeError(
            f"{raw!r}: the orders are {' and '.join(map(repr, ORDERS))}, one of them or both separated by a comma"
        )
    return chosen


def _kind_and_type(benchmark: Benchmark, task_kind: str | None, run_type: str | None) -> tuple[str | None, str]:
    """The task kind and run type a run gets when the command does not name them (the protocol registry says).

    No run type: the task kind's own (the first of its prompts), else the benchmark protocol's first. A run type the
    benchmark's protocol does not have: that protocol's first kind, whose check then refuses the run type and names
    the protocol's own. Otherwise the task kind is left to the request (``JudgeRunRequest.subjects``), which routes a
    selection such as ``controls`` to the app that judges it."""
    spec = protocols.get(benchmark.protocol)
    if run_type is None:
        named = subjects_named(task_kind) if task_kind else None
        if named is not None:
            run_type = next(iter(named.default_prompts))
        elif spec is not None and spec.run_types:
            run_type = spec.run_types[0].name
        else:
            run_type = next((t.name for t in all_run_types()), "holistic")
    if task_kind is None and spec is not None and spec.run_types and spec.run_type(run_type) is None:
        task_kind = spec.run_types[0].task_kind
    return task_kind, run_type


class Command(BaseCommand):
    help = "Create and launch a judge run through Celery, exactly as the dashboard does."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("--model", required=True, help="the judge model as the endpoint names it")
        parser.add_argument("--base-url", default="", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1")
        parser.add_argument("--api-key-env", default=None, help="environment variable holding the API key")
        parser.add_argument("--replay-of", type=int, default=None, help="replay a stored run instead of calling an endpoint")
        aliases = selection_options()
        parser.add_argument(
            "--select",
            *aliases,
            dest="select",
            default="all",
            help=f"which subjects the run judges{f' ({" or ".join(aliases)}: the same option)' if aliases else ''}: "
            + selection_help(),
        )
        parser.add_argument(
            "--orders",
            type=_orders,
            default=ORDERS,
            metavar="{original,reverse}[,...]",
            help="the presentation orders to judge each subject in: original (A as the benchmark orients it), reverse "
            "(A and B swapped) or both, comma-separated (default: original,reverse)",
        )
        parser.add_argument(
            "--run-type",
            default=None,
            choices=[t.name for t in all_run_types()],
            help=run_types_help() + " (default: the benchmark protocol's first)",
        )
        for option in all_run_options():
            parser.add_argument("--" + option.name.replace("_", "-"), dest=option.name, default="", help=option.help)
        parser.add_argument(
            "--task-kind",
            default=None,
            choices=[k.name for k in subjects_all()],
            help="what the run judges (default: from the benchmark's protocol, --run-type and --select)",
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
        parser.add_argument(
            "--cache",
            action=argparse.BooleanOptionalAction,
            default=False,
            help="answer a task from the call cache when the same request (model, prompt, order, sample, parameters, "
            "template) was answered and accepted before: no call, no cost (default: --no-cache, every task is asked)",
        )
        parser.add_argument(
            "--sample",
            type=argument_type(field["sample"]),
            default=0,
            help="which sample of each request the run draws (default 0): at temperature > 0 another number never "
            "reuses this one's cached answers",
        )
        parser.add_argument("--canonical", action="store_true", help="this run is the version's canonical judge")
        parser.add_argument("--drivers", type=int, default=1, help="driver tasks to spread over workers")
        parser.add_argument("--label", default=None)
        parser.add_argument(
            "--seed",
            type=int,
            default=0,
            help="seed of the random draw for --select sample:N (default: 0; the same seed draws the same subjects)",
        )
        parser.add_argument("--wait", action="store_true", help="show progress and exit when the run ends")
        adaptive = parser.add_argument_group("adaptive runs: judge in rounds, stop when the ranking is known")
        adaptive.add_argument(
            "--adaptive",
            action="store_true",
            help="judge in rounds chosen by the statistics (both orders of each chosen subject) and stop when --target "
            "holds or the budget is spent; the rounds are seeded by --seed",
        )
        adaptive.add_argument(
            "--target",
            default="top-k:1",
            help="top-k:K (the top K set known with chance >= 1 - alpha), separated (every two neighbours in the "
            "ranking told apart) or budget (judge until the budget is spent); default top-k:1",
        )
        adaptive.add_argument("--alpha", type=float, default=0.05, help="the error the target allows (default 0.05)")
        adaptive.add_argument("--batch", type=int, default=8, help="subjects per round, each in both orders (default 8)")
        adaptive.add_argument("--budget-calls", type=int, default=None, help="stop after this many calls")
        adaptive.add_argument(
            "--budget-cost", type=float, default=None, metavar="USD", help="stop once this much is spent (needs the prices)"
        )

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
        try:
            adaptive = (
                adaptive_parameters(
                    target=str(o["target"]),
                    alpha=float(o["alpha"]),  # type: ignore[arg-type]
                    batch=int(o["batch"]),  # type: ignore[call-overload]
                    budget_calls=o["budget_calls"],  # type: ignore[arg-type]
                    budget_cost=o["budget_cost"],  # type: ignore[arg-type]
                    seed=int(o["seed"]),  # type: ignore[call-overload]
                )
                if o["adaptive"]
                else None
            )
        except AdaptiveError as exc:
            raise CommandError(f"--adaptive: {exc}") from None
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
            select=str(o["select"]),
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
            call_cache=bool(o["cache"]),
            sample=int(o["sample"] or 0),  # type: ignore[call-overload]
            adaptive=adaptive,
            options={
                name: str(o[name]).strip() for name in (x.name for x in all_run_options()) if str(o.get(name) or "").strip()
            },
        )
        try:
            run, skipped = judge_run_create(request=request)
            kind = subjects_of(run)
            # counted before the launch: an adaptive run adds its later rounds' tasks as it goes
            total = kind.task_model.objects.filter(run=run).count()
            judge_run_launch(run=run, drivers=int(o["drivers"]))  # type: ignore[call-overload]
        except RunError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"run: {run.pk}")
        self.stdout.write(
            f"{total} {'ordered tasks' if kind.ordered else 'tasks'}"
            + (f" in round 0 (adaptive, target {adaptive['target']})" if adaptive else "")
            + (f"; {skipped} {kind.skipped_note}" if skipped else "")
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
