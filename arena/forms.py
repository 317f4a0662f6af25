from __future__ import annotations

from collections import Counter
from pathlib import Path

from django import forms


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: object, initial: object = None) -> list:
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class ReleaseUploadForm(forms.Form):
    # An empty file is a release file with no lines (an export without a second judge has one); the
    # importer, not the form, decides whether the upload as a whole holds anything.
    files = MultipleFileField(
        allow_empty_file=True,
        help_text="contexts.jsonl, proposals.jsonl, corrected_folded_pairs.jsonl, judgments.jsonl",
    )
    benchmark = forms.CharField(initial="lit2test", max_length=100)
    version = forms.CharField(initial="1", max_length=50)

    def clean_files(self) -> list:
        """Files are stored by base name: two of one name would silently replace each other."""
        files = self.cleaned_data["files"]
        names = Counter(Path(upload.name).name for upload in files)
        twice = sorted(name for name, count in names.items() if count > 1)
        if twice:
            raise forms.ValidationError([f"{name}: uploaded twice; upload each release file once" for name in twice])
        return files


class ParticipantAliasesForm(forms.Form):
    """A participant's aliases, one per line: ``alias`` or ``alias | mode`` (word, proper, brand, exact)."""

    aliases = forms.CharField(
        required=False,
        max_length=20000,
        widget=forms.Textarea(attrs={"rows": 14, "cols": 60, "spellcheck": "false"}),
        help_text="One alias per line; add '| proper', '| brand' or '| exact' to choose how it is matched (default: word).",
    )
