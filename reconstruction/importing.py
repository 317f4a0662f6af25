"""The import of Reconstruction data from the JSONL files of ``FORMAT.md``: all or nothing.

The import reads and checks every line of every file (each on its own: :mod:`reconstruction.import_lines`), then
writes in one transaction and checks what depends on the written rows (the frozen bibliographies hypotheses cite);
any problem anywhere rolls everything back, and each problem names its file, line, field, the value refused and what
is accepted. Re-importing the same files changes nothing; a stored line with other content is a problem (a frozen
bibliography cannot change under its prompts).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

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

from . import leakage
from .import_hypotheses import HypothesisWriter
from .import_lines import PARSERS, Line, format_date
from .models import PROTOCOL, BibliographyFreeze, Hypothesis, MatchLabel, Reference, SeedPaper, TournamentRecord
from .services import ReconstructionError, bibliography_freeze

#: The files of a Reconstruction benchmark, in the order they are read (each refers to the ones before it).
FILES: tuple[str, ...] = ("seeds", "references", "hypotheses", "labels", "tournament")
BATCH = 2_000  # rows per INSERT: quick, and under SQLite's variable limit


class ReconstructionImportError(ReleaseImportError):
    """The files cannot be imported; nothing was written. ``problems`` says where and why."""


_names = names_listed


@dataclass
class ImportSummary:
    """What an import created and found already stored, per kind, and the seeds it could not freeze (and why):
    :meth:`line` is what the command prints."""

    benchmark: Benchmark
    files: list[str]
    created: Counter = field(default_factory=Counter)
    unchanged: Counter = field(default_factory=Counter)
    not_frozen: dict[str, str] = field(default_factory=dict)  # seed id -> why

    def line(self) -> str:
        kinds = ("seeds", "references", "freezes", "participants", "hypotheses", "labels", "tournament lines")
        made = ", ".join(f"{self.created[k]} {k}" for k in kinds if self.created[k])
        text = (
            f"created {made} in {self.benchmark}"
            if made
            else f"nothing new: {', '.join(self.files)} already imported into {self.benchmark}"
        )
        if self.not_frozen:
            text += (
                f"; {len(self.not_frozen)} seed(s) not frozen (too few eligible references): {_names(sorted(self.not_frozen))}"
            )
        return text


def import_files(directory: Path) -> dict[str, Path]:
    """The Reconstruction files present in ``directory`` by kind; :class:`ReconstructionError` when it holds none."""
    return jsonl_files_in(directory, FILES, what="Reconstruction", error=ReconstructionError)


def reconstruction_import(*, name: str, files: Mapping[str, Path], version: str = "1", description: str = "") -> ImportSummary:
    """Import Reconstruction files (``FORMAT.md``) into benchmark ``name`` v``version`` (created with protocol
    ``reconstruction`` if needed), audit every new reference, and freeze each seed with enough eligible references;
    all or nothing. Raises :class:`ReconstructionImportError` listing every problem (nothing written) and
    :class:`ReconstructionError` when the benchmark is of another protocol."""
    benchmark = _import_target(name=name, version=version, files=files)
    parsed = JsonlReading()
    lines = _read_lines(files, parsed)
    problems = parsed.problems
    summary = ImportSummary(benchmark=benchmark, files=[p.name for p in files.values()])  # type: ignore[arg-type]
    with transaction.atomic():
        # Imports into one existing benchmark queue here (PostgreSQL), each checked against what the one before wrote;
        # two that create one new name meet in benchmark_create instead.
        if benchmark is not None:
            benchmark.lock()
        summary.benchmark = _write(
            benchmark, name=name, version=version, description=description, lines=lines, problems=problems, summary=summary
        )
        if problems:  # raised inside the transaction: what was written to check the later files is rolled back
            raise ReconstructionImportError(problems)
    return summary


def _import_target(*, name: str, version: str, files: Mapping[str, Path]) -> Benchmark | None:
    """The stored benchmark the files go into, or None when the import is to create it. Raises
    :class:`ReconstructionError` when that benchmark is of another protocol or there is no file, before anything is
    read."""
    benchmark = Benchmark.objects.filter(name=name, version=version).first()
    if benchmark is not None and benchmark.protocol != PROTOCOL:
        raise ReconstructionError(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark; import Reconstruction files into a new benchmark name"
        )
    if not files:
        raise ReconstructionError(f"no file to import; give {', '.join(f'{k}.jsonl' for k in FILES)} in a folder")
    return benchmark


def _read_lines(files: Mapping[str, Path], parsed: JsonlReading) -> dict[str, list[Line]]:
    """The good lines of each file kind (none for a file not given); an empty file is a problem."""
    lines: dict[str, list[Line]] = {}
    for kind in FILES:
        lines[kind] = []
        path = files.get(kind)
        if path is None:
            continue
        before = parsed.lines
        for number, record, clean in read_jsonl(path, parsed):
            line = PARSERS[kind](record, Fields(record, Ref(path.name, number), parsed.problems))
            if line is not None and clean:
                lines[kind].append(line)
        if parsed.lines == before:
            parsed.problems.append(Problem(path.name, None, None, f"no {kind} lines (the file is empty)"))
    return lines


def _write(
    benchmark: Benchmark | None,
    *,
    name: str,
    version: str,
    description: str,
    lines: dict[str, list[Line]],
    problems: list[Problem],
    summary: ImportSummary,
) -> Benchmark:
    """Check each file against the stored rows and write it, in the caller's transaction (rolled back on any problem).

    Hypotheses are checked only when the seeds and references are sound: a hypothesis cites its seed's frozen
    bibliography, which the references just written make."""
    if benchmark is None:
        benchmark = benchmark_create(
            error=ReconstructionError,
            name=name,
            version=version,
            description=description,
            protocol=PROTOCOL,
            verdict_rule="match",
            proposal_schema="five-hypotheses",
        )
    writer = _Writer(benchmark, lines=lines, problems=problems, summary=summary)
    writer.write_seeds()
    writer.write_references()
    if problems:
        return benchmark
    writer.freeze_seeds()
    writer.write_hypotheses()
    writer.write_labels()
    writer.write_tournament()
    return benchmark


class _Writer:
    """The writes of one import, file after file, each checked against the stored rows and the rows written before it.
    A problem is recorded, never raised, so that every problem of every line is listed; the caller rolls back."""

    def __init__(
        self, benchmark: Benchmark, *, lines: dict[str, list[Line]], problems: list[Problem], summary: ImportSummary
    ) -> None:
        self.benchmark = benchmark
        self.lines = lines
        self.problems = problems
        self.summary = summary
        self.created, self.unchanged = summary.created, summary.unchanged
        self.seeds: dict[str, SeedPaper] = {s.external_id: s for s in SeedPaper.objects.filter(benchmark=benchmark)}
        self.stored_refs: dict[int, dict[str, Reference]] = {}  # seed pk -> original id -> reference
        self.frozen: set[int] = set()  # seed pks with a frozen bibliography
        self.hypotheses: dict[tuple[int, str, Any], Hypothesis] = {}  # (seed pk, model, slot) -> hypothesis
        self.refused: set[tuple[str, str, Any]] = set()  # hypotheses reported: labels naming them are skipped quietly

    def problem(self, line: Line, name: str | None, message: str) -> None:
        self.problems.append(Problem(line.ref.file, line.ref.line, name, message))

    def known_seed(self, line: Line) -> SeedPaper | None:
        """The seed the line names; None, reported, when there is none."""
        seed = self.seeds.get(line.values["seed_id"])
        if seed is None:
            self.problem(
                line, "seed_id", f"unknown seed {show(line.values['seed_id'])}; the seeds are {_names(sorted(self.seeds))}"
            )
        return seed

    # ---------------------------------------------------------------- seeds

    def write_seeds(self) -> None:
        """Each seed once; a new one written, a stored one unchanged."""
        seen: dict[str, int | None] = {}
        for line in self.lines["seeds"]:
            v = line.values
            if v["seed_id"] in seen:
                self.problem(line, "seed_id", f"{show(v['seed_id'])} repeats line {seen[v['seed_id']]}; each seed appears once")
                continue
            seen[v["seed_id"]] = line.ref.line
            old = self.seeds.get(v["seed_id"])
            if old is None:
                self.seeds[v["seed_id"]] = SeedPaper.objects.create(
                    benchmark=self.benchmark,
                    external_id=v["seed_id"],
                    domain=v["domain"],
                    title=v["title"],
                    abstract=v["abstract"],
                    t0=v["t0"],
                )
                self.created["seeds"] += 1
                continue
            differing = [
                k
                for k, was in (("domain", old.domain), ("title", old.title), ("abstract", old.abstract), ("t0", old.t0))
                if was != v[k]
            ]
            if differing:
                self.problem(
                    line,
                    ", ".join(differing),
                    f"seed {show(v['seed_id'])} is already in {self.benchmark} with a different {', '.join(differing)}; give the new seed its own seed_id",
                )
            else:
                self.unchanged["seeds"] += 1

    # ---------------------------------------------------------------- references

    def write_references(self) -> None:
        """References checked against each other and the stored ones; then, per seed, anonymous ids drawn for those
        without one, each reference audited (``leakage``), and written."""
        for r in Reference.objects.filter(seed__benchmark=self.benchmark):
            self.stored_refs.setdefault(r.seed_id, {})[r.original_id] = r
        self.frozen = set(BibliographyFreeze.objects.filter(seed__benchmark=self.benchmark).values_list("seed_id", flat=True))
        new_refs: dict[int, list[Line]] = {}
        seen_refs: dict[tuple[str, str], int | None] = {}
        seen_anon: dict[tuple[str, str], int | None] = {}
        for line in self.lines["references"]:
            v = line.values
            seed = self.known_seed(line)
            if seed is None or not self._reference_first(line, seen_refs, seen_anon):
                continue
            old = self.stored_refs.get(seed.pk, {}).get(v["ref_id"])
            if old is None:
                if self._reference_addable(line, seed):
                    new_refs.setdefault(seed.pk, []).append(line)
                continue
            self._reference_unchanged(line, old)
        draw = random.SystemRandom()  # anonymous ids must not follow the file's (often the paper's citation) order
        by_pk = {s.pk: s for s in self.seeds.values()}
        for seed_pk, new in new_refs.items():
            self._write_new_references(by_pk[seed_pk], new, draw)

    def _reference_first(
        self, line: Line, seen_refs: dict[tuple[str, str], int | None], seen_anon: dict[tuple[str, str], int | None]
    ) -> bool:
        """The first line of this reference of the seed, and of its anonymous id if it gives one; else reported."""
        v = line.values
        key = (v["seed_id"], v["ref_id"])
        if key in seen_refs:
            self.problem(
                line,
                "ref_id",
                f"{show(v['ref_id'])} repeats line {seen_refs[key]} for seed {show(v['seed_id'])}; each reference of a seed appears once",
            )
            return False
        seen_refs[key] = line.ref.line
        if v["anon_id"]:
            if (v["seed_id"], v["anon_id"]) in seen_anon:
                self.problem(
                    line,
                    "anon_id",
                    f"{show(v['anon_id'])} is already given on line {seen_anon[(v['seed_id'], v['anon_id'])]} for seed {show(v['seed_id'])}; anonymous ids are unique per seed",
                )
                return False
            seen_anon[(v["seed_id"], v["anon_id"])] = line.ref.line
        return True

    def _reference_addable(self, line: Line, seed: SeedPaper) -> bool:
        """A new reference may join its seed: the bibliography is not frozen and its anonymous id is free; else reported."""
        v = line.values
        if seed.pk in self.frozen:
            self.problem(
                line,
                "ref_id",
                f"seed {show(v['seed_id'])} has a frozen bibliography; a reference cannot be added to it (import the seed under a new seed_id)",
            )
            return False
        if v["anon_id"] and any(r.anon_id == v["anon_id"] for r in self.stored_refs.get(seed.pk, {}).values()):
            self.problem(
                line,
                "anon_id",
                f"{show(v['anon_id'])} is already another reference's id in seed {show(v['seed_id'])}",
            )
            return False
        return True

    def _reference_unchanged(self, line: Line, old: Reference) -> None:
        """A stored reference given again: counted as unchanged, or reported with what differs (it cannot change)."""
        v = line.values
        differing = [
            k
            for k, was in (
                ("title", old.title),
                ("abstract", old.abstract),
                ("published", format_date(old.published, old.published_precision)),
            )
            if was != (v[k] if k != "published" else format_date(v["published"], v["precision"]))
        ]
        if v["anon_id"] and v["anon_id"] != old.anon_id:
            differing.append("anon_id")
        if differing:
            self.problem(
                line,
                ", ".join(differing),
                f"reference {show(v['ref_id'])} of seed {show(v['seed_id'])} is already stored with a different {', '.join(differing)}; a stored reference cannot change",
            )
        else:
            self.unchanged["references"] += 1

    def _write_new_references(self, seed: SeedPaper, new: list[Line], draw: random.Random) -> None:
        """A seed's new references, audited, each with its given anonymous id or one drawn from the free ones. The
        eligible references draw the lowest free numbers and the excluded ones the next, each group in a random order:
        a bibliography whose ids are all drawn is shown as R1..Rk without a gap, since a gap (R1-R4, R6) would tell a
        proposer that references were excluded. Given ids are kept as given (an export carries them, and the
        hypotheses of the same files cite them)."""
        stored = self.stored_refs.get(seed.pk, {})
        taken = {r.anon_id for r in stored.values()} | {x.values["anon_id"] for x in new if x.values["anon_id"]}

        def audit(v: dict[str, Any]) -> leakage.Audited:
            ref = leakage.ReferenceIn(v["ref_id"], v["title"], v["abstract"], v["published"], v["precision"])
            return leakage.audit_reference(ref, seed_title=seed.title, seed_abstract=seed.abstract, t0=seed.t0)

        audited = [(line, audit(line.values)) for line in new]
        drawn = [a.eligible for line, a in audited if not line.values["anon_id"]]
        free = [f"R{n}" for n in range(1, len(taken) + len(drawn) + 1) if f"R{n}" not in taken]
        shown, hidden = free[: sum(drawn)], free[sum(drawn) : len(drawn)]
        draw.shuffle(shown)
        draw.shuffle(hidden)
        rows = []
        for line, checked in audited:
            v = line.values
            rows.append(
                Reference(
                    seed=seed,
                    anon_id=v["anon_id"] or (shown if checked.eligible else hidden).pop(),
                    original_id=v["ref_id"],
                    title=v["title"],
                    abstract=v["abstract"],
                    published=v["published"],
                    published_precision=v["precision"],
                    eligible=checked.eligible,
                    exclusion_reason=checked.exclusion_reason,
                    shown_title=checked.shown_title,
                    shown_abstract=checked.shown_abstract,
                    flags=checked.flags,
                )
            )
        Reference.objects.bulk_create(rows, batch_size=BATCH)
        self.created["references"] += len(rows)

    def freeze_seeds(self) -> None:
        """Freeze every seed not frozen yet; one with too few eligible references is noted in the summary, not refused."""
        for seed in self.seeds.values():
            if seed.pk in self.frozen:
                continue
            try:
                if bibliography_freeze(seed=seed).created:
                    self.created["freezes"] += 1
                    self.frozen.add(seed.pk)
            except ReconstructionError as exc:
                self.summary.not_frozen[seed.external_id] = str(exc)

    # ---------------------------------------------------------------- hypotheses and their labels

    def write_hypotheses(self) -> None:
        """The hypotheses (:mod:`reconstruction.import_hypotheses`), after the freezes: a hypothesis cites its seed's
        frozen bibliography."""
        writer = HypothesisWriter(
            self.benchmark, seeds=self.seeds, frozen=self.frozen, problems=self.problems, summary=self.summary
        )
        writer.write(self.lines["hypotheses"])
        self.hypotheses, self.refused = writer.hypotheses, writer.refused

    def write_labels(self) -> None:
        """Each label of a valid imported hypothesis, a judge recused exactly when it is of the proposer's family, one
        per (hypothesis, judge, run); a stored one unchanged."""
        by_id = {s.external_id: s for s in self.seeds.values()}
        stored_labels = {
            (x.hypothesis_id, x.judge, x.source): x for x in MatchLabel.objects.filter(hypothesis__seed__benchmark=self.benchmark)
        }
        seen_labels: dict[tuple, int | None] = {}
        new_labels = []
        for line in self.lines["labels"]:
            v = line.values
            hyp = self._labelled_hypothesis(line, by_id)
            if hyp is None or not self._recusal_right(line, hyp):
                continue
            key = (hyp.pk, v["judge"], v["run_label"])
            if key in seen_labels:
                self.problem(
                    line,
                    "judge",
                    f"a second label by {show(v['judge'])} in run {show(v['run_label'])} for this hypothesis (the first is on line {seen_labels[key]})",
                )
                continue
            seen_labels[key] = line.ref.line
            old = stored_labels.get(key)
            if old is None:
                new_labels.append(
                    MatchLabel(
                        hypothesis=hyp,
                        judge=v["judge"],
                        judge_family=v["judge_family"],
                        source=v["run_label"],
                        label=v["label"],
                        recused=v["recused"],
                        reason=v["reason"],
                    )
                )
            elif (old.label, old.recused, old.judge_family, old.reason) != (
                v["label"],
                v["recused"],
                v["judge_family"],
                v["reason"],
            ):
                self.problem(
                    line,
                    "label",
                    f"run {show(v['run_label'])} of {show(v['judge'])} already has {show(old.label)} for this hypothesis; a label cannot be replaced by an import",
                )
            else:
                self.unchanged["labels"] += 1
        MatchLabel.objects.bulk_create(new_labels, batch_size=BATCH)
        self.created["labels"] += len(new_labels)

    def _labelled_hypothesis(self, line: Line, by_id: dict[str, SeedPaper]) -> Hypothesis | None:
        """The valid hypothesis a label names; None when there is none (reported, unless its own line was refused)."""
        v = line.values
        seed = by_id.get(v["seed_id"])
        hyp = self.hypotheses.get((seed.pk, v["model"], v["slot"])) if seed else None
        if hyp is None:
            if (v["seed_id"], v["model"], v["slot"]) in self.refused:
                return None
            self.problem(
                line,
                "slot" if seed else "seed_id",
                f"no hypothesis of {show(v['model'])} in slot {show(v['slot'])} for seed {show(v['seed_id'])}; label only imported hypotheses",
            )
            return None
        if not hyp.valid:
            self.problem(
                line,
                "slot",
                f"the slot-{v['slot']} hypothesis of {show(v['model'])} for seed {show(v['seed_id'])} is invalid ({hyp.invalid_reason}); invalid hypotheses are not judged",
            )
            return None
        return hyp

    def _recusal_right(self, line: Line, hyp: Hypothesis) -> bool:
        """A judge of the proposer's family is recused, and only such a judge; False, reported, otherwise."""
        v = line.values
        own = v["judge_family"] == hyp.family
        if own and not v["recused"]:
            self.problem(
                line,
                "recused",
                f"judge {show(v['judge'])} is of family {show(hyp.family)}, the proposer's; a judge never labels its own family's hypotheses: record \"recused\": true with no label",
            )
            return False
        if v["recused"] and not own:
            self.problem(
                line,
                "recused",
                f"is true, but judge family {show(v['judge_family'])} is not the proposer's ({show(hyp.family)}); recusal is for the proposer's own family only",
            )
            return False
        return True

    # ---------------------------------------------------------------- tournament lines

    def write_tournament(self) -> None:
        """Tournament lines are kept as given (parsed by later work); a line already stored is unchanged."""
        stored_tournament = Counter(
            (seed_id, json.dumps(rec, sort_keys=True))
            for seed_id, rec in TournamentRecord.objects.filter(seed__benchmark=self.benchmark).values_list("seed_id", "record")
        )
        # An export writes the benchmark's own Swiss selections as tournament lines too (exporting.selection_lines):
        # imported back into it they are what it holds already, not new records (each export -> import cycle added
        # them once more).
        if self.benchmark is not None:
            from .exporting import selection_lines

            for record in selection_lines(self.benchmark):
                seed = self.seeds.get(record["seed_id"])
                if seed is not None:
                    stored_tournament[(seed.pk, json.dumps(record, sort_keys=True))] += 1
        new_records = []
        for line in self.lines["tournament"]:
            seed = self.known_seed(line)
            if seed is None:
                continue
            key = (seed.pk, json.dumps(line.values["record"], sort_keys=True))
            if stored_tournament[key] > 0:
                stored_tournament[key] -= 1
                self.unchanged["tournament lines"] += 1
            else:
                new_records.append(TournamentRecord(seed=seed, line=line.ref.line or 0, record=line.values["record"]))
        TournamentRecord.objects.bulk_create(new_records, batch_size=BATCH)
        self.created["tournament lines"] += len(new_records)
