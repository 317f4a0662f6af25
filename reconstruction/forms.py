"""The Reconstruction launch page's forms: a proposer run and a Swiss selection (the same services as
``reconstruction_propose`` and ``reconstruction_swiss``)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from arena.launch import EndpointFields, NamesField, NameValuesField

#: The largest seed a Swiss selection records (``SwissSelection.seed``, a positive integer column: 2**31 - 1 on
#: PostgreSQL): a larger one was an error page.
SEED_MAX = 2_147_483_647


class ProposerRunForm(EndpointFields):
    proposers = NamesField(label=_("Proposers"), help_text=_("Comma-separated participant names (created when new)."))
    families = NameValuesField(
        label=_("Families"),
        what="families",
        required=False,
        help_text=_("NAME=FAMILY,... model families, for the judges' recusal (default: the name)."),
    )
    seeds = forms.CharField(label=_("Seeds"), initial="all", help_text=_("all, or domain:NAME"))
    temperature = forms.FloatField(label=_("Temperature"), initial=1.0, min_value=0.0, max_value=2.0)
    max_tokens = forms.IntegerField(label=_("Max tokens"), initial=2000, min_value=16)

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
    name = forms.CharField(
        label=_("Name"), max_length=200, help_text=_("The selection system's name: its champions are stored as its hypotheses.")
    )
    proposers = NamesField(
        label=_("Proposers"), help_text=_("Comma-separated participants whose hypotheses compete, slot by slot.")
    )
    judges = NameValuesField(
        label=_("Judges"),
        what="judges",
        help_text=_("MODEL=FAMILY,...: each judge and its model family (a judge never judges its own family's hypotheses)."),
    )
    seed = forms.IntegerField(
        label=_("Seed"), initial=0, min_value=0, max_value=SEED_MAX, help_text=_("Seeds the pairing and tie-break lots.")
    )

    field_order = ["name", "proposers", "judges", "seed", "base_url", "api_key_env", "concurrency", "timeout"]
