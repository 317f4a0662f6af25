"""The style-control section's feature names, units and reasons in the active language (:data:`lit2test.readers.
STYLE_WORDS`): ``{{ name|style_word }}`` → ``长度`` in 简体中文, ``{{ sc.requested|style_words }}`` → ``长度、引用``."""

from __future__ import annotations

from collections.abc import Sequence

from django import template

from lit2test import readers

register = template.Library()


@register.filter
def style_word(value: object) -> str:
    return readers.style_word(value)


@register.filter
def style_words(values: Sequence[str]) -> str:
    return readers.style_words(values)
