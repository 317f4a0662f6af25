"""Writes of HypoArena data: import from the JSONL files of ``FORMAT.md``, and the export that writes them back.

The import reads every file, checks every line against the others and against what is stored, and only then
writes, in one transaction: a bad line anywhere means nothing is written, and each problem names its file, line,
field, the value it refuses and the values it would accept. Re-importing the same files changes nothing: a line
already stored with the same content is counted as unchanged; one stored with other content is a problem.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from arena.models import Benchmark, JudgeRun, Participant
from arena.release import (
    MODEL_NAME,
    Problem,
    ReleaseImportError,
    _Fields,
    _json_type,
    _Parsed,
    _read_jsonl,
    _Ref,
    _show,
    names_listed,
    orientation_flipped,
)

from .models import ORDERS, RUBRIC_MAX, RUBRIC_MIN, VERDICTS, ArenaVerdict, Case, Domain, Match, RubricScore, Submission

#: The files of a HypoArena benchmark, in the order they are read (each refers to the ones before it).
FILES: tuple[str, ...] = ("cases", "submissions", "verdicts", "rubric")
CASE_KEYS = ("case_id", "domain", "singleton", "context", "reference_conclusion")
SUBMISSION_KEYS = ("case_id", "model", "reference", "pairs")
PAIR_KEYS = ("hypothesis", "evidence")
VERDICT_KEYS = ("case_id", "model_a", "model_b", "order", "verdict", "judge", "run_label", "status", "reasons", "raw")
RUBRIC_KEYS = ("case_id", "model", "judge", "run_label", "pairs", "b", "d", "u")
RUBRIC_PAIR_KEYS = ("g", "l", "j")
STATUSES = tuple(ArenaVerdict.Status.values)
#: Run types of the runs a HypoArena benchmark holds: 5-level arena verdicts, or rubric scores.
ARENA_RUN, RUBRIC_RUN = "arena", "rubric"

# Limits that keep one line from filling the database; generous for real cases (the paper's contexts are a few
# thousand characters, its hypotheses and evidence a few hundred).
MAX_CONTEXT_CHARS = 100_000
MAX_PAIR_CHARS = 10_000
MAX_PAIRS = 20
BATCH = 2_000  # rows per INSERT: large enough to be quick, small enough for SQLite's variable limit

CASE_ID = (Case, "external_id")
DOMAIN_NAME = (Domain, "name")
JUDGE = (JudgeRun, "judge_model")
RUN_LABEL = (JudgeRun, "label")


class HypoArenaError(Exception):
    """A request about HypoArena data that cannot be carried out; nothing was written."""


class HypoArenaImportError(ReleaseImportError):
    """The files cannot be imported; nothing was written. ``problems`` says where and why."""


_names = names_listed


# --------------------------------------------------------------------------- checks shared by every path


def pairs_problems(pairs: Any, *, singleton: bool | None = None) -> list[tuple[str, str]]:  # noqa: ANN401
    """What is wrong with a submission's pairs, as (field, message); empty when nothing is.

    ``pairs`` must be a list of 1 to ``MAX_PAIRS`` objects with exactly a non-blank ``hypothesis`` and
    ``evidence``; in a singleton domain (``singleton`` true) exactly one. Shared by the import and, later, by the
    generation run's schema validation, so a submission is held to one standard wherever it comes from.
    """
    if pairs is None:
        return [("pairs", 'missing; a list of {"hypothesis", "evidence"} objects')]
    if not isinstance(pairs, list):
        return [("pairs", f'must be a list of {{"hypothesis", "evidence"}} objects, got {_json_type(pairs)}')]
    if not pairs:
        return [("pairs", "empty; a submission has at least one hypothesis–evidence pair")]
    if len(pairs) > MAX_PAIRS:
        return [("pairs", f"has {len(pairs)} pairs; the limit is {MAX_PAIRS}")]
    problems: list[tuple[str, str]] = []
    for i, pair in enumerate(pairs):
        where = f"pairs[{i}]"
        if not isinstance(pair, dict):
            problems.append((where, f'must be an object {{"hypothesis", "evidence"}}, got {_json_type(pair)}'))
            continue
        for key in sorted(set(pair) - set(PAIR_KEYS)):
            problems.append((f"{where}.{key}", f"is not a field of a pair; the fields are {', '.join(PAIR_KEYS)}"))
        for key in PAIR_KEYS:
            value = pair.get(key)
            if not isinstance(value, str):
                problems.append((f"{where}.{key}", "missing" if value is None else f"must be text, got {_json_type(value)}"))
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


# --------------------------------------------------------------------------- parsed lines


@dataclass(slots=True)
class _CaseLine:
    ref: _Ref
    case_id: str
    domain: str
    singleton: bool | None  # None: the line does not say
    context: str
    reference_conclusion: str


@dataclass(slots=True)
class _SubmissionLine:
    ref: _Ref
    case_id: str
    model: str
    reference: bool
    pairs: list[dict[str, str]]


@dataclass(slots=True)
class _VerdictLine:
    ref: _Ref
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
        return frozenset((self.model_a, self.model_b))


@dataclass(slots=True)
class _RubricLine:
    ref: _Ref
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
        return (self.g, self.l, self.j, self.b, self.d, self.u)


def _unknown_keys(f: _Fields, record: Mapping[str, Any], keys: Sequence[str], what: str) -> None:
    for key in sorted(set(record) - set(keys)):
        f.problem(key, f"is not a field of a {what} line; the fields are {', '.join(keys)}")


def _score(f: _Fields, key: str, value: Any, *, nullable: bool = False) -> int | None:  # noqa: ANN401
    if value is None:
        if not nullable:
            f.problem(key, f"missing; a whole number from {RUBRIC_MIN} to {RUBRIC_MAX}")
        return None
    whole = isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer())
    if isinstance(value, bool) or not whole or not RUBRIC_MIN <= value <= RUBRIC_MAX:
        f.problem(
            key, f"must be a whole number from {RUBRIC_MIN} to {RUBRIC_MAX}{' or null' if nullable else ''}, got {_show(value)}"
        )
        return None
    return int(value)


def _parse_case(record: dict[str, Any], f: _Fields) -> _CaseLine | None:
    before = len(f.problems)
    _unknown_keys(f, record, CASE_KEYS, "case")
    case_id = f.text("case_id", CASE_ID)
    domain = f.text("domain", DOMAIN_NAME)
    singleton = None if record.get("singleton") is None else f.flag("singleton", False)
    context = f.text("context")
    if len(context) > MAX_CONTEXT_CHARS:
        f.problem("context", f"has {len(context)} characters; the limit is {MAX_CONTEXT_CHARS}")
    reference = f.text("reference_conclusion", required=False)
    if len(reference) > MAX_CONTEXT_CHARS:
        f.problem("reference_conclusion", f"has {len(reference)} characters; the limit is {MAX_CONTEXT_CHARS}")
    if len(f.problems) != before:
        return None
    return _CaseLine(f.ref, case_id, domain, singleton, context, reference)


def _parse_submission(record: dict[str, Any], f: _Fields) -> _SubmissionLine | None:
    before = len(f.problems)
    _unknown_keys(f, record, SUBMISSION_KEYS, "submission")
    case_id = f.text("case_id", CASE_ID)
    model = f.text("model", MODEL_NAME)
    reference = f.flag("reference", False)
    pairs = record.get("pairs")
    for name, message in pairs_problems(pairs):
        f.problem(name, message)
    if len(f.problems) != before:
        return None
    return _SubmissionLine(f.ref, case_id, model, reference, pairs)


def _parse_verdict(record: dict[str, Any], f: _Fields) -> _VerdictLine | None:
    before = len(f.problems)
    _unknown_keys(f, record, VERDICT_KEYS, "verdict")
    case_id = f.text("case_id", CASE_ID)
    model_a = f.text("model_a", MODEL_NAME)
    model_b = f.text("model_b", MODEL_NAME)
    if model_a and model_a == model_b:
        f.problem("model_b", f"is {_show(model_b)}, the same model as model_a; a match compares two different models")
    order = record.get("order")
    if order is None:
        f.problem("order", f"missing; one of {_names(ORDERS)}")
    elif order not in ORDERS:
        f.problem("order", f"must be one of {_names(ORDERS)}; got {_show(order)}")
    status = f.choice("status", STATUSES, default=ArenaVerdict.Status.ACCEPTED)
    verdict = record.get("verdict")
    if status == ArenaVerdict.Status.ACCEPTED:
        if verdict is None:
            f.problem("verdict", f'missing; one of {_names(VERDICTS)} (or status "invalid" with no verdict)')
        elif verdict not in VERDICTS:
            f.problem("verdict", f"must be one of {_names(VERDICTS)}; got {_show(verdict)}")
    elif verdict is not None:
        f.problem("verdict", f'must be null in an invalid verdict (status "invalid"); got {_show(verdict)}')
    judge = f.text("judge", JUDGE)
    run_label = f.text("run_label", RUN_LABEL)
    reasons = f.text("reasons", required=False)
    raw = f.text("raw", required=False)
    if len(f.problems) != before:
        return None
    return _VerdictLine(f.ref, case_id, model_a, model_b, order, verdict, status, judge, run_label, reasons, raw)


def _parse_rubric(record: dict[str, Any], f: _Fields) -> _RubricLine | None:
    before = len(f.problems)
    _unknown_keys(f, record, RUBRIC_KEYS, "rubric")
    case_id = f.text("case_id", CASE_ID)
    model = f.text("model", MODEL_NAME)
    judge = f.text("judge", JUDGE)
    run_label = f.text("run_label", RUN_LABEL)
    pairs = record.get("pairs")
    g: list[int] = []
    ell: list[int] = []
    j: list[int] = []
    if not isinstance(pairs, list) or not pairs:
        what = "missing" if pairs is None else ("empty" if pairs == [] else f"must be a list, got {_json_type(pairs)}")
        f.problem("pairs", f'{what}; one {{"g", "l", "j"}} object of 1–5 scores per hypothesis–evidence pair')
    else:
        for i, pair in enumerate(pairs):
            if not isinstance(pair, dict):
                f.problem(f"pairs[{i}]", f'must be an object {{"g", "l", "j"}}, got {_json_type(pair)}')
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
    return _RubricLine(f.ref, case_id, model, judge, run_label, g, ell, j, b, d, u)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- what is stored


@dataclass
class _Stored:
    """What the benchmark already holds, keyed as the files name things."""

    domains: dict[str, Domain] = field(default_factory=dict)
    cases: dict[str, Case] = field(default_factory=dict)
    participants: dict[str, Participant] = field(default_factory=dict)
    submissions: dict[tuple[str, str], Submission] = field(default_factory=dict)
    references: dict[str, bool] = field(default_factory=dict)  # model -> is the Reference
    matches: dict[tuple[str, frozenset[str]], tuple[str, str]] = field(default_factory=dict)  # -> (first, second)
    runs: dict[tuple[str, str], JudgeRun] = field(default_factory=dict)
    accepted: dict[tuple, str] = field(default_factory=dict)  # (judge, label, case, models, order) -> verdict
    invalid: Counter = field(default_factory=Counter)  # (judge, label, case, models, order, reasons, raw)
    rubric: dict[tuple[str, str, str, str], tuple] = field(default_factory=dict)

    @classmethod
    def load(cls, benchmark: Benchmark | None) -> _Stored:
        stored = cls()
        if benchmark is None:
            return stored
        stored.domains = {d.name: d for d in Domain.objects.filter(benchmark=benchmark)}
        stored.cases = {c.external_id: c for c in Case.objects.filter(benchmark=benchmark).select_related("domain")}
        stored.participants = {p.name: p for p in benchmark.participants.all()}
        for s in Submission.objects.filter(case__benchmark=benchmark).select_related("case", "participant"):
            stored.submissions[(s.case.external_id, s.participant.name)] = s
            stored.references[s.participant.name] = s.is_reference
        names = dict(Submission.objects.filter(case__benchmark=benchmark).values_list("pk", "participant__name"))
        for case_id, first, second in Match.objects.filter(case__benchmark=benchmark).values_list(
            "case__external_id", "first_id", "second_id"
        ):
            stored.matches[(case_id, frozenset((names[first], names[second])))] = (names[first], names[second])
        stored.runs = {(r.judge_model, r.label): r for r in benchmark.runs.all()}
        rows = ArenaVerdict.objects.filter(run__benchmark=benchmark).values_list(
            "run__judge_model",
            "run__label",
            "match__case__external_id",
            "match__first_id",
            "match__second_id",
            "order",
            "status",
            "verdict",
            "reasons",
            "raw_response",
        )
        for judge, label, case_id, first, second, order, status, verdict, reasons, raw in rows.iterator():
            key = (judge, label, case_id, frozenset((names[first], names[second])), order)
            if status == ArenaVerdict.Status.ACCEPTED:
                stored.accepted[key] = verdict
            else:
                stored.invalid[(*key, reasons, raw)] += 1
        for r in RubricScore.objects.filter(run__benchmark=benchmark).select_related(
            "run", "submission__case", "submission__participant"
        ):
            key = (r.run.judge_model, r.run.label, r.submission.case.external_id, r.submission.participant.name)
            stored.rubric[key] = (r.grounding, r.insight, r.justification, r.breadth, r.distinctness, r.utility)
        return stored


# --------------------------------------------------------------------------- import


@dataclass
class ImportSummary:
    benchmark: Benchmark
    files: list[str]
    created: Counter = field(default_factory=Counter)
    unchanged: Counter = field(default_factory=Counter)

    def line(self) -> str:
        kinds = ("domains", "cases", "participants", "submissions", "matches", "runs", "verdicts", "rubric scores")
        if not any(self.created.values()):
            return f"nothing new: {', '.join(self.files)} already imported into {self.benchmark}"
        made = ", ".join(f"{self.created[k]} {k}" for k in kinds if self.created[k])
        kept = sum(self.unchanged.values())
        return f"created {made} in {self.benchmark}" + (f"; {kept} line(s) already there" if kept else "")


def import_files(paths: Sequence[Path]) -> dict[str, Path]:
    """The HypoArena files among ``paths`` by kind: a directory gives the files of ``FILES`` present in it; a file is
    recognised by its name (``cases.jsonl`` or ``*_cases.jsonl``, and so on). Raises :class:`HypoArenaError` naming
    an unrecognised or missing file."""
    found: dict[str, Path] = {}
    for path in paths:
        if path.is_dir():
            candidates = [p for kind in FILES for p in sorted(path.glob(f"*{kind}.jsonl"))]
            if not candidates:
                raise HypoArenaError(
                    f"{path}: no HypoArena file in this folder; expected {', '.join(f'{k}.jsonl' for k in FILES)}"
                )
        elif path.is_file():
            candidates = [path]
        else:
            raise HypoArenaError(f"{path}: no such file or folder")
        for candidate in candidates:
            kind = next((k for k in FILES if candidate.name == f"{k}.jsonl" or candidate.name.endswith(f"_{k}.jsonl")), None)
            if kind is None:
                raise HypoArenaError(
                    f"{candidate}: not a HypoArena file name; name files {', '.join(f'{k}.jsonl' for k in FILES)} (or PREFIX_{FILES[0]}.jsonl ...)"
                )
            if kind in found and found[kind] != candidate:
                raise HypoArenaError(f"two {kind} files given: {found[kind]} and {candidate}; import them one at a time")
            found[kind] = candidate
    return found


def hypoarena_import(*, name: str, files: Mapping[str, Path], version: str = "1", description: str = "") -> ImportSummary:
    """Import HypoArena files (``FORMAT.md``) into benchmark ``name`` v``version``, created with protocol
    ``hypoarena`` if it does not exist; all or nothing.

    ``files`` maps kinds of :data:`FILES` to paths (see :func:`import_files`); any subset may be given, lines may
    refer to what an earlier import stored. Raises :class:`HypoArenaImportError` listing every problem (file, line,
    field, the value and what is valid) and writes nothing then; :class:`HypoArenaError` when the benchmark is of
    another protocol.
    """
    benchmark = Benchmark.objects.filter(name=name, version=version).first()
    if benchmark is not None and benchmark.protocol != Benchmark.Protocol.HYPOARENA:
        raise HypoArenaError(
            f"{benchmark} is a {benchmark.get_protocol_display()} benchmark; import HypoArena files into a new benchmark name "
            "(or another version)"
        )
    if not files:
        raise HypoArenaError(f"no file to import; give {', '.join(f'{k}.jsonl' for k in FILES)} or a folder holding them")
    stored = _Stored.load(benchmark)
    parsed = _Parsed()
    problems = parsed.problems

    # What a refused line names (a case id, a model's submission) is remembered, so that the lines referring to it
    # are skipped quietly: the problem is reported once, where it is.
    broken: dict[str, set[Any]] = {"cases": set(), "submissions": set()}

    def lines(kind: str, parse: Any) -> list[Any]:  # noqa: ANN401
        path = files.get(kind)
        if path is None:
            return []
        out = []
        before = parsed.lines
        for number, record, clean in _read_jsonl(path, parsed):
            line = parse(record, _Fields(record, _Ref(path.name, number), problems))
            if line is not None and clean:
                out.append(line)
            elif kind == "cases":
                broken[kind].add(record.get("case_id"))
            elif kind == "submissions":
                broken[kind].add((record.get("case_id"), record.get("model")))
        if parsed.lines == before:
            problems.append(Problem(path.name, None, None, f"no {kind} lines (the file is empty)"))
        return out

    case_lines: list[_CaseLine] = lines("cases", _parse_case)
    submission_lines: list[_SubmissionLine] = lines("submissions", _parse_submission)
    verdict_lines: list[_VerdictLine] = lines("verdicts", _parse_verdict)
    rubric_lines: list[_RubricLine] = lines("rubric", _parse_rubric)

    def problem(ref: _Ref, name: str | None, message: str) -> None:
        problems.append(Problem(ref.file, ref.line, name, message))

    # Cases and their domains.
    singleton: dict[str, tuple[bool, str]] = {d.name: (d.singleton, "stored") for d in stored.domains.values()}
    cases: dict[str, _CaseLine] = {}
    new_cases: list[_CaseLine] = []
    for line in case_lines:
        if line.case_id in cases:
            problem(
                line.ref, "case_id", f"{_show(line.case_id)} repeats line {cases[line.case_id].ref.line}; each case appears once"
            )
            continue
        cases[line.case_id] = line
        if line.singleton is not None:
            said = singleton.get(line.domain)
            if said is None:
                singleton[line.domain] = (line.singleton, f"line {line.ref.line}")
            elif said[0] != line.singleton:
                problem(
                    line.ref,
                    "singleton",
                    f"is {json.dumps(line.singleton)}, but domain {_show(line.domain)} is {'a singleton' if said[0] else 'a multi-pair'} "
                    f"domain ({said[1]}); every case of a domain says the same, or leaves singleton out",
                )
        old = stored.cases.get(line.case_id)
        if old is None:
            new_cases.append(line)
            continue
        differing = [
            k
            for k, was, now in (
                ("domain", old.domain.name, line.domain),
                ("context", old.context, line.context),
                ("reference_conclusion", old.reference_conclusion, line.reference_conclusion),
            )
            if was != now
        ]
        if differing:
            problem(
                line.ref,
                ", ".join(differing),
                f"case {_show(line.case_id)} is already in {benchmark} with a different {', '.join(differing)}; give the new case its own case_id",
            )
    domain_of: dict[str, str] = {c.external_id: c.domain.name for c in stored.cases.values()} | {
        c: x.domain for c, x in cases.items()
    }
    is_singleton = {name: said[0] for name, said in singleton.items()}
    known_cases = sorted(set(domain_of) | {c for c in broken["cases"] if isinstance(c, str) and c})

    def unknown_case(ref: _Ref, case_id: str) -> bool:
        if case_id in domain_of:
            return False
        if case_id in broken["cases"]:
            return True
        problem(ref, "case_id", f"unknown case {_show(case_id)}; the cases are {_names(known_cases)}")
        return True

    # Submissions.
    submitted: dict[tuple[str, str], _SubmissionLine | Submission] = dict(stored.submissions)
    new_submissions: list[_SubmissionLine] = []
    reference: dict[str, tuple[bool, str]] = {m: (r, "stored") for m, r in stored.references.items()}
    seen_submissions: dict[tuple[str, str], int | None] = {}
    for line in submission_lines:
        key = (line.case_id, line.model)
        if key in seen_submissions:
            problem(
                line.ref,
                "model",
                f"{_show(line.model)} already has a submission for case {_show(line.case_id)} on line {seen_submissions[key]}; one per model and case",
            )
            continue
        seen_submissions[key] = line.ref.line
        if unknown_case(line.ref, line.case_id):
            continue
        domain = domain_of[line.case_id]
        if is_singleton.get(domain) and len(line.pairs) != 1:
            problem(
                line.ref,
                "pairs",
                f"has {len(line.pairs)} pairs; case {_show(line.case_id)} is in singleton domain {_show(domain)}, where a submission has exactly 1",
            )
            broken["submissions"].add(key)
            continue
        said = reference.get(line.model)
        if said is None:
            reference[line.model] = (line.reference, f"line {line.ref.line}")
        elif said[0] != line.reference:
            problem(
                line.ref,
                "reference",
                f"is {json.dumps(line.reference)}, but {_show(line.model)} is {'' if said[0] else 'not '}the Reference ({said[1]}); "
                "a model is the Reference in all its submissions or in none",
            )
            broken["submissions"].add(key)
            continue
        old = stored.submissions.get(key)
        if old is None:
            new_submissions.append(line)
            submitted[key] = line
        elif old.pairs != line.pairs:
            problem(
                line.ref,
                "pairs",
                f"{_show(line.model)} already has a submission for case {_show(line.case_id)} in {benchmark} with other pairs; it cannot be replaced by an import",
            )
    models_of: dict[str, list[str]] = {}
    for case_id, model in submitted:
        models_of.setdefault(case_id, []).append(model)

    def unknown_submission(ref: _Ref, name: str, case_id: str, model: str) -> bool:
        if (case_id, model) in submitted:
            return False
        if (case_id, model) in broken["submissions"]:
            return True
        problem(
            ref,
            name,
            f"{_show(model)} has no submission for case {_show(case_id)}; the models with one are {_names(sorted(models_of.get(case_id, [])))}",
        )
        return True

    run_types: dict[tuple[str, str], tuple[str, str]] = {k: (r.run_type, "stored") for k, r in stored.runs.items()}

    def wrong_run(ref: _Ref, judge: str, label: str, run_type: str) -> bool:
        said = run_types.setdefault((judge, label), (run_type, f"{ref.file}, line {ref.line}"))
        if said[0] == run_type:
            return False
        problem(
            ref,
            "run_label",
            f"run {_show(label)} of judge {_show(judge)} already holds {said[0]} results ({said[1]}); give the {run_type} run its own run_label",
        )
        return True

    # Verdicts: the orientation of each match, and one accepted verdict per (run, match, order).
    orientation: dict[tuple[str, frozenset[str]], tuple[str, str, str]] = {
        k: (first, second, "as stored") for k, (first, second) in stored.matches.items()
    }
    new_verdicts: list[_VerdictLine] = []
    seen_verdicts: dict[tuple, int | None] = {}
    invalid_left = Counter(stored.invalid)
    for line in verdict_lines:
        if unknown_case(line.ref, line.case_id):
            continue
        if unknown_submission(line.ref, "model_a", line.case_id, line.model_a) | unknown_submission(
            line.ref, "model_b", line.case_id, line.model_b
        ):
            continue
        if wrong_run(line.ref, line.judge, line.run_label, ARENA_RUN):
            continue
        first, second = (line.model_a, line.model_b) if line.order == "original" else (line.model_b, line.model_a)
        match_key = (line.case_id, line.models)
        known = orientation.setdefault(match_key, (first, second, f"line {line.ref.line}"))
        if known[0] != first:
            shown = known[0] if line.order == "original" else known[1]
            problem(
                line.ref,
                "model_a",
                f"is {_show(line.model_a)}, but in the {line.order} order of case {_show(line.case_id)} the match of {_show(known[0])} and "
                f"{_show(known[1])} shows {_show(shown)} as A ({known[2]}: {_show(known[0])} is A in the original order, {_show(known[1])} "
                "in the reverse); swap model_a and model_b, or the order",
            )
            continue
        key = (line.judge, line.run_label, line.case_id, line.models, line.order)
        if line.status == ArenaVerdict.Status.INVALID:
            if invalid_left[(*key, line.reasons, line.raw)] > 0:
                invalid_left[(*key, line.reasons, line.raw)] -= 1
            else:
                new_verdicts.append(line)
            continue
        if key in seen_verdicts:
            problem(
                line.ref,
                "verdict",
                f"a second accepted verdict for this match and order in run {_show(line.run_label)} of {_show(line.judge)} (the first is on line {seen_verdicts[key]}); one per run, match and order",
            )
            continue
        seen_verdicts[key] = line.ref.line
        old_verdict = stored.accepted.get(key)
        if old_verdict is None:
            new_verdicts.append(line)
        elif old_verdict != line.verdict:
            problem(
                line.ref,
                "verdict",
                f"is {_show(line.verdict)}, but run {_show(line.run_label)} of {_show(line.judge)} already has {_show(old_verdict)} for this match and order; a run's verdict cannot be replaced by an import",
            )

    # Rubric scores.
    new_rubric: list[_RubricLine] = []
    seen_rubric: dict[tuple, int | None] = {}
    for line in rubric_lines:
        if unknown_case(line.ref, line.case_id) or unknown_submission(line.ref, "model", line.case_id, line.model):
            continue
        if wrong_run(line.ref, line.judge, line.run_label, RUBRIC_RUN):
            continue
        sub = submitted[(line.case_id, line.model)]
        k = len(sub.pairs)
        if len(line.g) != k:
            problem(
                line.ref,
                "pairs",
                f"scores {len(line.g)} pair(s); the submission of {_show(line.model)} for case {_show(line.case_id)} has K = {k}",
            )
            continue
        if k == 1 and line.d is not None:
            problem(
                line.ref,
                "d",
                f"must be null when K = 1 (directional distinctness does not apply to one pair); got {_show(line.d)}",
            )
            continue
        if k > 1 and line.d is None:
            problem(
                line.ref, "d", f"missing; a whole number from {RUBRIC_MIN} to {RUBRIC_MAX} (the submission has K = {k} pairs)"
            )
            continue
        key = (line.judge, line.run_label, line.case_id, line.model)
        if key in seen_rubric:
            problem(
                line.ref,
                "model",
                f"a second rubric score of {_show(line.model)} for case {_show(line.case_id)} in run {_show(line.run_label)} (the first is on line {seen_rubric[key]})",
            )
            continue
        seen_rubric[key] = line.ref.line
        old_scores = stored.rubric.get(key)
        if old_scores is None:
            new_rubric.append(line)
        elif old_scores != line.values():
            problem(
                line.ref,
                "pairs",
                f"run {_show(line.run_label)} of {_show(line.judge)} already scored {_show(line.model)} for case {_show(line.case_id)} differently; scores cannot be replaced by an import",
            )

    if problems:
        raise HypoArenaImportError(problems)
    summary = ImportSummary(benchmark=benchmark, files=[p.name for p in files.values()])  # type: ignore[arg-type]
    summary.unchanged.update(
        cases=len(case_lines) - len(new_cases),
        submissions=len(submission_lines) - len(new_submissions),
        verdicts=len(verdict_lines) - len(new_verdicts),
        rubric=len(rubric_lines) - len(new_rubric),
    )
    with transaction.atomic():
        summary.benchmark = _write(
            benchmark,
            name=name,
            version=version,
            description=description,
            stored=stored,
            summary=summary,
            singleton=is_singleton,
            cases=new_cases,
            submissions=new_submissions,
            reference=reference,
            orientation=orientation,
            verdicts=new_verdicts,
            rubric=new_rubric,
            sources={k: p.name for k, p in files.items()},
        )
    return summary


def _write(
    benchmark: Benchmark | None,
    *,
    name: str,
    version: str,
    description: str,
    stored: _Stored,
    summary: ImportSummary,
    singleton: dict[str, bool],
    cases: list[_CaseLine],
    submissions: list[_SubmissionLine],
    reference: dict[str, tuple[bool, str]],
    orientation: dict[tuple[str, frozenset[str]], tuple[str, str, str]],
    verdicts: list[_VerdictLine],
    rubric: list[_RubricLine],
    sources: dict[str, str],
) -> Benchmark:
    """The writes of a checked import, in the caller's transaction."""
    created = summary.created
    if benchmark is None:
        benchmark = Benchmark.objects.create(
            name=name,
            version=version,
            description=description,
            protocol=Benchmark.Protocol.HYPOARENA,
            verdict_rule="five-level",
            proposal_schema="hypothesis-evidence-pairs",
        )
    new_domains = [
        Domain(benchmark=benchmark, name=n, singleton=singleton.get(n, False))
        for n in dict.fromkeys(c.domain for c in cases)
        if n not in stored.domains
    ]
    Domain.objects.bulk_create(new_domains)
    created["domains"] = len(new_domains)
    domains = {d.name: d for d in Domain.objects.filter(benchmark=benchmark)}
    Case.objects.bulk_create(
        [
            Case(
                benchmark=benchmark,
                domain=domains[c.domain],
                external_id=c.case_id,
                context=c.context,
                reference_conclusion=c.reference_conclusion,
            )
            for c in cases
        ],
        batch_size=BATCH,
    )
    created["cases"] = len(cases)
    case_ids = {c.external_id: c.pk for c in Case.objects.filter(benchmark=benchmark).only("pk", "external_id")}
    wanted = {s.model for s in submissions}  # a verdict or a score names models that have a submission
    new_participants = [Participant(benchmark=benchmark, name=m) for m in sorted(wanted - set(stored.participants))]
    Participant.objects.bulk_create(new_participants)
    created["participants"] = len(new_participants)
    participant_ids = dict(benchmark.participants.values_list("name", "pk"))
    Submission.objects.bulk_create(
        [
            Submission(
                case_id=case_ids[s.case_id],
                participant_id=participant_ids[s.model],
                is_reference=reference[s.model][0],
                pairs=s.pairs,
            )
            for s in submissions
        ],
        batch_size=BATCH,
    )
    created["submissions"] = len(submissions)

    # Every two submissions of a case form a match; one no verdict oriented gets the seeded orientation.
    submission_ids: dict[tuple[str, str], int] = {}
    for pk, case_id, model in Submission.objects.filter(case__benchmark=benchmark).values_list(
        "pk", "case__external_id", "participant__name"
    ):
        submission_ids[(case_id, model)] = pk
    by_case: dict[str, list[str]] = {}
    for case_id, model in submission_ids:
        by_case.setdefault(case_id, []).append(model)
    new_matches: list[Match] = []
    for case_id in sorted({s.case_id for s in submissions}):
        models = sorted(by_case[case_id])
        for i, one in enumerate(models):
            for other in models[i + 1 :]:
                key = (case_id, frozenset((one, other)))
                if key in stored.matches:
                    continue
                first, second = (
                    orientation[key][:2]
                    if key in orientation
                    else match_orientation(benchmark.orientation_seed, case_id, one, other)
                )
                new_matches.append(
                    Match(
                        case_id=case_ids[case_id],
                        first_id=submission_ids[(case_id, first)],
                        second_id=submission_ids[(case_id, second)],
                    )
                )
    Match.objects.bulk_create(new_matches, batch_size=BATCH)
    created["matches"] = len(new_matches)

    runs = dict(stored.runs)
    for kind, lines, run_type in (("verdicts", verdicts, ARENA_RUN), ("rubric", rubric, RUBRIC_RUN)):
        for key in dict.fromkeys((x.judge, x.run_label) for x in lines):
            if key not in runs:
                runs[key] = JudgeRun.objects.create(
                    benchmark=benchmark,
                    judge_model=key[0],
                    label=key[1],
                    run_type=run_type,
                    provider=JudgeRun.Provider.RECORDED,
                    subjects=JudgeRun.Subjects.HYPOARENA if run_type == ARENA_RUN else JudgeRun.Subjects.HYPOARENA_RUBRIC,
                    status=JudgeRun.Status.COMPLETED,
                    parameters={"source": sources[kind]},
                )
                created["runs"] += 1
    if verdicts:
        match_ids: dict[tuple[str, frozenset[str]], int] = {}
        names = {pk: model for (_case, model), pk in submission_ids.items()}
        for pk, case_id, first, second in Match.objects.filter(case__benchmark=benchmark).values_list(
            "pk", "case__external_id", "first_id", "second_id"
        ):
            match_ids[(case_id, frozenset((names[first], names[second])))] = pk
        ArenaVerdict.objects.bulk_create(
            [
                ArenaVerdict(
                    run=runs[(v.judge, v.run_label)],
                    match_id=match_ids[(v.case_id, v.models)],
                    order=v.order,
                    status=v.status,
                    verdict=v.verdict,
                    reasons=v.reasons,
                    raw_response=v.raw,
                    metadata={"file": v.ref.file, "line": v.ref.line},
                )
                for v in verdicts
            ],
            batch_size=BATCH,
        )
        created["verdicts"] = len(verdicts)
    RubricScore.objects.bulk_create(
        [
            RubricScore(
                run=runs[(r.judge, r.run_label)],
                submission_id=submission_ids[(r.case_id, r.model)],
                grounding=r.g,
                insight=r.l,
                justification=r.j,
                breadth=r.b,
                distinctness=r.d,
                utility=r.u,
                metadata={"file": r.ref.file, "line": r.ref.line},
            )
            for r in rubric
        ],
        batch_size=BATCH,
    )
    created["rubric scores"] = len(rubric)
    return benchmark


# --------------------------------------------------------------------------- export


def _dump(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def hypoarena_export(*, benchmark: Benchmark, directory: Path) -> dict[str, int]:
    """Write the benchmark's files (``FORMAT.md``) into ``directory``: cases and submissions always, verdicts and
    rubric when there are any. Returns the lines written per file. Importing them into a new benchmark gives the
    same benchmark (the round-trip test), because lines are written in a fixed order and every orientation a
    verdict fixed is in the verdicts' ``model_a``."""
    if benchmark.protocol != Benchmark.Protocol.HYPOARENA:
        raise HypoArenaError(
            f"{benchmark} is a {benchmark.get_protocol_display()} benchmark, not a HypoArena one; export it with its own export"
        )
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}

    def write(kind: str, records: Iterable[Mapping[str, Any]], *, always: bool) -> None:
        rows = [_dump(r) for r in records]
        if rows or always:
            (directory / f"{kind}.jsonl").write_text("".join(rows), encoding="utf-8")
            written[f"{kind}.jsonl"] = len(rows)

    cases = Case.objects.filter(benchmark=benchmark).select_related("domain").order_by("domain__name", "external_id")
    write(
        "cases",
        (
            {"case_id": c.external_id, "domain": c.domain.name, "singleton": c.domain.singleton, "context": c.context}
            | ({"reference_conclusion": c.reference_conclusion} if c.reference_conclusion else {})
            for c in cases
        ),
        always=True,
    )
    submissions = (
        Submission.objects.filter(case__benchmark=benchmark)
        .select_related("case", "participant")
        .order_by("case__external_id", "participant__name")
    )
    write(
        "submissions",
        (
            {"case_id": s.case.external_id, "model": s.participant.name, "reference": s.is_reference, "pairs": s.pairs}
            for s in submissions
        ),
        always=True,
    )
    names = dict(Submission.objects.filter(case__benchmark=benchmark).values_list("pk", "participant__name"))
    verdicts = (
        ArenaVerdict.objects.filter(run__benchmark=benchmark)
        .select_related("run", "match__case")
        .order_by(
            "run__judge_model",
            "run__label",
            "match__case__external_id",
            "match__first__participant__name",
            "match__second__participant__name",
            "order",
            "id",
        )
    )

    def verdict_record(v: ArenaVerdict) -> dict[str, Any]:
        first, second = names[v.match.first_id], names[v.match.second_id]
        a, b = (first, second) if v.order == "original" else (second, first)
        record = {
            "case_id": v.match.case.external_id,
            "model_a": a,
            "model_b": b,
            "order": v.order,
            "verdict": v.verdict,
            "judge": v.run.judge_model,
            "run_label": v.run.label,
        }
        if v.status != ArenaVerdict.Status.ACCEPTED:
            record["status"] = v.status
        return record | ({"reasons": v.reasons} if v.reasons else {}) | ({"raw": v.raw_response} if v.raw_response else {})

    write("verdicts", (verdict_record(v) for v in verdicts.iterator(chunk_size=BATCH)), always=False)
    scores = (
        RubricScore.objects.filter(run__benchmark=benchmark)
        .select_related("run", "submission__case", "submission__participant")
        .order_by("run__judge_model", "run__label", "submission__case__external_id", "submission__participant__name")
    )
    write(
        "rubric",
        (
            {
                "case_id": r.submission.case.external_id,
                "model": r.submission.participant.name,
                "judge": r.run.judge_model,
                "run_label": r.run.label,
                "pairs": [{"g": g, "l": ell, "j": j} for g, ell, j in zip(r.grounding, r.insight, r.justification, strict=True)],
                "b": r.breadth,
                "d": r.distinctness,
                "u": r.utility,
            }
            for r in scores
        ),
        always=False,
    )
    return written
