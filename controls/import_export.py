"""Diagnostic controls as JSONL: the import of a controls file and the rows the export writes, in the same format.

Kept apart from the other writes of controls (:mod:`controls.services`: generation and review) because it is the
file format's concern: what a line may hold and how each problem is named (file, line, field). An import checks
every line first (its fields, then each variant against its clean source with
:func:`controls.services.variant_problems`, the rule every path shares) and writes only when nothing is wrong, in
one transaction. A Lit2Test release export writes :func:`control_export_rows` as ``controls.jsonl``
(``ControlsConfig.ready`` registers it), so an export imports back with its controls.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from arena.jsonl import (
    EXTERNAL_ID,
    MODEL_NAME,
    Fields,
    JsonlReading,
    Problem,
    Ref,
    ReleaseImportError,
    names_listed,
    read_jsonl,
    show,
)
from arena.models import Benchmark, Context, Proposal
from arena.protocols import foreign_benchmark

from .models import LIT2TEST, ControlVariant
from .services import KINDS, STATUSES, TARGETS, ControlError, variant_problems

LINE_KEYS = ("control_id", "kind", "context_id", "source_model", "target", "proposal", "prose", "status", "provenance")
GENERATOR = (ControlVariant, "generator")
GENERATOR_VERSION = (ControlVariant, "generator_version")
# The declared provenance is kept whole (ControlVariant.provenance["declared"], a JSON column with no length): this
# limit on its JSON text keeps one line from filling the database; a provenance is a few names and versions.
MAX_PROVENANCE_CHARS = 10_000


class ControlImportError(ReleaseImportError):
    """The controls file cannot be imported; nothing was written. ``problems`` says where and why."""


_names = names_listed


# --------------------------------------------------------------------------- import


@dataclass
class _Line:
    ref: Ref
    control_id: str
    kind: str
    target: str | None
    context_id: str
    source_model: str
    content: dict[str, Any] | None
    prose: str | None
    status: str
    provenance: dict[str, Any]
    generator: str
    generator_version: str

    def comparable(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "target": self.target,
            "context_id": self.context_id,
            "source_model": self.source_model,
            "proposal": self.content,
            "prose": self.prose or "",
        }


@dataclass
class ControlImportSummary:
    benchmark: Benchmark
    file: str
    created: Counter = field(default_factory=Counter)  # by kind
    unchanged: int = 0

    def line(self) -> str:
        if not self.created:
            return f"nothing new: the {self.unchanged} control(s) of {self.file} are already in {self.benchmark}"
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.created.items()))
        return f"created {sum(self.created.values())} control(s) in {self.benchmark} ({kinds}); {self.unchanged} already there"


def _parse_line(record: dict[str, Any], ref: Ref, problems: list[Problem]) -> _Line | None:
    before = len(problems)
    f = Fields(record, ref, problems)
    for key in sorted(set(record) - set(LINE_KEYS)):
        f.problem(key, f"is not a field of a control line; the fields are {', '.join(LINE_KEYS)}")
    control_id = f.text("control_id", (ControlVariant, "control_id"), identifier=True)
    kind = f.text("kind")
    if kind and kind not in KINDS:
        f.problem("kind", f"unknown kind {show(kind)}; the kinds are {_names(KINDS)}")
    target = record.get("target")
    if target is not None and (not isinstance(target, str) or target not in TARGETS):
        f.problem("target", f"unknown target {show(target)}; the targets are {_names(TARGETS)} (or null)")
        target = None
    context_id = f.text("context_id", EXTERNAL_ID, identifier=True)
    source_model = f.text("source_model", MODEL_NAME)
    status = f.choice("status", STATUSES, default=ControlVariant.Status.APPROVED)
    provenance, generator, version = _provenance(f)
    content = record.get("proposal")
    prose = record.get("prose")
    if kind in KINDS and len(problems) == before:
        for name, message in variant_problems(kind=kind, target=target, content=content, prose=prose, source=None):
            f.problem(name, message)
    if len(problems) != before:
        return None
    return _Line(ref, control_id, kind, target, context_id, source_model, content, prose, status, provenance, generator, version)


def _provenance(f: Fields) -> tuple[dict[str, Any], str, str]:
    """The declared provenance, and its generator and version, each within its column (too long is a problem, never
    cut: a cut name would say another generator made the variant)."""
    provenance = f.mapping("provenance")
    if not provenance:
        return {}, "", ""
    before = len(f.problems)
    p = Fields(provenance, f.ref, f.problems, prefix="provenance.")
    generator = p.text("generator", GENERATOR, required=False, numbers=True)
    version = p.text("version", GENERATOR_VERSION, required=False, numbers=True, identifier=True)
    size = len(json.dumps(provenance, ensure_ascii=False))
    if len(f.problems) == before and size > MAX_PROVENANCE_CHARS:
        f.problem("provenance", f"has {size} characters of JSON; the limit is {MAX_PROVENANCE_CHARS}")
    return provenance, generator, version


def _check_against_benchmark(benchmark: Benchmark, lines: list[_Line], problems: list[Problem]) -> dict[str, Proposal]:
    """Each line's context, source model and clean proposal, and how it relates to that proposal. Returns the
    source proposal of each control id whose line has no problem."""
    wanted = {line.context_id for line in lines}
    contexts = {c.external_id: c for c in Context.objects.filter(benchmark=benchmark, external_id__in=wanted)}
    participants = sorted(benchmark.participants.values_list("name", flat=True))
    proposals: dict[tuple[str, str], Proposal] = {
        (p.context.external_id, p.participant.name): p
        for p in Proposal.objects.filter(context__benchmark=benchmark, context__external_id__in=wanted).select_related(
            "context", "participant"
        )
    }
    by_context: dict[str, list[str]] = {}
    for context_id, model in proposals:
        by_context.setdefault(context_id, []).append(model)
    sources: dict[str, Proposal] = {}
    for line in lines:

        def problem(name: str, message: str, line: _Line = line) -> None:
            problems.append(Problem(line.ref.file, line.ref.line, name, message))

        if line.context_id not in contexts:
            with_text = list(
                benchmark.contexts.filter(has_text=True).order_by("external_id").values_list("external_id", flat=True)
            )
            problem(
                "context_id",
                f"unknown context {show(line.context_id)} in {benchmark}; its contexts with text include {_names(with_text)}",
            )
            continue
        if line.source_model not in participants:
            problem(
                "source_model", f"unknown model {show(line.source_model)}; the models of {benchmark} are {_names(participants)}"
            )
            continue
        source = proposals.get((line.context_id, line.source_model))
        if source is None:
            problem(
                "source_model",
                f"{show(line.source_model)} has no proposal for context {show(line.context_id)}; "
                f"the models with one are {_names(sorted(by_context.get(line.context_id, [])))}",
            )
            continue
        found = variant_problems(
            kind=line.kind, target=line.target, content=line.content, prose=line.prose, source=source.content
        )
        for name, message in found:
            problem(name, message)
        if not found:
            sources[line.control_id] = source
    return sources


def _stored_comparable(variant: ControlVariant) -> dict[str, Any]:
    return {
        "kind": variant.kind,
        "target": variant.target,
        "context_id": variant.context.external_id,
        "source_model": variant.source.participant.name,
        "proposal": variant.content,
        "prose": variant.prose,
    }


def controls_import(*, benchmark: Benchmark, path: Path) -> ControlImportSummary:
    """Import the control variants of a JSONL file into ``benchmark``, all or nothing.

    One variant a line: ``{"control_id", "kind", "context_id", "source_model", "target", "proposal": {six
    fields}}`` (a rendering has ``"prose"`` instead of ``"proposal"``; ``target`` is null where there is none;
    optional ``"status"`` and ``"provenance"``, as the export writes them). A control id already stored with the
    same content is left as it is (re-importing a file changes nothing, not even a researcher's review); one
    stored with different content is a problem. Raises :class:`ControlImportError` naming each problem's line
    and field; nothing is written then. A benchmark of another protocol is refused before the file is read.
    """
    refusal = foreign_benchmark(benchmark, LIT2TEST, "diagnostic controls")
    if refusal:
        raise ControlError(refusal)
    parsed = JsonlReading()
    problems = parsed.problems
    lines: list[_Line] = []
    first_line: dict[str, int | None] = {}
    for number, record, clean in read_jsonl(path, parsed):
        ref = Ref(path.name, number)
        line = _parse_line(record, ref, problems)
        if line is None or not clean:
            continue
        if line.control_id in first_line:
            problems.append(
                Problem(
                    ref.file,
                    ref.line,
                    "control_id",
                    f"{show(line.control_id)} repeats line {first_line[line.control_id]}; each control appears once",
                )
            )
            continue
        first_line[line.control_id] = number
        lines.append(line)
    if not parsed.lines and not problems:
        problems.append(Problem(path.name, None, None, "no control lines (the file is empty)"))
    sources = _check_against_benchmark(benchmark, lines, problems) if lines else {}
    summary = ControlImportSummary(benchmark=benchmark, file=path.name)
    with transaction.atomic():
        # Imports into one benchmark queue here (PostgreSQL): each compares its lines with what the one before wrote.
        benchmark.lock()
        new = _variants_new(benchmark, lines, sources, path=path, summary=summary, problems=problems)
        if problems:
            raise ControlImportError(problems)
        ControlVariant.objects.bulk_create(new)
    return summary


def controls_import_line(*, benchmark: Benchmark, path: Path) -> str:
    """:func:`controls_import` as a release import's extra file (``arena.extensions.import_file_register``)."""
    summary = controls_import(benchmark=benchmark, path=path)
    return f"controls.jsonl: {summary.line()}"


def _variants_new(
    benchmark: Benchmark,
    lines: list[_Line],
    sources: dict[str, Proposal],
    *,
    path: Path,
    summary: ControlImportSummary,
    problems: list[Problem],
) -> list[ControlVariant]:
    """The variants of ``lines`` not stored yet; a line whose control id is stored with the same content is counted
    unchanged, one stored with other content is a problem."""
    stored = {
        v.control_id: v
        for v in ControlVariant.objects.filter(
            benchmark=benchmark, control_id__in=[line.control_id for line in lines]
        ).select_related("context", "source__participant")
    }
    new: list[ControlVariant] = []
    for line in lines:
        if line.control_id not in sources:
            continue
        existing = stored.get(line.control_id)
        if existing is not None:
            old, now = _stored_comparable(existing), line.comparable()
            differing = [k for k in now if old[k] != now[k]]
            if differing:
                problems.append(
                    Problem(
                        line.ref.file,
                        line.ref.line,
                        ", ".join("proposal" if k == "proposal" else k for k in differing),
                        f"control {show(line.control_id)} is already in {benchmark} with a different {', '.join(differing)}; "
                        "give the new variant its own control_id",
                    )
                )
            else:
                summary.unchanged += 1
            continue
        source = sources[line.control_id]
        new.append(
            ControlVariant(
                benchmark=benchmark,
                context=source.context,
                source=source,
                control_id=line.control_id,
                kind=line.kind,
                target=line.target,
                content=line.content,
                prose=line.prose or "",
                origin=ControlVariant.Origin.IMPORTED,
                generator=line.generator,
                generator_version=line.generator_version,
                provenance={"file": path.name, "line": line.ref.line}
                | ({"declared": line.provenance} if line.provenance else {}),
                status=line.status,
            )
        )
        summary.created[line.kind] += 1
    return new


# --------------------------------------------------------------------------- export


def control_export_rows(benchmark: Benchmark) -> list[dict[str, Any]]:
    """The benchmark's controls as ``controls.jsonl`` lines, the format :func:`controls_import` reads."""
    rows = []
    for v in (
        ControlVariant.objects.filter(benchmark=benchmark).select_related("context", "source__participant").order_by("control_id")
    ):
        row: dict[str, Any] = {
            "control_id": v.control_id,
            "kind": v.kind,
            "context_id": v.context.external_id,
            "source_model": v.source.participant.name,
            "target": v.target,
        }
        row |= {"prose": v.prose} if v.kind == ControlVariant.Kind.RENDERING else {"proposal": v.content}
        row["status"] = v.status
        row["provenance"] = {"origin": v.origin, "generator": v.generator, "version": v.generator_version}
        rows.append(row)
    return rows
