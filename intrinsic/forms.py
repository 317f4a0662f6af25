"""The Intrinsic launch page's form: a scoring run (the same service as ``intrinsic_score``)."""

from __future__ import annotations

from django import forms

from arena.launch import EndpointFields


class ScoringRunForm(EndpointFields):
    model = forms.CharField(max_length=200, help_text="The model as the completions endpoint serves it.")
    criterion = forms.ChoiceField(
        choices=[("nll", "NLL (mean −log softmax over the span)"), ("energy", "energy (mean −raw logit)")]
    )
    logprobs_mode = forms.ChoiceField(
        choices=[("raw_logprobs", "raw_logprobs (NLL)"), ("raw_logits", "raw_logits (energy)")],
        help_text="What the server's --logprobs-mode gives (vLLM); a criterion it cannot give is refused.",
    )
    papers = forms.CharField(initial="all", help_text="all, discipline:NAME or sample:N")
    rate_per_second = forms.FloatField(required=False, min_value=0.1, help_text="Optional requests per second to the endpoint.")

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
    ]
