"""The annotation rubric as data: dimensions with their 1–3 anchors, the screening scale, the choice with its
TIE/INVALID taxonomy, confidence, and the completeness validator.

Every label here is marked for translation (``gettext_lazy``) so the screen, the guideline and the
validator's messages appear in the annotator's language. The anchors mirror the judge rubric
(``jobs.prompts.JUDGE_SYSTEM_V1``) on a 1–3 scale.

Form field names are stable data, not UI: ``screening``, ``a_<dimension>`` / ``b_<dimension>`` (scores of the
proposals *as shown*), ``choice``, ``reason``, ``confidence``, ``rationale``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

SIX_FIELDS: tuple[tuple[str, Promise], ...] = (
    ("literature_gap", gettext_lazy("Literature gap")),
    ("hypothesis", gettext_lazy("Hypothesis")),
    ("minimal_test", gettext_lazy("Minimal test")),
    ("decisive_metric", gettext_lazy("Decisive metric")),
    ("supporting_result", gettext_lazy("Supporting result")),
    ("falsifying_result", gettext_lazy("Falsifying result")),
)


@dataclass(frozen=True)
class Dimension:
    key: str
    label: Promise
    question: Promise
    anchors: tuple[Promise, Promise, Promise]  # for scores 1, 2, 3

    @property
    def anchor_items(self) -> list[tuple[int, Promise]]:
        return list(zip((1, 2, 3), self.anchors, strict=True))


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension(
        "grounding",
        gettext_lazy("Grounding"),
        gettext_lazy("Is the gap tied to the supplied papers and their stated limitations, rather than generic?"),
        (
            gettext_lazy(
                "Generic: the gap could be written without reading the papers; no specific finding or limitation is used."
            ),
            gettext_lazy(
                "Partly grounded: names the papers or their topic, but the tension between them or the reviewer-noted limitation stays vague."
            ),
            gettext_lazy(
                "Grounded: the gap follows from specific findings or limitations of the supplied papers and names the cross-paper tension."
            ),
        ),
    ),
    Dimension(
        "hypothesis_specificity",
        gettext_lazy("Hypothesis specificity"),
        gettext_lazy("Is the hypothesis a claim with conditions, a mechanism and an expected difference?"),
        (
            gettext_lazy("Vague: a direction (“X improves Y”) without conditions, mechanism or expected difference."),
            gettext_lazy(
                "Partly specific: a clear claim, but the conditions, the mechanism or the expected difference is missing or loose."
            ),
            gettext_lazy("Specific: states the conditions, a mechanism and an expected difference that an experiment can check."),
        ),
    ),
    Dimension(
        "minimality_feasibility",
        gettext_lazy("Minimality and feasibility"),
        gettext_lazy(
            "Is the test the smallest controlled experiment that discriminates the hypothesis, within the resource constraint?"
        ),
        (
            gettext_lazy("Not a minimal test: a broad programme, uncontrolled, or clearly beyond the resource constraint."),
            gettext_lazy(
                "Feasible but not minimal: workable within the constraint, but larger than needed or with weak controls."
            ),
            gettext_lazy(
                "Minimal and feasible: the smallest controlled comparison (baseline and ablation) that discriminates the hypothesis within the constraint."
            ),
        ),
    ),
    Dimension(
        "decisive_metric",
        gettext_lazy("Decisive metric"),
        gettext_lazy("Does the metric adjudicate the mechanism, rather than report a convenient aggregate?"),
        (
            gettext_lazy(
                "Convenient aggregate: a generic score (such as overall accuracy) that cannot tell the mechanism apart from alternatives."
            ),
            gettext_lazy(
                "Relevant but indirect: related to the mechanism, but other explanations could produce the same number."
            ),
            gettext_lazy("Decisive: a measurement that separates the proposed mechanism from the obvious alternatives."),
        ),
    ),
    Dimension(
        "falsifiability",
        gettext_lazy("Falsifiability"),
        gettext_lazy("Are the supporting and falsifying results precommitted observations that a real outcome could produce?"),
        (
            gettext_lazy("Unfalsifiable: the outcomes are missing, restate the hypothesis, or no result could count against it."),
            gettext_lazy(
                "Partly falsifiable: outcomes are stated but without thresholds, or the falsifying result could hardly be observed."
            ),
            gettext_lazy("Falsifiable: concrete, precommitted thresholds for both the supporting and the falsifying result."),
        ),
    ),
)
DIMENSION_KEYS: tuple[str, ...] = tuple(d.key for d in DIMENSIONS)
SCORE_VALUES: tuple[int, ...] = (1, 2, 3)
SIDES: tuple[str, ...] = ("a", "b")

SCREENING: tuple[tuple[str, Promise, Promise], ...] = (
    (
        "coherent",
        gettext_lazy("Coherent"),
        gettext_lazy("The four papers share a topic and leave a cross-paper tension that a small experiment could settle."),
    ),
    (
        "partly",
        gettext_lazy("Partly coherent"),
        gettext_lazy("Most papers fit together, or the shared topic or the tension is loose."),
    ),
    (
        "incoherent",
        gettext_lazy("Incoherent"),
        gettext_lazy("The papers do not form one neighborhood; there is no shared tension to test."),
    ),
)
SCREENING_VALUES: tuple[str, ...] = tuple(v for v, _l, _h in SCREENING)

CHOICE_A, CHOICE_B, CHOICE_TIE, CHOICE_INVALID = "A", "B", "TIE", "INVALID"
CHOICES: tuple[tuple[str, Promise, Promise], ...] = (
    (CHOICE_A, gettext_lazy("A"), gettext_lazy("Proposal A is the better next experiment.")),
    (CHOICE_B, gettext_lazy("B"), gettext_lazy("Proposal B is the better next experiment.")),
    (CHOICE_TIE, gettext_lazy("TIE"), gettext_lazy("Neither is better as a next experiment.")),
    (CHOICE_INVALID, gettext_lazy("INVALID"), gettext_lazy("The item cannot be judged fairly.")),
)
CHOICE_VALUES: tuple[str, ...] = tuple(v for v, _l, _h in CHOICES)

TIE_REASONS: tuple[tuple[str, Promise], ...] = (
    ("both_strong", gettext_lazy("Both equally strong")),
    ("both_weak", gettext_lazy("Both equally weak")),
    ("tradeoffs", gettext_lazy("Different but comparable trade-offs")),
)
INVALID_REASONS: tuple[tuple[str, Promise], ...] = (
    ("neighborhood_incoherent", gettext_lazy("The neighborhood is incoherent")),
    ("empty_or_garbled", gettext_lazy("A proposal is empty or garbled")),
    ("not_comparable", gettext_lazy("The proposals are not comparable")),
    ("other", gettext_lazy("Other (explain in the rationale)")),
)
REASONS_FOR: dict[str, tuple[tuple[str, Promise], ...]] = {CHOICE_TIE: TIE_REASONS, CHOICE_INVALID: INVALID_REASONS}

CONFIDENCE: tuple[tuple[str, Promise], ...] = (
    ("high", gettext_lazy("High")),
    ("medium", gettext_lazy("Medium")),
    ("low", gettext_lazy("Low")),
)
CONFIDENCE_VALUES: tuple[str, ...] = tuple(v for v, _l in CONFIDENCE)

RATIONALE_MIN = 10
RATIONALE_MAX = 1000


def score_field(side: str, dimension: str) -> str:
    """Form field name of the score that the proposal shown as ``side`` ("a"/"b") gets on ``dimension``."""
    return f"{side}_{dimension}"


SCORE_FIELDS: tuple[str, ...] = tuple(score_field(s, d) for d in DIMENSION_KEYS for s in SIDES)
FIELD_NAMES: tuple[str, ...] = ("screening", *SCORE_FIELDS, "choice", "reason", "confidence", "rationale")
#: Longest value a draft keeps per field; far above the rationale limit so nothing typed is cut.
DRAFT_MAX_CHARS = 5000


def field_label(name: str) -> str:
    """The field's name as the annotator reads it, in the active language (used in the error summary)."""
    if name == "screening":
        return _("Neighborhood screening")
    if name == "choice":
        return _("Choice")
    if name == "reason":
        return _("Reason")
    if name == "confidence":
        return _("Confidence")
    if name == "rationale":
        return _("Rationale")
    side, _sep, dimension = name.partition("_")
    dim = next((d for d in DIMENSIONS if d.key == dimension), None)
    if side in SIDES and dim is not None:
        return _("%(dimension)s (proposal %(side)s)") % {"dimension": dim.label, "side": side.upper()}
    return name


def value_label(name: str, value: str) -> str:
    """An answer as the annotator reads it, in the active language: an option's label, a score's number, the text."""
    options: dict[str, tuple[tuple[str, Promise], ...]] = {
        "screening": tuple((v, label) for v, label, _h in SCREENING),
        "choice": tuple((v, label) for v, label, _h in CHOICES),
        "reason": TIE_REASONS + INVALID_REASONS,
        "confidence": CONFIDENCE,
    }
    return str(dict(options.get(name, ())).get(value, value))


def validate_submission(values: Mapping[str, object]) -> dict[str, str]:
    """The completeness validator: every problem of a submission, keyed by form field.

    A pure function over the raw submitted values (strings as they come from the form or a draft). It
    checks that every required input is present, that a reason from the right taxonomy accompanies TIE and
    INVALID, that values are in range, and the rationale length. Messages are in the active language.

    Returns:
        ``{field: message}``; empty when the submission is complete.
    """

    def text(name: str) -> str:
        value = values.get(name)
        return value.strip() if isinstance(value, str) else ("" if value is None else str(value).strip())

    errors: dict[str, str] = {}
    screening = text("screening")
    if not screening:
        errors["screening"] = _("Say whether the neighborhood is coherent.")
    elif screening not in SCREENING_VALUES:
        errors["screening"] = _("Choose one of the screening options.")
    for dimension in DIMENSIONS:
        for side in SIDES:
            name = score_field(side, dimension.key)
            raw = text(name)
            if not raw:
                errors[name] = _("Score proposal %(side)s on %(dimension)s (1, 2 or 3).") % {
                    "side": side.upper(),
                    "dimension": dimension.label,
                }
            elif raw not in {str(v) for v in SCORE_VALUES}:
                errors[name] = _("A score must be 1, 2 or 3.")
    choice = text("choice")
    if not choice:
        errors["choice"] = _("Choose A, B, TIE or INVALID.")
    elif choice not in CHOICE_VALUES:
        errors["choice"] = _("Choose A, B, TIE or INVALID.")
    elif choice in REASONS_FOR:
        reason = text("reason")
        allowed = {v for v, _l in REASONS_FOR[choice]}
        if not reason:
            errors["reason"] = _("Choose a reason for the tie.") if choice == CHOICE_TIE else _("Choose why the item is invalid.")
        elif reason not in allowed:
            errors["reason"] = _("Choose a reason from the list.")
    confidence = text("confidence")
    if not confidence:
        errors["confidence"] = _("Choose your confidence.")
    elif confidence not in CONFIDENCE_VALUES:
        errors["confidence"] = _("Choose high, medium or low confidence.")
    rationale = text("rationale")
    if not rationale:
        errors["rationale"] = _("Write a short rationale (at least %(min)d characters).") % {"min": RATIONALE_MIN}
    elif len(rationale) < RATIONALE_MIN:
        errors["rationale"] = _("The rationale is too short: write at least %(min)d characters.") % {"min": RATIONALE_MIN}
    elif len(rationale) > RATIONALE_MAX:
        errors["rationale"] = _("The rationale is too long: at most %(max)d characters (you wrote %(n)d).") % {
            "max": RATIONALE_MAX,
            "n": len(rationale),
        }
    return errors


@dataclass(frozen=True)
class CleanSubmission:
    """A submission that passed :func:`validate_submission`, with typed values (sides as shown)."""

    screening: str
    scores_a: dict[str, int]
    scores_b: dict[str, int]
    choice: str
    reason: str
    confidence: str
    rationale: str


def clean_submission(values: Mapping[str, object]) -> CleanSubmission:
    """Typed values of a complete submission.

    Precondition: ``validate_submission(values)`` is empty. A reason sent with an A or B choice is dropped
    (the taxonomy only applies to TIE and INVALID).
    """

    def text(name: str) -> str:
        value = values.get(name)
        return value.strip() if isinstance(value, str) else ""

    choice = text("choice")
    return CleanSubmission(
        screening=text("screening"),
        scores_a={d: int(text(score_field("a", d))) for d in DIMENSION_KEYS},
        scores_b={d: int(text(score_field("b", d))) for d in DIMENSION_KEYS},
        choice=choice,
        reason=text("reason") if choice in REASONS_FOR else "",
        confidence=text("confidence"),
        rationale=text("rationale"),
    )


def draft_values(values: Mapping[str, object]) -> dict[str, str]:
    """The known fields of a posted form as a draft: strings only, unknown keys dropped, lengths bounded."""
    out: dict[str, str] = {}
    for name in FIELD_NAMES:
        value = values.get(name)
        if isinstance(value, str) and value != "":
            out[name] = value[:DRAFT_MAX_CHARS]
    return out
