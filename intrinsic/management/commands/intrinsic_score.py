"""``intrinsic_score``: create and launch (or resume) a scoring run of an Intrinsic benchmark against an
OpenAI-compatible completions endpoint (``intrinsic.scoring``)."""

from __future__ import annotations

import argparse

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.commands import seed_argument
from arena.selectors import benchmark_resolve
from intrinsic.endpoint import CRITERIA, MODE_GIVES
from intrinsic.models import IntrinsicScoringRun
from intrinsic.scoring import scoring_progress, scoring_run_create, scoring_run_launch, scoring_run_resume
from jobs.forms import JudgeRunForm, argument_type
from jobs.progress_bar import wait_with_bar
from jobs.services import RunError


class Command(BaseCommand):
    help = (
        "Score an Intrinsic benchmark's candidates with one model and one criterion (nll: −log softmax; energy: −raw "
        "logit) against a completions endpoint returning prompt log-probabilities (vLLM), one request per candidate. "
        "Candidates the scorer has scored already are skipped; --resume RUN finishes a paused, failed or cancelled run."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="an Intrinsic benchmark: id, name or name@version")
        parser.add_argument("--model", default="", help="the model as the endpoint serves it")
        parser.add_argument("--criterion", choices=CRITERIA, default=None, help="nll or energy")
        parser.add_argument(
            "--logprobs-mode",
            choices=list(MODE_GIVES),
            default=None,
            help="the server's --logprobs-mode (vLLM): raw_logprobs (its default) gives nll, raw_logits gives energy; a "
            "server that is not vLLM gives log-probabilities: raw_logprobs",
        )
        parser.add_argument("--base-url", default="", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
        parser.add_argument("--api-key-env", default=None, help="environment variable holding the API key (never stored)")
        parser.add_argument(
            "--tokenize-url", default=None, help="the tokenizer endpoint (default: /tokenize at the server's root)"
        )
        parser.add_argument("--scorer", default=None, help="the scorer's name (default: MODEL-CRITERION); reused when it exists")
        parser.add_argument("--papers", default="all", help="all | discipline:NAME | sample:N")
        parser.add_argument("--seed", type=seed_argument, default=0, help="seed of the draw for --papers sample:N")
        field = JudgeRunForm.base_fields
        parser.add_argument("--concurrency", type=argument_type(field["concurrency"]), default=8, help="requests at a time")
        parser.add_argument("--rate", type=argument_type(field["rate_per_second"]), default=None, help="requests per second")
        parser.add_argument("--timeout", type=argument_type(field["timeout"]), default=120.0, help="seconds per request")
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
            default=None,
            help="score a candidate from the call cache when the same request (endpoint, model, prompt, criterion, "
            "mode) was scored and accepted before: no request, no cost (default: --no-cache for a new run, every "
            "candidate is asked; --cache for --resume)",
        )
        parser.add_argument(
            "--resume", type=int, default=None, metavar="RUN", help="resume a paused, failed or cancelled scoring run"
        )
        parser.add_argument("--wait", action="store_true", help="show progress and exit when the run ends")

    def handle(self, *args: object, **o: object) -> None:
        try:
            benchmark = benchmark_resolve(reference=str(o["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        try:
            if o["resume"]:
                run = IntrinsicScoringRun.objects.filter(pk=o["resume"], benchmark=benchmark).first()
                if run is None:
                    raise CommandError(f"{benchmark} has no scoring run {o['resume']}")
                reopened = scoring_run_resume(run=run, call_cache=o["cache"] is not False)
                self.stdout.write(f"run: {run.pk} resumed, {reopened} tasks reopened")
            else:
                if not o["model"] or not o["criterion"] or not o["logprobs_mode"]:
                    raise CommandError(
                        "name the model (--model), the criterion (--criterion nll|energy) and the server's mode "
                        "(--logprobs-mode raw_logprobs|raw_logits), or resume a run (--resume RUN)"
                    )
                criterion, mode = str(o["criterion"]), str(o["logprobs_mode"])
                run = scoring_run_create(
                    benchmark=benchmark,
                    model=str(o["model"]),
                    criterion=criterion,
                    logprobs_mode=mode,
                    base_url=str(o["base_url"]),
                    api_key_env=o["api_key_env"] or None,
                    tokenize_url=o["tokenize_url"] or None,
                    scorer=o["scorer"] or None,  # type: ignore[arg-type]
                    papers=str(o["papers"]),
                    seed=int(o["seed"]),
                    concurrency=int(o["concurrency"]),  # type: ignore[call-overload]
                    rate_per_second=o["rate"],
                    timeout=float(o["timeout"]),  # type: ignore[arg-type]
                    price_per_1k_prompt=o["price_per_1k_prompt"],
                    price_per_1k_completion=o["price_per_1k_completion"],  # type: ignore[arg-type]
                    call_cache=bool(o["cache"]),
                )
                total = run.tasks.count()
                scoring_run_launch(run=run)
                self.stdout.write(f"run: {run.pk}")
                self.stdout.write(f"{total} candidates to score for scorer {run.scorer.name}")
        except RunError as exc:
            raise CommandError(str(exc)) from None
        if not o["wait"]:
            return
        final = wait_with_bar(lambda: scoring_progress(run=IntrinsicScoringRun.objects.get(pk=run.pk)), self.stdout.write)
        self.stdout.write(
            f"scoring run {run.pk} {final.status}: {final.done} candidates scored, {final.failed} failed, {final.calls} calls"
        )
        if final.status != "completed":
            raise CommandError(
                f"scoring run {run.pk} ended {final.status}" + (f": {final.status_reason}" if final.status_reason else "")
            )
