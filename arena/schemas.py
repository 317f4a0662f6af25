"""Proposal schemas and verdict scales, kept as data so later protocols plug in.

A benchmark names the schema its proposals follow and the verdict scale its judges
answer on; adding HypoArena's 5-level scale or Reconstruction's hypothesis sets means
adding an entry here, not changing the models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ProposalSchema:
    name: str
    fields: tuple[str, ...]
    max_chars: int

    def validate(self, content: dict[str, Any]) -> list[dict[str, str]]:
        """Return the schema violations of ``content`` as ``{"field", "code", "message"}`` dicts."""
        problems: list[dict[str, str]] = []
        for field in self.fields:
            if field not in content or content[field] is None:
                problems.append({"field": field, "code": "missing", "message": f"{field} is missing"})
                continue
            value = content[field]
            if not isinstance(value, str):
                problems.append(
                    {"field": field, "code": "wrong_type", "message": f"{field} must be text, got {type(value).__name__}"}
                )
            elif not value.strip():
                problems.append({"field": field, "code": "empty", "message": f"{field} is empty"})
            elif len(value) > self.max_chars:
                problems.append(
                    {
                        "field": field,
                        "code": "too_long",
                        "message": f"{field} has {len(value)} characters; the limit is {self.max_chars}",
                    }
                )
        for extra in sorted(set(content) - set(self.fields)):
            problems.append({"field": extra, "code": "unexpected", "message": f"{extra} is not part of {self.name}"})
        return problems


SIX_FIELD = ProposalSchema(
    name="lit2test-six-field-v1",
    fields=(
        "literature_gap",
        "hypothesis",
        "minimal_test",
        "decisive_metric",
        "supporting_result",
        "falsifying_result",
    ),
    # The release sample's longest field is 1,272 characters (1,600 max tokens);
    # 6,000 leaves room for verbose models while catching runaway generations.
    max_chars=6000,
)

PROPOSAL_SCHEMAS: dict[str, ProposalSchema] = {SIX_FIELD.name: SIX_FIELD}

#: The rubric a structured judge scores a six-field proposal on, 0-4 each (Lit2Test's judges, the diagnostic
#: controls' and the demo's); the human rubric has the same five (``annotation.rubric``).
JUDGE_DIMENSIONS = ("grounding", "hypothesis_specificity", "minimality_feasibility", "decisive_metric", "falsifiability")


@dataclass(frozen=True)
class VerdictScale:
    """Labels a judge may answer with and the win share of proposal A for each."""

    name: str
    shares: dict[str, float]

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.shares)


AB_TIE = VerdictScale(name="ab-tie", shares={"A": 1.0, "TIE": 0.5, "B": 0.0})
VERDICT_SCALES: dict[str, VerdictScale] = {AB_TIE.name: AB_TIE}
