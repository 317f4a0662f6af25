"""The lines of the Reconstruction files (``FORMAT.md``), read one at a time: what each may hold and how a problem is
named, and the dates the files write.

Apart from :mod:`reconstruction.importing` (which checks the lines against each other and the stored rows, then
writes) because a line's own rules need no database: each parser turns one JSON object into the values the import
writes, or records every problem of the line (file, line, field, the value refused and what is accepted) and gives
None.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from arena.jsonl import MODEL_NAME, Fields, Ref, json_type, names_listed, show

from .models import SLOTS, Hypothesis, MatchLabel, Reference, SeedPaper

SEED_KEYS = ("seed_id", "domain", "title", "abstract", "t0")
REFERENCE_KEYS = ("seed_id", "ref_id", "anon_id", "title", "abstract", "published")
HYPOTHESIS_KEYS = ("seed_id", "model", "family", "slot", "title", "summary", "cited", "valid", "invalid_reason", "selected_from")
LABEL_KEYS = ("seed_id", "model", "slot", "judge", "judge_family", "run_label", "label", "recused", "reason")
LABELS = tuple(MatchLabel.Label.values)
_ANON = re.compile(r"R[1-9]\d{0,5}")
_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")

# The columns the values go to: a value longer than its column's max_length is a problem (arena.jsonl.Fields).
SEED_ID = (SeedPaper, "external_id")
DOMAIN = (SeedPaper, "domain")
SEED_TITLE = (SeedPaper, "title")
SEED_ABSTRACT = (SeedPaper, "abstract")
REF_ID = (Reference, "original_id")
REF_TITLE = (Reference, "title")
REF_ABSTRACT = (Reference, "abstract")
FAMILY = (Hypothesis, "family")
SLOT = (Hypothesis, "slot")
HYPOTHESIS_TITLE = (Hypothesis, "title")
SUMMARY = (Hypothesis, "summary")
INVALID_REASON = (Hypothesis, "invalid_reason")
JUDGE = (MatchLabel, "judge")
SOURCE = (MatchLabel, "source")
LABEL_REASON = (MatchLabel, "reason")

_names = names_listed


def parse_date(value: str) -> tuple[date, str] | None:
    """(date, precision) of "YYYY-MM-DD", "YYYY-MM" or "YYYY" (a month or year stands for its first day); None when
    it is none of these or no such day exists."""
    m = _DATE.fullmatch(value.strip())
    if not m:
        return None
    year, month, day = m.group(1), m.group(2), m.group(3)
    try:
        return date(int(year), int(month or 1), int(day or 1)), ("day" if day else "month" if month else "year")
    except ValueError:
        return None


def format_date(value: date | None, precision: str) -> str | None:
    """A date as the files write it, to its precision ("YYYY-MM-DD", "YYYY-MM" or "YYYY"); None when undated."""
    if value is None:
        return None
    return value.isoformat()[: {"day": 10, "month": 7, "year": 4}[precision]]


# --------------------------------------------------------------------------- parsing


def _unknown_keys(f: Fields, record: Mapping[str, Any], keys: Sequence[str], what: str) -> None:
    for key in sorted(set(record) - set(keys)):
        f.problem(key, f"is not a field of a {what} line; the fields are {', '.join(keys)}")


def _slot(f: Fields) -> int | None:
    """The ``slot`` of a line: a JSON integer from 1 to 5 (not 1.0, true or "1"); None, reported, otherwise."""
    return f.integer("slot", SLOT, minimum=SLOTS[0], maximum=SLOTS[-1], required=True)


def _date(f: Fields, key: str, *, required: bool, day_only: bool) -> tuple[date, str] | None:
    raw = f.record.get(key)
    accepted = '"YYYY-MM-DD"' if day_only else '"YYYY-MM-DD", "YYYY-MM", "YYYY" or null (undated)'
    if raw is None:
        if required:
            f.problem(key, f"missing; a date {accepted}")
        return None
    parsed = parse_date(raw) if isinstance(raw, str) else None
    if parsed is None or (day_only and parsed[1] != "day"):
        f.problem(key, f"must be a date {accepted}, got {show(raw) if isinstance(raw, str) else json_type(raw)}")
        return None
    return parsed


@dataclass(slots=True)
class Line:
    """One line's checked values, with where it came from (for the problems found when it is written)."""

    ref: Ref
    values: dict[str, Any]


def parse_seed(record: dict[str, Any], f: Fields) -> Line | None:
    """A seeds.jsonl line's values, or None with its problems recorded."""
    before = len(f.problems)
    _unknown_keys(f, record, SEED_KEYS, "seed")
    values = {
        "seed_id": f.text("seed_id", SEED_ID, identifier=True),
        "domain": f.text("domain", DOMAIN),
        "title": f.text("title", SEED_TITLE),
        "abstract": f.text("abstract", SEED_ABSTRACT),
    }
    t0 = _date(f, "t0", required=True, day_only=True)
    if len(f.problems) != before:
        return None
    return Line(f.ref, values | {"t0": t0[0]})  # type: ignore[index]


def parse_reference(record: dict[str, Any], f: Fields) -> Line | None:
    """A references.jsonl line's values, or None with its problems recorded."""
    before = len(f.problems)
    _unknown_keys(f, record, REFERENCE_KEYS, "reference")
    values: dict[str, Any] = {
        "seed_id": f.text("seed_id", SEED_ID, identifier=True),
        "ref_id": f.text("ref_id", REF_ID),
        "title": f.text("title", REF_TITLE),
        "abstract": f.text("abstract", REF_ABSTRACT, required=False),
    }
    anon = f.text("anon_id", required=False)
    if anon and not _ANON.fullmatch(anon):
        f.problem("anon_id", f'must be "R" and a number from 1 (R1, R2, ...), got {show(anon)}; leave it out to have one drawn')
    published = _date(f, "published", required=False, day_only=False)
    if len(f.problems) != before:
        return None
    return Line(
        f.ref,
        values
        | {"anon_id": anon, "published": published[0] if published else None, "precision": published[1] if published else "day"},
    )


def parse_hypothesis(record: dict[str, Any], f: Fields) -> Line | None:
    """A hypotheses.jsonl line's values, or None with its problems recorded."""
    before = len(f.problems)
    _unknown_keys(f, record, HYPOTHESIS_KEYS, "hypothesis")
    values: dict[str, Any] = {
        "seed_id": f.text("seed_id", SEED_ID, identifier=True),
        "model": f.text("model", MODEL_NAME, identifier=True),
        "family": f.text("family", FAMILY),
    }
    slot = _slot(f)
    valid = f.flag("valid", True)
    values |= {
        "slot": slot,
        "valid": valid,
        "title": f.text("title", HYPOTHESIS_TITLE, required=valid),
        "summary": f.text("summary", SUMMARY, required=valid),
    }
    values["invalid_reason"] = f.text("invalid_reason", INVALID_REASON, required=not valid)
    if valid and values["invalid_reason"]:
        f.problem("invalid_reason", 'is given for a valid hypothesis; leave it out, or set "valid": false')
    cited = record.get("cited", [])
    if not isinstance(cited, list) or not all(isinstance(c, str) for c in cited):
        f.problem("cited", f'must be a list of anonymous reference ids ("R3", ...), got {json_type(cited)}')
        cited = []
    elif valid and not cited:
        f.problem("cited", "empty; a valid hypothesis cites at least one anonymous reference id of its seed's bibliography")
    values["cited"] = cited
    values["selected_from"] = _selected_from(record.get("selected_from"), f)
    if len(f.problems) != before:
        return None
    return Line(f.ref, values)


def _selected_from(chosen: Any, f: Fields) -> Any:  # noqa: ANN401
    """A champion's ``selected_from``: ``{"model": NAME, "slot": 1-5}`` with the slot a JSON integer; None when the
    line has none. A malformed one is reported (and read as given, for the line is refused anyway)."""
    if chosen is None:
        return None
    shape = '{"model": NAME, "slot": 1-5} (the proposer\'s hypothesis a selection chose)'
    if not isinstance(chosen, dict):
        f.problem("selected_from", f"must be {shape}, got {json_type(chosen)}")
        return chosen
    inner = Fields(chosen, f.ref, f.problems, prefix="selected_from.")
    for key in sorted(set(chosen) - {"model", "slot"}):
        inner.problem(key, f"is not a field of selected_from; it is {shape}")
    inner.text("model", MODEL_NAME, identifier=True)
    _slot(inner)
    return chosen


def parse_label(record: dict[str, Any], f: Fields) -> Line | None:
    """A labels.jsonl line's values, or None with its problems recorded."""
    before = len(f.problems)
    _unknown_keys(f, record, LABEL_KEYS, "label")
    values: dict[str, Any] = {
        "seed_id": f.text("seed_id", SEED_ID, identifier=True),
        "model": f.text("model", MODEL_NAME, identifier=True),
        "judge": f.text("judge", JUDGE),
        "judge_family": f.text("judge_family", FAMILY),
        "run_label": f.text("run_label", SOURCE),
        "reason": f.text("reason", LABEL_REASON, required=False),
        "recused": f.flag("recused", False),
        "slot": _slot(f),
    }
    label = record.get("label")
    if values["recused"]:
        if label is not None:
            f.problem(
                "label",
                f"must be null in a recused judgment (a recused judge gives no label: missing, not No-match); got {show(label)}",
            )
    elif label not in LABELS:
        f.problem(
            "label",
            f'{"missing" if label is None else "must be one of " + _names(LABELS) + ", got " + show(label)}; one of {_names(LABELS)} (or "recused": true)',
        )
    values["label"] = label
    if len(f.problems) != before:
        return None
    return Line(f.ref, values)


def parse_tournament(record: dict[str, Any], f: Fields) -> Line | None:
    """A tournament.jsonl line, kept as given (only its seed is checked), or None when it names no seed."""
    seed_id = f.text("seed_id", SEED_ID, identifier=True)
    return Line(f.ref, {"seed_id": seed_id, "record": record}) if seed_id else None


#: The parser of each file kind.
PARSERS: dict[str, Callable[[dict[str, Any], Fields], Line | None]] = {
    "seeds": parse_seed,
    "references": parse_reference,
    "hypotheses": parse_hypothesis,
    "labels": parse_label,
    "tournament": parse_tournament,
}
