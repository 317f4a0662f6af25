"""Strict parsing of model answers. A parse either yields every required key with a legal
value, or a reason that names what is wrong; nothing is guessed.

:func:`json_object` and :func:`text_key` are what every protocol's parser is built from;
:func:`parse_judge_answer` reads the two-sided judge answer (A, B or tie, with confidence and
reasons, and per-dimension scores of both sides when the template names dimensions) that every
judging kind comparing two texts shares."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from arena.errors import json_error_text

WINNERS = {"A": "A", "B": "B", "TIE": "TIE"}
CONFIDENCES = ("high", "medium", "low")
# One fenced block is tolerated because many chat models wrap JSON in it by habit;
# anything else around the object is a malformed answer.
FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*)\n\s*```\s*$", re.DOTALL)


class ParseError(ValueError):
    pass


NUL = "\x00"


def storable(value: Any) -> Any:  # noqa: ANN401
    """``value`` with every NUL character (\\0) taken out of its strings, however deeply nested: a model may answer
    one (raw, or as a JSON ``\\u0000`` that parsing turns into one), and PostgreSQL can hold it neither in text nor
    in jsonb, so one such answer would make its whole store fail. Applied where every kind's answers enter: the
    provider's completion text (``jobs.providers``) and the parsed answer (:func:`json_object`)."""
    if isinstance(value, str):
        return value.replace(NUL, "") if NUL in value else value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


def json_object(text: str) -> dict[str, Any]:
    match = FENCE.match(text)
    body = match.group("body") if match else text
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ParseError(f"not a JSON object ({json_error_text(exc)})") from None
    if not isinstance(value, dict):
        raise ParseError(f"expected a JSON object, got {type(value).__name__}")
    return storable(value)  # a "\u0000" in the answer's JSON parses to a NUL


def text_key(obj: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    if key not in obj:
        raise ParseError(f"missing key {key!r}")
    value = obj[key]
    if not isinstance(value, str):
        raise ParseError(f"{key!r} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ParseError(f"{key!r} is empty")
    return value


@dataclass
class JudgeAnswer:
    verdict: str  # "A" | "B" | "TIE"
    confidence: str
    main_reason: str
    weakness_a: str
    weakness_b: str
    scores: dict[str, dict[str, int]] = field(default_factory=dict)


def _verdict(obj: dict[str, Any], key: str) -> str:
    raw = text_key(obj, key)
    verdict = WINNERS.get(raw.strip().upper())
    if verdict is None:
        raise ParseError(f"{key!r} must be 'A', 'B' or 'tie', got {raw!r}")
    return verdict


def parse_judge_answer(text: str, *, dimensions: tuple[str, ...] = ()) -> JudgeAnswer:
    """A two-sided verdict; with ``dimensions`` (a structured template's), both sides' 0-4 score on each too."""
    obj = json_object(text)
    verdict = _verdict(obj, "winner")
    confidence = text_key(obj, "confidence").strip().lower()
    if confidence not in CONFIDENCES:
        raise ParseError(f"'confidence' must be one of {', '.join(CONFIDENCES)}, got {obj['confidence']!r}")
    answer = JudgeAnswer(
        verdict=verdict,
        confidence=confidence,
        main_reason=text_key(obj, "main_reason"),
        weakness_a=text_key(obj, "weakness_a", allow_empty=True),
        weakness_b=text_key(obj, "weakness_b", allow_empty=True),
    )
    if dimensions:
        scores = obj.get("scores")
        if not isinstance(scores, dict):
            raise ParseError("missing key 'scores'" if scores is None else "'scores' must be an object")
        for side in ("A", "B"):
            block = scores.get(side)
            if not isinstance(block, dict):
                raise ParseError(f"'scores' has no object for {side}")
            for dim in dimensions:
                value = block.get(dim)
                if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 4:
                    raise ParseError(f"scores.{side}.{dim} must be an integer 0-4, got {value!r}")
            answer.scores[side] = {dim: block[dim] for dim in dimensions}
        if "overall" in obj and _verdict(obj, "overall") != verdict:
            raise ParseError("'overall' disagrees with 'winner'")
    return answer
