"""What a protocol's launch page shares: parsing ``NAME=VALUE,...`` fields, and rendering a form whose service call
may refuse with a :class:`jobs.services.RunError` (shown on the form, nothing made)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

#: An endpoint URL that reads as the example every form shows.
ENDPOINT_EXAMPLE = "http://127.0.0.1:8001/v1"


def _credentials_problem() -> str:
    return gettext(
        "the endpoint URL holds a user name or password; give it without them and put the key in an environment "
        "variable whose name goes in the API key variable (--api-key-env)"
    )


def endpoint_url_problem(url: str) -> str | None:
    """What is wrong with an endpoint's base URL, in words (None when it is usable): it must be an absolute http(s) URL
    with a host (a bare name such as ``http://vllm:8000/v1`` is fine), no query or fragment (the calls' paths are appended
    to it) and no user name or password in it (a key belongs in an environment variable; the URL itself is never echoed
    when it holds one). In the active language: English in commands (and the words callers replace), the page's
    language on a form."""
    url = url.strip()
    values = {"url": repr(url), "example": ENDPOINT_EXAMPLE}
    if not url:
        return gettext("the endpoint URL is empty; give the OpenAI-compatible server's base URL, e.g. %(example)s") % values
    try:
        parts = urlsplit(url)
    except ValueError:  # an unbalanced IPv6 bracket, "http://[::1/v1"; never echoed if it may hold a password
        if "@" in url:
            return _credentials_problem()
        return gettext("the endpoint URL %(url)s is not an http:// or https:// address with a host; e.g. %(example)s") % values
    if "@" in parts.netloc:
        return _credentials_problem()
    if any(c.isspace() for c in url):
        return gettext("the endpoint URL %(url)s contains a space; give it without spaces, e.g. %(example)s") % values
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        # The calls' paths are appended to the base URL: "...?key=x" would become "...?key=x/chat/completions". The
        # URL is not echoed: a query may hold a key.
        return (
            gettext(
                "the endpoint URL has a query (?…) or a fragment (#…); give the server's base URL without them, e.g. %(example)s"
            )
            % values
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return gettext("the endpoint URL %(url)s is not an http:// or https:// address with a host; e.g. %(example)s") % values
    try:
        if parts.port == 0:  # raises on a port that is not a number from 0 to 65535
            raise ValueError
    except ValueError:
        return gettext("the endpoint URL %(url)s has a port that is not a number from 1 to 65535; e.g. %(example)s") % values
    return None


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


def without_credentials(url: str) -> str:
    """``url`` without a user name or password, a query or a fragment (a refused form shows the rest of it back, never
    a key: ``?api_key=...`` is refused like ``user:key@``)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL at all: keep what follows the last "@" of its host part, up to a "?" or "#"
        scheme, sep, rest = url.partition("://")
        rest = rest.split("?", 1)[0].split("#", 1)[0]
        return scheme + sep + (rest.rsplit("@", 1)[-1] if "@" in rest.split("/", 1)[0] else rest)
    if "@" not in parts.netloc and not parts.query and not parts.fragment and not url.endswith(("?", "#")):
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1], query="", fragment=""))


class EndpointInput(forms.TextInput):
    """The endpoint URL's box: a value given back to a refused form loses any user name, password, query or fragment."""

    def format_value(self, value: object) -> str | None:
        text = super().format_value(value)
        return without_credentials(text) if text else text


def endpoint_url_validator(value: str) -> None:
    """A form field's check of an endpoint URL (:func:`endpoint_url_problem`)."""
    problem = endpoint_url_problem(value)
    if problem:
        raise forms.ValidationError(problem[0].upper() + problem[1:] + ".")


class EndpointFields(forms.Form):
    """The endpoint settings every launch form asks for (the key itself is never asked: only its variable's name)."""

    base_url = forms.CharField(
        label=_("Endpoint URL"),
        max_length=500,
        help_text=format_lazy(_("OpenAI-compatible, e.g. {example}"), example=ENDPOINT_EXAMPLE),
        validators=[endpoint_url_validator],
        widget=EndpointInput,
    )
    api_key_env = forms.CharField(
        label=_("API key variable"),
        required=False,
        max_length=100,
        help_text=_("Name of the environment variable that holds the key (the key itself is never stored)."),
    )
    concurrency = forms.IntegerField(label=_("Concurrency"), initial=8, min_value=1, max_value=256)
    timeout = forms.FloatField(label=_("Timeout"), initial=120.0, min_value=1.0, help_text=_("Seconds per call."))
