"""The judge-run launch form, built from the protocol registry: the benchmarks that take judge runs, and for the chosen
one its protocol's own fields (its run types with their extra fields, their prompt templates, its selection grammar,
and the presentation orders, canonical flag and replays only where its run types have them); then the judge and its
endpoint, the same for every protocol and labelled as on every launch form (``arena.launch.EndpointFields``).
``run_judge`` checks its numbers with the same fields (:func:`argument_type`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from arena.launch import EndpointFields
from arena.models import Benchmark, JudgeRun
from arena.numbers import whole_number
from arena.protocols import (
    ProtocolSpec,
    RunOption,
    benchmark_protocols,
    launchable_protocols,
    protocols,
    selection_routes,
    task_kind_for,
)

from .adaptive import AdaptiveError, adaptive_parameters
from .prompts import PROMPTS
from .services import SAMPLE_MAX
from .subjects import subjects_named

ORDER_CHOICES = [("original", "original"), ("reverse", "reverse")]


def run_types_help() -> str:
    """ "holistic or structured for a Lit2Test benchmark; arena or rubric for a HypoArena one; ..."."""
    parts = []
    for n, spec in enumerate(launchable_protocols()):
        names = " or ".join(t.name for t in spec.run_types)
        parts.append(f"{names} for {spec.phrase} {'benchmark' if n == 0 else 'one'}")
    return "; ".join(parts) + "."


def protocol_selection_help(spec: ProtocolSpec) -> str:
    """A protocol's selection grammar, and the selections other apps route to their own task kinds on its benchmarks."""
    routes = " · ".join(r.help for r in selection_routes(spec.name))
    return spec.selection_help + (f" · {routes}" if routes else "")


def selection_help() -> str:
    """Each protocol's selection grammar, and the selections other apps route to their own task kinds."""
    return "; ".join(f"on {spec.phrase} benchmark: {protocol_selection_help(spec)}" for spec in benchmark_protocols())


def _kinds_of(spec: ProtocolSpec) -> dict[str, list[Any]]:
    """Each run type of the protocol with the judging task kinds a run of it may make (its own, and those other apps
    route a selection to), for the fields that only some kinds have."""
    routed = [subjects_named(r.task_kind) for r in selection_routes(spec.name)]
    return {t.name: [k for k in [subjects_named(t.task_kind), *routed] if k is not None] for t in spec.run_types}


class JudgeRunForm(EndpointFields):
    benchmark = forms.ModelChoiceField(
        queryset=Benchmark.objects.none(),
        empty_label=None,
        label=_("Benchmark"),
        help_text=_("The fields below follow its protocol: its run types, prompts and selections."),
    )
    # The chosen benchmark's protocol's fields (PROTOCOL_FIELDS); __init__ fits them to the protocol.
    run_type = forms.ChoiceField(label=_("Run type"))
    prompt_version = forms.ChoiceField(label=_("Prompt version"), required=False)
    select = forms.CharField(
        label=_("Selection"),
        initial="all",
        help_text=_("which subjects the run judges: all, or what the benchmark's protocol names"),
    )
    orders = forms.MultipleChoiceField(
        choices=ORDER_CHOICES,
        initial=["original", "reverse"],
        widget=forms.CheckboxSelectMultiple,
        label=_("Orders"),
        help_text=_("The presentation orders each subject is judged in (two texts as A and B, then swapped)."),
    )
    canonical = forms.BooleanField(
        label=_("Canonical"), required=False, help_text=_("This run is the version's canonical judge.")
    )
    replay_of = forms.ModelChoiceField(
        queryset=JudgeRun.objects.none(),
        required=False,
        label=_("Replay of"),
        empty_label=_("none: call the endpoint"),
        help_text=_("Replay a stored run instead of calling an endpoint."),
    )
    # The judge and its endpoint: every protocol's, labelled as on every launch form (EndpointFields).
    judge_model = forms.CharField(
        label=_("Judge model"), max_length=200, help_text=_("The model name as the endpoint knows it. Never a participant.")
    )
    rate_per_second = forms.FloatField(
        label=_("Rate per second"),
        required=False,
        min_value=0.1,
        help_text=_("Optional requests per second to the endpoint."),
    )
    temperature = forms.FloatField(label=_("Temperature"), initial=0.0, min_value=0.0, max_value=2.0)
    max_tokens = forms.IntegerField(label=_("Max tokens"), initial=1024, min_value=16)
    call_cache = forms.BooleanField(
        label=_("Use the call cache"),
        required=False,
        help_text=_(
            "A task whose request (model, prompt, order, sample, parameters, template) was answered and accepted before "
            "takes that answer: no call, no cost."
        ),
    )
    sample = forms.IntegerField(
        label=_("Sample"),
        initial=0,
        min_value=0,
        max_value=SAMPLE_MAX,  # what the call cache stores: a larger one would make every answer unstorable
        required=False,
        help_text=_("At temperature > 0, another sample number draws new answers instead of reusing this one's."),
    )
    price_per_1k_prompt = forms.FloatField(
        label=_("Price per 1k prompt"),
        required=False,
        min_value=0.0,
        help_text=_("Optional: US dollars per 1,000 prompt tokens, to show what the run costs."),
    )
    price_per_1k_completion = forms.FloatField(
        label=_("Price per 1k completion"),
        required=False,
        min_value=0.0,
        help_text=_("Optional: US dollars per 1,000 completion tokens."),
    )
    adaptive = forms.BooleanField(
        label=_("Adaptive run"),
        required=False,
        help_text=_(
            "Judge in rounds chosen by the statistics (both orders of each chosen subject) and stop when the target "
            "holds or the budget is spent, instead of judging every subject."
        ),
    )
    adaptive_target = forms.CharField(
        label=_("Target"),
        required=False,
        initial="top-k:1",
        max_length=20,
        help_text=_(
            "top-k:K (the top K known with chance at least 1 − alpha), separated (every two neighbours in the ranking "
            "told apart) or budget (judge until the budget is spent)."
        ),
    )
    adaptive_alpha = forms.FloatField(
        label=_("Alpha"), required=False, initial=0.05, min_value=0.0001, max_value=0.5, help_text=_("The error allowed.")
    )
    adaptive_batch = forms.IntegerField(label=_("Subjects per round"), required=False, initial=8, min_value=1, max_value=500)
    adaptive_budget_calls = forms.IntegerField(
        label=_("Call budget"), required=False, min_value=2, help_text=_("Optional: stop after this many calls.")
    )
    adaptive_budget_cost = forms.FloatField(
        label=_("Cost budget (USD)"),
        required=False,
        min_value=0.0,
        help_text=_("Optional: stop once this much is spent (needs both prices)."),
    )
    # A key drawn when the form is shown: posted twice (at once, or from a stale page) it makes one run, not two.
    launch_key = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)

    field_order = [
        "benchmark",
        "run_type",
        "prompt_version",
        "select",
        "orders",
        "canonical",
        "replay_of",
        "judge_model",
        "base_url",
        "api_key_env",
        "concurrency",
        "rate_per_second",
        "temperature",
        "max_tokens",
        "call_cache",
        "sample",
        "timeout",
        "price_per_1k_prompt",
        "price_per_1k_completion",
    ]
    #: The adaptive fieldset's fields (``jobs.adaptive``).
    ADAPTIVE_FIELDS = (
        "adaptive",
        "adaptive_target",
        "adaptive_alpha",
        "adaptive_batch",
        "adaptive_budget_calls",
        "adaptive_budget_cost",
    )
    #: The fields that follow the benchmark's protocol (and the run types' extra fields, added after ``run_type``).
    PROTOCOL_FIELDS = ("run_type", "prompt_version", "select", "orders", "canonical", "replay_of")

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN401
        super().__init__(*args, **kwargs)
        self.fields["base_url"].required = False  # a replay calls no endpoint (clean says so otherwise)
        benchmarks = Benchmark.objects.filter(protocol__in=[p.name for p in launchable_protocols()])
        field = self.fields["benchmark"]
        field.queryset = benchmarks
        field.label_from_instance = lambda b: f"{b} · {b.get_protocol_display()}"
        # Choosing another benchmark fetches this page for it and swaps in its protocol's fields (htmx); without
        # JavaScript the page's own benchmark picker (a GET form) does the same.
        field.widget.attrs |= {
            "hx-get": reverse("jobs:run-new"),
            "hx-trigger": "change",
            "hx-target": "#protocol-fields",
            "hx-select": "#protocol-fields",
            "hx-swap": "outerHTML",
            "hx-push-url": "true",
        }
        self.chosen = self._chosen(benchmarks)
        self.spec = protocols.get(self.chosen.protocol) if self.chosen is not None else None
        self.options: list[RunOption] = []
        if self.spec is not None and self.chosen is not None:
            self._fit(self.spec, self.chosen)

    def _chosen(self, benchmarks: Any) -> Benchmark | None:  # noqa: ANN401
        """The benchmark whose protocol's fields the form shows: the posted one, else the one asked for (the page's
        ``?benchmark=``), else the newest that takes judge runs."""
        raw = self.data.get(self.add_prefix("benchmark")) if self.is_bound else self.initial.get("benchmark")
        raw = str(getattr(raw, "pk", raw) or "")
        # isascii too: "²" is a digit to str.isdigit() but no number to int() (nor to a primary-key filter)
        chosen = benchmarks.filter(pk=raw).first() if whole_number(raw) else None
        if chosen is None:
            chosen = benchmarks.order_by("-created_at", "-id").first()
        if not self.is_bound and chosen is not None:
            self.initial["benchmark"] = chosen.pk
        return chosen

    def _fit(self, spec: ProtocolSpec, benchmark: Benchmark) -> None:
        """The protocol's fields: its run types, their prompts and extra fields, its selection grammar; the orders and
        the canonical flag only when one of its run types has them; replays only when the benchmark has a run."""
        names = [t.name for t in spec.run_types]
        run_type = self.fields["run_type"]
        run_type.choices = [(t.name, t.label) for t in spec.run_types]
        refusal = (
            gettext(
                "%(benchmark)s is an %(protocol)s benchmark: its runs are %(run_types)s, not %%(value)s. Choose one of those run types."
            )
            if spec.phrase.startswith("an ")
            else gettext(
                "%(benchmark)s is a %(protocol)s benchmark: its runs are %(run_types)s, not %%(value)s. Choose one of those run types."
            )
        )
        run_type.error_messages["invalid_choice"] = refusal % {
            "benchmark": benchmark,
            "protocol": spec.label,
            "run_types": " or ".join(names),
        }
        self.fields["prompt_version"].choices = [("", gettext("default for the run type"))] + [
            (v, f"{v} ({t.kind})") for v, t in PROMPTS.items() if t.kind in names
        ]
        self.fields["select"].help_text = gettext("Which subjects the run judges: %(grammar)s") % {
            "grammar": protocol_selection_help(spec)
        }
        kinds = _kinds_of(spec)
        ordered = [name for name in names if any(k.ordered for k in kinds[name])]
        if not ordered:
            del self.fields["orders"]
        elif len(ordered) < len(names):
            self.fields["orders"].help_text = " ".join(
                [
                    str(self.fields["orders"].help_text),
                    gettext("Only %(run_types)s runs have them; the others ask once.") % {"run_types": " and ".join(ordered)},
                ]
            )
        canonical = [name for name in names if any(k.canonical for k in kinds[name])]
        if not canonical:
            del self.fields["canonical"]
        elif len(canonical) < len(names):
            self.fields["canonical"].help_text = "{} ({})".format(
                self.fields["canonical"].help_text,
                gettext("%(run_types)s runs only") % {"run_types": " or ".join(canonical)},
            )
        # A replay answers as the stored run did, so only a run of a kind this form can launch here is offered.
        judged = {k.name for ks in kinds.values() for k in ks}
        runs = JudgeRun.objects.filter(benchmark=benchmark, subjects__in=judged).order_by("-created_at", "-id")
        if runs.exists():
            replay = self.fields["replay_of"]
            replay.queryset = runs
            replay.label_from_instance = lambda r: f"#{r.pk} {r.judge_model} · {r.run_type} ({r.label})"
        else:
            del self.fields["replay_of"]
        self._add_options(spec)

    def _add_options(self, spec: ProtocolSpec) -> None:
        """Each run type's extra fields (a Reconstruction match run's judge family), after the run type."""
        seen: dict[str, RunOption] = {}
        for t in spec.run_types:
            for option in t.options:
                seen.setdefault(option.name, option)
        self.options = list(seen.values())
        extra = {o.name: forms.CharField(required=False, max_length=100, label=o.label, help_text=o.help) for o in self.options}
        order = list(self.fields)
        at = order.index("run_type") + 1
        self.fields = {**{n: self.fields[n] for n in order[:at]}, **extra, **{n: self.fields[n] for n in order[at:]}}

    def importable(self) -> list[ProtocolSpec]:
        """The protocols whose benchmarks would take judge runs, with their import commands (for an empty page)."""
        return [p for p in launchable_protocols() if p.import_command]

    def _protocol_names(self) -> set[str]:
        return {*self.PROTOCOL_FIELDS, *(o.name for o in self.options)}

    def protocol_fields(self) -> list[forms.BoundField]:
        """The fields of the chosen benchmark's protocol, in order (the page's fieldset that a benchmark change swaps)."""
        names = self._protocol_names()
        return [self[name] for name in self.fields if name in names]

    def endpoint_fields(self) -> list[forms.BoundField]:
        """The judge and its endpoint: the fields every protocol's run has."""
        names = self._protocol_names() | {"benchmark", *self.ADAPTIVE_FIELDS}
        return [f for f in self.visible_fields() if f.name not in names]

    def _adaptive(self, data: dict[str, Any]) -> dict[str, Any] | None:
        return _adaptive_of(self, data)

    def adaptive_fields(self) -> list[forms.BoundField]:
        """The adaptive run's fields (the page's "Adaptive" fieldset)."""
        return [self[name] for name in self.ADAPTIVE_FIELDS]

    def clean(self) -> dict:
        """Cross-field checks; adds ``task_kind`` (the kind the chosen benchmark's protocol, run type and selection
        make; ``JudgeRunRequest.task_kind``) and ``options`` (the run type's extra fields). A field the protocol does
        not have takes its default: both orders, not canonical, no replay."""
        data = super().clean()
        data.setdefault("orders", [value for value, _ in ORDER_CHOICES])
        data.setdefault("canonical", False)
        data.setdefault("replay_of", None)
        replay = data.get("replay_of")
        bench = data.get("benchmark")
        run_type = data.get("run_type")
        data["task_kind"] = None
        data["options"] = {}
        if bench and run_type and self.spec is not None:
            data["task_kind"] = task_kind_for(protocol=bench.protocol, run_type=run_type, selection=data.get("select") or "")
            chosen = self.spec.run_type(run_type)
            for option in chosen.options if chosen is not None else ():
                value = (data.get(option.name) or "").strip()
                if value:
                    data["options"][option.name] = value
                elif option.required:
                    self.add_error(option.name, option.required)
        data["adaptive_settings"] = self._adaptive(data)
        if replay and bench and replay.benchmark_id != bench.pk:
            self.add_error("replay_of", gettext("The replayed run must belong to the same benchmark."))
        if not replay and not data.get("base_url") and "base_url" not in self.errors:
            self.add_error("base_url", gettext("An endpoint URL is required unless you replay a stored run."))
        return data


def _adaptive_of(form: JudgeRunForm, data: dict[str, Any]) -> dict[str, Any] | None:
    """The checked adaptive settings of a form that asks for an adaptive run (an error on the target field if they
    cannot be used), else None."""
    if not data.get("adaptive"):
        return None
    try:
        return adaptive_parameters(
            target=data.get("adaptive_target") or "top-k:1",
            alpha=data.get("adaptive_alpha") or 0.05,
            batch=data.get("adaptive_batch") or 8,
            budget_calls=data.get("adaptive_budget_calls"),
            budget_cost=data.get("adaptive_budget_cost"),
        )
    except AdaptiveError as exc:
        form.add_error("adaptive_target", str(exc))
        return None


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

    temperature = forms.FloatField(label=_("Temperature"), initial=1.0, min_value=0.0, max_value=2.0)
    max_tokens = forms.IntegerField(label=_("Max tokens"), initial=1600, min_value=16)
    concurrency = forms.IntegerField(label=_("Concurrency"), initial=8, min_value=1, max_value=256)
