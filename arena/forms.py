from __future__ import annotations

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
    files = MultipleFileField(help_text="contexts.jsonl, proposals.jsonl, corrected_folded_pairs.jsonl, judgments.jsonl")
    benchmark = forms.CharField(initial="lit2test", max_length=100)
    version = forms.CharField(initial="1", max_length=50)
