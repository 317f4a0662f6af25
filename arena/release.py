"""Import and export of Lit2Test release files.

``release_import`` reads every release format present in a folder, checks all of it
before writing anything, and then writes in one transaction: an import is atomic
(all or nothing) and idempotent (a second import of the same files creates nothing).
Problems are reported with the file, the line and the field they concern.

``release_export`` writes what a benchmark holds in the same formats (plus CSV copies),
so that importing an export into an empty database reproduces the benchmark.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

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
from .schemas import PROPOSAL_SCHEMAS, SIX_FIELD

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


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}, line {self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


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


@dataclass
class _Ref:
    file: str
    line: int


@dataclass
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


def _read_jsonl(path: Path, problems: list[Problem]) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(path.name, None, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})"))
        return
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(Problem(path.name, number, None, f"invalid JSON ({exc.msg} at column {exc.colno}); truncated line?"))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(path.name, number, None, f"expected a JSON object, got {type(record).__name__}"))
            continue
        yield number, record


def _text(record: dict[str, Any], key: str, ref: _Ref, problems: list[Problem], *, required: bool = True) -> str:
    """A string field; required ones must be present and non-empty."""
    value = record.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            problems.append(Problem(ref.file, ref.line, key, "missing" if value is None else "empty"))
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not required:
        return str(value)
    if not isinstance(value, str):
        problems.append(Problem(ref.file, ref.line, key, f"must be text, got {type(value).__name__}"))
        return ""
    return value


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


def _parse_contexts(path: Path, parsed: _Parsed) -> None:
    problems = parsed.problems
    for number, record in _read_jsonl(path, problems):
        ref = _Ref(path.name, number)
        before = len(problems)
        context_id = _text(record, "context_id", ref, problems)
        values: dict[str, Any] = {k: _text(record, k, ref, problems) for k in CONTEXT_TEXT_FIELDS}
        values |= {k: _text(record, k, ref, problems, required=False) for k in CONTEXT_OPTIONAL_FIELDS}
        batch = record.get("batch")
        values["batch"] = batch if isinstance(batch, str) and batch else None
        metadata = record.get("pool_metadata", record.get("metadata", {}))
        values["metadata"] = metadata if isinstance(metadata, dict) else {"pool_metadata": metadata}
        papers = record.get("papers")
        if not isinstance(papers, list) or not papers:
            problems.append(Problem(ref.file, ref.line, "papers", "missing" if papers is None else "must be a non-empty list"))
            papers = []
        values["papers"] = []
        for index, paper in enumerate(papers):
            where = f"papers[{index}]"
            if not isinstance(paper, dict):
                problems.append(Problem(ref.file, ref.line, where, "must be an object"))
                continue
            title = paper.get("title")
            if not isinstance(title, str) or not title.strip():
                problems.append(Problem(ref.file, ref.line, f"{where}.title", "missing" if title is None else "empty"))
            item: dict[str, Any] = {"title": title or ""}
            for key in (*PAPER_TEXT_FIELDS, *PAPER_SHORT_FIELDS):
                item[key] = "" if paper.get(key) is None else str(paper.get(key))
            item["source_paper_id"] = str(paper.get("paper_id") or paper.get("source_paper_id") or "")
            known = {"title", "paper_id", "source_paper_id", *PAPER_TEXT_FIELDS, *PAPER_SHORT_FIELDS}
            item["metadata"] = {k: v for k, v in paper.items() if k not in known}
            values["papers"].append(item)
        if len(problems) == before:
            _remember(parsed.contexts, context_id, ref, values, problems, "context")


def _parse_proposals(path: Path, parsed: _Parsed) -> None:
    problems = parsed.problems
    for number, record in _read_jsonl(path, problems):
        ref = _Ref(path.name, number)
        before = len(problems)
        context_id = _text(record, "context_id", ref, problems)
        model = _text(record, "model", ref, problems)
        schema = PROPOSAL_SCHEMAS.get(record.get("schema") or SIX_FIELD.name)
        if schema is None:
            problems.append(Problem(ref.file, ref.line, "schema", f"unknown proposal schema {record.get('schema')!r}"))
            continue
        values = {
            "schema": schema.name,
            # Field problems (missing, empty, wrong type, too long) are the proposal's
            # validation status, not import errors: an invalid proposal is data too.
            "content": {k: record[k] for k in schema.fields if k in record},
            "release_metadata": {k: record[k] for k in RELEASE_PROPOSAL_META if k in record},
        }
        if len(problems) == before:
            _remember(parsed.proposals, (context_id, model), ref, values, problems, "proposal")


def _pair_key(context_id: str, models: tuple[str, str]) -> str:
    first, second = (m.replace(" ", "_") for m in models)
    return f"{context_id}__{first}__vs__{second}"


def _models_field(record: dict[str, Any], key: str, ref: _Ref, problems: list[Problem]) -> tuple[str, str] | None:
    value = record.get(key)
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(m, str) and m.strip() for m in value)):
        problems.append(Problem(ref.file, ref.line, key, "missing" if value is None else "must be a list of two model names"))
        return None
    if value[0] == value[1]:
        problems.append(Problem(ref.file, ref.line, key, f"names the same model twice ({value[0]!r})"))
        return None
    return tuple(sorted(value))  # type: ignore[return-value]


def _fold_label(original: str | None, reverse: str | None) -> tuple[str, str]:
    """(stability_label, folded_winner) in the release's vocabulary."""
    if original is not None and original == reverse and original != TIE:
        return "order-stable", original
    return "order-unstable", "consistency_tie"


def _parse_folded(path: Path, parsed: _Parsed) -> None:
    problems = parsed.problems
    for number, record in _read_jsonl(path, problems):
        ref = _Ref(path.name, number)
        before = len(problems)
        pair_key = _text(record, "pair_id", ref, problems)
        context_id = _text(record, "context_id", ref, problems)
        models = _models_field(record, "model_pair", ref, problems)
        batch = _text(record, "batch", ref, problems, required=False) or None
        winners: dict[str, str] = {}
        for order in ORDERS:
            key = f"gemini_{order}_winner"
            winner = _text(record, key, ref, problems)
            if winner and models and winner not in models and winner.lower() != TIE:
                problems.append(Problem(ref.file, ref.line, key, f"{winner!r} is not one of the pair's models {list(models)}"))
            winners[order] = TIE if winner.lower() == TIE else winner
        if pair_key and context_id and not pair_key.startswith(context_id):
            problems.append(Problem(ref.file, ref.line, "pair_id", f"does not belong to context {context_id!r}"))
        if len(problems) != before or models is None:
            continue
        label, folded = _fold_label(winners["original"], winners["reverse"])
        for key, expected in (("stability_label", label), ("folded_winner", folded)):
            if key in record and record[key] != expected:
                problems.append(
                    Problem(ref.file, ref.line, key, f"says {record[key]!r} but the two ordered verdicts fold to {expected!r}")
                )
        if batch:
            parsed.context_batches.setdefault(context_id, batch)
        for order in ORDERS:
            confidence = record.get(f"gemini_{order}_confidence") or ""
            metadata = {"reverse_judgment_source": record["reverse_judgment_source"]} if (
                order == "reverse" and record.get("reverse_judgment_source")
            ) else {}
            verdict = _Verdict(
                ref=ref,
                pair_key=pair_key,
                context_id=context_id,
                batch=batch,
                models=models,
                order=order,
                judge_model=RELEASE_JUDGE,
                run_label=FOLDED_FILE.removesuffix(".jsonl"),
                run_meta={"provider": JudgeRun.Provider.RECORDED, "is_canonical": True, "run_type": "holistic"},
                status=OrderedJudgment.Status.ACCEPTED,
                winner=winners[order],
                shown_a=None,
                values={"confidence": str(confidence), "metadata": metadata},
                public_id=None,
            )
            _remember(parsed.verdicts, (RELEASE_JUDGE, verdict.run_label, pair_key, order), ref, verdict, problems, "pair")


def _parse_judgments(path: Path, parsed: _Parsed) -> None:
    problems = parsed.problems
    for number, record in _read_jsonl(path, problems):
        ref = _Ref(path.name, number)
        before = len(problems)
        pair_key = _text(record, "pair_id", ref, problems)
        context_id = _text(record, "context_id", ref, problems)
        judge_model = _text(record, "judge_model", ref, problems)
        order = _text(record, "order", ref, problems)
        if order and order not in ORDERS:
            problems.append(Problem(ref.file, ref.line, "order", f"must be 'original' or 'reverse', got {order!r}"))
        status = record.get("status") or OrderedJudgment.Status.ACCEPTED
        if status not in OrderedJudgment.Status.values:
            problems.append(Problem(ref.file, ref.line, "status", f"must be 'accepted' or 'invalid', got {status!r}"))
        shown_a = record.get("system_a")
        winner: str | None = None
        if shown_a is None and record.get("model_pair") is not None:
            # Our export of a verdict whose presentation side was never recorded.
            models = _models_field(record, "model_pair", ref, problems)
            winning = record.get("winning_system")
            if status == "accepted":
                winning = _text(record, "winning_system", ref, problems)
                if winning and models and winning not in models and winning.lower() != TIE:
                    problems.append(
                        Problem(ref.file, ref.line, "winning_system", f"{winning!r} is not one of the pair's models {list(models)}")
                    )
                winner = TIE if (winning or "").lower() == TIE else winning
        else:
            system_a = _text(record, "system_a", ref, problems)
            system_b = _text(record, "system_b", ref, problems)
            models = tuple(sorted((system_a, system_b))) if system_a and system_b else None  # type: ignore[assignment]
            if system_a and system_a == system_b:
                problems.append(Problem(ref.file, ref.line, "system_b", f"is the same model as system_a ({system_a!r})"))
                models = None
            if status == "accepted":
                label = _text(record, "winner", ref, problems)
                if label and label.upper() not in ("A", "B", "TIE"):
                    problems.append(Problem(ref.file, ref.line, "winner", f"must be 'A', 'B' or 'tie', got {label!r}"))
                elif label:
                    winner = {"A": system_a, "B": system_b, "TIE": TIE}[label.upper()]
                    winning = record.get("winning_system")
                    expected = "tie" if winner == TIE else winner
                    if winning is not None and str(winning).lower() != str(expected).lower():
                        problems.append(
                            Problem(
                                ref.file,
                                ref.line,
                                "winning_system",
                                f"{winning!r} is not the model of winner {label!r} ({expected!r}); "
                                f"a winner must be one of the pair's two models",
                            )
                        )
            shown_a = system_a
        if pair_key and context_id and not pair_key.startswith(context_id):
            problems.append(Problem(ref.file, ref.line, "pair_id", f"does not belong to context {context_id!r}"))
        if len(problems) != before or models is None:
            continue
        elapsed = record.get("elapsed_seconds")
        errors = record.get("judge_errors") or []
        values = {
            "confidence": str(record.get("confidence") or ""),
            "main_reason": str(record.get("main_reason") or ""),
            "weakness_a": str(record.get("weakness_a") or ""),
            "weakness_b": str(record.get("weakness_b") or ""),
            "raw_response": str(record.get("raw_response") or ""),
            "errors": errors if isinstance(errors, list) else [errors],
            "attempt": int(record.get("attempt") or 1),
            "latency_seconds": float(elapsed) if isinstance(elapsed, (int, float)) else None,
            "prompt_tokens": record.get("prompt_tokens"),
            "completion_tokens": record.get("completion_tokens"),
            "metadata": record.get("metadata") or {},
        }
        run_label = str(record.get("run_label") or path.name.removesuffix(".jsonl"))
        verdict = _Verdict(
            ref=ref,
            pair_key=pair_key,
            context_id=context_id,
            batch=record.get("batch") or None,
            models=models,
            order=order,
            judge_model=judge_model,
            run_label=run_label,
            run_meta={
                "provider": record.get("provider") or JudgeRun.Provider.RECORDED,
                "is_canonical": bool(record.get("is_canonical", False)),
                "run_type": record.get("run_type") or "holistic",
                "prompt_version": record.get("prompt_version") or "",
            },
            status=status,
            winner=winner,
            shown_a=shown_a,
            values=values,
            public_id=record.get("pair_public_id"),
        )
        if verdict.batch:
            parsed.context_batches.setdefault(context_id, verdict.batch)
        _remember(parsed.verdicts, (judge_model, run_label, pair_key, order), ref, verdict, problems, "judgment")


def _parse(directory: Path) -> tuple[_Parsed, list[str]]:
    parsed = _Parsed()
    found = release_files(directory)
    names = [p.name for paths in found.values() for p in paths]
    for path in found["benchmark"]:
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                raise ValueError("expected a JSON object")
            parsed.benchmark_meta = meta
        except ValueError as exc:
            parsed.problems.append(Problem(path.name, None, None, f"invalid JSON ({exc})"))
    for path in found["contexts"]:
        _parse_contexts(path, parsed)
    for path in found["proposals"]:
        _parse_proposals(path, parsed)
    for path in found["folded"]:
        _parse_folded(path, parsed)
    for path in found["judgments"]:
        _parse_judgments(path, parsed)
    if not names or names == [BENCHMARK_FILE]:
        parsed.problems.append(
            Problem(
                str(directory),
                None,
                None,
                "no release files found (expected contexts.jsonl, proposals.jsonl, corrected_folded_pairs.jsonl "
                "or judgments.jsonl)",
            )
        )
    return parsed, names


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


def release_import(
    *, directory: Path, benchmark_name: str | None = None, version: str | None = None
) -> ImportSummary:
    """Import the release files in ``directory`` into a benchmark, atomically.

    Raises ReleaseImportError, having written nothing, when any file has a problem or
    contradicts what the database already holds.
    """
    parsed, names = _parse(directory)
    meta = parsed.benchmark_meta
    name = benchmark_name or meta.get("name") or "lit2test"
    version = version or str(meta.get("version") or "1")
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
            if context is None:
                context = Context(benchmark=self.benchmark, external_id=context_id)
                self.created["contexts"] += 1
            for key, value in fields.items():
                setattr(context, key, value)
            context.metadata = values["metadata"]
            context.has_text = True
            if batch_name and context.batch_id is None:
                context.batch = self.batches[batch_name]
            context.save()
            existing[context_id] = context
            self.summary.contexts_with_text += 1
            papers = [Paper(context=context, position=i, **paper) for i, paper in enumerate(values["papers"])]
            Paper.objects.bulk_create(papers)
            self.created["papers"] += len(papers)
        for (context_id, _), (ref, _) in self.parsed.proposals.items():
            if context_id not in existing and context_id not in text_ids:
                self.conflict(ref, "context_id", f"no context {context_id!r} in the contexts file or the benchmark")
        missing = []
        for verdict in self.parsed.verdicts.values():
            if verdict.context_id not in existing:
                batch_name = self.parsed.context_batches.get(verdict.context_id)
                context = Context(
                    benchmark=self.benchmark,
                    external_id=verdict.context_id,
                    batch=self.batches.get(batch_name) if batch_name else None,
                )
                existing[verdict.context_id] = context
                missing.append(context)
        Context.objects.bulk_create(missing)
        self.created["contexts"] += len(missing)
        self.contexts = existing

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
        existing = {
            (p.context.external_id, p.participant.name): p
            for p in Proposal.objects.filter(context__benchmark=self.benchmark).select_related("context", "participant")
        }
        new = []
        for key, (ref, values) in self.parsed.proposals.items():
            if key[0] not in self.contexts:
                continue  # reported in _contexts
            stored = existing.get(key)
            if stored is not None:
                if (stored.content, stored.release_metadata) != (values["content"], values["release_metadata"]):
                    self.conflict(ref, "content", f"proposal of {key[1]!r} on {key[0]!r} is already stored with different text")
                continue
            schema = PROPOSAL_SCHEMAS[values["schema"]]
            problems = schema.validate(values["content"])
            new.append(
                Proposal(
                    context=self.contexts[key[0]],
                    participant=self.participants[key[1]],
                    schema=schema.name,
                    content=values["content"],
                    validation_status=Proposal.Status.INVALID if problems else Proposal.Status.VALID,
                    validation_errors=problems,
                    release_metadata=values["release_metadata"],
                )
            )
        Proposal.objects.bulk_create(new)
        self.created["proposals"] += len(new)

    def _pairs(self) -> None:
        existing = {
            p.internal_key: p
            for p in self.benchmark.pairs.select_related("participant_a", "participant_b", "context")
        }
        new: dict[str, CanonicalPair] = {}
        for verdict in self.parsed.verdicts.values():
            pair = existing.get(verdict.pair_key) or new.get(verdict.pair_key)
            if pair is not None:
                stored_models = tuple(sorted((pair.participant_a.name, pair.participant_b.name)))
                if stored_models != verdict.models:
                    self.conflict(
                        verdict.ref,
                        "model_pair" if verdict.shown_a is None else "system_a",
                        f"pair {verdict.pair_key!r} is between {list(stored_models)}, not {list(verdict.models)}",
                    )
                elif pair.context.external_id != verdict.context_id:
                    self.conflict(verdict.ref, "context_id", f"pair {verdict.pair_key!r} belongs to another context")
                continue
            first, second = (self.participants[m] for m in verdict.models)
            if orientation_flipped(self.benchmark.orientation_seed, verdict.pair_key):
                first, second = second, first
            pair = CanonicalPair(
                benchmark=self.benchmark,
                context=self.contexts[verdict.context_id],
                participant_a=first,
                participant_b=second,
                internal_key=verdict.pair_key,
            )
            if verdict.public_id:
                pair.public_id = verdict.public_id
            new[verdict.pair_key] = pair
        # A public id is unique across the database: an export imported as another benchmark or version
        # keeps ids only where they are free, and gets fresh random ones elsewhere.
        wanted = [p.public_id for p in new.values()]
        taken = set(CanonicalPair.objects.filter(public_id__in=wanted).values_list("public_id", flat=True))
        for pair in new.values():
            if pair.public_id in taken:
                pair.public_id = new_public_id()
        CanonicalPair.objects.bulk_create(new.values())
        self.created["pairs"] += len(new)
        self.pairs = existing | new

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
        runs[key] = run
        return run

    def _judgments(self) -> None:
        runs: dict[tuple[str, str], JudgeRun] = {}
        for verdict in self.parsed.verdicts.values():
            self._run(verdict, runs)
        stored = {
            (j.run_id, j.pair_id, j.order): j
            for j in OrderedJudgment.objects.filter(run__in=[r for r in runs.values() if r.pk], status="accepted")
            .select_related("winner")
        }
        new = []
        for verdict in self.parsed.verdicts.values():
            run = runs[(verdict.judge_model, verdict.run_label)]
            pair = self.pairs[verdict.pair_key]
            if pair.pk is None:
                continue  # a conflicting pair, reported already
            previous = stored.get((run.pk, pair.pk, verdict.order))
            winner_name = None if verdict.winner in (None, TIE) else verdict.winner
            if previous is not None and verdict.status == OrderedJudgment.Status.ACCEPTED:
                previous_name = previous.winner.name if previous.winner else None
                if (previous_name, previous.is_tie) != (winner_name, verdict.winner == TIE):
                    self.conflict(
                        verdict.ref,
                        "winner",
                        f"{run} already holds a different {verdict.order} verdict for {verdict.pair_key!r}",
                    )
                continue
            if previous is None and verdict.status == OrderedJudgment.Status.INVALID:
                if run.judgments.filter(
                    pair=pair, order=verdict.order, status="invalid", attempt=verdict.values["attempt"]
                ).exists():
                    continue
            shown_a = self.participants[verdict.shown_a] if verdict.shown_a else None
            if verdict.winner == TIE:
                label = OrderedJudgment.Verdict.TIE
            elif shown_a is None or winner_name is None:
                label = None
            else:
                label = OrderedJudgment.Verdict.A if winner_name == shown_a.name else OrderedJudgment.Verdict.B
            new.append(
                OrderedJudgment(
                    run=run,
                    pair=pair,
                    order=verdict.order,
                    status=verdict.status,
                    shown_a=shown_a,
                    verdict=label,
                    is_tie=verdict.winner == TIE,
                    winner=self.participants[winner_name] if winner_name else None,
                    **verdict.values,
                )
            )
        OrderedJudgment.objects.bulk_create(new)
        self.created["judgments"] += len(new)


# --------------------------------------------------------------------------- export


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


def release_export(*, benchmark: Benchmark, directory: Path) -> dict[str, int]:
    """Write the benchmark to ``directory`` as JSONL (importable) and CSV. Returns row counts."""
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
            frame = pd.json_normalize(table) if table else pd.DataFrame()
            frame.to_csv(directory / f"{name}.csv", index=False)
        counts[name] = len(table)
    return counts
