"""Lit2Test's forms: the dashboard's release upload and the generation-run launch."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from arena.forms import MultipleFileField
from arena.launch import EndpointFields
from arena.models import Benchmark
from jobs.forms import ElicitRunFields

from .models import PROTOCOL
from .release.reading import DEFAULT_BENCHMARK


class ReleaseUploadForm(forms.Form):
    # An empty file is a release file with no lines (an export without a second judge has one); the
    # importer, not the form, decides whether the upload as a whole holds anything.
    files = MultipleFileField(
        label=_("Files"),
        allow_empty_file=True,
        help_text=_("contexts.jsonl, proposals.jsonl, corrected_folded_pairs.jsonl, judgments.jsonl"),
    )
    benchmark = forms.CharField(label=_("Benchmark"), initial=DEFAULT_BENCHMARK, max_length=100)
    version = forms.CharField(label=_("Version"), initial="1", max_length=50)

    def clean_files(self) -> list:
        """Files are stored by base name: two of one name would silently replace each other."""
        files = self.cleaned_data["files"]
        names = Counter(Path(upload.name).name for upload in files)
        twice = sorted(name for name, count in names.items() if count > 1)
        if twice:
            raise forms.ValidationError(
                [gettext("%(name)s: uploaded twice; upload each release file once") % {"name": name} for name in twice]
            )
        return files


class GenerationRunForm(ElicitRunFields):
    field_order = ("benchmark", "base_url", "api_key_env", "contexts", "temperature", "max_tokens", "concurrency")

    benchmark = forms.ModelChoiceField(
        label=_("Benchmark"), queryset=Benchmark.objects.filter(protocol=PROTOCOL)
    )  # its contexts are asked
    # The endpoint's fields as every launch form words them.
    base_url = EndpointFields.base_fields["base_url"]
    api_key_env = EndpointFields.base_fields["api_key_env"]
    contexts = forms.CharField(label=_("Contexts"), initial="all", help_text=_("all · batch:NAME"))
