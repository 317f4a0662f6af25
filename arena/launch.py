"""What a protocol's launch page shares: parsing ``NAME=VALUE,...`` fields, and rendering a form whose service call
may refuse with a :class:`jobs.services.RunError` (shown on the form, nothing made)."""

from __future__ import annotations

from django import forms


def name_values(raw: str, what: str) -> dict[str, str]:
    """``NAME=VALUE,...`` as a dict; raises ``ValueError`` naming the malformed entry and the expected shape."""
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"{what} entries look like NAME=VALUE, separated by commas; got {item!r}")
        if name.strip() in out:
            raise ValueError(f"{what} names {name.strip()!r} twice")
        out[name.strip()] = value.strip()
    return out


class NameValuesField(forms.CharField):
    """A ``NAME=VALUE,...`` field, cleaned into a dict."""

    def __init__(self, *, what: str, **kwargs: object) -> None:
        self.what = what
        super().__init__(**kwargs)  # type: ignore[arg-type]

    def clean(self, value: object) -> dict[str, str]:  # type: ignore[override]
        raw = super().clean(value) or ""
        try:
            return name_values(str(raw), self.what)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


class NamesField(forms.CharField):
    """Comma-separated names, cleaned into a list (order kept, blanks dropped)."""

    def clean(self, value: object) -> list[str]:  # type: ignore[override]
        raw = super().clean(value) or ""
        return [part.strip() for part in str(raw).split(",") if part.strip()]


class EndpointFields(forms.Form):
    """The endpoint settings every launch form asks for (the key itself is never asked: only its variable's name)."""

    base_url = forms.CharField(label="Endpoint URL", max_length=500, help_text="OpenAI-compatible, e.g. http://127.0.0.1:8001/v1")
    api_key_env = forms.CharField(
        label="API key variable",
        required=False,
        max_length=100,
        help_text="Name of the environment variable that holds the key (the key itself is never stored).",
    )
    concurrency = forms.IntegerField(initial=8, min_value=1, max_value=256)
    timeout = forms.FloatField(initial=120.0, min_value=1.0, help_text="Seconds per call.")
