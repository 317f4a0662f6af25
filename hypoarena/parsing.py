"""Strict parsing of HypoArena judge answers. A parse yields every required key with a legal value, or raises
``jobs.parsing.ParseError`` naming what is wrong; nothing is guessed (an answer "A≫B", "a>b" or "A > B" is refused,
so the engine asks again, at most :data:`jobs.services.MAX_PARSE_ATTEMPTS` answers, and then stores the task's
answer as invalid). As with Lit2Test's parser, one fenced JSON block is tolerated and keys beyond the required ones
are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jobs.parsing import ParseError, json_object, text_key

from .models import RUBRIC_MAX, RUBRIC_MIN, VERDICTS

PAIR_SCORES = ("g", "l", "j")
SET_SCORES = ("b", "d", "u")


@dataclass(frozen=True)
class ArenaAnswer:
    verdict: str  # one of models.VERDICTS, in the labels of the order it was given in
    reason: str


@dataclass(frozen=True)
class RubricAnswer:
    pairs: list[dict[str, int]]  # [{"g", "l", "j"}] per pair, in the submission's order
    b: int
    d: int | None  # None when K = 1: distinctness is not applicable
    u: int
    reason: str

    def scores(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "b": self.b, "d": self.d, "u": self.u}


def parse_arena_answer(text: str) -> ArenaAnswer:
    """``{"verdict": one of the five levels, "reason": non-empty text}``."""
    obj = json_object(text)
    raw = text_key(obj, "verdict")
    verdict = raw.strip()
    if verdict not in VERDICTS:
        raise ParseError(f"'verdict' must be one of {', '.join(VERDICTS)}, got {raw!r}")
    return ArenaAnswer(verdict=verdict, reason=text_key(obj, "reason").strip())


def _score(value: Any, where: str) -> int:  # noqa: ANN401 - any JSON value
    if not isinstance(value, int) or isinstance(value, bool) or not RUBRIC_MIN <= value <= RUBRIC_MAX:
        raise ParseError(f"{where} must be a whole number {RUBRIC_MIN}-{RUBRIC_MAX}, got {value!r}")
    return value


def parse_rubric_answer(text: str, *, k: int) -> RubricAnswer:
    """Scores of a submission of ``k`` pairs: exactly ``k`` objects with g, l, j; b and u; d for k > 1 and null (or
    absent) for k = 1. ``reason`` is optional text."""
    obj = json_object(text)
    pairs = obj.get("pairs")
    if not isinstance(pairs, list):
        raise ParseError("missing key 'pairs'" if pairs is None else f"'pairs' must be a list, got {type(pairs).__name__}")
    if len(pairs) != k:
        raise ParseError(f"'pairs' must have one entry per pair of the submission ({k}), got {len(pairs)}")
    parsed = []
    for i, pair in enumerate(pairs, start=1):
        if not isinstance(pair, dict):
            raise ParseError(f"pairs[{i}] must be an object with {', '.join(PAIR_SCORES)}")
        parsed.append({key: _score(pair.get(key), f"pairs[{i}].{key}") for key in PAIR_SCORES})
    d = obj.get("d")
    if k == 1:
        if d is not None:
            raise ParseError(f"'d' (distinctness) must be null for a submission of one pair, got {d!r}")
    else:
        d = _score(d, "'d'")
    reason = obj.get("reason", "")
    if not isinstance(reason, str):
        raise ParseError(f"'reason' must be a string, got {type(reason).__name__}")
    return RubricAnswer(pairs=parsed, b=_score(obj.get("b"), "'b'"), d=d, u=_score(obj.get("u"), "'u'"), reason=reason.strip())
