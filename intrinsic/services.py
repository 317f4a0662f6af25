"""Writes of Intrinsic-scoring data: import from the JSONL files of ``FORMAT.md`` and the export that writes them back.

The import reads and checks every line of every file, then writes in one transaction and checks what depends on the
stored rows (a score names a stored or imported paper and candidate; a scorer that scores a paper scores all of its
candidates); any problem anywhere rolls everything back, and each problem names its file, line, field, the value
refused and what to do. Re-importing the same files changes nothing; a stored line with other content is a problem
(a paper's candidates and a scorer's numbers do not change under a report).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from arena.models import Benchmark
from arena.release import Problem, ReleaseImportError, _Fields, _json_type, _Parsed, _read_jsonl, _Ref, _show, names_listed

from .models import LISTWISE_TOP, Candidate, CandidateScore, ListwiseRanking, Paper, Scorer

#: The files of an Intrinsic benchmark, in the order they are read (each refers to the ones before it).
FILES: tuple[str, ...] = ("papers", "scores", "listwise")
PAPER_KEYS = ("paper_id", "discipline", "background", "question", "candidates")
CANDIDATE_KEYS = ("id", "text", "gold")
SCORE_KEYS = ("paper_id", "candidate_id", "scorer", "model", "criterion", "mean", "sum", "tokens", "endpoint")
LISTWISE_KEYS = ("paper_id", "scorer", "model", "top", "status", "reason", "endpoint")
SCORE_CRITERIA = (Scorer.Criterion.NLL.value, Scorer.Criterion.ENERGY.value)
STATUSES = tuple(ListwiseRanking.Status.values)
MIN_CANDIDATES = 2
MAX_CANDIDATES = 1_000
MAX_TEXT = 100_000
#: How far mean × tokens may be from sum (relative to max(1, |sum|)): rounding in the file, never a swapped column.
SUM_TOLERANCE = 1e-3
#: An NLL is −log of a probability: never below 0, but a server's float rounding may give −1e-7.
NLL_FLOOR = -1e-6
IMPORT_SOURCE = "import"
BATCH = 2_000  # rows per INSERT: quick, and under SQLite's variable limit

PAPER_ID = (Paper, "external_id")
DISCIPLINE = (Paper, "discipline")
CANDIDATE_ID = (Candidate, "external_id")
SCORER_NAME = (Scorer, "name")
SCORER_MODEL = (Scorer, "model")


class IntrinsicError(Exception):
    """A request about Intrinsic data that cannot be carried out; nothing was written."""


class IntrinsicImportError(ReleaseImportError):
    """The files cannot be imported; nothing was written. ``problems`` says where and why."""


_names = names_listed


def listwise_length(n_candidates: int) -> int:
    """How many candidates an accepted listwise ranking of a paper with ``n_candidates`` lists."""
    return min(LISTWISE_TOP, n_candidates)


# --------------------------------------------------------------------------- parsing


@dataclass(slots=True)
class _Line:
    ref: _Ref
    values: dict[str, Any]


@dataclass
class _Reader:
    """Parses lines; remembers the papers whose line was refused, so lines naming them are not reported twice."""

    refused_papers: set[str] = field(default_factory=set)
    paper_lines: dict[str, int | None] = field(default_factory=dict)  # paper id -> its first line, refused or not

    def unknown_keys(self, f: _Fields, record: Mapping[str, Any], keys: Sequence[str], what: str) -> None:
        for key in sorted(set(record) - set(keys)):
            f.problem(key, f"is not a field of {what}; the fields are {', '.join(keys)} (remove it, or check its spelling)")

    def long(self, f: _Fields, key: str, value: str) -> None:
        if len(value) > MAX_TEXT:
            f.problem(key, f"has {len(value)} characters; the limit is {MAX_TEXT}")

    def paper(self, record: dict[str, Any], f: _Fields) -> _Line | None:
        before = len(f.problems)
        self.unknown_keys(f, record, PAPER_KEYS, "a papers.jsonl line")
        values: dict[str, Any] = {
            "paper_id": f.text("paper_id", PAPER_ID, numbers=True),
            "discipline": f.text("discipline", DISCIPLINE),
            "background": f.text("background"),
            "question": f.text("question"),
        }
        self.long(f, "background", values["background"])
        self.long(f, "question", values["question"])
        values["candidates"] = self.candidates(record.get("candidates"), f)
        first = self.paper_lines.setdefault(values["paper_id"], f.ref.line) if values["paper_id"] else f.ref.line
        if first != f.ref.line:
            f.problem("paper_id", f"{_show(values['paper_id'])} repeats line {first}; each paper appears once")
            return None
        if len(f.problems) != before:
            if values["paper_id"]:
                self.refused_papers.add(values["paper_id"])
            return None
        return _Line(f.ref, values)

    def candidates(self, raw: Any, f: _Fields) -> list[tuple[str, str, bool]]:  # noqa: ANN401
        """(id, text, gold) per candidate, in the file's order; problems named ``candidates[i].field``."""
        shape = '[{"id": ..., "text": ..., "gold": true|false}, ...]'
        if raw is None:
            f.problem("candidates", f"missing; a list of the paper's candidate hypotheses {shape}")
            return []
        if not isinstance(raw, list):
            f.problem("candidates", f"must be a list of candidates {shape}, got {_json_type(raw)}")
            return []
        if not MIN_CANDIDATES <= len(raw) <= MAX_CANDIDATES:
            f.problem(
                "candidates",
                f"has {len(raw)} candidate(s); a paper has {MIN_CANDIDATES} to {MAX_CANDIDATES} (its gold hypothesis and at least one distractor)",
            )
            return []
        out: list[tuple[str, str, bool]] = []
        ids: dict[str, int] = {}
        texts: dict[str, int] = {}
        golds: list[str] = []
        for i, item in enumerate(raw):
            prefix = f"candidates[{i}]."
            if not isinstance(item, dict):
                f.problem(f"candidates[{i}]", f'must be an object {{"id", "text", "gold"}}, got {_json_type(item)}')
                continue
            c = _Fields(item, f.ref, f.problems, prefix=prefix)
            self.unknown_keys(c, item, CANDIDATE_KEYS, "a candidate")
            cid = c.text("id", CANDIDATE_ID, numbers=True)
            text = item.get("text")
            if isinstance(text, str) and not text.strip():
                c.problem(
                    "text",
                    f"empty; give candidate {_show(cid)} its hypothesis text (an empty candidate cannot be scored), or remove it",
                )
                text = ""
            else:
                text = c.text("text")
                self.long(c, "text", text)
            gold = c.flag("gold", False)
            if cid:
                if cid in ids:
                    c.problem("id", f"{_show(cid)} repeats candidates[{ids[cid]}]; candidate ids are unique within a paper")
                ids.setdefault(cid, i)
            if text:
                key = " ".join(text.split()).lower()
                if key in texts:
                    c.problem(
                        "text", f"repeats the text of candidates[{texts[key]}]; the candidates of a paper are distinct hypotheses"
                    )
                texts.setdefault(key, i)
            if gold:
                golds.append(cid or f"candidates[{i}]")
            out.append((cid, text, gold))
        if len(out) == len(raw) and len(golds) != 1:
            if not golds:
                f.problem(
                    "candidates",
                    'no candidate has "gold": true; mark the paper\'s own hypothesis "gold": true (exactly one per paper)',
                )
            else:
                f.problem(
                    "candidates",
                    f'{len(golds)} candidates are gold ({_names(golds)}); exactly one, the paper\'s own hypothesis, has "gold": true: set the others to false',
                )
        return out

    def _finite_number(self, f: _Fields, key: str, what: str) -> float | None:
        value = f.record.get(key)
        if value is None:
            f.problem(key, f"missing; {what}")
            return None
        return f.number(key, minimum=-math.inf)

    def score(self, record: dict[str, Any], f: _Fields) -> _Line | None:
        before = len(f.problems)
        self.unknown_keys(f, record, SCORE_KEYS, "a scores.jsonl line")
        values: dict[str, Any] = {
            "paper_id": f.text("paper_id", PAPER_ID, numbers=True),
            "candidate_id": f.text("candidate_id", CANDIDATE_ID, numbers=True),
            "scorer": f.text("scorer", SCORER_NAME),
            "model": f.text("model", SCORER_MODEL),
            "endpoint": self._endpoint(f),
        }
        criterion = record.get("criterion")
        if criterion not in SCORE_CRITERIA:
            hint = "; a listwise scorer's rankings go in listwise.jsonl" if criterion == Scorer.Criterion.LISTWISE else ""
            f.problem(
                "criterion",
                f"{'missing' if criterion is None else 'must be one of ' + _names(SCORE_CRITERIA) + ', got ' + _show(criterion)}{hint}; "
                '"nll" for the mean/sum of −log softmax at each target token, "energy" for the negated raw target logit',
            )
        values["criterion"] = criterion
        mean = self._finite_number(f, "mean", "the mean score over the hypothesis tokens (lower is better)")
        total = self._finite_number(f, "sum", "the summed score over the hypothesis tokens")
        tokens = f.integer("tokens", (CandidateScore, "tokens"), minimum=1)
        if tokens is None and record.get("tokens") is None:
            f.problem("tokens", "missing; the number of hypothesis tokens scored (1 or more)")
        if criterion == Scorer.Criterion.NLL:
            for key, value in (("mean", mean), ("sum", total)):
                if value is not None and value < NLL_FLOOR:
                    f.problem(
                        key,
                        f'is {_show(value)}; an NLL is −log of a probability, never negative (is this an "energy" scorer, or a log-probability not negated?)',
                    )
        if (
            mean is not None
            and total is not None
            and tokens is not None
            and abs(mean * tokens - total) > SUM_TOLERANCE * max(1.0, abs(total))
        ):
            f.problem(
                "sum",
                f"is {_show(total)}, but mean × tokens = {mean * tokens:.6g}; the mean is the sum over the hypothesis tokens divided by their number",
            )
        values |= {"mean": mean, "total": total, "tokens": tokens}
        if len(f.problems) != before:
            return None
        return _Line(f.ref, values)

    def _endpoint(self, f: _Fields) -> str | None:
        """None when the line says nothing of the endpoint (a stored scorer keeps its own)."""
        if f.record.get("endpoint") is None:
            return None
        value = f.text("endpoint", required=False)
        self.long(f, "endpoint", value)
        return value

    def listwise(self, record: dict[str, Any], f: _Fields) -> _Line | None:
        before = len(f.problems)
        self.unknown_keys(f, record, LISTWISE_KEYS, "a listwise.jsonl line")
        values: dict[str, Any] = {
            "paper_id": f.text("paper_id", PAPER_ID, numbers=True),
            "scorer": f.text("scorer", SCORER_NAME),
            "model": f.text("model", SCORER_MODEL),
            "endpoint": self._endpoint(f),
            "status": f.choice("status", STATUSES, ListwiseRanking.Status.ACCEPTED),
        }
        invalid = values["status"] == ListwiseRanking.Status.INVALID
        values["reason"] = f.text("reason", required=invalid)
        if not invalid and values["reason"]:
            f.problem("reason", 'is given for an accepted ranking; leave it out, or set "status": "invalid"')
        top = record.get("top")
        ids: list[str] = []
        if invalid:
            if top not in (None, []):
                f.problem(
                    "top",
                    'must be empty or left out in an invalid ranking (the judge\'s answer was refused; say why in "reason")',
                )
        elif not isinstance(top, list) or not top:
            f.problem(
                "top",
                f"{'missing' if top is None else 'must be a non-empty list of candidate ids, got ' + _json_type(top)}; the judge's best {LISTWISE_TOP} candidate ids, best first",
            )
        else:
            for i, item in enumerate(top):
                if isinstance(item, bool) or not isinstance(item, (str, int)) or (isinstance(item, str) and not item.strip()):
                    f.problem(f"top[{i}]", f"must be a candidate id, got {_show(item)}")
                    continue
                cid = str(item)
                if cid in ids:
                    f.problem(
                        f"top[{i}]",
                        f"{_show(cid)} is already listed at top[{ids.index(cid)}]; a ranking lists each candidate once",
                    )
                    continue
                ids.append(cid)
        values["top"] = ids
        if len(f.problems) != before:
            return None
        return _Line(f.ref, values)


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
    if not directory.is_dir():
        raise IntrinsicError(f"{directory}: no such folder")
    found = {kind: directory / f"{kind}.jsonl" for kind in FILES if (directory / f"{kind}.jsonl").is_file()}
    if not found:
        raise IntrinsicError(
            f"{directory}: no Intrinsic file in this folder; expected {', '.join(f'{k}.jsonl' for k in FILES)} (papers.jsonl at least)"
        )
    return found


def intrinsic_import(*, name: str, files: Mapping[str, Path], version: str = "1", description: str = "") -> ImportSummary:
    """Import Intrinsic files (``FORMAT.md``) into benchmark ``name`` v``version`` (created with protocol ``intrinsic``
    if needed); all or nothing. Raises :class:`IntrinsicImportError` listing every problem (nothing written) and
    :class:`IntrinsicError` when the benchmark is of another protocol or no file is given."""
    benchmark = Benchmark.objects.filter(name=name, version=version).first()
    if benchmark is not None and benchmark.protocol != Benchmark.Protocol.INTRINSIC:
        raise IntrinsicError(
            f"{benchmark} is a {benchmark.get_protocol_display()} benchmark; import Intrinsic files into a new benchmark name"
        )
    if not files:
        raise IntrinsicError(f"no file to import; give {', '.join(f'{k}.jsonl' for k in FILES)} in a folder")
    parsed = _Parsed()
    problems = parsed.problems
    reader = _Reader()
    parsers = {"papers": reader.paper, "scores": reader.score, "listwise": reader.listwise}
    lines: dict[str, list[_Line]] = {}
    for kind in FILES:
        lines[kind] = []
        path = files.get(kind)
        if path is None:
            continue
        before = parsed.lines
        for number, record, clean in _read_jsonl(path, parsed):
            line = parsers[kind](record, _Fields(record, _Ref(path.name, number), problems))
            if line is not None and clean:
                lines[kind].append(line)
        if parsed.lines == before:
            problems.append(Problem(path.name, None, None, f"no {kind} lines (the file is empty); remove it or fill it"))
    summary = ImportSummary(benchmark=benchmark, files=[p.name for p in files.values()])  # type: ignore[arg-type]
    with transaction.atomic():
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


def _problem(problems: list[Problem], line: _Line, name: str | None, message: str) -> None:
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
    lines: dict[str, list[_Line]],
    reader: _Reader,
    problems: list[Problem],
    summary: ImportSummary,
) -> Benchmark:
    """Check each file against the stored rows and write it, in the caller's transaction (rolled back on any problem)."""
    created, unchanged = summary.created, summary.unchanged
    if benchmark is None:
        benchmark = Benchmark.objects.create(
            name=name,
            version=version,
            description=description,
            protocol=Benchmark.Protocol.INTRINSIC,
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
    new: list[_Line] = []
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
                f"paper {_show(v['paper_id'])} is already in {benchmark} with a different {', '.join(differing)}; "
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

    def known_paper(line: _Line) -> _Stored | None:
        paper_id = line.values["paper_id"]
        stored = papers.get(paper_id)
        if stored is None and paper_id not in reader.refused_papers:
            _problem(
                problems,
                line,
                "paper_id",
                f"unknown paper {_show(paper_id)}; the papers are {_names(sorted(papers))} (add its line to papers.jsonl)",
            )
        return stored

    scorers = _write_scorers(benchmark, lines=lines, problems=problems, summary=summary)
    _write_scores(lines["scores"], papers=papers, scorers=scorers, known_paper=known_paper, problems=problems, summary=summary)
    _write_rankings(lines["listwise"], scorers=scorers, known_paper=known_paper, problems=problems, summary=summary)
    return benchmark


def _write_scorers(
    benchmark: Benchmark, *, lines: dict[str, list[_Line]], problems: list[Problem], summary: ImportSummary
) -> dict[str, Scorer | None]:
    """The scorers the score and listwise lines name, created when new. One name is one (model, criterion) across the
    files and the stored rows; a name whose lines disagree maps to None (reported here, its lines skipped)."""
    stored = {s.name: s for s in Scorer.objects.filter(benchmark=benchmark)}
    said: dict[str, tuple[str, str, str | None, _Line]] = {}
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
                    f"scorer {_show(v['scorer'])} is stored as model {_show(old.model)}, criterion {_show(old.criterion)}; "
                    f"this line says {_show(mine[0])}, {_show(mine[1])}: a scorer is one model read by one criterion, give this one another name",
                )
                continue
            if old is not None and v["endpoint"] is not None and v["endpoint"] != old.endpoint:
                bad.add(v["scorer"])
                _problem(
                    problems,
                    line,
                    "endpoint",
                    f"scorer {_show(v['scorer'])} is stored with endpoint {_show(old.endpoint)}; leave endpoint out, or give this scorer another name",
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
                    f"scorer {_show(v['scorer'])} is model {_show(first[0])}, criterion {_show(first[1])} on "
                    f"{first[3].ref.file} line {first[3].ref.line}; this line says {_show(mine[0])}, {_show(mine[1])}: a scorer is one model read by one criterion",
                )
            elif v["endpoint"] is not None and first[2] is not None and v["endpoint"] != first[2]:
                bad.add(v["scorer"])
                _problem(
                    problems,
                    line,
                    "endpoint",
                    f"is {_show(v['endpoint'])}, but {first[3].ref.file} line {first[3].ref.line} gives scorer {_show(v['scorer'])} endpoint {_show(first[2])}; a scorer has one",
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
    lines: list[_Line],
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
    touched: dict[tuple[int, int], tuple[_Line, set[str]]] = {}  # (scorer, paper) -> first line, candidate ids scored here
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
                f"paper {_show(v['paper_id'])} has no candidate {_show(v['candidate_id'])}; its candidates are {_names(paper.candidates)}",
            )
            continue
        key = (scorer.pk, candidate.pk)
        if key in seen:
            _problem(
                problems,
                line,
                "candidate_id",
                f"scorer {_show(v['scorer'])} already scores candidate {_show(v['candidate_id'])} of paper {_show(v['paper_id'])} on line {seen[key]}; one score per scorer and candidate",
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
                f"scorer {_show(v['scorer'])} already has mean {old.mean!r}, sum {old.total!r}, {old.tokens} tokens for candidate {_show(v['candidate_id'])} "
                f"of paper {_show(v['paper_id'])}; a stored score cannot be replaced by an import (import the new numbers under another scorer name)",
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
                f"scorer {_show(names[scorer_pk])} scores {len(paper.candidates) - len(missing)} of the {len(paper.candidates)} candidates of paper "
                f"{_show(paper.paper.external_id)}; add lines for {_names(missing)} (a scorer that scores a paper scores all its candidates: the gold is ranked among all of them)",
            )
    CandidateScore.objects.bulk_create(new, batch_size=BATCH)
    summary.created["scores"] += len(new)


def _write_rankings(
    lines: list[_Line], *, scorers: dict[str, Scorer | None], known_paper: Any, problems: list[Problem], summary: ImportSummary
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
                    f"names {_names(unknown)}, not candidates of paper {_show(v['paper_id'])}; its candidates are {_names(paper.candidates)}",
                )
                continue
            if len(v["top"]) != want:
                _problem(
                    problems,
                    line,
                    "top",
                    f"lists {len(v['top'])} candidate(s); an accepted ranking of paper {_show(v['paper_id'])} lists its best {want}, best first "
                    '(a judge\'s answer that is short is "status": "invalid" with the reason)',
                )
                continue
        key = (scorer.pk, paper.paper.pk)
        if key in seen:
            _problem(
                problems,
                line,
                "paper_id",
                f"scorer {_show(v['scorer'])} already ranks paper {_show(v['paper_id'])} on line {seen[key]}; one ranking per scorer and paper",
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
                f"scorer {_show(v['scorer'])} already has another ranking of paper {_show(v['paper_id'])}; a stored ranking cannot be replaced by an import",
            )
        else:
            summary.unchanged["rankings"] += 1
    ListwiseRanking.objects.bulk_create(new, batch_size=BATCH)
    summary.created["rankings"] += len(new)


# --------------------------------------------------------------------------- export


def _dump(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"


def intrinsic_export(*, benchmark: Benchmark, directory: Path) -> dict[str, int]:
    """Write the benchmark's files (``FORMAT.md``) into ``directory``; returns the lines written per file. Importing
    them into a new benchmark reproduces it, and exporting that gives the same bytes.

    A paper a scorer scored only in part (a scoring run that ended with failed candidates; the report leaves it out for
    that scorer) is not written: a score file names whole papers. ``"partial (scorer, paper) left out"`` counts them
    (resume the run to complete them)."""
    if benchmark.protocol != Benchmark.Protocol.INTRINSIC:
        raise IntrinsicError(f"{benchmark} is a {benchmark.get_protocol_display()} benchmark, not an Intrinsic-scoring one")
    directory.mkdir(parents=True, exist_ok=True)
    candidates: dict[int, list[dict[str, Any]]] = {}
    for c in Candidate.objects.filter(paper__benchmark=benchmark).order_by("paper_id", "position"):
        candidates.setdefault(c.paper_id, []).append({"id": c.external_id, "text": c.text, "gold": c.gold})
    papers = Paper.objects.filter(benchmark=benchmark).order_by("discipline", "external_id")
    scores = (
        CandidateScore.objects.filter(scorer__benchmark=benchmark)
        .select_related("scorer", "candidate__paper")
        .order_by("scorer__name", "candidate__paper__discipline", "candidate__paper__external_id", "candidate__position")
    )
    rankings = (
        ListwiseRanking.objects.filter(scorer__benchmark=benchmark)
        .select_related("scorer", "paper")
        .order_by("scorer__name", "paper__discipline", "paper__external_id")
    )
    scored: dict[tuple[int, int], int] = {}
    for scorer_id, paper_id in CandidateScore.objects.filter(scorer__benchmark=benchmark).values_list(
        "scorer_id", "candidate__paper_id"
    ):
        scored[(scorer_id, paper_id)] = scored.get((scorer_id, paper_id), 0) + 1
    partial = {key for key, n in scored.items() if n != len(candidates.get(key[1], []))}
    scores = [x for x in scores if (x.scorer_id, x.candidate.paper_id) not in partial]

    def endpoint(scorer: Scorer) -> dict[str, str]:
        return {"endpoint": scorer.endpoint} if scorer.endpoint else {}

    records: dict[str, list[dict[str, Any]]] = {
        "papers": [
            {
                "paper_id": p.external_id,
                "discipline": p.discipline,
                "background": p.background,
                "question": p.question,
                "candidates": candidates.get(p.pk, []),
            }
            for p in papers
        ],
        "scores": [
            {
                "paper_id": x.candidate.paper.external_id,
                "candidate_id": x.candidate.external_id,
                "scorer": x.scorer.name,
                "model": x.scorer.model,
                "criterion": x.scorer.criterion,
                "mean": x.mean,
                "sum": x.total,
                "tokens": x.tokens,
            }
            | endpoint(x.scorer)
            for x in scores
        ],
        "listwise": [
            {"paper_id": r.paper.external_id, "scorer": r.scorer.name, "model": r.scorer.model}
            | ({"top": r.top} if r.status == ListwiseRanking.Status.ACCEPTED else {"status": r.status, "reason": r.reason})
            | endpoint(r.scorer)
            for r in rankings
        ],
    }
    written = {}
    for kind in FILES:
        if records[kind] or kind == "papers":
            (directory / f"{kind}.jsonl").write_text("".join(_dump(r) for r in records[kind]), encoding="utf-8")
            written[f"{kind}.jsonl"] = len(records[kind])
    if partial:
        written["partial (scorer, paper) left out"] = len(partial)
    return written
