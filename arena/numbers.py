"""Reading whole numbers typed by people (form fields, URL parameters, command arguments)."""

from __future__ import annotations


def whole_number(text: str) -> bool:
    """Whether ``text`` is ASCII digits only, so that ``int(text)`` reads it as typed: "²" and "٣" are digits to
    ``str.isdigit()`` but ``int()`` refuses the one and reads the other as 3."""
    return text.isascii() and text.isdigit()
