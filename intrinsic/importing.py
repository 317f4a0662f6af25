"""The import of Intrinsic-scoring data from the JSONL files of ``FORMAT.md``: all or nothing.

The import reads and checks every line of every file (:mod:`intrinsic.import_lines`), then writes in one transaction
and checks what depends on the stored rows (a score names a stored or imported paper and candidate; a scorer that
scores a paper scores all of its candidates); any problem anywhere rolls everything back, and each problem names its
file, line, field, the value refused and what to do. Re-importing the same files changes nothing; a stored line with
other content is a problem (a paper's candidates and a scorer's numbers do not change under a report).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from arena.errors import AppError
from arena.jsonl import (
    Fields,
    JsonlReading,
    Problem,
    Ref,
    ReleaseImportError,
    benchmark_create,
    jsonl_files_in,
    names_listed,
    read_jsonl,
    show,
)
from arena.models import Benchmark
from arena.protocols import protocol_phrase

from .import_lines import Line, LineReader
from .models import LISTWISE_TOP, PROTOCOL, Candidate, CandidateScore, ListwiseRanking, Paper, Scorer

#: The files of an Intrinsic benchmark, in the order they are read (each refers to the ones before it).
FILES: tuple[str, ...] = ("papers", "scores", "listwise")
IMPORT_SOURCE = "import"
BATCH = 2_000  # rows per INSERT: quick, and under SQLite's variable limit


class IntrinsicError(AppError):
    """A request about Intrinsic data that cannot be carried out; nothing was written. An
    :class:`~arena.errors.AppError`, so a command and the API show its message to the person who asked."""


class IntrinsicImportError(ReleaseImportError):
    """The files cannot be imported; nothing was written. ``problems`` says where and why."""


_names = names_listed


def listwise_length(n_candidates: int) -> int:
    """How many candidates an accepted listwise ranking of a paper with ``n_candidates`` lists."""
    return min(LISTWISE_TOP, n_candidates)


# --------------------------------------------------------------------------- import


@dataclass
class ImportSummary:
    benchmark: Benchmark
    files: list[str]
    created: Counter = field(default_factory=Counter)
    unchanged: Counter = field(default_factory=Counter)

    def line(self) -> str:
        kinds = ("papers", "candidates", "scorers", "scores", "rankings")
        made = ", ".join(f"{self.created[k]} {k}" for k in kinds if self.created[k])
        return (
            f"created {made} in {self.benchmark}"
            if made
            else f"nothing new: {', '.join(self.files)} already imported into {self.benchmark}"
        )


def import_files(directory: Path) -> dict[str, Path]:
    """The Intrinsic files present in ``directory`` by kind; :class:`IntrinsicError` when it holds none."""
    return jsonl_files_in(directory, FILES, what="Intrinsic", error=IntrinsicError, note=" (papers.jsonl at least)")


def intrinsic_import(*, name: str, files: Mapping[str, Path], version: str = "1", description: str = "") -> ImportSummary:
    """Import Intrinsic files (``FORMAT.md``) into benchmark ``name`` v``version`` (created with protocol ``intrinsic``
    if needed); all or nothing. Raises :class:`IntrinsicImportError` listing every problem (nothing written) and
    :class:`IntrinsicError` when the benchmark is of another protocol or no file is given."""
    benchmark = Benchmark.objects.filter(name=name, version=version).first()
    if benchmark is not None and benchmark.protocol != PROTOCOL:
        raise IntrinsicError(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark; import Intrinsic files into a new benchmark name"
        )
    if not files:
        raise IntrinsicError(f"no file to import; give {', '.join(f'{k}.jsonl' for k in FILES)} in a folder")
    parsed = JsonlReading()
    problems = parsed.problems
    reader = LineReader()
    parsers = {"papers": reader.paper, "scores": reader.score, "listwise": reader.listwise}
    lines: dict[str, list[Line]] = {}
    for kind in FILES:
        lines[kind] = []
        path = files.get(kind)
        if path is None:
            continue
        before = parsed.lines
        for number, record, clean in read_jsonl(path, parsed):
            line = parsers[kind](record, Fields(record, Ref(path.name, number), problems))
            if line is not None and clean:
                lines[kind].append(line)
        if parsed.lines == before:
            problems.append(Problem(path.name, None, None, f"no {kind} lines (the file is empty); remove it or fill it"))
    summary = ImportSummary(benchmark=benchmark, files=[p.name for p in files.values()])  # type: ignore[arg-type]
    with transaction.atomic():
        # Imports into one existing benchmark queue here (PostgreSQL), each checked against what the one before wrote;
        # two that create one new name meet in benchmark_create instead.
        if benchmark is not None:
            benchmark.lock()
        summary.benchmark = _write(
            benchmark,
            name=name,
            version=version,
            description=description,
            lines=lines,
            reader=reader,
            problems=problems,
            summary=summary,
        )
        if problems:
            raise IntrinsicImportError(problems)
    return summary


def _problem(problems: list[Problem], line: Line, name: str | None, message: str) -> None:
    problems.append(Problem(line.ref.file, line.ref.line, name, message))


@dataclass
class _Stored:
    """A paper as stored or as written by this import, with its candidates by external id."""

    paper: Paper
    candidates: dict[str, Candidate]


def _write(
    benchmark: Benchmark | None,
    *,
    name: str,
    version: str,
    description: str,
    lines: dict[str, list[Line]],
    reader: LineReader,
    problems: list[Problem],
    summary: ImportSummary,
) -> Benchmark:
    """Check each file against the stored rows and write it, in the caller's transaction (rolled back on any problem)."""
    created, unchanged = summary.created, summary.unchanged
    if benchmark is None:
        benchmark = benchmark_create(
            error=IntrinsicError,
            name=name,
            version=version,
            description=description,
            protocol=PROTOCOL,
            verdict_rule="gold-rank",
            proposal_schema="candidates",
        )
    papers: dict[str, _Stored] = {}
    for p in Paper.objects.filter(benchmark=benchmark):
        papers[p.external_id] = _Stored(p, {})
    by_pk = {s.paper.pk: s for s in papers.values()}
    for c in Candidate.objects.filter(paper__benchmark=benchmark).order_by("paper_id", "position"):
        by_pk[c.paper_id].candidates[c.external_id] = c

    # Papers and their candidates.
    new: list[Line] = []
    for line in lines["papers"]:  # one line per paper id (the reader refuses a repeated one)
        v = line.values
        old = papers.get(v["paper_id"])
        if old is None:
            new.append(line)
            continue
        was = {
            "discipline": old.paper.discipline,
            "background": old.paper.background,
            "question": old.paper.question,
            "candidates": [(c.external_id, c.text, c.gold) for c in old.candidates.values()],
        }
        differing = [k for k in was if was[k] != v[k]]
        if differing:
            _problem(
                problems,
                line,
                ", ".join(differing),
                f"paper {show(v['paper_id'])} is already in {benchmark} with a different {', '.join(differing)}; "
                "a stored paper cannot change under its scores: give the changed paper its own paper_id (or import into a new benchmark)",
            )
        else:
            unchanged["papers"] += 1
    rows = Paper.objects.bulk_create(
        [
            Paper(
                benchmark=benchmark,
                external_id=x.values["paper_id"],
                discipline=x.values["discipline"],
                background=x.values["background"],
                question=x.values["question"],
            )
            for x in new
        ],
        batch_size=BATCH,
    )
    candidates: list[Candidate] = []
    for paper, line in zip(rows, new, strict=True):
        stored = papers[paper.external_id] = _Stored(paper, {})
        for position, (cid, text, gold) in enumerate(line.values["candidates"]):
            stored.candidates[cid] = Candidate(paper=paper, external_id=cid, text=text, gold=gold, position=position)
            candidates.append(stored.candidates[cid])
    Candidate.objects.bulk_create(candidates, batch_size=BATCH)
    created["papers"] += len(rows)
    created["candidates"] += len(candidates)

    def known_paper(line: Line) -> _Stored | None:
        paper_id = line.values["paper_id"]
        stored = papers.get(paper_id)
        if stored is None and paper_id not in reader.refused_papers:
            _problem(
                problems,
                line,
                "paper_id",
                f"unknown paper {show(paper_id)}; the papers are {_names(sorted(papers))} (add its line to papers.jsonl)",
            )
        return stored

    scorers = _write_scorers(benchmark, lines=lines, problems=problems, summary=summary)
    _write_scores(lines["scores"], papers=papers, scorers=scorers, known_paper=known_paper, problems=problems, summary=summary)
    _write_rankings(lines["listwise"], scorers=scorers, known_paper=known_paper, problems=problems, summary=summary)
    return benchmark


def _write_scorers(
    benchmark: Benchmark, *, lines: dict[str, list[Line]], problems: list[Problem], summary: ImportSummary
) -> dict[str, Scorer | None]:
    """The scorers the score and listwise lines name, created when new. One name is one (model, criterion) across the
    files and the stored rows; a name whose lines disagree maps to None (reported here, its lines skipped)."""
    stored = {s.name: s for s in Scorer.objects.filter(benchmark=benchmark)}
    said: dict[str, tuple[str, str, str | None, Line]] = {}
    bad: set[str] = set()
    for kind in ("scores", "listwise"):
        for line in lines[kind]:
            v = line.values
            criterion = v["criterion"] if kind == "scores" else Scorer.Criterion.LISTWISE.value
            mine = (v["model"], criterion)
            old = stored.get(v["scorer"])
            if v["scorer"] in bad:
                continue
            if old is not None and (old.model, old.criterion) != mine:
                bad.add(v["scorer"])
                _problem(
                    problems,
                    line,
                    "model" if old.model != v["model"] else "criterion",
                    f"scorer {show(v['scorer'])} is stored as model {show(old.model)}, criterion {show(old.criterion)}; "
                    f"this line says {show(mine[0])}, {show(mine[1])}: a scorer is one model read by one criterion, give this one another name",
                )
                continue
            if old is not None and v["endpoint"] is not None and v["endpoint"] != old.endpoint:
                bad.add(v["scorer"])
                _problem(
                    problems,
                    line,
                    "endpoint",
                    f"scorer {show(v['scorer'])} is stored with endpoint {show(old.endpoint)}; leave endpoint out, or give this scorer another name",
                )
                continue
            first = said.get(v["scorer"])
            if first is None:
                said[v["scorer"]] = (*mine, v["endpoint"], line)
                continue
            if first[:2] != mine:
                bad.add(v["scorer"])
                _problem(
                    problems,
                    line,
                    "model" if first[0] != mine[0] else "criterion",
                    f"scorer {show(v['scorer'])} is model {show(first[0])}, criterion {show(first[1])} on "
                    f"{first[3].ref.file} line {first[3].ref.line}; this line says {show(mine[0])}, {show(mine[1])}: a scorer is one model read by one criterion",
                )
            elif v["endpoint"] is not None and first[2] is not None and v["endpoint"] != first[2]:
                bad.add(v["scorer"])
                _problem(
                    problems,
                    line,
                    "endpoint",
                    f"is {show(v['endpoint'])}, but {first[3].ref.file} line {first[3].ref.line} gives scorer {show(v['scorer'])} endpoint {show(first[2])}; a scorer has one",
                )
            elif first[2] is None and v["endpoint"] is not None:
                said[v["scorer"]] = (*mine, v["endpoint"], first[3])
    out: dict[str, Scorer | None] = {n: s for n, s in stored.items()}
    for scorer_name, (model, criterion, endpoint, _line) in said.items():
        if scorer_name in bad:
            out[scorer_name] = None
        elif scorer_name not in stored:
            out[scorer_name] = Scorer.objects.create(
                benchmark=benchmark, name=scorer_name, model=model, criterion=criterion, endpoint=endpoint or ""
            )
            summary.created["scorers"] += 1
    for scorer_name in bad:
        out[scorer_name] = None
    return out


def _write_scores(
    lines: list[Line],
    *,
    papers: dict[str, _Stored],
    scorers: dict[str, Scorer | None],
    known_paper: Any,
    problems: list[Problem],
    summary: ImportSummary,  # noqa: ANN401
) -> None:
    """Candidate scores: one per scorer and candidate; a scorer that scores a paper scores all its candidates."""
    ids = [s.pk for s in scorers.values() if s is not None]
    stored = {(x.scorer_id, x.candidate_id): x for x in CandidateScore.objects.filter(scorer_id__in=ids)}
    seen: dict[tuple[int, int], int | None] = {}
    touched: dict[tuple[int, int], tuple[Line, set[str]]] = {}  # (scorer, paper) -> first line, candidate ids scored here
    new: list[CandidateScore] = []
    for line in lines:
        v = line.values
        scorer = scorers.get(v["scorer"])
        paper = known_paper(line)
        if scorer is None or paper is None:
            continue
        candidate = paper.candidates.get(v["candidate_id"])
        if candidate is None:
            _problem(
                problems,
                line,
                "candidate_id",
                f"paper {show(v['paper_id'])} has no candidate {show(v['candidate_id'])}; its candidates are {_names(paper.candidates)}",
            )
            continue
        key = (scorer.pk, candidate.pk)
        if key in seen:
            _problem(
                problems,
                line,
                "candidate_id",
                f"scorer {show(v['scorer'])} already scores candidate {show(v['candidate_id'])} of paper {show(v['paper_id'])} on line {seen[key]}; one score per scorer and candidate",
            )
            continue
        seen[key] = line.ref.line
        touched.setdefault((scorer.pk, paper.paper.pk), (line, set()))[1].add(candidate.external_id)
        old = stored.get(key)
        if old is None:
            new.append(
                CandidateScore(
                    scorer=scorer, candidate=candidate, source=IMPORT_SOURCE, mean=v["mean"], total=v["total"], tokens=v["tokens"]
                )
            )
        elif (old.mean, old.total, old.tokens) != (v["mean"], v["total"], v["tokens"]):
            _problem(
                problems,
                line,
                "mean",
                f"scorer {show(v['scorer'])} already has mean {old.mean!r}, sum {old.total!r}, {old.tokens} tokens for candidate {show(v['candidate_id'])} "
                f"of paper {show(v['paper_id'])}; a stored score cannot be replaced by an import (import the new numbers under another scorer name)",
            )
        else:
            summary.unchanged["scores"] += 1
    # Completeness: the gold's rank is among all the paper's candidates, so a scorer that scores a paper scores each.
    by_pk = {s.paper.pk: s for s in papers.values()}
    names = {s.pk: n for n, s in scorers.items() if s is not None}
    for (scorer_pk, paper_pk), (line, scored) in touched.items():
        paper = by_pk[paper_pk]
        stored_ids = {c.external_id for c in paper.candidates.values() if (scorer_pk, c.pk) in stored}
        missing = [cid for cid in paper.candidates if cid not in scored | stored_ids]
        if missing:
            _problem(
                problems,
                line,
                "candidate_id",
                f"scorer {show(names[scorer_pk])} scores {len(paper.candidates) - len(missing)} of the {len(paper.candidates)} candidates of paper "
                f"{show(paper.paper.external_id)}; add lines for {_names(missing)} (a scorer that scores a paper scores all its candidates: the gold is ranked among all of them)",
            )
    CandidateScore.objects.bulk_create(new, batch_size=BATCH)
    summary.created["scores"] += len(new)


def _write_rankings(
    lines: list[Line], *, scorers: dict[str, Scorer | None], known_paper: Any, problems: list[Problem], summary: ImportSummary
) -> None:  # noqa: ANN401
    """Listwise rankings: one per scorer and paper; an accepted one lists min(5, n) distinct candidates of the paper."""
    ids = [s.pk for s in scorers.values() if s is not None]
    stored = {(x.scorer_id, x.paper_id): x for x in ListwiseRanking.objects.filter(scorer_id__in=ids)}
    seen: dict[tuple[int, int], int | None] = {}
    new: list[ListwiseRanking] = []
    for line in lines:
        v = line.values
        scorer = scorers.get(v["scorer"])
        paper = known_paper(line)
        if scorer is None or paper is None:
            continue
        if v["status"] == ListwiseRanking.Status.ACCEPTED:
            unknown = [cid for cid in v["top"] if cid not in paper.candidates]
            want = listwise_length(len(paper.candidates))
            if unknown:
                _problem(
                    problems,
                    line,
                    "top",
                    f"names {_names(unknown)}, not candidates of paper {show(v['paper_id'])}; its candidates are {_names(paper.candidates)}",
                )
                continue
            if len(v["top"]) != want:
                _problem(
                    problems,
                    line,
                    "top",
                    f"lists {len(v['top'])} candidate(s); an accepted ranking of paper {show(v['paper_id'])} lists its best {want}, best first "
                    '(a judge\'s answer that is short is "status": "invalid" with the reason)',
                )
                continue
        key = (scorer.pk, paper.paper.pk)
        if key in seen:
            _problem(
                problems,
                line,
                "paper_id",
                f"scorer {show(v['scorer'])} already ranks paper {show(v['paper_id'])} on line {seen[key]}; one ranking per scorer and paper",
            )
            continue
        seen[key] = line.ref.line
        old = stored.get(key)
        if old is None:
            new.append(
                ListwiseRanking(
                    scorer=scorer, source=IMPORT_SOURCE, paper=paper.paper, top=v["top"], status=v["status"], reason=v["reason"]
                )
            )
        elif (old.top, old.status, old.reason) != (v["top"], v["status"], v["reason"]):
            _problem(
                problems,
                line,
                "top",
                f"scorer {show(v['scorer'])} already has another ranking of paper {show(v['paper_id'])}; a stored ranking cannot be replaced by an import",
            )
        else:
            summary.unchanged["rankings"] += 1
    ListwiseRanking.objects.bulk_create(new, batch_size=BATCH)
    summary.created["rankings"] += len(new)
