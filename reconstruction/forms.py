"""The Reconstruction launch page's forms: a proposer run and a Swiss selection (the same services as
``reconstruction_propose`` and ``reconstruction_swiss``)."""

from __future__ import annotations

from django import forms

from arena.launch import EndpointFields, NamesField, NameValuesField


class ProposerRunForm(EndpointFields):
    proposers = NamesField(help_text="Comma-separated participant names (created when new).")
    families = NameValuesField(
        what="families", required=False, help_text="NAME=FAMILY,... model families, for the judges' recusal (default: the name)."
    )
    seeds = forms.CharField(initial="all", help_text="all, or domain:NAME")
    temperature = forms.FloatField(initial=1.0, min_value=0.0, max_value=2.0)
    max_tokens = forms.IntegerField(initial=2000, min_value=16)

    field_order = [
        "proposers",
        "families",
        "seeds",
        "base_url",
        "api_key_env",
        "concurrency",
        "timeout",
        "temperature",
        "max_tokens",
    ]


class SwissSelectionForm(EndpointFields):
    name = forms.CharField(max_length=200, help_text="The selection system's name: its champions are stored as its hypotheses.")
    proposers = NamesField(help_text="Comma-separated participants whose hypotheses compete, slot by slot.")
    judges = NameValuesField(
        what="judges",
        help_text="MODEL=FAMILY,...: each judge and its model family (a judge never judges its own family's hypotheses).",
    )
    seed = forms.IntegerField(initial=0, min_value=0, help_text="Seeds the pairing and tie-break lots.")

    field_order = ["name", "proposers", "judges", "seed", "base_url", "api_key_env", "concurrency", "timeout"]
