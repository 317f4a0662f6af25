"""Forms of the researchers' review pages: the list's filters, and a variant's edit-and-decide form."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import ControlVariant
from .services import variant_problems
from .variants import SIX

ACTIONS: dict[str, str] = {"approve": ControlVariant.Status.APPROVED, "reject": ControlVariant.Status.REJECTED}


class ControlFilterForm(forms.Form):
    """GET filters of the list; an empty value means any. An unknown value is reported and not applied."""

    kind = forms.ChoiceField(label=_("Kind"), choices=[("", _("any kind")), *ControlVariant.Kind.choices], required=False)
    status = forms.ChoiceField(label=_("Status"), choices=[("", _("any status")), *ControlVariant.Status.choices], required=False)

    def values(self) -> dict[str, str]:
        """The valid, non-empty filters (call after ``is_valid()``)."""
        data = getattr(self, "cleaned_data", {})
        return {k: data[k] for k in ("kind", "status") if data.get(k)}


def _same_text(a: str, b: str) -> bool:
    """Equal but for what a browser's textarea changes by itself: CRLF line ends and whitespace at either end."""
    return a.replace("\r\n", "\n").strip() == b.replace("\r\n", "\n").strip()


class ControlReviewForm(forms.Form):
    """Approve (with the text as edited) or reject (with the stored text, whatever was typed) a variant.

    The text fields are the six fields, or ``prose`` for a rendering. A field missing from the POST, or sent back
    unchanged but for line ends and surrounding whitespace, keeps its stored text exactly, so that the round trip
    through a textarea never counts as an edit. An approved edit is checked here with the same rules as an import
    (:func:`controls.services.variant_problems`), each problem shown beside its field; the service checks again.
    """

    action = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])

    def __init__(self, *args: Any, variant: ControlVariant, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.variant = variant
        self.text_names: tuple[str, ...] = ("prose",) if variant.kind == ControlVariant.Kind.RENDERING else SIX
        stored = self._stored()
        for name in self.text_names:
            rows = 18 if name == "prose" else 5
            self.fields[name] = forms.CharField(
                required=False, strip=False, initial=stored[name], widget=forms.Textarea(attrs={"rows": rows})
            )

    def _stored(self) -> dict[str, str]:
        if self.variant.kind == ControlVariant.Kind.RENDERING:
            return {"prose": self.variant.prose}
        content = self.variant.content or {}
        return {name: str(content.get(name, "")) for name in SIX}

    def edited(self) -> tuple[dict[str, Any] | None, str | None, bool]:
        """(content, prose, changed) to pass to ``control_variant_review``; call after validation."""
        stored = self._stored()
        text = {}
        for name in self.text_names:
            sent = self.cleaned_data.get(name)
            keep = name not in self.data or sent is None or _same_text(sent, stored[name])
            text[name] = stored[name] if keep else sent.replace("\r\n", "\n")
        changed = text != stored
        if self.variant.kind == ControlVariant.Kind.RENDERING:
            return None, text["prose"], changed
        return dict(self.variant.content or {}) | text, None, changed

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("action") != "approve":
            return data
        content, prose, _ = self.edited()
        problems = variant_problems(
            kind=self.variant.kind, target=self.variant.target, content=content, prose=prose, source=self.variant.source.content
        )
        for name, message in problems:
            field = name.removeprefix("proposal.")
            self.add_error(
                field if field in self.text_names else None, f"{name}: {message}" if field not in self.text_names else message
            )
        return data
