from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class MultipleFileInput(forms.ClearableFileInput):
    """A file input that takes several files at once (an import of a release's files, say)."""

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


class ParticipantAliasesForm(forms.Form):
    """A participant's aliases, one per line: ``alias`` or ``alias | mode`` (word, proper, brand, exact)."""

    aliases = forms.CharField(
        label=_("Aliases"),
        required=False,
        max_length=20000,
        widget=forms.Textarea(attrs={"rows": 14, "cols": 60, "spellcheck": "false"}),
        help_text=_("One alias per line; add '| proper', '| brand' or '| exact' to choose how it is matched (default: word)."),
    )
