"""Writes of Reconstruction data: import from the JSONL files of ``FORMAT.md``, the bibliography freeze, and the
export that writes the files back.

The import reads and checks every line of every file, then writes in one transaction and checks what depends on
the written rows (the frozen bibliographies hypotheses cite); any problem anywhere rolls everything back, and each
problem names its file, line, field, the value refused and what is accepted. Re-importing the same files changes
nothing; a stored line with other content is a problem (a frozen bibliography cannot change under its prompts).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from django.db import transaction

from arena.models import Benchmark, Participant
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
)

from . import leakage
from .models import SLOTS, BibliographyFreeze, Hypothesis, MatchLabel, Reference, SeedPaper, TournamentRecord

#: The files of a Reconstruction benchmark, in the order they are read (each refers to the ones before it).
FILES: tuple[str, ...] = ("seeds", "references", "hypotheses", "labels", "tournament")
SEED_KEYS = ("seed_id", "domain", "title", "abstract", "t0")
REFERENCE_KEYS = ("seed_id", "ref_id", "anon_id", "title", "abstract", "published")
HYPOTHESIS_KEYS = ("seed_id", "model", "family", "slot", "title", "summary", "cited", "valid", "invalid_reason", "selected_from")
LABEL_KEYS = ("seed_id", "model", "slot", "judge", "judge_family", "run_label", "label", "recused", "reason")
LABELS = tuple(MatchLabel.Label.values)
MAX_TEXT = 100_000
BATCH = 2_000  # rows per INSERT: quick, and under SQLite's variable limit
_ANON = re.compile(r"R[1-9]\d{0,5}")
_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")

SEED_ID = (SeedPaper, "external_id")
DOMAIN = (SeedPaper, "domain")
REF_ID = (Reference, "original_id")
FAMILY = (Hypothesis, "family")
JUDGE = (MatchLabel, "judge")
SOURCE = (MatchLabel, "source")


class ReconstructionError(Exception):
    """A request about Reconstruction data that cannot be carried out; nothing was written."""


class ReconstructionImportError(ReleaseImportError):
    """The files cannot be imported; nothing was written. ``problems`` says where and why."""


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


def _format_date(value: date | None, precision: str) -> str | None:
    if value is None:
        return None
    return value.isoformat()[: {"day": 10, "month": 7, "year": 4}[precision]]


# --------------------------------------------------------------------------- freezing


@dataclass(frozen=True)
class FreezeResult:
    freeze: BibliographyFreeze
    created: bool


def seed_audit(*, seed: SeedPaper) -> dict[str, Any]:
    """The audit's results for a seed as stored with its freeze and shown on its page."""
    refs = list(seed.references.all())
    excluded = [
        {"anon_id": r.anon_id, "reason": r.exclusion_reason} for r in sorted(refs, key=lambda r: r.number) if not r.eligible
    ]
    flagged = [{"anon_id": r.anon_id, "scrubbed": r.flags} for r in sorted(refs, key=lambda r: r.number) if r.flags]
    return {
        "references": len(refs),
        "eligible": sum(r.eligible for r in refs),
        "excluded": excluded,
        "scrubbed": flagged,
        "reasons": dict(
            Counter(reason.split(" (")[0] for r in refs if not r.eligible for reason in r.exclusion_reason.split("; "))
        ),
        "thresholds": {
            "min_eligible": leakage.MIN_ELIGIBLE,
            "span_n": leakage.SPAN_N,
            "jaccard_n": leakage.JACCARD_N,
            "jaccard_max": leakage.JACCARD_MAX,
        },
    }


def bibliography_freeze(*, seed: SeedPaper) -> FreezeResult:
    """Freeze a seed's bibliography: its eligible references' anonymous ids and shown text, hashed. Idempotent: the
    same text again returns the stored freeze. Raises :class:`ReconstructionError` when the seed has fewer than
    ``leakage.MIN_ELIGIBLE`` eligible references, when its text would differ from a stored freeze, or when the text
    holds what no prompt may (the seed's title, identifying metadata, an original id) — the last would be a bug in
    the audit, checked again here because a prompt is built from nothing else."""
    refs = list(seed.references.all())
    eligible = [r for r in refs if r.eligible]
    if len(eligible) < leakage.MIN_ELIGIBLE:
        audit = seed_audit(seed=seed)
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(audit["reasons"].items())) or "none excluded"
        raise ReconstructionError(
            f"seed {seed.external_id!r} has {len(eligible)} eligible reference(s) of {len(refs)} ({why}); a seed needs at least "
            f"{leakage.MIN_ELIGIBLE} references published strictly before its date {seed.t0.isoformat()} to be frozen and used"
        )
    text = leakage.bibliography_text((r.anon_id, r.shown_title, r.shown_abstract) for r in eligible)
    bad = leakage.shown_text_problems(text, seed_title=seed.title, original_ids=[r.original_id for r in refs])
    if bad:
        raise ReconstructionError(f"seed {seed.external_id!r}: the shown bibliography would hold {'; '.join(bad)}; not frozen")
    digest = leakage.bibliography_hash(text)
    old = BibliographyFreeze.objects.filter(seed=seed).first()
    if old is not None:
        if old.content_hash != digest:
            raise ReconstructionError(
                f"seed {seed.external_id!r}: its bibliography was frozen at {old.frozen_at:%Y-%m-%d %H:%M} with hash {old.content_hash[:12]}…; "
                f"the text would now hash to {digest[:12]}…. A frozen bibliography does not change: import the seed under a new seed_id"
            )
        return FreezeResult(old, False)
    return FreezeResult(
        BibliographyFreeze.objects.create(seed=seed, shown_text=text, content_hash=digest, audit=seed_audit(seed=seed)), True
    )


def render_bibliography(seed: SeedPaper) -> str:
    """The bibliography text every proposer prompt is built from: the frozen shown text (anonymous ids, titles,
    abstracts only). Raises :class:`ReconstructionError` when the seed is not frozen, so no prompt is built from
    anything else."""
    freeze = BibliographyFreeze.objects.filter(seed=seed).first()
    if freeze is None:
        raise ReconstructionError(
            f"seed {seed.external_id!r} has no frozen bibliography; freeze it first (it needs {leakage.MIN_ELIGIBLE} eligible references)"
        )
    return freeze.shown_text


# --------------------------------------------------------------------------- parsing


def _unknown_keys(f: _Fields, record: Mapping[str, Any], keys: Sequence[str], what: str) -> None:
    for key in sorted(set(record) - set(keys)):
        f.problem(key, f"is not a field of a {what} line; the fields are {', '.join(keys)}")


def _long(f: _Fields, key: str, value: str) -> None:
    if len(value) > MAX_TEXT:
        f.problem(key, f"has {len(value)} characters; the limit is {MAX_TEXT}")


def _date(f: _Fields, key: str, *, required: bool, day_only: bool) -> tuple[date, str] | None:
    raw = f.record.get(key)
    accepted = '"YYYY-MM-DD"' if day_only else '"YYYY-MM-DD", "YYYY-MM", "YYYY" or null (undated)'
    if raw is None:
        if required:
            f.problem(key, f"missing; a date {accepted}")
        return None
    parsed = parse_date(raw) if isinstance(raw, str) else None
    if parsed is None or (day_only and parsed[1] != "day"):
        f.problem(key, f"must be a date {accepted}, got {_show(raw) if isinstance(raw, str) else _json_type(raw)}")
        return None
    return parsed


@dataclass(slots=True)
class _Line:
    ref: _Ref
    values: dict[str, Any]


def _parse_seed(record: dict[str, Any], f: _Fields) -> _Line | None:
    before = len(f.problems)
    _unknown_keys(f, record, SEED_KEYS, "seed")
    values = {
        "seed_id": f.text("seed_id", SEED_ID),
        "domain": f.text("domain", DOMAIN),
        "title": f.text("title"),
        "abstract": f.text("abstract"),
    }
    _long(f, "abstract", values["abstract"])
    t0 = _date(f, "t0", required=True, day_only=True)
    if len(f.problems) != before:
        return None
    return _Line(f.ref, values | {"t0": t0[0]})  # type: ignore[index]


def _parse_reference(record: dict[str, Any], f: _Fields) -> _Line | None:
    before = len(f.problems)
    _unknown_keys(f, record, REFERENCE_KEYS, "reference")
    values: dict[str, Any] = {
        "seed_id": f.text("seed_id", SEED_ID),
        "ref_id": f.text("ref_id", REF_ID),
        "title": f.text("title"),
        "abstract": f.text("abstract", required=False),
    }
    _long(f, "abstract", values["abstract"])
    anon = f.text("anon_id", required=False)
    if anon and not _ANON.fullmatch(anon):
        f.problem("anon_id", f'must be "R" and a number from 1 (R1, R2, ...), got {_show(anon)}; leave it out to have one drawn')
    published = _date(f, "published", required=False, day_only=False)
    if len(f.problems) != before:
        return None
    return _Line(
        f.ref,
        values
        | {"anon_id": anon, "published": published[0] if published else None, "precision": published[1] if published else "day"},
    )


def _parse_hypothesis(record: dict[str, Any], f: _Fields) -> _Line | None:
    before = len(f.problems)
    _unknown_keys(f, record, HYPOTHESIS_KEYS, "hypothesis")
    values: dict[str, Any] = {
        "seed_id": f.text("seed_id", SEED_ID),
        "model": f.text("model", MODEL_NAME),
        "family": f.text("family", FAMILY),
    }
    slot = record.get("slot")
    if isinstance(slot, bool) or slot not in SLOTS:
        f.problem(
            "slot",
            f"must be one of {', '.join(map(str, SLOTS))}, got {_show(slot) if slot is None or isinstance(slot, (int, float, str)) else _json_type(slot)}",
        )
    valid = f.flag("valid", True)
    values |= {
        "slot": slot,
        "valid": valid,
        "title": f.text("title", required=valid),
        "summary": f.text("summary", required=valid),
    }
    values["invalid_reason"] = f.text("invalid_reason", required=not valid)
    if valid and values["invalid_reason"]:
        f.problem("invalid_reason", 'is given for a valid hypothesis; leave it out, or set "valid": false')
    cited = record.get("cited", [])
    if not isinstance(cited, list) or not all(isinstance(c, str) for c in cited):
        f.problem("cited", f'must be a list of anonymous reference ids ("R3", ...), got {_json_type(cited)}')
        cited = []
    elif valid and not cited:
        f.problem("cited", "empty; a valid hypothesis cites at least one anonymous reference id of its seed's bibliography")
    values["cited"] = cited
    chosen = record.get("selected_from")
    if chosen is not None and not (
        isinstance(chosen, dict)
        and set(chosen) == {"model", "slot"}
        and isinstance(chosen["model"], str)
        and chosen["slot"] in SLOTS
    ):
        f.problem(
            "selected_from",
            f'must be {{"model": NAME, "slot": 1-5}} (the proposer\'s hypothesis a selection chose), got {_json_type(chosen)}',
        )
    values["selected_from"] = chosen
    if len(f.problems) != before:
        return None
    return _Line(f.ref, values)


def _parse_label(record: dict[str, Any], f: _Fields) -> _Line | None:
    before = len(f.problems)
    _unknown_keys(f, record, LABEL_KEYS, "label")
    values: dict[str, Any] = {
        "seed_id": f.text("seed_id", SEED_ID),
        "model": f.text("model", MODEL_NAME),
        "judge": f.text("judge", JUDGE),
        "judge_family": f.text("judge_family", FAMILY),
        "run_label": f.text("run_label", SOURCE),
        "reason": f.text("reason", required=False),
        "recused": f.flag("recused", False),
        "slot": record.get("slot"),
    }
    if isinstance(values["slot"], bool) or values["slot"] not in SLOTS:
        f.problem(
            "slot",
            f"must be one of {', '.join(map(str, SLOTS))}, got {_show(values['slot']) if not isinstance(values['slot'], (list, dict)) else _json_type(values['slot'])}",
        )
    label = record.get("label")
    if values["recused"]:
        if label is not None:
            f.problem(
                "label",
                f"must be null in a recused judgment (a recused judge gives no label: missing, not No-match); got {_show(label)}",
            )
    elif label not in LABELS:
        f.problem(
            "label",
            f'{"missing" if label is None else "must be one of " + _names(LABELS) + ", got " + _show(label)}; one of {_names(LABELS)} (or "recused": true)',
        )
    values["label"] = label
    if len(f.problems) != before:
        return None
    return _Line(f.ref, values)


def _parse_tournament(record: dict[str, Any], f: _Fields) -> _Line | None:
    seed_id = f.text("seed_id", SEED_ID)
    return _Line(f.ref, {"seed_id": seed_id, "record": record}) if seed_id else None


PARSERS = {
    "seeds": _parse_seed,
    "references": _parse_reference,
    "hypotheses": _parse_hypothesis,
    "labels": _parse_label,
    "tournament": _parse_tournament,
}


# --------------------------------------------------------------------------- import


@dataclass
class ImportSummary:
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
    if not directory.is_dir():
        raise ReconstructionError(f"{directory}: no such folder")
    found = {kind: directory / f"{kind}.jsonl" for kind in FILES if (directory / f"{kind}.jsonl").is_file()}
    if not found:
        raise ReconstructionError(
            f"{directory}: no Reconstruction file in this folder; expected {', '.join(f'{k}.jsonl' for k in FILES)}"
        )
    return found


def reconstruction_import(*, name: str, files: Mapping[str, Path], version: str = "1", description: str = "") -> ImportSummary:
    """Import Reconstruction files (``FORMAT.md``) into benchmark ``name`` v``version`` (created with protocol
    ``reconstruction`` if needed), audit every new reference, and freeze each seed with enough eligible references;
    all or nothing. Raises :class:`ReconstructionImportError` listing every problem (nothing written) and
    :class:`ReconstructionError` when the benchmark is of another protocol."""
    benchmark = Benchmark.objects.filter(name=name, version=version).first()
    if benchmark is not None and benchmark.protocol != Benchmark.Protocol.RECONSTRUCTION:
        raise ReconstructionError(
            f"{benchmark} is a {benchmark.get_protocol_display()} benchmark; import Reconstruction files into a new benchmark name"
        )
    if not files:
        raise ReconstructionError(f"no file to import; give {', '.join(f'{k}.jsonl' for k in FILES)} in a folder")
    parsed = _Parsed()
    problems = parsed.problems
    lines: dict[str, list[_Line]] = {}
    for kind in FILES:
        lines[kind] = []
        path = files.get(kind)
        if path is None:
            continue
        before = parsed.lines
        for number, record, clean in _read_jsonl(path, parsed):
            line = PARSERS[kind](record, _Fields(record, _Ref(path.name, number), problems))
            if line is not None and clean:
                lines[kind].append(line)
        if parsed.lines == before:
            problems.append(Problem(path.name, None, None, f"no {kind} lines (the file is empty)"))
    summary = ImportSummary(benchmark=benchmark, files=[p.name for p in files.values()])  # type: ignore[arg-type]
    try:
        with transaction.atomic():
            summary.benchmark = _write(
                benchmark, name=name, version=version, description=description, lines=lines, problems=problems, summary=summary
            )
            if problems:
                raise ReconstructionImportError(problems)
    except ReconstructionImportError:
        raise
    return summary


def _problem(problems: list[Problem], line: _Line, name: str | None, message: str) -> None:
    problems.append(Problem(line.ref.file, line.ref.line, name, message))


def _write(
    benchmark: Benchmark | None,
    *,
    name: str,
    version: str,
    description: str,
    lines: dict[str, list[_Line]],
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
            protocol=Benchmark.Protocol.RECONSTRUCTION,
            verdict_rule="match",
            proposal_schema="five-hypotheses",
        )
    seeds = {s.external_id: s for s in SeedPaper.objects.filter(benchmark=benchmark)}

    # Seeds.
    seen: dict[str, int | None] = {}
    for line in lines["seeds"]:
        v = line.values
        if v["seed_id"] in seen:
            _problem(
                problems, line, "seed_id", f"{_show(v['seed_id'])} repeats line {seen[v['seed_id']]}; each seed appears once"
            )
            continue
        seen[v["seed_id"]] = line.ref.line
        old = seeds.get(v["seed_id"])
        if old is None:
            seeds[v["seed_id"]] = SeedPaper.objects.create(
                benchmark=benchmark,
                external_id=v["seed_id"],
                domain=v["domain"],
                title=v["title"],
                abstract=v["abstract"],
                t0=v["t0"],
            )
            created["seeds"] += 1
            continue
        differing = [
            k
            for k, was in (("domain", old.domain), ("title", old.title), ("abstract", old.abstract), ("t0", old.t0))
            if was != v[k]
        ]
        if differing:
            _problem(
                problems,
                line,
                ", ".join(differing),
                f"seed {_show(v['seed_id'])} is already in {benchmark} with a different {', '.join(differing)}; give the new seed its own seed_id",
            )
        else:
            unchanged["seeds"] += 1

    def unknown_seed(line: _Line) -> SeedPaper | None:
        seed = seeds.get(line.values["seed_id"])
        if seed is None:
            _problem(
                problems, line, "seed_id", f"unknown seed {_show(line.values['seed_id'])}; the seeds are {_names(sorted(seeds))}"
            )
        return seed

    # References: checked, anonymous ids drawn, audited and written per seed.
    stored_refs: dict[int, dict[str, Reference]] = {}
    for r in Reference.objects.filter(seed__benchmark=benchmark):
        stored_refs.setdefault(r.seed_id, {})[r.original_id] = r
    frozen = set(BibliographyFreeze.objects.filter(seed__benchmark=benchmark).values_list("seed_id", flat=True))
    new_refs: dict[int, list[_Line]] = {}
    seen_refs: dict[tuple[str, str], int | None] = {}
    seen_anon: dict[tuple[str, str], int | None] = {}
    for line in lines["references"]:
        v = line.values
        seed = unknown_seed(line)
        if seed is None:
            continue
        key = (v["seed_id"], v["ref_id"])
        if key in seen_refs:
            _problem(
                problems,
                line,
                "ref_id",
                f"{_show(v['ref_id'])} repeats line {seen_refs[key]} for seed {_show(v['seed_id'])}; each reference of a seed appears once",
            )
            continue
        seen_refs[key] = line.ref.line
        if v["anon_id"]:
            if (v["seed_id"], v["anon_id"]) in seen_anon:
                _problem(
                    problems,
                    line,
                    "anon_id",
                    f"{_show(v['anon_id'])} is already given on line {seen_anon[(v['seed_id'], v['anon_id'])]} for seed {_show(v['seed_id'])}; anonymous ids are unique per seed",
                )
                continue
            seen_anon[(v["seed_id"], v["anon_id"])] = line.ref.line
        old = stored_refs.get(seed.pk, {}).get(v["ref_id"])
        if old is None:
            if seed.pk in frozen:
                _problem(
                    problems,
                    line,
                    "ref_id",
                    f"seed {_show(v['seed_id'])} has a frozen bibliography; a reference cannot be added to it (import the seed under a new seed_id)",
                )
                continue
            if v["anon_id"] and any(r.anon_id == v["anon_id"] for r in stored_refs.get(seed.pk, {}).values()):
                _problem(
                    problems,
                    line,
                    "anon_id",
                    f"{_show(v['anon_id'])} is already another reference's id in seed {_show(v['seed_id'])}",
                )
                continue
            new_refs.setdefault(seed.pk, []).append(line)
            continue
        differing = [
            k
            for k, was in (
                ("title", old.title),
                ("abstract", old.abstract),
                ("published", _format_date(old.published, old.published_precision)),
            )
            if was != (v[k] if k != "published" else _format_date(v["published"], v["precision"]))
        ]
        if v["anon_id"] and v["anon_id"] != old.anon_id:
            differing.append("anon_id")
        if differing:
            _problem(
                problems,
                line,
                ", ".join(differing),
                f"reference {_show(v['ref_id'])} of seed {_show(v['seed_id'])} is already stored with a different {', '.join(differing)}; a stored reference cannot change",
            )
        else:
            unchanged["references"] += 1
    draw = random.SystemRandom()  # anonymous ids must not follow the file's (often the paper's citation) order
    by_pk = {s.pk: s for s in seeds.values()}
    for seed_pk, new in new_refs.items():
        seed = by_pk[seed_pk]
        taken = {r.anon_id for r in stored_refs.get(seed_pk, {}).values()} | {
            x.values["anon_id"] for x in new if x.values["anon_id"]
        }
        total = len(stored_refs.get(seed_pk, {})) + len(new)
        free = [f"R{n}" for n in range(1, total + len(taken) + 1) if f"R{n}" not in taken]
        draw.shuffle(free)
        rows = []
        for line in new:
            v = line.values
            audited = leakage.audit_reference(
                leakage.ReferenceIn(v["ref_id"], v["title"], v["abstract"], v["published"], v["precision"]),
                seed_title=seed.title,
                seed_abstract=seed.abstract,
                t0=seed.t0,
            )
            rows.append(
                Reference(
                    seed=seed,
                    anon_id=v["anon_id"] or free.pop(),
                    original_id=v["ref_id"],
                    title=v["title"],
                    abstract=v["abstract"],
                    published=v["published"],
                    published_precision=v["precision"],
                    eligible=audited.eligible,
                    exclusion_reason=audited.exclusion_reason,
                    shown_title=audited.shown_title,
                    shown_abstract=audited.shown_abstract,
                    flags=audited.flags,
                )
            )
        Reference.objects.bulk_create(rows, batch_size=BATCH)
        created["references"] += len(rows)
    if problems:
        return benchmark
    for seed in seeds.values():
        if seed.pk in frozen:
            continue
        try:
            if bibliography_freeze(seed=seed).created:
                created["freezes"] += 1
                frozen.add(seed.pk)
        except ReconstructionError as exc:
            summary.not_frozen[seed.external_id] = str(exc)
    _write_hypotheses(benchmark, seeds=seeds, frozen=frozen, lines=lines, problems=problems, summary=summary)
    # Tournament lines are kept as given (parsed by later work); a line already stored is unchanged.
    stored_tournament = Counter(
        (seed_id, json.dumps(rec, sort_keys=True))
        for seed_id, rec in TournamentRecord.objects.filter(seed__benchmark=benchmark).values_list("seed_id", "record")
    )
    new_records = []
    for line in lines["tournament"]:
        seed = unknown_seed(line)
        if seed is None:
            continue
        key = (seed.pk, json.dumps(line.values["record"], sort_keys=True))
        if stored_tournament[key] > 0:
            stored_tournament[key] -= 1
            unchanged["tournament lines"] += 1
        else:
            new_records.append(TournamentRecord(seed=seed, line=line.ref.line or 0, record=line.values["record"]))
    TournamentRecord.objects.bulk_create(new_records, batch_size=BATCH)
    created["tournament lines"] += len(new_records)
    return benchmark


def _write_hypotheses(
    benchmark: Benchmark,
    *,
    seeds: dict[str, SeedPaper],
    frozen: set[int],
    lines: dict[str, list[_Line]],
    problems: list[Problem],
    summary: ImportSummary,
) -> None:
    created, unchanged = summary.created, summary.unchanged
    cite_ids: dict[int, list[str]] = {}
    for seed_pk, anon in Reference.objects.filter(seed__benchmark=benchmark, eligible=True).values_list("seed_id", "anon_id"):
        cite_ids.setdefault(seed_pk, []).append(anon)
    participants = {p.name: p for p in benchmark.participants.all()}
    stored = {
        (h.seed_id, h.participant.name, h.slot): h
        for h in Hypothesis.objects.filter(seed__benchmark=benchmark).select_related("participant")
    }
    families = {name: fam for (_s, name, _slot), h in stored.items() for fam in [h.family]}
    family_line: dict[str, str] = {m: "stored" for m in families}
    seen: dict[tuple, int | None] = {}
    refused: set[tuple[str, str, Any]] = set()  # hypotheses reported here: labels naming them are skipped quietly
    texts: dict[tuple[int, str], dict[tuple[str, str], int]] = {}
    # A selection's champion names the proposer's hypothesis it was chosen from: those are written after the others.
    for line in sorted(lines["hypotheses"], key=lambda line: line.values.get("selected_from") is not None):
        v = line.values
        before = len(problems)
        origin = None
        try:
            seed = seeds.get(v["seed_id"])
            if seed is None:
                _problem(problems, line, "seed_id", f"unknown seed {_show(v['seed_id'])}; the seeds are {_names(sorted(seeds))}")
                continue
            if seed.pk not in frozen:
                _problem(
                    problems,
                    line,
                    "seed_id",
                    f"seed {_show(v['seed_id'])} has no frozen bibliography ({summary.not_frozen.get(seed.external_id, 'not frozen')}); it takes no hypotheses",
                )
                continue
            key = (seed.pk, v["model"], v["slot"])
            if key in seen:
                _problem(
                    problems,
                    line,
                    "slot",
                    f"{_show(v['model'])} already has slot {v['slot']} for seed {_show(v['seed_id'])} on line {seen[key]}; one hypothesis per slot",
                )
                continue
            seen[key] = line.ref.line
            if v["selected_from"] is not None:
                origin = stored.get((seed.pk, v["selected_from"]["model"], v["selected_from"]["slot"]))
                if origin is None or origin.origin_id is not None:
                    _problem(
                        problems,
                        line,
                        "selected_from",
                        f"no proposer hypothesis of {_show(v['selected_from']['model'])} in slot {v['selected_from']['slot']} for seed {_show(v['seed_id'])}; a champion is chosen from an imported proposer's hypothesis",
                    )
                    continue
                if origin.family != v["family"]:
                    _problem(
                        problems,
                        line,
                        "family",
                        f"is {_show(v['family'])}, but the hypothesis it was selected from is of family {_show(origin.family)}; a champion keeps its origin's family (for recusal)",
                    )
                    continue
            said = families.setdefault(v["model"], v["family"]) if origin is None else v["family"]
            family_line.setdefault(v["model"], f"line {line.ref.line}")
            if said != v["family"]:
                _problem(
                    problems,
                    line,
                    "family",
                    f"is {_show(v['family'])}, but {_show(v['model'])} is of family {_show(said)} ({family_line[v['model']]}); a model has one family",
                )
                continue
            if v["valid"]:
                unknown = [c for c in v["cited"] if c not in cite_ids.get(seed.pk, [])]
                if unknown:
                    known = sorted(cite_ids.get(seed.pk, []), key=lambda a: int(a[1:]))
                    _problem(
                        problems,
                        line,
                        "cited",
                        f'cites {_names(unknown)}, not in the frozen bibliography of seed {_show(v["seed_id"])}; its ids are {_names(known)} (or mark the hypothesis "valid": false with the reason)',
                    )
                    continue
                same = texts.setdefault((seed.pk, v["model"]), {})
                text_key = (v["title"].strip().lower(), v["summary"].strip().lower())
                if text_key in same:
                    _problem(
                        problems,
                        line,
                        "title, summary",
                        f"repeats slot {same[text_key]} of {_show(v['model'])} for seed {_show(v['seed_id'])}; the five hypotheses are distinct",
                    )
                    continue
                same[text_key] = v["slot"]
            old = stored.get(key)
            if old is None:
                if v["model"] not in participants:
                    participants[v["model"]] = Participant.objects.create(benchmark=benchmark, name=v["model"])
                    created["participants"] += 1
                stored[key] = Hypothesis.objects.create(
                    seed=seed,
                    participant=participants[v["model"]],
                    family=v["family"],
                    slot=v["slot"],
                    title=v["title"],
                    summary=v["summary"],
                    cited=v["cited"],
                    valid=v["valid"],
                    invalid_reason=v["invalid_reason"],
                    origin=origin,
                )
                created["hypotheses"] += 1
            elif (old.title, old.summary, old.cited, old.valid, old.invalid_reason, old.origin_id) != (
                v["title"],
                v["summary"],
                v["cited"],
                v["valid"],
                v["invalid_reason"],
                origin.pk if origin else None,
            ):
                _problem(
                    problems,
                    line,
                    "title",
                    f"{_show(v['model'])} already has another slot-{v['slot']} hypothesis for seed {_show(v['seed_id'])}; it cannot be replaced by an import",
                )
            else:
                unchanged["hypotheses"] += 1
        finally:
            if len(problems) != before:
                refused.add((v["seed_id"], v["model"], v["slot"]))

    by_id = {s.external_id: s for s in seeds.values()}
    stored_labels = {
        (x.hypothesis_id, x.judge, x.source): x for x in MatchLabel.objects.filter(hypothesis__seed__benchmark=benchmark)
    }
    seen_labels: dict[tuple, int | None] = {}
    new_labels = []
    for line in lines["labels"]:
        v = line.values
        seed = by_id.get(v["seed_id"])
        hyp = stored.get((seed.pk, v["model"], v["slot"])) if seed else None
        if hyp is None:
            if (v["seed_id"], v["model"], v["slot"]) in refused:
                continue
            _problem(
                problems,
                line,
                "slot" if seed else "seed_id",
                f"no hypothesis of {_show(v['model'])} in slot {_show(v['slot'])} for seed {_show(v['seed_id'])}; label only imported hypotheses",
            )
            continue
        if not hyp.valid:
            _problem(
                problems,
                line,
                "slot",
                f"the slot-{v['slot']} hypothesis of {_show(v['model'])} for seed {_show(v['seed_id'])} is invalid ({hyp.invalid_reason}); invalid hypotheses are not judged",
            )
            continue
        own = v["judge_family"] == hyp.family
        if own and not v["recused"]:
            _problem(
                problems,
                line,
                "recused",
                f"judge {_show(v['judge'])} is of family {_show(hyp.family)}, the proposer's; a judge never labels its own family's hypotheses: record \"recused\": true with no label",
            )
            continue
        if v["recused"] and not own:
            _problem(
                problems,
                line,
                "recused",
                f"is true, but judge family {_show(v['judge_family'])} is not the proposer's ({_show(hyp.family)}); recusal is for the proposer's own family only",
            )
            continue
        key = (hyp.pk, v["judge"], v["run_label"])
        if key in seen_labels:
            _problem(
                problems,
                line,
                "judge",
                f"a second label by {_show(v['judge'])} in run {_show(v['run_label'])} for this hypothesis (the first is on line {seen_labels[key]})",
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
        elif (old.label, old.recused, old.judge_family, old.reason) != (v["label"], v["recused"], v["judge_family"], v["reason"]):
            _problem(
                problems,
                line,
                "label",
                f"run {_show(v['run_label'])} of {_show(v['judge'])} already has {_show(old.label)} for this hypothesis; a label cannot be replaced by an import",
            )
        else:
            unchanged["labels"] += 1
    MatchLabel.objects.bulk_create(new_labels, batch_size=BATCH)
    created["labels"] += len(new_labels)


# --------------------------------------------------------------------------- export


def _dump(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def _selection_lines(benchmark: Benchmark) -> list[dict[str, Any]]:
    """The Swiss selections' matches as tournament.jsonl lines (FORMAT.md), one per match, with every judge's votes."""
    from .models import SwissMatch, SwissVote

    votes: dict[int, list[dict[str, str]]] = {}
    for v in SwissVote.objects.filter(match__tournament__selection__benchmark=benchmark, status="accepted").order_by(
        "judge", "order"
    ):
        votes.setdefault(v.match_id, []).append({"judge": v.judge, "order": v.order, "winner": v.winner})
    matches = (
        SwissMatch.objects.filter(tournament__selection__benchmark=benchmark)
        .select_related("tournament__selection__participant", "tournament__seed_paper", "a__participant", "b__participant")
        .order_by(
            "tournament__selection__participant__name",
            "tournament__seed_paper__external_id",
            "tournament__slot",
            "round",
            "a__participant__name",
        )
    )
    return [
        {
            "seed_id": m.tournament.seed_paper.external_id,
            "selection": m.tournament.selection.participant.name,
            "slot": m.tournament.slot,
            "round": m.round,
            "a": m.a.participant.name,
            "b": m.b.participant.name if m.b else None,
            "votes": votes.get(m.pk, []),
        }
        for m in matches
    ]


def reconstruction_export(*, benchmark: Benchmark, directory: Path) -> dict[str, int]:
    """Write the benchmark's files (``FORMAT.md``) into ``directory``; returns the lines written per file. References
    carry their anonymous id, so importing the export reproduces the same frozen bibliographies (same hashes)."""
    if benchmark.protocol != Benchmark.Protocol.RECONSTRUCTION:
        raise ReconstructionError(f"{benchmark} is a {benchmark.get_protocol_display()} benchmark, not a Reconstruction one")
    directory.mkdir(parents=True, exist_ok=True)
    seeds = SeedPaper.objects.filter(benchmark=benchmark).order_by("external_id")
    refs = Reference.objects.filter(seed__benchmark=benchmark).select_related("seed").order_by("seed__external_id", "original_id")
    hyps = (
        Hypothesis.objects.filter(seed__benchmark=benchmark)
        .select_related("seed", "participant", "origin__participant")
        .order_by("seed__external_id", "participant__name", "slot")
    )
    labels = (
        MatchLabel.objects.filter(hypothesis__seed__benchmark=benchmark)
        .select_related("hypothesis__seed", "hypothesis__participant")
        .order_by("source", "judge", "hypothesis__seed__external_id", "hypothesis__participant__name", "hypothesis__slot")
    )
    records: dict[str, list[dict[str, Any]]] = {
        "seeds": [
            {"seed_id": s.external_id, "domain": s.domain, "title": s.title, "abstract": s.abstract, "t0": s.t0.isoformat()}
            for s in seeds
        ],
        "references": [
            {
                "seed_id": r.seed.external_id,
                "ref_id": r.original_id,
                "anon_id": r.anon_id,
                "title": r.title,
                "abstract": r.abstract,
                "published": _format_date(r.published, r.published_precision),
            }
            for r in refs
        ],
        "hypotheses": [
            {
                "seed_id": h.seed.external_id,
                "model": h.participant.name,
                "family": h.family,
                "slot": h.slot,
                "title": h.title,
                "summary": h.summary,
                "cited": h.cited,
            }
            | ({} if h.valid else {"valid": False, "invalid_reason": h.invalid_reason})
            | ({"selected_from": {"model": h.origin.participant.name, "slot": h.origin.slot}} if h.origin else {})
            for h in hyps
        ],
        "labels": [
            {
                "seed_id": x.hypothesis.seed.external_id,
                "model": x.hypothesis.participant.name,
                "slot": x.hypothesis.slot,
                "judge": x.judge,
                "judge_family": x.judge_family,
                "run_label": x.source,
                "label": x.label,
            }
            | ({"recused": True} if x.recused else {})
            | ({"reason": x.reason} if x.reason else {})
            for x in labels
        ],
        "tournament": [
            t.record
            for t in TournamentRecord.objects.filter(seed__benchmark=benchmark).order_by("seed__external_id", "line", "id")
        ]
        + _selection_lines(benchmark),
    }
    written = {}
    for kind in FILES:
        if records[kind] or kind in ("seeds", "references"):
            # Tournament lines are free-form objects: PostgreSQL's jsonb does not keep their key order, so they are
            # written with sorted keys, and an export of an import is the same file on every database.
            dump = (lambda r: json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n") if kind == "tournament" else _dump
            (directory / f"{kind}.jsonl").write_text("".join(dump(r) for r in records[kind]), encoding="utf-8")
            written[f"{kind}.jsonl"] = len(records[kind])
    return written
