from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from arena.models import Benchmark, JudgeRun

from .prompts import PROMPTS


class JudgeRunForm(forms.Form):
    benchmark = forms.ModelChoiceField(queryset=Benchmark.objects.all())
    judge_model = forms.CharField(max_length=200, help_text="The model name as the endpoint knows it. Never a participant.")
    base_url = forms.CharField(required=False, max_length=500, help_text="OpenAI-compatible, e.g. http://127.0.0.1:8001/v1")
    api_key_env = forms.CharField(
        required=False,
        max_length=100,
        help_text="Name of the environment variable that holds the key (the key itself is never stored).",
    )
    replay_of = forms.ModelChoiceField(
        queryset=JudgeRun.objects.all(), required=False, help_text="Replay a stored run instead of calling an endpoint."
    )
    run_type = forms.ChoiceField(
        choices=[
            ("holistic", "holistic (A / B / tie)"),
            ("structured", "structured (0–4 per dimension)"),
            ("arena", "arena (HypoArena: 5-level A≫B … B≫A)"),
            ("rubric", "rubric (HypoArena: 1–5 per criterion)"),
            ("match", "match (Reconstruction: Match / No-match per hypothesis)"),
            ("listwise", "listwise (Intrinsic scoring: the judge's top 5 of a paper's candidates)"),
        ],
        help_text="holistic or structured for a Lit2Test benchmark; arena or rubric for a HypoArena one; match for a "
        "Reconstruction one; listwise for an Intrinsic-scoring one.",
    )
    judge_family = forms.CharField(
        required=False,
        max_length=100,
        help_text="Reconstruction match runs: the judge's model family. The judge recuses on hypotheses of its own family.",
    )
    prompt_version = forms.ChoiceField(
        choices=[("", "default for the run type")] + [(v, v) for v, t in PROMPTS.items() if not t.kind.endswith("generation")],
        required=False,
    )
    pairs = forms.CharField(
        initial="all",
        help_text="all · batch:NAME · sample:N · controls (the approved diagnostic control variants against their clean sources; "
        "never in a leaderboard) · controls:KIND,KIND (e.g. controls:clear,naive); on a HypoArena benchmark: all · domain:NAME · sample:N; "
        "on a Reconstruction benchmark: all · domain:NAME · system:NAME · sample:N",
    )
    orders = forms.MultipleChoiceField(
        choices=[("original", "original"), ("reverse", "reverse")],
        initial=["original", "reverse"],
        widget=forms.CheckboxSelectMultiple,
    )
    concurrency = forms.IntegerField(initial=8, min_value=1, max_value=256)
    rate_per_second = forms.FloatField(required=False, min_value=0.1, help_text="Optional requests per second to the endpoint.")
    temperature = forms.FloatField(initial=0.0, min_value=0.0, max_value=2.0)
    max_tokens = forms.IntegerField(initial=1024, min_value=16)
    timeout = forms.FloatField(initial=120.0, min_value=1.0)
    price_per_1k_prompt = forms.FloatField(
        required=False, min_value=0.0, help_text="Optional: US dollars per 1,000 prompt tokens, to show what the run costs."
    )
    price_per_1k_completion = forms.FloatField(
        required=False, min_value=0.0, help_text="Optional: US dollars per 1,000 completion tokens."
    )
    canonical = forms.BooleanField(required=False, help_text="This run is the version's canonical judge.")

    # The run types each protocol's benchmarks are judged with, and the task kind each type makes (None: the service
    # decides from ``pairs``, canonical pairs or diagnostic controls).
    PROTOCOL_RUN_TYPES: dict[str, dict[str, str | None]] = {
        Benchmark.Protocol.LIT2TEST: {"holistic": None, "structured": None},
        Benchmark.Protocol.HYPOARENA: {"arena": JudgeRun.Subjects.HYPOARENA, "rubric": JudgeRun.Subjects.HYPOARENA_RUBRIC},
        Benchmark.Protocol.RECONSTRUCTION: {"match": JudgeRun.Subjects.RECONSTRUCTION_MATCH},
        Benchmark.Protocol.INTRINSIC: {"listwise": JudgeRun.Subjects.INTRINSIC_LISTWISE},
    }

    def clean(self) -> dict:
        """Cross-field checks; adds ``task_kind``, the task kind the chosen benchmark's protocol and run type make
        (``JudgeRunRequest.task_kind``)."""
        data = super().clean()
        replay = data.get("replay_of")
        bench = data.get("benchmark")
        run_type = data.get("run_type")
        data["task_kind"] = None
        if bench and run_type:
            allowed = self.PROTOCOL_RUN_TYPES.get(bench.protocol, {})
            if run_type in allowed:
                data["task_kind"] = allowed[run_type]
            else:
                self.add_error(
                    "run_type",
                    f"{bench} is a {bench.get_protocol_display()} benchmark: its runs are "
                    + (" or ".join(allowed) if allowed else "not judged from this form")
                    + f", not {run_type}. Choose one of those run types.",
                )
        if data.get("task_kind") == JudgeRun.Subjects.RECONSTRUCTION_MATCH and not (data.get("judge_family") or "").strip():
            self.add_error(
                "judge_family",
                "A Reconstruction match run needs the judge's model family: the judge recuses on its own family's hypotheses.",
            )
        if replay and bench and replay.benchmark_id != bench.pk:
            self.add_error("replay_of", "The replayed run must belong to the same benchmark.")
        if not replay and not data.get("base_url"):
            self.add_error("base_url", "An endpoint URL is required unless you replay a stored run.")
        return data


def argument_type(field: forms.Field) -> Callable[[str], Any]:
    """An argparse ``type`` that checks a command-line value with a form's field, so that a management command
    (``run_judge``) accepts exactly what the form does and says why not in the form's words."""

    def parse(raw: str) -> Any:
        try:
            return field.clean(raw)
        except ValidationError as exc:
            raise argparse.ArgumentTypeError(f"{raw!r}: {' '.join(exc.messages)}") from None

    return parse


class GenerationRunForm(forms.Form):
    benchmark = forms.ModelChoiceField(queryset=Benchmark.objects.all())
    base_url = forms.CharField(max_length=500)
    api_key_env = forms.CharField(required=False, max_length=100)
    contexts = forms.CharField(initial="all", help_text="all · batch:NAME")
    temperature = forms.FloatField(initial=1.0, min_value=0.0, max_value=2.0)
    max_tokens = forms.IntegerField(initial=1600, min_value=16)
    concurrency = forms.IntegerField(initial=8, min_value=1, max_value=256)
