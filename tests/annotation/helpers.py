"""Shared helpers of the annotation tests: complete form values and small studies."""

from __future__ import annotations

from typing import Any

from annotation.rubric import DIMENSION_KEYS, score_field
from tests.clients import client_for  # noqa: F401 - the annotation tests import it from here


def complete_values(choice: str = "A", *, reason: str = "", score: int = 2, **overrides: Any) -> dict[str, str]:
    values = {
        "screening": "coherent",
        "choice": choice,
        "reason": reason,
        "confidence": "medium",
        "rationale": "A is tied to the papers and has a decisive metric.",
    }
    for d in DIMENSION_KEYS:
        values[score_field("a", d)] = str(score)
        values[score_field("b", d)] = str(score)
    values.update({k: str(v) for k, v in overrides.items()})
    return values


def make_study(benchmark, annotators, **kwargs: Any):  # noqa: ANN001, ANN201
    from annotation.services import study_create

    params: dict[str, Any] = {"n_contexts": 2, "n_naive_controls": 1, "seed": 7}
    params.update(kwargs)
    return study_create(benchmark=benchmark, annotators=list(annotators), **params)
