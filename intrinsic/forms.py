"""The Intrinsic launch page's form: a scoring run (the same service as ``intrinsic_score``)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from arena.launch import EndpointFields


class ScoringRunForm(EndpointFields):
    model = forms.CharField(label=_("Model"), max_length=200, help_text=_("The model as the completions endpoint serves it."))
    criterion = forms.ChoiceField(
        label=_("Criterion"),
        choices=[("nll", _("NLL (mean −log softmax over the span)")), ("energy", _("energy (mean −raw logit)"))],
    )
    logprobs_mode = forms.ChoiceField(
        label=_("Logprobs mode"),
        choices=[("raw_logprobs", _("raw_logprobs (NLL)")), ("raw_logits", _("raw_logits (energy)"))],
        help_text=_("What the server's --logprobs-mode gives (vLLM); a criterion it cannot give is refused."),
    )
    papers = forms.CharField(label=_("Papers"), initial="all", help_text=_("all, discipline:NAME or sample:N"))
    rate_per_second = forms.FloatField(
        label=_("Rate per second"), required=False, min_value=0.1, help_text=_("Optional requests per second to the endpoint.")
    )
    call_cache = forms.BooleanField(
        label=_("Use the call cache"),
        required=False,
        help_text=_(
            "A candidate whose request (endpoint, model, prompt, criterion, mode) was scored before takes that score: "
            "no request, no cost."
        ),
    )

    field_order = [
        "model",
        "criterion",
        "logprobs_mode",
        "papers",
        "base_url",
        "api_key_env",
        "concurrency",
        "rate_per_second",
        "timeout",
        "call_cache",
    ]
