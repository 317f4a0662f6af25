"""Parsing a generation run's answer: a six-field proposal (``arena.schemas.SIX_FIELD``)."""

from __future__ import annotations

from typing import Any

from arena.schemas import SIX_FIELD
from jobs.parsing import json_object


def parse_proposal_answer(text: str) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The proposal object and its schema problems (empty when valid). Raises ParseError when not JSON."""
    obj = json_object(text)
    return obj, SIX_FIELD.validate(obj)
