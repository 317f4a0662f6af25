"""The judge-run launch form, built from the protocol registry: the run types every installed protocol offers (with
their extra fields), the prompt templates of those run types and each protocol's selection grammar. ``run_judge``
checks its numbers with the same fields (:func:`argument_type`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from arena.models import Benchmark, JudgeRun
from arena.protocols import (
    all_run_options,
    all_run_types,
    benchmark_protocols,
    protocol_spec,
    run_types_for,
    selection_routes,
    task_kind_for,
)

from .prompts import PROMPTS


def run_types_help() -> str:
    """ "holistic or structured for a Lit2Test benchmark; arena or rubric for a HypoArena one; ..."."""
    parts = []
    for n, spec in enumerate(p for p in benchmark_protocols() if p.run_types):
        names = " or ".join(t.name for t in spec.run_types)
        parts.append(f"{names} for {spec.phrase} {'benchmark' if n == 0 else 'one'}")
    return "; ".join(parts) + "."


def selection_help() -> str:
    """Each protocol's selection grammar, and the selections other apps route to their own task kinds."""
    parts = []
    for spec in benchmark_protocols():
        routes = " · ".join(r.help for r in selection_routes(spec.name))
        parts.append(f"on {spec.phrase} benchmark: {spec.selection_help}" + (f" · {routes}" if routes else ""))
    return "; ".join(parts)


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
    run_type = forms.ChoiceField()
    prompt_version = forms.ChoiceField(required=False)
    select = forms.CharField(
        label="Selection",
        initial="all",
        help_text="which subjects the run judges: all, or what the benchmark's protocol names (filled in below)",
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
    # A key drawn when the form is shown: posted twice (at once, or from a stale page) it makes one run, not two.
    launch_key = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN401
        super().__init__(*args, **kwargs)
        run_types = all_run_types()
        self.fields["run_type"].choices = [(t.name, t.label) for t in run_types]
        self.fields["run_type"].help_text = run_types_help()
        names = {t.name for t in run_types}
        self.fields["prompt_version"].choices = [("", "default for the run type")] + [
            (v, v) for v, t in PROMPTS.items() if t.kind in names
        ]
        self.fields["select"].help_text = selection_help()
        # Each run type's extra fields (a Reconstruction match run's judge family), after the run type.
        extra = {
            option.name: forms.CharField(required=False, max_length=100, label=option.label, help_text=option.help)
            for option in all_run_options()
        }
        order = list(self.fields)
        at = order.index("run_type") + 1
        self.fields = {
            name: field
            for name, field in [
                *((n, self.fields[n]) for n in order[:at]),
                *extra.items(),
                *((n, self.fields[n]) for n in order[at:]),
            ]
        }

    def clean(self) -> dict:
        """Cross-field checks; adds ``task_kind`` (the kind the chosen benchmark's protocol, run type and selection
        make; ``JudgeRunRequest.task_kind``) and ``options`` (the run type's extra fields)."""
        data = super().clean()
        replay = data.get("replay_of")
        bench = data.get("benchmark")
        run_type = data.get("run_type")
        data["task_kind"] = None
        data["options"] = {}
        if bench and run_type:
            allowed = [t.name for t in run_types_for(bench.protocol)]
            if run_type in allowed:
                data["task_kind"] = task_kind_for(protocol=bench.protocol, run_type=run_type, selection=data.get("select") or "")
                self._options(protocol_spec(bench.protocol).run_type(run_type), data)
            else:
                self.add_error(
                    "run_type",
                    f"{bench} is a {bench.get_protocol_display()} benchmark: its runs are "
                    + (" or ".join(allowed) if allowed else "not judged from this form")
                    + f", not {run_type}. Choose one of those run types.",
                )
        if replay and bench and replay.benchmark_id != bench.pk:
            self.add_error("replay_of", "The replayed run must belong to the same benchmark.")
        if not replay and not data.get("base_url"):
            self.add_error("base_url", "An endpoint URL is required unless you replay a stored run.")
        return data

    def _options(self, run_type: Any, data: dict[str, Any]) -> None:  # noqa: ANN401
        for option in run_type.options if run_type is not None else ():
            value = (data.get(option.name) or "").strip()
            if value:
                data["options"][option.name] = value
            elif option.required:
                self.add_error(option.name, option.required)


def argument_type(field: forms.Field) -> Callable[[str], Any]:
    """An argparse ``type`` that checks a command-line value with a form's field, so that a management command
    (``run_judge``) accepts exactly what the form does and says why not in the form's words."""

    def parse(raw: str) -> Any:
        try:
            return field.clean(raw)
        except ValidationError as exc:
            raise argparse.ArgumentTypeError(f"{raw!r}: {' '.join(exc.messages)}") from None

    return parse


class ElicitRunFields(forms.Form):
    """The numbers every elicitation run takes (a Lit2Test generation, a HypoArena or Reconstruction proposer run),
    for its launch form and, through :func:`argument_type`, its command: both accept exactly the same values."""

    temperature = forms.FloatField(initial=1.0, min_value=0.0, max_value=2.0)
    max_tokens = forms.IntegerField(initial=1600, min_value=16)
    concurrency = forms.IntegerField(initial=8, min_value=1, max_value=256)
