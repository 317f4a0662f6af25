"""Import and export of Lit2Test release files.

``release_import`` reads every release format present in a folder, checks all of it
before writing anything, and then writes in one transaction: an import is atomic
(all or nothing) and idempotent (a second import of the same files creates nothing).
Problems are reported with the file, the line and the field they concern.

Every value is checked before the database sees it: its type, its length against the
column it goes to (read from the model, so a migration cannot leave the check behind),
its range against the integer column, and, anywhere in a line, characters and numbers
the database cannot store (NUL, lone surrogates, NaN and Infinity) and nesting deeper
than the JSON encoder survives. A value the database would refuse is a problem with its
file, line and field, never a crash half-way through the writing.

``release_export`` writes what a benchmark holds in the same formats (plus CSV copies),
so that importing an export into an empty database reproduces the benchmark.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import models, transaction
from django.db.backends.base.operations import BaseDatabaseOperations

from .blindness import benchmark_redact
from .bulk import rows_insert, tables_analyze
from .csvsafe import csv_safe
from .models import (
    Batch,
    Benchmark,
    CanonicalPair,
    Context,
    JudgeRun,
    OrderedJudgment,
    Paper,
    Participant,
    Proposal,
    new_public_id,
)
from .schemas import PROPOSAL_SCHEMAS, SIX_FIELD, VERDICT_SCALES

RELEASE_JUDGE = "Gemini-3.1-Pro-Preview"
FOLDED_FILE = "corrected_folded_pairs.jsonl"
JUDGMENTS_FILE = "judgments.jsonl"
BENCHMARK_FILE = "benchmark.json"
CONTEXT_TEXT_FIELDS = ("research_context", "open_problem", "resource_constraint", "task_instruction")
CONTEXT_OPTIONAL_FIELDS = ("base_topic_id", "condition", "field", "source_policy")
PAPER_TEXT_FIELDS = ("abstract", "limitation", "key_contribution", "important_result")
PAPER_SHORT_FIELDS = ("url", "year", "venue", "decision", "primary_area")
RELEASE_PROPOSAL_META = ("condition", "schema_errors", "lit2test_valid", "lit2test_flags", "lit2test_errors")
TIE = "tie"
ORDERS = ("original", "reverse")
MAX_PROBLEMS = 50
# Release lines nest four levels at most; 64 is generous, and far below where json.dumps (run by
# JSONField on the way to the database, with Django's own frames already on the stack) would hit
# Python's recursion limit.
MAX_JSON_DEPTH = 64
# new_public_id() makes 16 hex digits; shorter ids would be guessable, and anything but hex could
# carry a model's name past the blindness rule (public ids are what annotators see).
PUBLIC_ID_MIN_HEX = 16

# Characters PostgreSQL cannot store: NUL (in text and jsonb) and UTF-16 surrogates, which only
# a JSON escape such as "\ud800" can produce and which are not Unicode scalar values.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_HTTP_URL = URLValidator(schemes=["http", "https"])
# In the raw text of a valid JSON line, NUL and surrogates can only come from a \u escape (strict
# JSON has no raw control characters, and UTF-8 no surrogates): a line without one needs no search.
_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
_JSON_WHITESPACE = " \t\n\r"

# A column a value is written to, as (model, field name): limits come from the model.
Column = tuple[type[models.Model], str]
EXTERNAL_ID: Column = (Context, "external_id")
MODEL_NAME: Column = (Participant, "name")
BATCH_NAME: Column = (Batch, "name")
PAIR_KEY: Column = (CanonicalPair, "internal_key")
PUBLIC_ID: Column = (CanonicalPair, "public_id")
CONFIDENCE: Column = (OrderedJudgment, "confidence")


@functools.cache
def _max_length(model: type[models.Model], name: str) -> int | None:
    return model._meta.get_field(name).max_length


@functools.cache
def _integer_range(model: type[models.Model], name: str) -> tuple[int, int]:
    """The range of an integer column as PostgreSQL enforces it (SQLite would store more)."""
    internal_type = model._meta.get_field(name).get_internal_type()
    return BaseDatabaseOperations.integer_field_ranges[internal_type]


def _escape_unstorable(text: str) -> str:
    return _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}, line {self.line}"
        text = f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        # A message quotes what it refuses; it must itself be printable and storable.
        return _escape_unstorable(text)


class ReleaseImportError(Exception):
    """The files cannot be imported; nothing was written. ``problems`` says where and why."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems[:MAX_PROBLEMS])
        more = f"\n  ... and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
        super().__init__(f"import failed, nothing was written ({len(problems)} problem(s)):\n{shown}{more}")


@dataclass
class ImportSummary:
    benchmark: Benchmark
    files: list[str]
    created: dict[str, int] = field(default_factory=dict)
    contexts_with_text: int = 0

    def line(self) -> str:
        c = self.created
        if not any(c.values()):
            return f"nothing new: {', '.join(self.files)} already imported into {self.benchmark}"
        return (
            f"created {c['contexts']} contexts ({self.contexts_with_text} with text), {c['papers']} papers, "
            f"{c['participants']} participants, {c['proposals']} proposals, {c['pairs']} pairs, "
            f"{c['judgments']} ordered judgments in {c['runs']} run(s) of {self.benchmark}"
        )


# --------------------------------------------------------------------------- parsing


@dataclass(slots=True)
class _Ref:
    file: str
    line: int | None


@dataclass(slots=True)
class _Verdict:
    ref: _Ref
    pair_key: str
    context_id: str
    batch: str | None
    models: tuple[str, str]  # sorted
    order: str
    judge_model: str
    run_label: str
    run_meta: dict[str, Any]
    status: str
    winner: str | None  # model name, TIE or None (invalid)
    shown_a: str | None
    values: dict[str, Any]
    public_id: str | None

    def comparable(self) -> dict[str, Any]:
        return self.values | {"winner": self.winner, "status": self.status, "system_a": self.shown_a, "model_pair": self.models}


@dataclass
class _Parsed:
    benchmark_meta: dict[str, Any] = field(default_factory=dict)
    contexts: dict[str, tuple[_Ref, dict[str, Any]]] = field(default_factory=dict)
    proposals: dict[tuple[str, str], tuple[_Ref, dict[str, Any]]] = field(default_factory=dict)
    verdicts: dict[tuple[str, str, str, str], _Verdict] = field(default_factory=dict)
    context_batches: dict[str, str] = field(default_factory=dict)
    public_ids: dict[str, str] = field(default_factory=dict)  # pair key -> public id given by the release
    lines: int = 0  # non-blank lines read from the JSONL files, good or bad
    problems: list[Problem] = field(default_factory=list)


def release_files(directory: Path) -> dict[str, list[Path]]:
    """The release files present in ``directory``, by kind."""
    files = {
        "benchmark": [p for p in [directory / BENCHMARK_FILE] if p.is_file()],
        "contexts": sorted({*directory.glob("contexts.jsonl"), *directory.glob("*_contexts.jsonl")}),
        "proposals": sorted({*directory.glob("proposals.jsonl"), *directory.glob("*_proposals.jsonl")}),
        "folded": [p for p in [directory / FOLDED_FILE] if p.is_file()],
        "judgments": [p for p in [directory / JUDGMENTS_FILE] if p.is_file()],
    }
    return files


#: Valid values named in a problem message, at most.
LISTED = 12


def names_listed(values: Iterable[Any]) -> str:
    """Values for a problem message: JSON-quoted, comma-separated, the first :data:`LISTED` and how many more;
    ``(none)`` when there are none."""
    values = list(values)
    shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in values[:LISTED])
    return (shown + (f" ... and {len(values) - LISTED} more" if len(values) > LISTED else "")) or "(none)"


def _json_type(value: Any) -> str:
    """The JSON name of a value's type, as the person who wrote the file knows it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    return "array" if isinstance(value, list) else "object"


def _show(value: Any) -> str:
    """A value quoted in a message, in JSON notation, shortened."""
    text = (
        json.dumps(value, ensure_ascii=True) if isinstance(value, (str, int, float, bool)) or value is None else _json_type(value)
    )
    return text if len(text) <= 80 else text[:77] + "..."


def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


@dataclass
class _Loaded:
    value: Any = None
    problem: str | None = None
    line: int | None = None  # of the problem, within the text
    non_finite: bool = False  # NaN, Infinity or a float too large somewhere in the value


class _Decoder(json.JSONDecoder):
    """A JSON decoder that notes whether any number it read is not finite (NaN, Infinity, 1e400).

    Made once per file, not per line (building a decoder costs more than decoding a short line); one file
    is read by one thread."""

    def __init__(self) -> None:
        super().__init__(parse_float=self._number, parse_constant=self._number)
        self.non_finite = False

    def _number(self, literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            self.non_finite = True
        return value


def _loads(text: str, decoder: _Decoder | None = None) -> _Loaded:
    """One JSON document, noting on the way whether any number is not finite."""
    loaded = _Loaded()
    decoder = decoder or _Decoder()
    decoder.non_finite = False
    try:
        loaded.value = decoder.decode(text)
        loaded.non_finite = decoder.non_finite
    except json.JSONDecodeError as exc:
        loaded.problem, loaded.line = f"invalid JSON ({exc.msg} at column {exc.colno}); truncated line?", exc.lineno
    except RecursionError:
        loaded.problem = "invalid JSON (nested too deeply)"
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits())
        loaded.problem = "invalid JSON (a number has too many digits)"
    return loaded


def _check_json(value: Any, ref: _Ref, problems: list[Problem]) -> bool:
    """Find, anywhere in a parsed line, what no column can store. True when there is nothing.

    Python's json module reads NaN, Infinity and 1e400 (as inf), "\\u0000" and lone surrogates:
    PostgreSQL refuses all of them in text and in jsonb. Iterative, so depth costs no stack.
    """
    clean = True

    def problem(path: str | None, message: str) -> None:
        nonlocal clean
        clean = False
        problems.append(Problem(ref.file, ref.line, path, message))

    stack: list[tuple[Any, str | None, int]] = [(value, None, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            bad = _UNSTORABLE.search(item)
            if bad:
                problem(path, _unstorable_message(bad.group()))
        elif isinstance(item, float):
            if not math.isfinite(item):
                problem(path, f"must be a finite number, got {_show(item)}")
        elif isinstance(item, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                top = re.split(r"[.\[]", path or "", maxsplit=1)[0] or None
                problem(top, f"nested more than {MAX_JSON_DEPTH} levels deep")
                continue
            if isinstance(item, list):
                stack.extend((child, f"{path or ''}[{i}]", depth + 1) for i, child in enumerate(item))
                continue
            for key, child in item.items():
                bad = _UNSTORABLE.search(key)
                if bad:
                    problem(path, f"key {key!r} {_unstorable_message(bad.group())}")
                    continue
                stack.append((child, key if path is None else f"{path}.{key}", depth + 1))
    return clean


def _unstorable_message(character: str) -> str:
    if character == "\x00":
        return "contains a NUL character (\\u0000), which cannot be stored"
    return f"contains a lone surrogate (\\u{ord(character):04x}), which is not valid Unicode"


def _read_jsonl(path: Path, parsed: _Parsed) -> Iterator[tuple[int, dict[str, Any], bool]]:
    """(line number, record, clean) for each JSON object line; other lines become problems.

    ``clean`` is False when the record holds something no column can store (already reported).
    Lines are split on "\\n" only: U+2028 and the other separators str.splitlines() knows are
    legal inside a JSON string (our own export writes them unescaped). The file is read line by line
    (a binary file splits on "\\n" alone), so only the parsed records stay in memory.
    """
    problems = parsed.problems
    decoder = _Decoder()
    scan = decoder.scan_once  # what decode() runs, without its two whitespace searches per line
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8").removesuffix("\n")  # positions in messages count from the line's start
            except UnicodeDecodeError as exc:
                parsed.lines += 1
                problems.append(
                    Problem(path.name, number, None, f"not UTF-8 text ({exc.reason} at byte {exc.start + 1} of the line)")
                )
                continue
            if number == 1:
                text = text.removeprefix("\ufeff")  # a byte-order mark from a spreadsheet or editor
            if not text.strip():
                continue
            parsed.lines += 1
            decoder.non_finite = False
            try:  # the common case: one JSON value from the first character to the last (or trailing whitespace)
                record, end = scan(text, 0)
                if end != len(text) and text[end:].strip(_JSON_WHITESPACE):
                    raise ValueError("extra data")
            except (StopIteration, ValueError, RecursionError):
                loaded = _loads(text, decoder)  # json's own reading: leading whitespace, or what is wrong
                if loaded.problem:
                    problems.append(Problem(path.name, number, None, loaded.problem))
                    continue
                record = loaded.value
            if type(record) is not dict:
                problems.append(Problem(path.name, number, None, f"expected a JSON object, got {_json_type(record)}"))
                continue
            # The walk through every value is exact; most lines show in their raw text that they need none.
            suspect = (
                decoder.non_finite
                or ("\\u" in text and _UNSTORABLE_ESCAPE.search(text))
                or text.count("[") + text.count("{") > MAX_JSON_DEPTH
            )
            yield number, record, _check_json(record, _Ref(path.name, number), problems) if suspect else True


class _Fields:
    """Typed reading of one record's fields. A wrong value becomes a problem naming file, line and
    field, and the reader returns a harmless default so that every problem of a line is listed."""

    def __init__(self, record: dict[str, Any], ref: _Ref, problems: list[Problem], prefix: str = "") -> None:
        self.record = record
        self.ref = ref
        self.problems = problems
        self.prefix = prefix

    def problem(self, key: str | None, message: str) -> None:
        self.problems.append(Problem(self.ref.file, self.ref.line, f"{self.prefix}{key}" if key else None, message))

    def fits(self, key: str, value: str, column: Column | None) -> bool:
        limit = _max_length(*column) if column else None
        if limit is not None and len(value) > limit:
            self.problem(key, f"has {len(value)} characters; the limit is {limit}")
            return False
        return True

    def text(
        self,
        key: str,
        column: Column | None = None,
        *,
        required: bool = True,
        numbers: bool = False,
        keep_blank: bool = False,
    ) -> str:
        """A string. Required ones must be present and non-blank; optional blank ones read as ""
        unless ``keep_blank``; ``numbers`` accepts a JSON number and reads it as its text."""
        value = self.record.get(key)
        if value is None or (isinstance(value, str) and not value.strip() and not (keep_blank and not required)):
            if required:
                self.problem(key, "missing" if value is None else "empty")
            return ""
        if numbers and isinstance(value, (int, float)) and not isinstance(value, bool) and _finite(value):
            value = str(value)
        if not isinstance(value, str):
            if _finite(value):  # NaN and Infinity are reported by _check_json already
                self.problem(key, f"must be text, got {_json_type(value)}")
            return ""
        return value if self.fits(key, value, column) else ""

    def choice(self, key: str, choices: Sequence[str], default: str) -> str:
        value = self.text(key, required=False)
        if value and value not in choices:
            self.problem(key, f"must be one of {', '.join(json.dumps(c) for c in choices)}; got {_show(value)}")
            return default
        return value or default

    def integer(self, key: str, column: Column, *, minimum: int | None = None, default: int | None = None) -> int | None:
        """A whole number within the column's range (and ``minimum``); null or absent is ``default``."""
        value = self.record.get(key)
        if value is None or not _finite(value):
            return default
        low, high = _integer_range(*column)
        low = low if minimum is None else max(low, minimum)
        if isinstance(value, int) and not isinstance(value, bool):
            number: int | None = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        else:
            number = None
        if number is None or not low <= number <= high:
            self.problem(key, f"must be a whole number from {low} to {high}, got {_show(value)}")
            return default
        return number

    def number(self, key: str, *, minimum: float = 0.0) -> float | None:
        value = self.record.get(key)
        if value is None or not _finite(value):
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.problem(key, f"must be a number, got {_show(value)}")
            return None
        try:
            number = float(value)
        except OverflowError:
            self.problem(key, f"must be a finite number, got {_show(value)}")
            return None
        if number < minimum:
            self.problem(key, f"must be {minimum:g} or more, got {_show(value)}")
            return None
        return number

    def flag(self, key: str, default: bool) -> bool:
        value = self.record.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problem(key, f"must be true or false, got {_show(value)}")
            return default
        return value

    def mapping(self, key: str) -> dict[str, Any]:
        value = self.record.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problem(key, f"must be an object, got {_json_type(value)}")
            return {}
        return value

    def models(self, key: str) -> tuple[str, str] | None:
        """A list of two different model names, sorted."""
        value = self.record.get(key)
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(m, str) and m.strip() for m in value)):
            self.problem(key, "missing" if value is None else "must be a list of two model names")
            return None
        if not all([self.fits(f"{key}[{i}]", name, MODEL_NAME) for i, name in enumerate(value)]):
            return None
        if value[0] == value[1]:
            self.problem(key, f"names the same model twice ({value[0]!r})")
            return None
        return tuple(sorted(value))  # type: ignore[return-value]


def _remember(table: dict, key: Any, ref: _Ref, item: Any, problems: list[Problem], what: str) -> None:
    """Keep the first record for ``key``; an identical repeat is ignored, a different one is an error."""
    if key not in table:
        table[key] = item if isinstance(item, _Verdict) else (ref, item)
        return
    first = table[key]
    first_ref, first_value = (first.ref, first.comparable()) if isinstance(first, _Verdict) else first
    new_value = item.comparable() if isinstance(item, _Verdict) else item
    if first_value != new_value:
        differing = sorted(k for k in set(first_value) | set(new_value) if first_value.get(k) != new_value.get(k))
        problems.append(
            Problem(
                ref.file,
                ref.line,
                ", ".join(differing) or None,
                f"duplicate {what} disagrees with {first_ref.file}, line {first_ref.line}",
            )
        )


def _parse_benchmark(path: Path, parsed: _Parsed) -> None:
    """benchmark.json: one JSON object whose values become the benchmark's settings."""
    problems = parsed.problems
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(Problem(path.name, line, None, f"not UTF-8 text ({exc.reason})"))
        return
    loaded = _loads(text)
    meta = loaded.value
    if loaded.problem:
        problems.append(Problem(path.name, loaded.line, None, loaded.problem.removesuffix("; truncated line?")))
        return
    if not isinstance(meta, dict):
        problems.append(Problem(path.name, None, None, f"expected a JSON object, got {_json_type(meta)}"))
        return
    ref = _Ref(path.name, None)
    if not _check_json(meta, ref, problems):
        return
    f = _Fields(meta, ref, problems)
    values: dict[str, Any] = {
        "name": f.text("name", (Benchmark, "name"), required=False, numbers=True),
        "version": f.text("version", (Benchmark, "version"), required=False, numbers=True),
        "description": f.text("description", required=False, keep_blank=True),
        "canonical_judge": f.text("canonical_judge", (Benchmark, "canonical_judge"), required=False),
        "verdict_rule": f.choice("verdict_rule", list(VERDICT_SCALES), default=""),
        "proposal_schema": f.choice("proposal_schema", list(PROPOSAL_SCHEMAS), default=""),
        "orientation_seed": f.integer("orientation_seed", (Benchmark, "orientation_seed")),
    }
    parsed.benchmark_meta = {k: v for k, v in values.items() if k in meta and v not in (None, "")}
    if "description" in meta:
        parsed.benchmark_meta["description"] = values["description"]


def _parse_papers(f: _Fields) -> list[dict[str, Any]]:
    papers = f.record.get("papers")
    if not isinstance(papers, list) or not papers:
        f.problem("papers", "missing" if papers is None else "must be a non-empty list")
        return []
    most = _integer_range(Paper, "position")[1] + 1
    if len(papers) > most:
        f.problem("papers", f"has {len(papers)} papers; the limit is {most}")
        return []
    known = {"title", "paper_id", "source_paper_id", *PAPER_TEXT_FIELDS, *PAPER_SHORT_FIELDS}
    items = []
    for index, paper in enumerate(papers):
        where = f"papers[{index}]"
        if not isinstance(paper, dict):
            f.problem(where, "must be an object")
            continue
        p = _Fields(paper, f.ref, f.problems, prefix=f"{where}.")
        item: dict[str, Any] = {"title": p.text("title")}
        for key in PAPER_TEXT_FIELDS:
            item[key] = p.text(key, required=False, numbers=True, keep_blank=True)
        for key in PAPER_SHORT_FIELDS:
            item[key] = p.text(key, (Paper, key), required=False, numbers=True, keep_blank=True)
        if item["url"]:
            try:
                _HTTP_URL(item["url"])
            except ValidationError:
                # It becomes a link on the annotators' page: javascript: and the like must not.
                p.problem("url", f"must be an http or https URL, got {_show(item['url'])}")
        id_key = "paper_id" if paper.get("paper_id") else "source_paper_id"
        item["source_paper_id"] = p.text(id_key, (Paper, "source_paper_id"), required=False, numbers=True, keep_blank=True)
        item["metadata"] = {k: v for k, v in paper.items() if k not in known}
        items.append(item)
    return items


def _parse_contexts(path: Path, parsed: _Parsed) -> None:
    problems = parsed.problems
    for number, record, clean in _read_jsonl(path, parsed):
        ref = _Ref(path.name, number)
        before = len(problems)
        f = _Fields(record, ref, problems)
        context_id = f.text("context_id", EXTERNAL_ID)
        values: dict[str, Any] = {k: f.text(k) for k in CONTEXT_TEXT_FIELDS}
        values |= {k: f.text(k, (Context, k), required=False, numbers=True) for k in CONTEXT_OPTIONAL_FIELDS}
        values["batch"] = f.text("batch", BATCH_NAME, required=False, numbers=True) or None
        metadata = record.get("pool_metadata", record.get("metadata", {}))
        values["metadata"] = metadata if isinstance(metadata, dict) else {"pool_metadata": metadata}
        values["papers"] = _parse_papers(f)
        if clean and len(problems) == before:
            _remember(parsed.contexts, context_id, ref, values, problems, "context")


def _parse_proposals(path: Path, parsed: _Parsed) -> None:
    problems = parsed.problems
    for number, record, clean in _read_jsonl(path, parsed):
        ref = _Ref(path.name, number)
        before = len(problems)
        f = _Fields(record, ref, problems)
        context_id = f.text("context_id", EXTERNAL_ID)
        model = f.text("model", MODEL_NAME)
        schema_name = f.text("schema", (Proposal, "schema"), required=False)
        schema = PROPOSAL_SCHEMAS.get(schema_name or SIX_FIELD.name)
        if schema is None:
            f.problem("schema", f"unknown proposal schema {schema_name!r}")
            continue
        values = {
            "schema": schema.name,
            # Field problems (missing, empty, wrong type, too long) are the proposal's
            # validation status, not import errors: an invalid proposal is data too.
            "content": {k: record[k] for k in schema.fields if k in record},
            "release_metadata": {k: record[k] for k in RELEASE_PROPOSAL_META if k in record},
        }
        if clean and len(problems) == before:
            _remember(parsed.proposals, (context_id, model), ref, values, problems, "proposal")


def _pair_key(context_id: str, models: tuple[str, str]) -> str:
    first, second = (m.replace(" ", "_") for m in models)
    return f"{context_id}__{first}__vs__{second}"


def _fold_label(original: str | None, reverse: str | None) -> tuple[str, str]:
    """(stability_label, folded_winner) in the release's vocabulary."""
    if original is not None and original == reverse and original != TIE:
        return "order-stable", original
    return "order-unstable", "consistency_tie"


# What the folded file's line fields become: (pair key, context id, sorted models, batch, winners, confidences,
# reverse judgment source), winners and confidences by order.
_FoldedLine = tuple[str, str, tuple[str, str], str | None, dict[str, str], dict[str, str], str]


def _folded_limits() -> tuple[int, int, int, int, int]:
    """Column limits of a folded line's values: pair key, context id, model name, batch, confidence."""
    return tuple(_max_length(*c) or 0 for c in (PAIR_KEY, EXTERNAL_ID, MODEL_NAME, BATCH_NAME, CONFIDENCE))  # type: ignore[return-value]


def _folded_plain(record: dict[str, Any], limits: tuple[int, int, int, int, int]) -> _FoldedLine | None:
    """The values of a folded line whose every field is plainly right, else None.

    The fast path of :func:`_parse_folded` (about 56,000 lines in a 2,000-context release): only type tests,
    lengths and comparisons, so that a line passing them is one on which :func:`_folded_checked` finds no problem
    and reads the same values. Anything unusual (a number for a text, a blank or unknown winner, a label that
    contradicts the verdicts, too long a name) returns None, and the checked path says what is wrong.
    """
    get = record.get
    pair_key, context_id, models, batch = get("pair_id"), get("context_id"), get("model_pair"), get("batch")
    pair_limit, context_limit, model_limit, batch_limit, confidence_limit = limits
    if not (
        type(pair_key) is str
        and type(context_id) is str
        and len(pair_key) <= pair_limit
        and len(context_id) <= context_limit
        and pair_key.strip()
        and context_id.strip()
        and pair_key.startswith(context_id)
        and type(models) is list
        and len(models) == 2
    ):
        return None
    first, second = models
    if not (
        type(first) is str
        and type(second) is str
        and first != second
        and len(first) <= model_limit
        and len(second) <= model_limit
        and first.strip()
        and second.strip()
    ):
        return None
    if batch is not None:
        if type(batch) is not str or len(batch) > batch_limit:
            return None
        batch = batch if batch.strip() else None
    pair: tuple[str, str] = (first, second) if first < second else (second, first)
    winners: dict[str, str] = {}
    confidences: dict[str, str] = {}
    for order in ORDERS:
        winner, confidence = get(f"gemini_{order}_winner"), get(f"gemini_{order}_confidence", "")
        if type(winner) is not str or type(confidence) is not str or len(confidence) > confidence_limit:
            return None
        if winner.lower() == TIE:
            winner = TIE
        elif winner != first and winner != second:  # also a blank one
            return None
        winners[order], confidences[order] = winner, confidence
    source = get("reverse_judgment_source")
    if source is None:
        source = ""
    elif type(source) is not str:
        return None
    label, folded = _fold_label(winners["original"], winners["reverse"])
    if get("stability_label", label) != label or get("folded_winner", folded) != folded:
        return None
    return pair_key, context_id, pair, batch, winners, confidences, source if source.strip() else ""


def _folded_checked(record: dict[str, Any], ref: _Ref, problems: list[Problem], clean: bool) -> _FoldedLine | None:
    """The values of a folded line, every problem of it reported (None when a field cannot be read)."""
    before = len(problems)
    f = _Fields(record, ref, problems)
    pair_key = f.text("pair_id", PAIR_KEY)
    context_id = f.text("context_id", EXTERNAL_ID)
    models = f.models("model_pair")
    batch = f.text("batch", BATCH_NAME, required=False, numbers=True) or None
    winners: dict[str, str] = {}
    confidences: dict[str, str] = {}
    for order in ORDERS:
        key = f"gemini_{order}_winner"
        winner = f.text(key)
        if winner and models and winner not in models and winner.lower() != TIE:
            f.problem(key, f"{winner!r} is not one of the pair's models {list(models)}")
        winners[order] = TIE if winner.lower() == TIE else winner
        confidences[order] = f.text(f"gemini_{order}_confidence", CONFIDENCE, required=False, numbers=True, keep_blank=True)
    source = f.text("reverse_judgment_source", required=False)
    if pair_key and context_id and not pair_key.startswith(context_id):
        f.problem("pair_id", f"does not belong to context {context_id!r}")
    if not clean or len(problems) != before or models is None:
        return None
    label, folded = _fold_label(winners["original"], winners["reverse"])
    for key, expected in (("stability_label", label), ("folded_winner", folded)):
        if key in record and record[key] != expected:
            f.problem(key, f"says {record[key]!r} but the two ordered verdicts fold to {expected!r}")
    # Kept even with a wrong label (the import fails anyway): a later line of the same pair is compared with it.
    return pair_key, context_id, models, batch, winners, confidences, source


def _parse_folded(path: Path, parsed: _Parsed) -> None:
    """corrected_folded_pairs.jsonl: each line is a canonical pair with both ordered verdicts of the release's
    judge, so it becomes two verdicts. Most lines take the plain path (:func:`_folded_plain`); objects that every
    verdict of the file holds alike (the run's settings, the metadata) are shared, not made per line."""
    problems = parsed.problems
    run_label = FOLDED_FILE.removesuffix(".jsonl")
    run_meta = {"provider": JudgeRun.Provider.RECORDED, "is_canonical": True, "run_type": "holistic"}
    no_metadata: dict[str, Any] = {}
    source_metadata: dict[str, dict[str, Any]] = {}
    accepted = OrderedJudgment.Status.ACCEPTED
    verdicts = parsed.verdicts
    limits = _folded_limits()
    name = path.name
    for number, record, clean in _read_jsonl(path, parsed):
        ref = _Ref(name, number)
        line = (_folded_plain(record, limits) if clean else None) or _folded_checked(record, ref, problems, clean)
        if line is None:
            continue
        pair_key, context_id, models, batch, winners, confidences, source = line
        if batch:
            parsed.context_batches.setdefault(context_id, batch)
        for order in ORDERS:
            if order == "reverse" and source:
                metadata = source_metadata.setdefault(source, {"reverse_judgment_source": source})
            else:
                metadata = no_metadata
            verdict = _Verdict(
                ref=ref,
                pair_key=pair_key,
                context_id=context_id,
                batch=batch,
                models=models,
                order=order,
                judge_model=RELEASE_JUDGE,
                run_label=run_label,
                run_meta=run_meta,
                status=accepted,
                winner=winners[order],
                shown_a=None,
                values={"confidence": confidences[order], "metadata": metadata},
                public_id=None,
            )
            key = (RELEASE_JUDGE, run_label, pair_key, order)
            if key in verdicts:
                _remember(verdicts, key, ref, verdict, problems, "pair")
            else:
                verdicts[key] = verdict


def _public_id(f: _Fields) -> str | None:
    value = f.text("pair_public_id", PUBLIC_ID, required=False)
    if not value:
        return None
    most = _max_length(*PUBLIC_ID)
    if not re.fullmatch(f"[0-9a-f]{{{PUBLIC_ID_MIN_HEX},{most}}}", value):
        f.problem(
            "pair_public_id",
            f"must be {PUBLIC_ID_MIN_HEX} to {most} lowercase hexadecimal characters (a random id that names no model), "
            f"got {_show(value)}",
        )
        return None
    return value


def _parse_judgments(path: Path, parsed: _Parsed) -> None:
    problems = parsed.problems
    for number, record, clean in _read_jsonl(path, parsed):
        ref = _Ref(path.name, number)
        before = len(problems)
        f = _Fields(record, ref, problems)
        pair_key = f.text("pair_id", PAIR_KEY)
        context_id = f.text("context_id", EXTERNAL_ID)
        judge_model = f.text("judge_model", (JudgeRun, "judge_model"))
        order = f.text("order")
        if order and order not in ORDERS:
            f.problem("order", f"must be 'original' or 'reverse', got {order!r}")
        status = f.text("status", required=False) or OrderedJudgment.Status.ACCEPTED
        if status not in OrderedJudgment.Status.values:
            f.problem("status", f"must be 'accepted' or 'invalid', got {status!r}")
        shown_a = record.get("system_a")
        winner: str | None = None
        models: tuple[str, str] | None
        if shown_a is None and record.get("model_pair") is not None:
            # Our export of a verdict whose presentation side was never recorded.
            models = f.models("model_pair")
            if status == "accepted":
                winning = f.text("winning_system")
                if winning and models and winning not in models and winning.lower() != TIE:
                    f.problem("winning_system", f"{winning!r} is not one of the pair's models {list(models)}")
                winner = TIE if winning.lower() == TIE else winning
        else:
            system_a = f.text("system_a", MODEL_NAME)
            system_b = f.text("system_b", MODEL_NAME)
            models = tuple(sorted((system_a, system_b))) if system_a and system_b else None  # type: ignore[assignment]
            if system_a and system_a == system_b:
                f.problem("system_b", f"is the same model as system_a ({system_a!r})")
                models = None
            if status == "accepted":
                label = f.text("winner")
                if label and label.upper() not in ("A", "B", "TIE"):
                    f.problem("winner", f"must be 'A', 'B' or 'tie', got {label!r}")
                elif label and models:
                    winner = {"A": system_a, "B": system_b, "TIE": TIE}[label.upper()]
                    winning = record.get("winning_system")
                    expected = "tie" if winner == TIE else winner
                    if winning is not None and str(winning).lower() != str(expected).lower():
                        f.problem(
                            "winning_system",
                            f"{winning!r} is not the model of winner {label!r} ({expected!r}); "
                            f"a winner must be one of the pair's two models",
                        )
            shown_a = system_a
        if pair_key and context_id and not pair_key.startswith(context_id):
            f.problem("pair_id", f"does not belong to context {context_id!r}")
        errors = record.get("judge_errors") or []
        values = {
            "confidence": f.text("confidence", CONFIDENCE, required=False, numbers=True, keep_blank=True),
            "main_reason": f.text("main_reason", required=False, keep_blank=True),
            "weakness_a": f.text("weakness_a", required=False, keep_blank=True),
            "weakness_b": f.text("weakness_b", required=False, keep_blank=True),
            "raw_response": f.text("raw_response", required=False, keep_blank=True),
            "errors": errors if isinstance(errors, list) else [errors],
            "attempt": f.integer("attempt", (OrderedJudgment, "attempt"), minimum=1, default=1),
            "latency_seconds": f.number("elapsed_seconds"),
            "prompt_tokens": f.integer("prompt_tokens", (OrderedJudgment, "prompt_tokens")),
            "completion_tokens": f.integer("completion_tokens", (OrderedJudgment, "completion_tokens")),
            "metadata": f.mapping("metadata"),
        }
        run_label = f.text("run_label", (JudgeRun, "label"), required=False, numbers=True) or path.name.removesuffix(".jsonl")
        run_meta = {
            "provider": f.choice("provider", JudgeRun.Provider.values, default=JudgeRun.Provider.RECORDED),
            "is_canonical": f.flag("is_canonical", default=False),
            "run_type": f.text("run_type", (JudgeRun, "run_type"), required=False) or "holistic",
            "prompt_version": f.text("prompt_version", (JudgeRun, "prompt_version"), required=False, numbers=True),
        }
        batch = f.text("batch", BATCH_NAME, required=False, numbers=True) or None
        public_id = _public_id(f)
        if not clean or len(problems) != before or models is None:
            continue
        verdict = _Verdict(
            ref=ref,
            pair_key=pair_key,
            context_id=context_id,
            batch=batch,
            models=models,
            order=order,
            judge_model=judge_model,
            run_label=run_label,
            run_meta=run_meta,
            status=status,
            winner=winner,
            shown_a=shown_a,
            values=values,
            public_id=public_id,
        )
        if verdict.batch:
            parsed.context_batches.setdefault(context_id, verdict.batch)
        _remember(parsed.verdicts, (judge_model, run_label, pair_key, order), ref, verdict, problems, "judgment")


def _check_public_ids(parsed: _Parsed) -> None:
    """One public id per pair, and no id for two pairs (it is unique in the database)."""
    by_pair: dict[str, tuple[str, _Ref]] = {}
    by_id: dict[str, tuple[str, _Ref]] = {}
    for verdict in parsed.verdicts.values():
        public_id, ref = verdict.public_id, verdict.ref
        if not public_id:
            continue
        first_id, first_ref = by_pair.setdefault(verdict.pair_key, (public_id, ref))
        if first_id != public_id:
            parsed.problems.append(
                Problem(
                    ref.file,
                    ref.line,
                    "pair_public_id",
                    f"differs from line {first_ref.line} for the same pair ({_show(first_id)})",
                )
            )
            continue
        owner, owner_ref = by_id.setdefault(public_id, (verdict.pair_key, ref))
        if owner != verdict.pair_key:
            parsed.problems.append(
                Problem(
                    ref.file,
                    ref.line,
                    "pair_public_id",
                    f"{_show(public_id)} is also the public id of another pair (line {owner_ref.line})",
                )
            )
    parsed.public_ids = {pair_key: public_id for pair_key, (public_id, _) in by_pair.items()}


def _parse(directory: Path) -> tuple[_Parsed, list[str]]:
    parsed = _Parsed()
    found = release_files(directory)
    names = [p.name for paths in found.values() for p in paths]
    for path in found["benchmark"]:
        _parse_benchmark(path, parsed)
    for path in found["contexts"]:
        _parse_contexts(path, parsed)
    for path in found["proposals"]:
        _parse_proposals(path, parsed)
    for path in found["folded"]:
        _parse_folded(path, parsed)
    for path in found["judgments"]:
        _parse_judgments(path, parsed)
    _check_public_ids(parsed)
    data_files = [name for name in names if name != BENCHMARK_FILE]
    if not data_files:
        parsed.problems.append(
            Problem(
                str(directory),
                None,
                None,
                "no release files found (expected contexts.jsonl, proposals.jsonl, corrected_folded_pairs.jsonl "
                "or judgments.jsonl)",
            )
        )
    elif parsed.lines == 0:
        parsed.problems.append(Problem(", ".join(data_files), None, None, "every release file is empty; nothing to import"))
    return parsed, names


def _check_arguments(benchmark_name: str | None, version: str | None, problems: list[Problem]) -> None:
    """The benchmark name and version given by the caller (command line or upload form)."""
    given = {"benchmark": benchmark_name, "version": version}
    ref = _Ref("arguments", None)
    if _check_json({k: v for k, v in given.items() if v is not None}, ref, problems):
        f = _Fields(given, ref, problems)
        f.text("benchmark", (Benchmark, "name"), required=False)
        f.text("version", (Benchmark, "version"), required=False)


# --------------------------------------------------------------------------- writing


def orientation_flipped(seed: int, pair_key: str) -> bool:
    """Whether the seeded orientation shows the alphabetically second model as A."""
    return hashlib.sha256(f"{seed}:{pair_key}".encode()).digest()[0] & 1 == 1


def _check_against_models(parsed: _Parsed, known: set[str]) -> None:
    """Verdicts may only name models that have proposals or are already participants."""
    if not known:
        return
    for verdict in parsed.verdicts.values():
        for model in (*verdict.models, verdict.shown_a):
            if model is not None and model not in known:
                parsed.problems.append(
                    Problem(
                        verdict.ref.file,
                        verdict.ref.line,
                        "model_pair" if verdict.shown_a is None else ("system_a" if model == verdict.shown_a else "system_b"),
                        f"unknown model {model!r}; known models: {', '.join(sorted(known))}",
                    )
                )
                break


def release_import(*, directory: Path, benchmark_name: str | None = None, version: str | None = None) -> ImportSummary:
    """Import the release files in ``directory`` into a benchmark, atomically.

    Raises ReleaseImportError, having written nothing, when any file has a problem or
    contradicts what the database already holds.
    """
    with _collector_paused():
        return _release_import(directory=directory, benchmark_name=benchmark_name, version=version)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while an import builds its records, back on (if it was) after.

    An import makes some hundred thousand small containers (records, verdicts, rows) that all live until it ends
    and form no reference cycles; the collector, started by the count of allocations, scans the growing heap
    again and again: 40% of parsing a 56,000-line folded file. Nothing it would free is lost: it runs again after.
    (The switch is process-wide: another thread's cycles wait those few seconds too.)
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _release_import(*, directory: Path, benchmark_name: str | None, version: str | None) -> ImportSummary:
    parsed, names = _parse(directory)
    _check_arguments(benchmark_name, version, parsed.problems)
    if parsed.problems:
        raise ReleaseImportError(parsed.problems)  # before the database is touched
    meta = parsed.benchmark_meta
    name = benchmark_name or meta.get("name") or "lit2test"
    version = version or meta.get("version") or "1"
    with transaction.atomic():
        benchmark, _ = Benchmark.objects.get_or_create(
            name=name,
            version=version,
            defaults={
                k: meta[k]
                for k in ("description", "verdict_rule", "proposal_schema", "orientation_seed", "canonical_judge")
                if k in meta
            },
        )
        # Concurrent imports into one benchmark queue here instead of racing on unique keys.
        benchmark = Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        known = set(benchmark.participants.values_list("name", flat=True)) | {m for (_, m) in parsed.proposals}
        _check_against_models(parsed, known)
        if parsed.problems:
            raise ReleaseImportError(parsed.problems)
        summary = ImportSummary(benchmark=benchmark, files=names)
        writer = _Writer(benchmark, parsed, summary)
        writer.write()
        if parsed.problems:
            raise ReleaseImportError(parsed.problems)  # rolls the transaction back
    tables_analyze(OrderedJudgment, CanonicalPair, Proposal, Context)
    return summary


class _Writer:
    """Applies parsed records to one benchmark; collects conflicts with stored data."""

    def __init__(self, benchmark: Benchmark, parsed: _Parsed, summary: ImportSummary) -> None:
        self.benchmark = benchmark
        self.parsed = parsed
        self.summary = summary
        self.created: dict[str, int] = defaultdict(int)

    def conflict(self, ref: _Ref, field_name: str | None, message: str) -> None:
        self.parsed.problems.append(Problem(ref.file, ref.line, field_name, message))

    def write(self) -> None:
        self._batches()
        self._contexts()
        self._participants()
        self._proposals()
        self._pairs()
        self._judgments()
        if self.created["participants"] or self.created["proposals"] or self.created["runs"]:
            # Aliases of every participant and judge -> blind_content. An import that adds no participant,
            # proposal or run (hence no judge) leaves every alias and every proposal as the last redaction saw
            # them: scanning them all again would change nothing (and was most of a re-import's time).
            benchmark_redact(benchmark=self.benchmark)
        for key in ("contexts", "papers", "participants", "proposals", "pairs", "judgments", "runs"):
            self.summary.created[key] = self.created[key]

    def _batches(self) -> None:
        names = set(self.parsed.context_batches.values())
        names |= {v["batch"] for _, v in self.parsed.contexts.values() if v["batch"]}
        existing = {b.name: b for b in self.benchmark.batches.all()}
        for name in sorted(names - set(existing)):
            existing[name] = Batch.objects.create(benchmark=self.benchmark, name=name)
        self.batches = existing

    def _contexts(self) -> None:
        existing = {c.external_id: c for c in self.benchmark.contexts.all()}
        text_ids = set(self.parsed.contexts)
        new_with_text: list[tuple[Context, list[dict[str, Any]]]] = []
        for context_id, (ref, values) in self.parsed.contexts.items():
            batch_name = values["batch"] or self.parsed.context_batches.get(context_id)
            fields = {k: values[k] for k in (*CONTEXT_TEXT_FIELDS, *CONTEXT_OPTIONAL_FIELDS)}
            context = existing.get(context_id)
            if context is not None and context.has_text:
                stored = {k: getattr(context, k) for k in fields} | {"metadata": context.metadata}
                if stored != fields | {"metadata": values["metadata"]}:
                    differing = sorted(k for k in stored if stored[k] != (fields | {"metadata": values["metadata"]})[k])
                    self.conflict(ref, ", ".join(differing), f"context {context_id!r} is already stored with different text")
                elif self._stored_papers(context) != values["papers"]:
                    self.conflict(ref, "papers", f"context {context_id!r} is already stored with different papers")
                continue
            is_new = context is None
            if is_new:
                context = Context(benchmark=self.benchmark, external_id=context_id)
                self.created["contexts"] += 1
            for key, value in fields.items():
                setattr(context, key, value)
            context.metadata = values["metadata"]
            context.has_text = True
            if batch_name and context.batch_id is None:
                context.batch = self.batches[batch_name]
            if not is_new:
                context.save()  # a verdict-only context gets its text (rare: one row per context)
            existing[context_id] = context
            self.summary.contexts_with_text += 1
            new_with_text.append((context, values["papers"]))
        Context.objects.bulk_create([c for c, _ in new_with_text if c.pk is None])
        papers = [Paper(context=c, position=i, **paper) for c, items in new_with_text for i, paper in enumerate(items)]
        Paper.objects.bulk_create(papers, batch_size=2000)
        self.created["papers"] += len(papers)
        for (context_id, _), (ref, _) in self.parsed.proposals.items():
            if context_id not in existing and context_id not in text_ids:
                self.conflict(ref, "context_id", f"no context {context_id!r} in the contexts file or the benchmark")
        self.context_ids = {external_id: c.pk for external_id, c in existing.items()}
        missing: dict[str, int | None] = {}
        for verdict in self.parsed.verdicts.values():
            if verdict.context_id not in self.context_ids and verdict.context_id not in missing:
                batch_name = self.parsed.context_batches.get(verdict.context_id)
                missing[verdict.context_id] = self.batches[batch_name].pk if batch_name else None
        if missing:
            # Verdict-only contexts (most of a release's): written in one COPY, their ids read back by name.
            self.created["contexts"] += rows_insert(
                model=Context,
                fields=("benchmark_id", "external_id", "batch_id"),
                rows=((self.benchmark.pk, external_id, batch_id) for external_id, batch_id in missing.items()),
            )
            self.context_ids = dict(self.benchmark.contexts.values_list("external_id", "pk"))

    @staticmethod
    def _stored_papers(context: Context) -> list[dict[str, Any]]:
        keys = ("title", *PAPER_TEXT_FIELDS, *PAPER_SHORT_FIELDS, "source_paper_id", "metadata")
        return [{k: getattr(p, k) for k in keys} for p in context.papers.order_by("position")]

    def _participants(self) -> None:
        existing = {p.name: p for p in self.benchmark.participants.all()}
        names = {m for (_, m) in self.parsed.proposals}
        for verdict in self.parsed.verdicts.values():
            names.update(verdict.models)
        for name in sorted(names - set(existing)):
            existing[name] = Participant.objects.create(benchmark=self.benchmark, name=name)
            self.created["participants"] += 1
        self.participants = existing

    def _proposals(self) -> None:
        stored = Proposal.objects.filter(context__benchmark=self.benchmark).values_list(
            "context__external_id", "participant__name", "content", "release_metadata"
        )
        existing = {(c, p): (content, meta) for c, p, content, meta in stored}
        new = []
        for key, (ref, values) in self.parsed.proposals.items():
            if key[0] not in self.context_ids:
                continue  # reported in _contexts
            known = existing.get(key)
            if known is not None:
                if known != (values["content"], values["release_metadata"]):
                    self.conflict(ref, "content", f"proposal of {key[1]!r} on {key[0]!r} is already stored with different text")
                continue
            schema = PROPOSAL_SCHEMAS[values["schema"]]
            problems = schema.validate(values["content"])
            new.append(
                (
                    self.context_ids[key[0]],
                    self.participants[key[1]].pk,
                    schema.name,
                    values["content"],
                    Proposal.Status.INVALID if problems else Proposal.Status.VALID,
                    problems,
                    values["release_metadata"],
                )
            )
        fields = (
            "context_id",
            "participant_id",
            "schema",
            "content",
            "validation_status",
            "validation_errors",
            "release_metadata",
        )
        self.created["proposals"] += rows_insert(model=Proposal, fields=fields, rows=new)

    def _pairs(self) -> None:
        # Ids only, no joins: names come from the participants and contexts already read.
        stored = self.benchmark.pairs.values_list("internal_key", "pk", "participant_a_id", "participant_b_id", "context_id")
        names = {p.pk: p.name for p in self.participants.values()}
        contexts = {pk: external_id for external_id, pk in self.context_ids.items()}
        # key -> (id or None while new, sorted model names, context external id)
        pairs: dict[str, tuple[int | None, tuple[str, str], str]] = {
            key: (pk, tuple(sorted((names[a], names[b]))), contexts[context]) for key, pk, a, b, context in stored
        }  # type: ignore[misc]
        # A public id is unique across the database: an export imported as another benchmark or version keeps
        # the release's ids only where they are free, and gets fresh random ones elsewhere. (Fresh ids are 64
        # random bits: a collision among 10^5 pairs has a probability near 10^-9, and would roll back the import.)
        wanted = [public_id for key, public_id in self.parsed.public_ids.items() if key not in pairs]
        taken: set[str] = set()
        for start in range(0, len(wanted), 10_000):  # bounds the IN list (SQLite allows 32,766 parameters)
            taken.update(
                CanonicalPair.objects.filter(public_id__in=wanted[start : start + 10_000]).values_list("public_id", flat=True)
            )

        def new_rows() -> Iterator[tuple[Any, ...]]:
            """The new pairs' rows, made while COPY sends them (the server stores while this loop runs)."""
            seed, benchmark_pk = self.benchmark.orientation_seed, self.benchmark.pk
            participant_ids = {name: p.pk for name, p in self.participants.items()}
            for verdict in self.parsed.verdicts.values():
                known = pairs.get(verdict.pair_key)
                if known is not None:
                    _, stored_models, context = known
                    if stored_models != verdict.models:
                        self.conflict(
                            verdict.ref,
                            "model_pair" if verdict.shown_a is None else "system_a",
                            f"pair {verdict.pair_key!r} is between {list(stored_models)}, not {list(verdict.models)}",
                        )
                    elif context != verdict.context_id:
                        self.conflict(verdict.ref, "context_id", f"pair {verdict.pair_key!r} belongs to another context")
                    continue
                first, second = verdict.models
                if orientation_flipped(seed, verdict.pair_key):
                    first, second = second, first
                public_id = self.parsed.public_ids.get(verdict.pair_key)  # any line of the pair may carry it
                if not public_id or public_id in taken:
                    public_id = new_public_id()
                pairs[verdict.pair_key] = (None, verdict.models, verdict.context_id)
                yield (
                    benchmark_pk,
                    self.context_ids[verdict.context_id],
                    participant_ids[first],
                    participant_ids[second],
                    verdict.pair_key,
                    public_id,
                )

        fields = ("benchmark_id", "context_id", "participant_a_id", "participant_b_id", "internal_key", "public_id")
        written = rows_insert(model=CanonicalPair, fields=fields, rows=new_rows())
        self.created["pairs"] += written
        if written:
            # Read back by key: 0.1 s for 56,000 pairs, a third of drawing as many ids from the sequence first.
            self.pair_ids = dict(self.benchmark.pairs.values_list("internal_key", "pk"))
        else:
            self.pair_ids = {key: pk for key, (pk, _, _) in pairs.items() if pk is not None}

    def _run(self, verdict: _Verdict, runs: dict[tuple[str, str], JudgeRun]) -> JudgeRun:
        key = (verdict.judge_model, verdict.run_label)
        if key in runs:
            return runs[key]
        run = JudgeRun.objects.filter(benchmark=self.benchmark, judge_model=key[0], label=key[1]).first()
        if run is None:
            meta = verdict.run_meta
            if meta["is_canonical"]:
                judge = self.benchmark.canonical_judge
                if judge and judge != verdict.judge_model:
                    self.conflict(
                        verdict.ref,
                        "judge_model",
                        f"{self.benchmark} has canonical judge {judge!r}; a canonical run of {verdict.judge_model!r} "
                        "needs a new benchmark version (--version)",
                    )
                elif not judge:
                    self.benchmark.canonical_judge = verdict.judge_model
                    self.benchmark.save(update_fields=["canonical_judge"])
            run = JudgeRun.objects.create(
                benchmark=self.benchmark,
                label=key[1],
                judge_model=key[0],
                provider=meta["provider"],
                prompt_version=meta.get("prompt_version", ""),
                run_type=meta["run_type"],
                is_canonical=meta["is_canonical"],
                status=JudgeRun.Status.COMPLETED,
                parameters={"source": verdict.ref.file},
            )
            self.created["runs"] += 1
            self.new_runs.add(run.pk)
        runs[key] = run
        return run

    def _stored_judgments(
        self, run: JudgeRun
    ) -> tuple[dict[tuple[int, str], tuple[int | None, bool]], set[tuple[int, str, int]]]:
        """A run's stored verdicts as compact tuples (no model objects): accepted ones by (pair, order) with
        (winner id, is_tie), and the (pair, order, attempt) of invalid ones. Nothing to read for a new run."""
        if run.pk in self.new_runs:
            return {}, set()
        accepted: dict[tuple[int, str], tuple[int | None, bool]] = {}
        invalid: set[tuple[int, str, int]] = set()
        rows = OrderedJudgment.objects.filter(run=run).values_list("pair_id", "order", "status", "winner_id", "is_tie", "attempt")
        for pair_id, order, status, winner_id, is_tie, attempt in rows:
            if status == OrderedJudgment.Status.ACCEPTED:
                accepted[(pair_id, order)] = (winner_id, is_tie)
            else:
                invalid.add((pair_id, order, attempt))
        return accepted, invalid

    def _judgments(self) -> None:
        self.new_runs: set[int] = set()
        runs: dict[tuple[str, str], JudgeRun] = {}
        for verdict in self.parsed.verdicts.values():
            self._run(verdict, runs)
        stored = {run.pk: self._stored_judgments(run) for run in runs.values() if run.pk}
        fields = ("run_id", "pair_id", "order", "status", "shown_a_id", "verdict", "is_tie", "winner_id", *_JUDGMENT_NAMES)
        # A generator: COPY sends each row as it is made (the server stores while this loop runs), and no list of
        # every row is held. A conflict found on the way is only noted; the import then rolls back.
        self.created["judgments"] += rows_insert(model=OrderedJudgment, fields=fields, rows=self._judgment_rows(runs, stored))

    def _judgment_rows(
        self,
        runs: dict[tuple[str, str], JudgeRun],
        stored: dict[int, tuple[dict[tuple[int, str], tuple[int | None, bool]], set[tuple[int, str, int]]]],
    ) -> Iterator[tuple[Any, ...]]:
        """The rows of the verdicts not stored yet, in ``fields`` order of :meth:`_judgments`."""
        names = {p.pk: p.name for p in self.participants.values()}
        participant_ids = {name: p.pk for name, p in self.participants.items()}
        run_ids = {key: run.pk for key, run in runs.items()}
        pair_ids = self.pair_ids
        accepted_status, invalid_status = OrderedJudgment.Status.ACCEPTED.value, OrderedJudgment.Status.INVALID.value
        tie_label, a_label, b_label = (
            OrderedJudgment.Verdict.TIE.value,
            OrderedJudgment.Verdict.A.value,
            OrderedJudgment.Verdict.B.value,
        )
        for verdict in self.parsed.verdicts.values():
            run_pk = run_ids[(verdict.judge_model, verdict.run_label)]
            pair_id = pair_ids.get(verdict.pair_key)
            if pair_id is None or run_pk is None:
                continue  # a conflicting pair or run, reported already
            winner = verdict.winner
            is_tie = winner == TIE
            winner_name = None if winner is None or is_tie else winner
            accepted, invalid = stored[run_pk]
            if accepted or invalid:  # a run that already holds verdicts: this one may be among them
                previous = accepted.get((pair_id, verdict.order))
                if previous is not None and verdict.status == accepted_status:
                    previous_winner, previous_tie = previous
                    if (names.get(previous_winner) if previous_winner else None, previous_tie) != (winner_name, is_tie):
                        run = runs[(verdict.judge_model, verdict.run_label)]
                        self.conflict(
                            verdict.ref,
                            "winner",
                            f"{run} already holds a different {verdict.order} verdict for {verdict.pair_key!r}",
                        )
                    continue
                if previous is None and verdict.status == invalid_status:
                    if (pair_id, verdict.order, verdict.values.get("attempt", 1)) in invalid:
                        continue
            shown_a = verdict.shown_a
            if is_tie:
                label = tie_label
            elif shown_a is None or winner_name is None:
                label = None
            else:
                label = a_label if winner_name == shown_a else b_label
            yield (
                run_pk,
                pair_id,
                verdict.order,
                verdict.status,
                participant_ids[shown_a] if shown_a else None,
                label,
                is_tie,
                participant_ids[winner_name] if winner_name else None,
                *map(verdict.values.get, _JUDGMENT_NAMES, _JUDGMENT_DEFAULTS),
            )


# Values a verdict line may carry, with what a line that does not (a folded release line) stores.
_JUDGMENT_VALUES: tuple[tuple[str, Any], ...] = (
    ("confidence", ""),
    ("main_reason", ""),
    ("weakness_a", ""),
    ("weakness_b", ""),
    ("raw_response", ""),
    ("errors", []),
    ("attempt", 1),
    ("latency_seconds", None),
    ("prompt_tokens", None),
    ("completion_tokens", None),
    ("metadata", {}),
)
_JUDGMENT_NAMES = tuple(name for name, _ in _JUDGMENT_VALUES)
_JUDGMENT_DEFAULTS = tuple(default for _, default in _JUDGMENT_VALUES)

# --------------------------------------------------------------------------- export

#: More JSONL files of an export, by name, each from a function of the benchmark; registered by other apps
#: (``controls`` adds ``controls.jsonl``) so that this module imports none of them. A file with no rows is not written.
EXTRA_EXPORTS: dict[str, Callable[[Benchmark], list[dict[str, Any]]]] = {}


def register_export(name: str, rows: Callable[[Benchmark], list[dict[str, Any]]]) -> None:
    EXTRA_EXPORTS[name] = rows


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def export_rows(benchmark: Benchmark) -> dict[str, list[dict[str, Any]]]:
    """The benchmark as release-format rows: contexts, proposals, judgments, folded cases."""
    contexts = []
    for context in benchmark.contexts.filter(has_text=True).select_related("batch").prefetch_related("papers"):
        row: dict[str, Any] = {"context_id": context.external_id}
        row |= {k: getattr(context, k) for k in (*CONTEXT_OPTIONAL_FIELDS, *CONTEXT_TEXT_FIELDS)}
        row["batch"] = context.batch.name if context.batch else None
        row["papers"] = [
            {"title": p.title, "paper_id": p.source_paper_id}
            | {k: getattr(p, k) for k in (*PAPER_TEXT_FIELDS, *PAPER_SHORT_FIELDS)}
            | p.metadata
            for p in context.papers.all()
        ]
        row["pool_metadata"] = context.metadata
        contexts.append(row)
    proposals = [
        {"context_id": p.context.external_id, "model": p.participant.name, "schema": p.schema}
        | p.content
        | {"validation_status": p.validation_status, "validation_errors": p.validation_errors}
        | p.release_metadata
        for p in Proposal.objects.filter(context__benchmark=benchmark).select_related("context", "participant")
    ]
    judgments = []
    folded: dict[tuple[int, int], dict[str, Any]] = {}
    queryset = (
        OrderedJudgment.objects.filter(run__benchmark=benchmark)
        .select_related("run", "pair__context__batch", "pair__participant_a", "pair__participant_b", "shown_a", "winner")
        .order_by("run_id", "pair__internal_key", "order", "id")
    )
    for j in queryset:
        pair, run = j.pair, j.run
        models = sorted((pair.participant_a.name, pair.participant_b.name))
        winning = "tie" if j.is_tie else (j.winner.name if j.winner else None)
        row = {
            "pair_id": pair.internal_key,
            "pair_public_id": pair.public_id,
            "order": j.order,
            "context_id": pair.context.external_id,
            "batch": pair.context.batch.name if pair.context.batch else None,
            "judge_model": run.judge_model,
            "run_label": run.label,
            "provider": run.provider,
            "prompt_version": run.prompt_version,
            "run_type": run.run_type,
            "is_canonical": run.is_canonical,
            "status": j.status,
            "model_pair": models,
            "system_a": j.shown_a.name if j.shown_a else None,
            "system_b": (models[1] if models[0] == j.shown_a.name else models[0]) if j.shown_a else None,
            "winner": ("tie" if j.is_tie else j.verdict) if j.verdict else None,
            "winning_system": winning,
            "confidence": j.confidence,
            "main_reason": j.main_reason,
            "weakness_a": j.weakness_a,
            "weakness_b": j.weakness_b,
            "judge_errors": j.errors,
            "attempt": j.attempt,
            "elapsed_seconds": j.latency_seconds,
            "prompt_tokens": j.prompt_tokens,
            "completion_tokens": j.completion_tokens,
            "raw_response": j.raw_response,
            "metadata": j.metadata,
        }
        judgments.append(row)
        if j.status == OrderedJudgment.Status.ACCEPTED:
            case = folded.setdefault(
                (run.pk, pair.pk),
                {
                    "judge_model": run.judge_model,
                    "run_label": run.label,
                    "pair_id": pair.internal_key,
                    "context_id": pair.context.external_id,
                    "batch": row["batch"],
                    "model_pair": models,
                    "original_winner": None,
                    "reverse_winner": None,
                },
            )
            case[f"{j.order}_winner"] = winning
    cases = []
    for case in folded.values():
        if case["original_winner"] is None or case["reverse_winner"] is None:
            continue  # an unfinished case folds to nothing yet
        case["stability_label"], case["folded_winner"] = _fold_label(case["original_winner"], case["reverse_winner"])
        cases.append(case)
    return {"contexts": contexts, "proposals": proposals, "judgments": judgments, "folded_cases": cases}


def _csv_cell(key: str, value: object) -> object:
    """A list as a person reads it in a spreadsheet, not as a Python repr: the model pair ``["Alpha 1", "Beta-2"]``
    (sorted names in the JSONL) as "Alpha 1 vs Beta-2", a list of errors or flags joined by "; "."""
    if not isinstance(value, list | tuple):
        return value
    return (" vs " if key == "model_pair" else "; ").join(str(item) for item in value)


def release_export(*, benchmark: Benchmark, directory: Path) -> dict[str, int]:
    """Write the benchmark to ``directory`` as JSONL (importable) and CSV. Returns row counts.

    The JSONL files hold the text exactly; the CSV copies are for spreadsheets, so a text cell a
    spreadsheet would run as a formula is neutralised (``csvsafe``). The importer reads only JSONL.
    """
    import pandas as pd  # heavy; only needed here

    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        k: getattr(benchmark, k)
        for k in ("name", "version", "description", "canonical_judge", "verdict_rule", "proposal_schema", "orientation_seed")
    }
    (directory / BENCHMARK_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    rows = export_rows(benchmark)
    counts = {}
    for name, table in rows.items():
        _jsonl(directory / f"{name}.jsonl", table)
        if name != "contexts":
            table = [{key: _csv_cell(key, value) for key, value in row.items()} for row in table]
            frame = pd.json_normalize(table) if table else pd.DataFrame()
            # Text cells only: numbers (a negative latency, say) stay numbers.
            text = frame.select_dtypes(include=["object", "string"]).columns
            frame[text] = frame[text].map(csv_safe)
            frame.columns = [csv_safe(c) for c in frame.columns]
            # CRLF rows, as RFC 4180 says: the csv writer then quotes every cell holding a lone "\r",
            # which a reader would otherwise take for the end of the row.
            frame.to_csv(directory / f"{name}.csv", index=False, lineterminator="\r\n")
        counts[name] = len(table)
    for name, make_rows in EXTRA_EXPORTS.items():
        table = make_rows(benchmark)
        if table:
            _jsonl(directory / f"{name}.jsonl", table)
            counts[name] = len(table)
    return counts
