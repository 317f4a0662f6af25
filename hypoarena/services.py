"""HypoArena's own rules, shared by the import (:mod:`hypoarena.importing`), the generation runs and the reports: what
a submission's pairs must be, how a match no verdict oriented is oriented, the run types a benchmark holds, and the
error a refused request raises. Kept apart from the import so that a generation run holds a submission to the same
standard without depending on the file format.
"""

from __future__ import annotations

from typing import Any

from arena.errors import AppError
from arena.jsonl import json_type
from arena.orientation import orientation_flipped

PAIR_KEYS = ("hypothesis", "evidence")
#: Run types of the runs a HypoArena benchmark holds: 5-level arena verdicts, or rubric scores.
ARENA_RUN, RUBRIC_RUN = "arena", "rubric"

# Limits that keep one submission from filling the database; generous for real cases (the paper's hypotheses and
# evidence are a few hundred characters).
MAX_PAIR_CHARS = 10_000
MAX_PAIRS = 20


class HypoArenaError(AppError):
    """A request about HypoArena data that cannot be carried out; nothing was written. An
    :class:`~arena.errors.AppError`, so a command and the API show its message to the person who asked."""


def pairs_problems(pairs: Any, *, singleton: bool | None = None) -> list[tuple[str, str]]:  # noqa: ANN401
    """What is wrong with a submission's pairs, as (field, message); empty when nothing is.

    ``pairs`` must be a list of 1 to ``MAX_PAIRS`` objects with exactly a non-blank ``hypothesis`` and
    ``evidence``; in a singleton domain (``singleton`` true) exactly one. Shared by the import and, later, by the
    generation run's schema validation, so a submission is held to one standard wherever it comes from.
    """
    if pairs is None:
        return [("pairs", 'missing; a list of {"hypothesis", "evidence"} objects')]
    if not isinstance(pairs, list):
        return [("pairs", f'must be a list of {{"hypothesis", "evidence"}} objects, got {json_type(pairs)}')]
    if not pairs:
        return [("pairs", "empty; a submission has at least one hypothesis–evidence pair")]
    if len(pairs) > MAX_PAIRS:
        return [("pairs", f"has {len(pairs)} pairs; the limit is {MAX_PAIRS}")]
    problems: list[tuple[str, str]] = []
    for i, pair in enumerate(pairs):
        where = f"pairs[{i}]"
        if not isinstance(pair, dict):
            problems.append((where, f'must be an object {{"hypothesis", "evidence"}}, got {json_type(pair)}'))
            continue
        for key in sorted(set(pair) - set(PAIR_KEYS)):
            problems.append((f"{where}.{key}", f"is not a field of a pair; the fields are {', '.join(PAIR_KEYS)}"))
        for key in PAIR_KEYS:
            value = pair.get(key)
            if not isinstance(value, str):
                problems.append((f"{where}.{key}", "missing" if value is None else f"must be text, got {json_type(value)}"))
            elif not value.strip():
                problems.append((f"{where}.{key}", "empty"))
            elif len(value) > MAX_PAIR_CHARS:
                problems.append((f"{where}.{key}", f"has {len(value)} characters; the limit is {MAX_PAIR_CHARS}"))
    if singleton and len(pairs) != 1:
        problems.append(("pairs", f"has {len(pairs)} pairs; a submission in a singleton domain has exactly 1"))
    return problems


def match_orientation(seed: int, case_id: str, model_1: str, model_2: str) -> tuple[str, str]:
    """(first, second) of a match no verdict has oriented: seeded, like Lit2Test's canonical pairs, from the case
    and the two model names (not the benchmark's name, so a re-imported export gets the same orientation)."""
    low, high = sorted((model_1, model_2))
    return (high, low) if orientation_flipped(seed, f"{case_id}|{low}|{high}") else (low, high)
