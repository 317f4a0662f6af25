"""Reading forms out of a page as a browser would submit them, for view tests that post what a page offers: each
field's default value, the choices of its selects, its labels and the attributes of its controls. Standard library
only (``html.parser``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Form:
    attrs: dict[str, str]
    values: dict[str, list[str]] = field(default_factory=dict)  # what submitting it unchanged sends, by field name
    choices: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # each select's (value, text) options
    controls: dict[str, dict[str, str]] = field(default_factory=dict)  # each field's first control's attributes
    labels: dict[str, str] = field(default_factory=dict)  # label text by the ``for`` id it names

    def data(self) -> dict[str, str | list[str]]:
        """The values as the test client posts them (a single value as a string)."""
        return {k: v[0] if len(v) == 1 else v for k, v in self.values.items()}


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: dict[str, Form] = {}
        self.form: Form | None = None
        self.select: str | None = None
        self.option: tuple[str, list[str], bool] | None = None
        self.selected_any = False
        self.label_for: str | None = None
        self.label_text: list[str] = []
        self.labels: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v if v is not None else "" for k, v in attrs}
        if tag == "form":
            self.form = self.forms.setdefault(a.get("id") or f"form-{len(self.forms)}", Form(a))
        elif tag == "label":
            self.label_for, self.label_text = a.get("for"), []
        elif self.form is not None and tag in ("input", "select", "textarea") and a.get("name"):
            self._control(tag, a)
        elif tag == "option" and self.select is not None:
            self.option = (a.get("value", ""), [], "selected" in a)

    def _control(self, tag: str, a: dict[str, str]) -> None:
        assert self.form is not None
        name = a["name"]
        self.form.controls.setdefault(name, a | {"tag": tag})
        if tag == "select":
            self.select, self.selected_any = name, False
            self.form.choices[name] = []
        elif tag == "input" and a.get("type") in ("checkbox", "radio"):
            if "checked" in a:
                self.form.values.setdefault(name, []).append(a.get("value", "on"))
        elif tag == "input" and a.get("type") not in ("submit", "button", "file"):
            self.form.values.setdefault(name, []).append(a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "option" and self.option is not None and self.select is not None and self.form is not None:
            value, text, selected = self.option
            self.form.choices[self.select].append((value, " ".join("".join(text).split())))
            if selected and not self.selected_any:
                self.form.values[self.select] = [value]
                self.selected_any = True
            self.option = None
        elif tag == "select" and self.select is not None and self.form is not None:
            if not self.selected_any and self.form.choices[self.select]:
                self.form.values[self.select] = [self.form.choices[self.select][0][0]]  # a browser sends the first
            self.select = None
        elif tag == "label" and self.label_for is not None:
            self.labels[self.label_for] = " ".join("".join(self.label_text).split())
            if self.form is not None:
                self.form.labels[self.label_for] = self.labels[self.label_for]
            self.label_for = None
        elif tag == "form":
            self.form = None

    def handle_data(self, data: str) -> None:
        if self.option is not None:
            self.option[1].append(data)
        if self.label_for is not None:
            self.label_text.append(data)


def page_forms(html: str) -> dict[str, Form]:
    """Every form of the page by its id ("form-N" for one without)."""
    parser = _Forms()
    parser.feed(html)
    return parser.forms


def field_labels(html: str) -> list[tuple[str, str]]:
    """Every ``<label for=...>`` of the page's Django fields: (field name, label text), the name read from the control's
    id (``id_NAME``, or ``id_PREFIX-NAME`` for a form with a prefix)."""
    parser = _Forms()
    parser.feed(html)
    return [(k.removeprefix("id_").rsplit("-", 1)[-1], v) for k, v in parser.labels.items() if k.startswith("id_")]
