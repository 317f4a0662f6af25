"""The import of HypoArena data from the JSONL files of ``FORMAT.md``: all or nothing.

The import reads every file (each line on its own: :mod:`hypoarena.import_lines`), checks every line against the
others and against what is stored (:mod:`hypoarena.import_checks`), and only then writes, in one transaction: a bad
line anywhere means nothing is written, and each problem names its file, line, field, the value it refuses and the
values it would accept. Re-importing the same files changes nothing: a line already stored with the same content is
counted as unchanged; one stored with other content is a problem.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from arena.jsonl import Fields, JsonlReading, Problem, Ref, ReleaseImportError, benchmark_create, read_jsonl
from arena.models import Benchmark, JudgeRun, Participant
from arena.protocols import protocol_phrase

from .import_checks import ImportCheck, Stored
from .import_lines import (
    CaseLine,
    RubricLine,
    SubmissionLine,
    VerdictLine,
    parse_case,
    parse_rubric,
    parse_submission,
    parse_verdict,
)
from .models import (
    ARENA_KIND,
    PROTOCOL,
    RUBRIC_KIND,
    RUBRIC_ORDER,
    ArenaVerdict,
    Case,
    Domain,
    Match,
    RubricJudgment,
    RubricScore,
    Submission,
    rubric_answer,
)
from .services import ARENA_RUN, RUBRIC_RUN, HypoArenaError, match_orientation

#: The files of a HypoArena benchmark, in the order they are read (each refers to the ones before it).
FILES: tuple[str, ...] = ("cases", "submissions", "verdicts", "rubric")
BATCH = 2_000  # rows per INSERT: large enough to be quick, small enough for SQLite's variable limit


class HypoArenaImportError(ReleaseImportError):
    """The files cannot be imported; nothing was written. ``problems`` says where and why."""


# --------------------------------------------------------------------------- import


@dataclass
class ImportSummary:
    """What an import created and found already stored, per kind: :meth:`line` is what the command prints."""

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
    benchmark = _import_target(name=name, version=version, files=files)
    with transaction.atomic():
        # Imports into one existing benchmark queue here (PostgreSQL), each checked against what the one before wrote;
        # two that create one new name meet in benchmark_create instead.
        if benchmark is not None:
            benchmark.lock()
        return _import(benchmark, name=name, version=version, description=description, files=files)


def _import(
    benchmark: Benchmark | None, *, name: str, version: str, description: str, files: Mapping[str, Path]
) -> ImportSummary:
    """The import's reading, checks and writes, in the caller's transaction."""
    stored = Stored.load(benchmark)
    parsed = JsonlReading()
    check = ImportCheck(benchmark=benchmark, stored=stored, problems=parsed.problems)
    case_lines: list[CaseLine] = _read_lines(files, "cases", parse_case, parsed, check.broken)
    submission_lines: list[SubmissionLine] = _read_lines(files, "submissions", parse_submission, parsed, check.broken)
    verdict_lines: list[VerdictLine] = _read_lines(files, "verdicts", parse_verdict, parsed, check.broken)
    rubric_lines: list[RubricLine] = _read_lines(files, "rubric", parse_rubric, parsed, check.broken)
    # Each file refers to the ones before it: checked in that order, so a problem is reported where it is.
    check.cases(case_lines)
    check.submissions(submission_lines)
    check.verdicts(verdict_lines)
    check.rubric(rubric_lines)

    if parsed.problems:
        raise HypoArenaImportError(parsed.problems)
    summary = ImportSummary(benchmark=benchmark, files=[p.name for p in files.values()])  # type: ignore[arg-type]
    summary.unchanged.update(
        cases=len(case_lines) - len(check.new_cases),
        submissions=len(submission_lines) - len(check.new_submissions),
        verdicts=len(verdict_lines) - len(check.new_verdicts),
        rubric=len(rubric_lines) - len(check.new_rubric),
    )
    summary.benchmark = _write(
        benchmark,
        name=name,
        version=version,
        description=description,
        stored=stored,
        check=check,
        summary=summary,
        sources={k: p.name for k, p in files.items()},
    )
    return summary


def _import_target(*, name: str, version: str, files: Mapping[str, Path]) -> Benchmark | None:
    """The stored benchmark the files go into, or None when the import is to create it. Raises
    :class:`HypoArenaError` when that benchmark is of another protocol or there is no file, before anything is read."""
    benchmark = Benchmark.objects.filter(name=name, version=version).first()
    if benchmark is not None and benchmark.protocol != PROTOCOL:
        raise HypoArenaError(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark; import HypoArena files into a new benchmark name "
            "(or another version)"
        )
    if not files:
        raise HypoArenaError(f"no file to import; give {', '.join(f'{k}.jsonl' for k in FILES)} or a folder holding them")
    return benchmark


def _read_lines(
    files: Mapping[str, Path],
    kind: str,
    parse: Callable[[dict[str, Any], Fields], Any],
    parsed: JsonlReading,
    broken: dict[str, set[Any]],
) -> list[Any]:
    """The good lines of one file (none when the file is not given). A refused case or submission is remembered in
    ``broken``, so that the lines referring to it are skipped quietly; an empty file is a problem."""
    path = files.get(kind)
    if path is None:
        return []
    out = []
    before = parsed.lines
    for number, record, clean in read_jsonl(path, parsed):
        line = parse(record, Fields(record, Ref(path.name, number), parsed.problems))
        if line is not None and clean:
            out.append(line)
        elif kind == "cases":
            broken[kind].add(_as_key(record.get("case_id")))
        elif kind == "submissions":
            broken[kind].add((_as_key(record.get("case_id")), _as_key(record.get("model"))))
    if parsed.lines == before:
        parsed.problems.append(Problem(path.name, None, None, f"no {kind} lines (the file is empty)"))
    return out


def _as_key(value: Any) -> Any:  # noqa: ANN401
    """A refused line's id as a set member: a list or object id (its line already reports it) is no id at all, so
    it neither crashes the set nor shows up among the known cases."""
    return value if isinstance(value, (str, int, float)) else None


# --------------------------------------------------------------------------- writes


def _write(
    benchmark: Benchmark | None,
    *,
    name: str,
    version: str,
    description: str,
    stored: Stored,
    check: ImportCheck,
    summary: ImportSummary,
    sources: dict[str, str],
) -> Benchmark:
    """The writes of a checked import, in the caller's transaction, each kind after those it refers to."""
    created = summary.created
    if benchmark is None:
        benchmark = benchmark_create(
            error=HypoArenaError,
            name=name,
            version=version,
            description=description,
            protocol=PROTOCOL,
            verdict_rule="five-level",
            proposal_schema="hypothesis-evidence-pairs",
        )
    case_ids = _write_cases(benchmark, stored=stored, check=check, created=created)
    _write_submissions(benchmark, stored=stored, check=check, case_ids=case_ids, created=created)
    submission_ids = _write_matches(benchmark, stored=stored, check=check, case_ids=case_ids, created=created)
    runs = _write_runs(benchmark, stored=stored, check=check, sources=sources, created=created)
    if check.new_verdicts:
        _write_verdicts(benchmark, check.new_verdicts, runs=runs, submission_ids=submission_ids, created=created)
    _write_rubric(check.new_rubric, runs=runs, submission_ids=submission_ids, created=created)
    return benchmark


def _write_cases(benchmark: Benchmark, *, stored: Stored, check: ImportCheck, created: Counter) -> dict[str, int]:
    """The new domains and cases; returns every case's primary key by case id."""
    cases = check.new_cases
    new_domains = [
        Domain(benchmark=benchmark, name=n, singleton=check.is_singleton.get(n, False))
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
    return {c.external_id: c.pk for c in Case.objects.filter(benchmark=benchmark).only("pk", "external_id")}


def _write_submissions(
    benchmark: Benchmark, *, stored: Stored, check: ImportCheck, case_ids: dict[str, int], created: Counter
) -> None:
    """The new participants (a verdict or a score names models that have a submission) and submissions."""
    submissions = check.new_submissions
    wanted = {s.model for s in submissions}
    new_participants = [Participant(benchmark=benchmark, name=m) for m in sorted(wanted - set(stored.participants))]
    Participant.objects.bulk_create(new_participants)
    created["participants"] = len(new_participants)
    participant_ids = dict(benchmark.participants.values_list("name", "pk"))
    Submission.objects.bulk_create(
        [
            Submission(
                case_id=case_ids[s.case_id],
                participant_id=participant_ids[s.model],
                is_reference=check.reference[s.model][0],
                pairs=s.pairs,
            )
            for s in submissions
        ],
        batch_size=BATCH,
    )
    created["submissions"] = len(submissions)


def _write_matches(
    benchmark: Benchmark, *, stored: Stored, check: ImportCheck, case_ids: dict[str, int], created: Counter
) -> dict[tuple[str, str], int]:
    """Every two submissions of a case form a match; one no verdict oriented gets the seeded orientation. Returns every
    submission's primary key by (case id, model)."""
    submission_ids: dict[tuple[str, str], int] = {}
    for pk, case_id, model in Submission.objects.filter(case__benchmark=benchmark).values_list(
        "pk", "case__external_id", "participant__name"
    ):
        submission_ids[(case_id, model)] = pk
    by_case: dict[str, list[str]] = {}
    for case_id, model in submission_ids:
        by_case.setdefault(case_id, []).append(model)
    new_matches: list[Match] = []
    for case_id in sorted({s.case_id for s in check.new_submissions}):
        models = sorted(by_case[case_id])
        for i, one in enumerate(models):
            for other in models[i + 1 :]:
                key = (case_id, frozenset((one, other)))
                if key in stored.matches:
                    continue
                first, second = (
                    check.orientation[key][:2]
                    if key in check.orientation
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
    return submission_ids


def _write_runs(
    benchmark: Benchmark, *, stored: Stored, check: ImportCheck, sources: dict[str, str], created: Counter
) -> dict[tuple[str, str], JudgeRun]:
    """A recorded, completed run for each new (judge, run label); returns every run by (judge, label)."""
    runs = dict(stored.runs)
    for kind, lines, run_type in (("verdicts", check.new_verdicts, ARENA_RUN), ("rubric", check.new_rubric, RUBRIC_RUN)):
        for key in dict.fromkeys((x.judge, x.run_label) for x in lines):
            if key not in runs:
                runs[key] = JudgeRun.objects.create(
                    benchmark=benchmark,
                    judge_model=key[0],
                    label=key[1],
                    run_type=run_type,
                    provider=JudgeRun.Provider.RECORDED,
                    subjects=ARENA_KIND if run_type == ARENA_RUN else RUBRIC_KIND,
                    status=JudgeRun.Status.COMPLETED,
                    parameters={"source": sources[kind]},
                )
                created["runs"] += 1
    return runs


def _write_verdicts(
    benchmark: Benchmark,
    verdicts: list[VerdictLine],
    *,
    runs: dict[tuple[str, str], JudgeRun],
    submission_ids: dict[tuple[str, str], int],
    created: Counter,
) -> None:
    """The new verdicts, each on its match (found by case and the two models) and with its file and line."""
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


def _write_rubric(
    rubric: list[RubricLine],
    *,
    runs: dict[tuple[str, str], JudgeRun],
    submission_ids: dict[tuple[str, str], int],
    created: Counter,
) -> None:
    """The new rubric scores, each with its file and line, and each as its run's accepted answer (a
    :class:`RubricJudgment`, as a run judged here keeps one beside its scores): the run's record, which its progress
    and its page count, as an arena run's imported verdicts are."""
    RubricJudgment.objects.bulk_create(
        [
            RubricJudgment(
                run=runs[(r.judge, r.run_label)],
                submission_id=submission_ids[(r.case_id, r.model)],
                order=RUBRIC_ORDER,
                status=RubricJudgment.Status.ACCEPTED,
                scores=rubric_answer(r.g, r.l, r.j, r.b, r.d, r.u),
                metadata={"file": r.ref.file, "line": r.ref.line},
            )
            for r in rubric
        ],
        batch_size=BATCH,
    )
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
