"""The lines of the HypoArena files (``FORMAT.md``), read one at a time: what each may hold and how a problem is named.

Apart from :mod:`hypoarena.importing` (which checks the lines against each other and the stored rows, then writes)
because a line's own rules need no database: each parser turns one JSON object into a typed line, or records every
problem of the line (file, line, field, the value refused and what is accepted) and gives None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.jsonl import MODEL_NAME, Fields, Ref, finite, json_type, names_listed, show, whole_number_problem
from arena.models import JudgeRun

from .models import ORDERS, RUBRIC_MAX, RUBRIC_MIN, VERDICTS, ArenaVerdict, Case, Domain
from .services import pairs_problems

CASE_KEYS = ("case_id", "domain", "singleton", "context", "reference_conclusion")
SUBMISSION_KEYS = ("case_id", "model", "reference", "pairs")
VERDICT_KEYS = ("case_id", "model_a", "model_b", "order", "verdict", "judge", "run_label", "status", "reasons", "raw")
RUBRIC_KEYS = ("case_id", "model", "judge", "run_label", "pairs", "b", "d", "u")
RUBRIC_PAIR_KEYS = ("g", "l", "j")
STATUSES = tuple(ArenaVerdict.Status.values)

# A judge's raw answer goes to a column shared by every judging kind (arena.JudgmentRecord.raw_response) that has no
# length of its own: this limit keeps one line from filling the database, generous for an answer (about 50,000 tokens).
MAX_RAW_CHARS = 200_000

# The columns the values go to: a value longer than its column's max_length is a problem (arena.jsonl.Fields).
CASE_ID = (Case, "external_id")
DOMAIN_NAME = (Domain, "name")
CONTEXT = (Case, "context")
REFERENCE_CONCLUSION = (Case, "reference_conclusion")
JUDGE = (JudgeRun, "judge_model")
RUN_LABEL = (JudgeRun, "label")
REASONS = (ArenaVerdict, "reasons")

_names = names_listed


# --------------------------------------------------------------------------- parsed lines


@dataclass(slots=True)
class CaseLine:
    """A line of cases.jsonl: one case of a domain (the domain is created by its first case)."""

    ref: Ref
    case_id: str
    domain: str
    singleton: bool | None  # None: the line does not say
    context: str
    reference_conclusion: str


@dataclass(slots=True)
class SubmissionLine:
    """A line of submissions.jsonl: one model's hypothesis–evidence pairs for one case."""

    ref: Ref
    case_id: str
    model: str
    reference: bool
    pairs: list[dict[str, str]]


@dataclass(slots=True)
class VerdictLine:
    """A line of verdicts.jsonl: one judge run's 5-level verdict on a match in one order (or an invalid answer)."""

    ref: Ref
    case_id: str
    model_a: str
    model_b: str
    order: str
    verdict: str | None
    status: str
    judge: str
    run_label: str
    reasons: str
    raw: str

    @property
    def models(self) -> frozenset[str]:
        """The match's two models, unordered: how a match is found whatever its orientation."""
        return frozenset((self.model_a, self.model_b))


@dataclass(slots=True)
class RubricLine:
    """A line of rubric.jsonl: one rubric run's scores of one submission (per pair g, ℓ, j; then b, d, u)."""

    ref: Ref
    case_id: str
    model: str
    judge: str
    run_label: str
    g: list[int]
    l: list[int]  # noqa: E741 - the protocol's ℓ
    j: list[int]
    b: int
    d: int | None
    u: int

    def values(self) -> tuple:
        """The scores as stored, to compare with a stored score of the same submission and run."""
        return (self.g, self.l, self.j, self.b, self.d, self.u)


def _unknown_keys(f: Fields, record: Mapping[str, Any], keys: Sequence[str], what: str) -> None:
    for key in sorted(set(record) - set(keys)):
        f.problem(key, f"is not a field of a {what} line; the fields are {', '.join(keys)}")


def _score(f: Fields, key: str, value: Any, *, nullable: bool = False) -> int | None:  # noqa: ANN401
    """A rubric score: a JSON integer on the rubric's scale (the rule of every import: ``whole_number_problem``)."""
    if value is None:
        if not nullable:
            f.problem(key, f"missing; a whole number from {RUBRIC_MIN} to {RUBRIC_MAX}")
        return None
    message = whole_number_problem(value, RUBRIC_MIN, RUBRIC_MAX, nullable=nullable)
    if message is not None:
        if finite(value):  # NaN and Infinity are reported by check_json already
            f.problem(key, message)
        return None
    return value


def parse_case(record: dict[str, Any], f: Fields) -> CaseLine | None:
    """A cases.jsonl line, or None with its problems recorded."""
    before = len(f.problems)
    _unknown_keys(f, record, CASE_KEYS, "case")
    case_id = f.text("case_id", CASE_ID, identifier=True)
    domain = f.text("domain", DOMAIN_NAME)
    singleton = None if record.get("singleton") is None else f.flag("singleton", False)
    context = f.text("context", CONTEXT)
    reference = f.text("reference_conclusion", REFERENCE_CONCLUSION, required=False)
    if len(f.problems) != before:
        return None
    return CaseLine(f.ref, case_id, domain, singleton, context, reference)


def parse_submission(record: dict[str, Any], f: Fields) -> SubmissionLine | None:
    """A submissions.jsonl line, or None with its problems recorded; the pairs are held to :func:`pairs_problems`."""
    before = len(f.problems)
    _unknown_keys(f, record, SUBMISSION_KEYS, "submission")
    case_id = f.text("case_id", CASE_ID, identifier=True)
    model = f.text("model", MODEL_NAME, identifier=True)
    reference = f.flag("reference", False)
    pairs = record.get("pairs")
    for name, message in pairs_problems(pairs):
        f.problem(name, message)
    if len(f.problems) != before:
        return None
    return SubmissionLine(f.ref, case_id, model, reference, pairs)


def parse_verdict(record: dict[str, Any], f: Fields) -> VerdictLine | None:
    """A verdicts.jsonl line, or None with its problems recorded."""
    before = len(f.problems)
    _unknown_keys(f, record, VERDICT_KEYS, "verdict")
    case_id = f.text("case_id", CASE_ID, identifier=True)
    model_a = f.text("model_a", MODEL_NAME, identifier=True)
    model_b = f.text("model_b", MODEL_NAME, identifier=True)
    if model_a and model_a == model_b:
        f.problem("model_b", f"is {show(model_b)}, the same model as model_a; a match compares two different models")
    order = record.get("order")
    if order is None:
        f.problem("order", f"missing; one of {_names(ORDERS)}")
    elif order not in ORDERS:
        f.problem("order", f"must be one of {_names(ORDERS)}; got {show(order)}")
    status = f.choice("status", STATUSES, default=ArenaVerdict.Status.ACCEPTED)
    verdict = record.get("verdict")
    if status == ArenaVerdict.Status.ACCEPTED:
        if verdict is None:
            f.problem("verdict", f'missing; one of {_names(VERDICTS)} (or status "invalid" with no verdict)')
        elif verdict not in VERDICTS:
            f.problem("verdict", f"must be one of {_names(VERDICTS)}; got {show(verdict)}")
    elif verdict is not None:
        f.problem("verdict", f'must be null in an invalid verdict (status "invalid"); got {show(verdict)}')
    judge = f.text("judge", JUDGE)
    run_label = f.text("run_label", RUN_LABEL)
    reasons = f.text("reasons", REASONS, required=False)
    raw = f.text("raw", required=False, limit=MAX_RAW_CHARS)
    if len(f.problems) != before:
        return None
    return VerdictLine(f.ref, case_id, model_a, model_b, order, verdict, status, judge, run_label, reasons, raw)


def parse_rubric(record: dict[str, Any], f: Fields) -> RubricLine | None:
    """A rubric.jsonl line, or None with its problems recorded."""
    before = len(f.problems)
    _unknown_keys(f, record, RUBRIC_KEYS, "rubric")
    case_id = f.text("case_id", CASE_ID, identifier=True)
    model = f.text("model", MODEL_NAME, identifier=True)
    judge = f.text("judge", JUDGE)
    run_label = f.text("run_label", RUN_LABEL)
    pairs = record.get("pairs")
    g: list[int] = []
    ell: list[int] = []
    j: list[int] = []
    if not isinstance(pairs, list) or not pairs:
        what = "missing" if pairs is None else ("empty" if pairs == [] else f"must be a list, got {json_type(pairs)}")
        f.problem("pairs", f'{what}; one {{"g", "l", "j"}} object of 1–5 scores per hypothesis–evidence pair')
    else:
        for i, pair in enumerate(pairs):
            if not isinstance(pair, dict):
                f.problem(f"pairs[{i}]", f'must be an object {{"g", "l", "j"}}, got {json_type(pair)}')
                continue
            for key in sorted(set(pair) - set(RUBRIC_PAIR_KEYS)):
                f.problem(f"pairs[{i}].{key}", f"is not a per-pair score; they are {', '.join(RUBRIC_PAIR_KEYS)}")
            for key, into in zip(RUBRIC_PAIR_KEYS, (g, ell, j), strict=True):
                value = _score(f, f"pairs[{i}].{key}", pair.get(key))
                if value is not None:
                    into.append(value)
    b = _score(f, "b", record.get("b"))
    d = _score(f, "d", record.get("d"), nullable=True)
    u = _score(f, "u", record.get("u"))
    if len(f.problems) != before:
        return None
    return RubricLine(f.ref, case_id, model, judge, run_label, g, ell, j, b, d, u)  # type: ignore[arg-type]
