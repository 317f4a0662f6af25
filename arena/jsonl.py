"""The JSONL toolkit every protocol's import and export uses.

Reading: :func:`read_jsonl` yields each JSON object line of a file with its line number; anything else (not UTF-8,
not JSON, not an object, a truncated line) becomes a :class:`Problem` naming the file and line. :class:`Fields`
reads a record's values by type and against the limits of the column each goes to (read from the model, so a
migration cannot leave a check behind); a wrong value is a problem naming the file, line and field, and the reader
returns a harmless default so that every problem of a line is listed. :func:`check_json` finds, anywhere in a
value, what no column can store (NUL, lone surrogates, NaN and Infinity, nesting deeper than the JSON encoder
survives). An import that found problems raises :class:`ReleaseImportError` before it writes anything.

Writing: :func:`jsonl_write` writes rows atomically (a temporary file renamed into place), so a reader never sees
half a file. The streaming COPY path for large inserts is ``arena.bulk``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import math
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import IntegrityError, models, transaction
from django.db.backends.base.operations import BaseDatabaseOperations

from .errors import AppError, json_error_text
from .models import Benchmark, Context, Participant

MAX_PROBLEMS = 50

# Lines nest a few levels at most (a Lit2Test release's four) at most; 64 is generous, and far below where json.dumps (run by
# JSONField on the way to the database, with Django's own frames already on the stack) would hit
# Python's recursion limit.
MAX_JSON_DEPTH = 64

# Characters PostgreSQL cannot store: NUL (in text and jsonb) and UTF-16 surrogates, which only
# a JSON escape such as "\ud800" can produce and which are not Unicode scalar values.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# In the raw text of a valid JSON line, NUL and surrogates can only come from a \u escape (strict
# JSON has no raw control characters, and UTF-8 no surrogates): a line without one needs no search.
_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
_JSON_WHITESPACE = " \t\n\r"

# A column a value is written to, as (model, field name): limits come from the model.
Column = tuple[type[models.Model], str]
MODEL_NAME: Column = (Participant, "name")
EXTERNAL_ID: Column = (Context, "external_id")


@functools.cache
def column_max_length(model: type[models.Model], name: str) -> int | None:
    return model._meta.get_field(name).max_length


@functools.cache
def column_integer_range(model: type[models.Model], name: str) -> tuple[int, int]:
    """The range of an integer column as PostgreSQL enforces it (SQLite would store more)."""
    internal_type = model._meta.get_field(name).get_internal_type()
    return BaseDatabaseOperations.integer_field_ranges[internal_type]


def escape_unstorable(text: str) -> str:
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
        return escape_unstorable(text)


class ReleaseImportError(AppError):
    """The files cannot be imported; nothing was written. ``problems`` says where and why."""

    def __init__(self, problems: list[Problem]) -> None:
        # One line read as two records (a folded line's two orders) was reported twice, word for word: once each.
        problems = list(dict.fromkeys(problems))
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems[:MAX_PROBLEMS])
        more = f"\n  ... and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
        super().__init__(f"import failed, nothing was written ({len(problems)} problem(s)):\n{shown}{more}")

    def payload(self) -> dict[str, Any]:
        return {"detail": "import failed, nothing was written", "problems": [str(p) for p in self.problems]}


@dataclass
class JsonlReading:
    """What reading files found: every problem, and how many non-blank lines were read (good or bad)."""

    problems: list[Problem] = field(default_factory=list)
    lines: int = 0


@dataclass(slots=True)
class Ref:
    file: str
    line: int | None


LISTED = 12


def names_listed(values: Iterable[Any]) -> str:
    """Values for a problem message: JSON-quoted, comma-separated, the first :data:`LISTED` and how many more;
    ``(none)`` when there are none."""
    values = list(values)
    shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in values[:LISTED])
    return (shown + (f" ... and {len(values) - LISTED} more" if len(values) > LISTED else "")) or "(none)"


def json_type(value: Any) -> str:
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


def show(value: Any) -> str:
    """A value quoted in a message, in JSON notation, shortened."""
    text = (
        json.dumps(value, ensure_ascii=True) if isinstance(value, (str, int, float, bool)) or value is None else json_type(value)
    )
    return text if len(text) <= 80 else text[:77] + "..."


def finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


@dataclass
class Loaded:
    value: Any = None
    problem: str | None = None
    line: int | None = None  # of the problem, within the text
    non_finite: bool = False  # NaN, Infinity or a float too large somewhere in the value


class JsonDecoder(json.JSONDecoder):
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


def json_loads(text: str, decoder: JsonDecoder | None = None) -> Loaded:
    """One JSON document, noting on the way whether any number is not finite."""
    loaded = Loaded()
    decoder = decoder or JsonDecoder()
    decoder.non_finite = False
    try:
        loaded.value = decoder.decode(text)
        loaded.non_finite = decoder.non_finite
    except json.JSONDecodeError as exc:
        loaded.problem, loaded.line = f"invalid JSON ({json_error_text(exc, line=False)}); truncated line?", exc.lineno
    except RecursionError:
        loaded.problem = "invalid JSON (nested too deeply)"
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits())
        loaded.problem = "invalid JSON (a number has too many digits)"
    return loaded


def check_json(value: Any, ref: Ref, problems: list[Problem]) -> bool:
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
                problem(path, unstorable_message(bad.group()))
        elif isinstance(item, float):
            if not math.isfinite(item):
                problem(path, f"must be a finite number, got {show(item)}")
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
                    problem(path, f"key {key!r} {unstorable_message(bad.group())}")
                    continue
                stack.append((child, key if path is None else f"{path}.{key}", depth + 1))
    return clean


def unstorable_message(character: str) -> str:
    if character == "\x00":
        return "contains a NUL character (\\u0000), which cannot be stored"
    return f"contains a lone surrogate (\\u{ord(character):04x}), which is not valid Unicode"


def read_jsonl(path: Path, parsed: JsonlReading) -> Iterator[tuple[int, dict[str, Any], bool]]:
    """(line number, record, clean) for each JSON object line; other lines become problems.

    ``clean`` is False when the record holds something no column can store (already reported).
    Lines are split on "\\n" only: U+2028 and the other separators str.splitlines() knows are
    legal inside a JSON string (our own export writes them unescaped). The file is read line by line
    (a binary file splits on "\\n" alone), so only the parsed records stay in memory.
    """
    problems = parsed.problems
    decoder = JsonDecoder()
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
                loaded = json_loads(text, decoder)  # json's own reading: leading whitespace, or what is wrong
                if loaded.problem:
                    problems.append(Problem(path.name, number, None, loaded.problem))
                    continue
                record = loaded.value
            if type(record) is not dict:
                problems.append(Problem(path.name, number, None, f"expected a JSON object, got {json_type(record)}"))
                continue
            # The walk through every value is exact; most lines show in their raw text that they need none.
            suspect = (
                decoder.non_finite
                or ("\\u" in text and _UNSTORABLE_ESCAPE.search(text))
                or text.count("[") + text.count("{") > MAX_JSON_DEPTH
            )
            yield number, record, check_json(record, Ref(path.name, number), problems) if suspect else True


def whole_number_problem(value: Any, low: int, high: int, *, nullable: bool = False) -> str | None:  # noqa: ANN401
    """What is wrong with ``value`` (not None) as a whole number from ``low`` to ``high``; None when nothing is.
    ``nullable`` only says in the message that null is accepted too.

    The one integer rule of every import: a JSON integer, nothing else. ``true`` is not 1 (Python's bool is an int),
    ``1.0`` is a float that a file meant as a count or a slot would not write, and ``"1"`` is text."""
    if type(value) is int and low <= value <= high:
        return None
    accepted = f"a whole number from {low} to {high}{' or null' if nullable else ''}"
    if type(value) is float and value.is_integer() and low <= value <= high:
        return f"must be {accepted}, written without a decimal point ({int(value)}), got {show(value)}"
    return f"must be {accepted}, got {show(value)}"


def _stored_as_is(column: Column | None, value: str) -> bool:
    """Whether ``value`` is stored, exactly so, in ``column`` (an id or name written before white space around one was
    refused). Asked only of such values: one query each, never for a well-formed one."""
    if column is None:
        return False
    model, name = column
    return model.objects.filter(**{name: value}).exists()


class Fields:
    """Typed reading of one record's fields. A wrong value becomes a problem naming file, line and
    field, and the reader returns a harmless default so that every problem of a line is listed."""

    def __init__(self, record: dict[str, Any], ref: Ref, problems: list[Problem], prefix: str = "") -> None:
        self.record = record
        self.ref = ref
        self.problems = problems
        self.prefix = prefix

    def problem(self, key: str | None, message: str) -> None:
        self.problems.append(Problem(self.ref.file, self.ref.line, f"{self.prefix}{key}" if key else None, message))

    def fits(self, key: str, value: str, column: Column | None, limit: int | None = None) -> bool:
        """Whether ``value`` fits its column (or, for a column with no length of its own, ``limit``); a problem if not."""
        limit = (column_max_length(*column) if column else None) or limit
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
        limit: int | None = None,
        identifier: bool = False,
    ) -> str:
        """A string within its column's length (``limit`` for a column that has none of its own). Required ones must
        be present and non-blank; optional blank ones read as "" unless ``keep_blank``; ``numbers`` accepts a JSON
        number and reads it as its text. An ``identifier`` (an id, a model's or a benchmark's name: compared exactly)
        may not start or end with white space: "Claude-Sonnet-4.6 " made a fifth model that looks like the fourth."""
        value = self.record.get(key)
        if value is None or (isinstance(value, str) and not value.strip() and not (keep_blank and not required)):
            if required:
                self.problem(key, "missing" if value is None else "empty")
            return ""
        if numbers and isinstance(value, (int, float)) and not isinstance(value, bool) and finite(value):
            value = str(value)
        if not isinstance(value, str):
            if finite(value):  # NaN and Infinity are reported by check_json already
                self.problem(key, f"must be text, got {json_type(value)}")
            return ""
        if identifier and value != value.strip() and not _stored_as_is(column, value):
            # One stored so (by an import before this rule) is taken: refusing it would leave that data no way in.
            self.problem(key, f"{show(value)} starts or ends with white space; ids and names are compared exactly: remove it")
            return ""
        return value if self.fits(key, value, column, limit) else ""

    def choice(self, key: str, choices: Sequence[str], default: str) -> str:
        value = self.text(key, required=False)
        if value and value not in choices:
            self.problem(key, f"must be one of {', '.join(json.dumps(c) for c in choices)}; got {show(value)}")
            return default
        return value or default

    def integer(
        self,
        key: str,
        column: Column,
        *,
        minimum: int | None = None,
        maximum: int | None = None,
        default: int | None = None,
        required: bool = False,
    ) -> int | None:
        """A JSON integer within the column's range (and ``minimum`` and ``maximum``): :func:`whole_number_problem`.
        Null or absent is ``default``, or a problem when ``required``."""
        low, high = column_integer_range(*column)
        low = low if minimum is None else max(low, minimum)
        high = high if maximum is None else min(high, maximum)
        value = self.record.get(key)
        if value is None:
            if required:
                self.problem(key, f"missing; a whole number from {low} to {high}")
            return default
        message = whole_number_problem(value, low, high)
        if message is not None:
            if finite(value):  # NaN and Infinity are reported by check_json already
                self.problem(key, message)
            return default
        return value

    def number(self, key: str, *, minimum: float = 0.0) -> float | None:
        value = self.record.get(key)
        if value is None or not finite(value):
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.problem(key, f"must be a number, got {show(value)}")
            return None
        try:
            number = float(value)
        except OverflowError:
            self.problem(key, f"must be a finite number, got {show(value)}")
            return None
        if number < minimum:
            self.problem(key, f"must be {minimum:g} or more, got {show(value)}")
            return None
        return number

    def flag(self, key: str, default: bool) -> bool:
        value = self.record.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problem(key, f"must be true or false, got {show(value)}")
            return default
        return value

    def mapping(self, key: str) -> dict[str, Any]:
        value = self.record.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problem(key, f"must be an object, got {json_type(value)}")
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


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
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


def jsonl_line(record: Mapping[str, Any], *, sort_keys: bool = False) -> str:
    """One JSONL line: UTF-8 text as is (not ASCII-escaped), NaN and Infinity refused (every import refuses them)."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False, sort_keys=sort_keys) + "\n"


def jsonl_write(path: Path, rows: Iterable[Mapping[str, Any]], *, sort_keys: bool = False) -> int:
    """Write ``rows`` as JSON lines (:func:`jsonl_line`) to ``path`` atomically: into a temporary file of the same
    folder, renamed over ``path`` once complete, so a reader never sees half a file. Returns the number of rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Created as any new file is (0666 less the umask), not as a private temporary file (0600): an export to a shared
    # folder was readable by its writer alone, while the CSVs beside it were not.
    temporary = path.parent / f".{path.name}.{secrets.token_hex(8)}"
    handle = open(temporary, "x", encoding="utf-8")  # noqa: SIM115 - closed below, renamed over path once complete
    count = 0
    try:
        with handle:
            for row in rows:
                handle.write(jsonl_line(row, sort_keys=sort_keys))
                count += 1
        os.replace(handle.name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(handle.name)
        raise
    return count


def jsonl_files_in(
    directory: Path, kinds: Sequence[str], *, what: str, error: type[Exception], note: str = ""
) -> dict[str, Path]:
    """The ``<kind>.jsonl`` files of ``kinds`` present in ``directory``, by kind. Raises ``error`` when the folder does
    not exist or holds none of them, saying which files were expected (``what``: "Intrinsic", say; ``note`` adds what
    must be there at least)."""
    if not directory.is_dir():
        raise error(f"{directory}: no such folder")
    found = {kind: directory / f"{kind}.jsonl" for kind in kinds if (directory / f"{kind}.jsonl").is_file()}
    if not found:
        raise error(f"{directory}: no {what} file in this folder; expected {', '.join(f'{k}.jsonl' for k in kinds)}{note}")
    return found


def benchmark_create(*, error: type[Exception], name: str, version: str, **fields: Any) -> Benchmark:  # noqa: ANN401
    """The new benchmark of an import, made inside the import's transaction. When two imports create one name at
    once, the second waits for the first (PostgreSQL) and raises ``error``, its transaction rolled back: one import
    is made, and the other says what happened and what to do."""
    try:
        with transaction.atomic():
            return Benchmark.objects.create(name=name, version=version, **fields)
    except IntegrityError:
        if not Benchmark.objects.filter(name=name, version=version).exists():
            raise
        raise error(
            f"benchmark {name} v{version} was created by another import while this one ran; nothing was written: "
            "run this import again to add its files to that benchmark"
        ) from None
