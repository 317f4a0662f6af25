"""Template filters for numbers in researcher pages (see :mod:`arena.formatting`): ``{{ x|num:2 }}`` → ``−0.73``,
``{{ n|count }}`` → ``10,000``, ``{{ ci|ci:2 }}`` → ``[1.15, 1.39]``, ``{{ f|pct }}`` → ``87.5%``,
``{{ row|wlt }}`` → ``424–49–127``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import template
from django.utils.translation import gettext

from arena import formatting

register = template.Library()


@register.filter
def num(value: float | None, digits: int = 2) -> str:
    return formatting.number(value, int(digits))


@register.filter
def count(value: int | None) -> str:
    return formatting.count(value)


@register.filter
def ci(value: Sequence[float | None] | None, digits: int = 2) -> str:
    return formatting.interval(value, int(digits))


@register.filter
def pct(value: float | None, digits: int = 1) -> str:
    return formatting.percent(value, int(digits))


@register.filter
def wlt(value: Mapping[str, Any] | Sequence[Any] | None) -> str:
    """A ``{w, l, t}`` dict or a sequence of counts."""
    if value is None:
        return formatting.NONE
    if isinstance(value, Mapping):
        return formatting.wlt(value["w"], value["l"], value["t"])
    return formatting.wlt(*value)


@register.filter
def domain(value: str | None) -> str:
    """``{{ d|domain }}``: ``it_operations`` → ``IT operations`` (:func:`arena.formatting.domain_label`); the pooled
    scope ``all`` reads "All domains" in the active language."""
    return gettext("All domains") if value == "all" else formatting.domain_label(value)


@register.filter
def ranking(value: Sequence[str] | None) -> str:
    return formatting.ranking(value or [])


@register.filter
def get(mapping: Mapping[str, Any] | None, key: str) -> Any:  # noqa: ANN401
    """``{{ dict|get:key }}``: a mapping's value for a key held in a variable (None when absent)."""
    return (mapping or {}).get(key)
