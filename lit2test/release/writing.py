"""Writing a Lit2Test release into a benchmark: atomic (all or nothing) and idempotent (a second import of the same
files creates nothing). What the files hold is read and checked first (``lit2test.release.reading``); what
contradicts the database (a context stored with other text, a pair between other models) is a problem too, and
the transaction rolls back. Verdict-only contexts, proposals, pairs and verdicts stream in through COPY
(``arena.bulk``).
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.db import transaction

from arena.blindness import benchmark_redact
from arena.bulk import rows_insert, tables_analyze
from arena.extensions import import_files, import_files_in
from arena.jsonl import Problem, Ref, ReleaseImportError, collector_paused
from arena.models import (
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
from arena.orientation import orientation_flipped
from arena.protocols import foreign_benchmark
from arena.schemas import PROPOSAL_SCHEMAS

from ..models import PROTOCOL
from .reading import (
    CONTEXT_OPTIONAL_FIELDS,
    CONTEXT_TEXT_FIELDS,
    DEFAULT_BENCHMARK,
    PAPER_SHORT_FIELDS,
    PAPER_TEXT_FIELDS,
    TIE,
    ImportSummary,
    Parsed,
    Verdict,
    arguments_check,
    models_check,
    release_parse,
)


def release_import(
    *, directory: Path, benchmark_name: str | None = None, version: str | None = None, source: str | None = None
) -> ImportSummary:
    """Import the release files in ``directory`` into a benchmark, atomically. ``source`` names the files in a
    problem about the whole folder (an upload says "the uploaded files", not the server's temporary folder).

    Raises ReleaseImportError, having written nothing, when any file has a problem or
    contradicts what the database already holds.
    """
    with collector_paused():
        return _release_import(directory=directory, benchmark_name=benchmark_name, version=version, source=source)


def _release_import(*, directory: Path, benchmark_name: str | None, version: str | None, source: str | None) -> ImportSummary:
    parsed, names = release_parse(directory, source=source)
    arguments_check(benchmark_name, version, parsed.problems)
    if parsed.problems:
        raise ReleaseImportError(parsed.problems)  # before the database is touched
    meta = parsed.benchmark_meta
    name = benchmark_name or meta.get("name") or DEFAULT_BENCHMARK
    version = version or meta.get("version") or "1"
    existing = Benchmark.objects.filter(name=name, version=version).first()
    refusal = foreign_benchmark(existing, PROTOCOL, "Lit2Test release files") if existing is not None else None
    if refusal:
        raise ReleaseImportError([Problem("arguments", None, "benchmark", refusal)])
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
        models_check(parsed, known)
        if parsed.problems:
            raise ReleaseImportError(parsed.problems)
        summary = ImportSummary(benchmark=benchmark, files=names)
        writer = _Writer(benchmark, parsed, summary)
        writer.write()
        if parsed.problems:
            raise ReleaseImportError(parsed.problems)  # rolls the transaction back
        for name, path in import_files_in(directory).items():
            # An export's other files (its controls.jsonl) go in with it; a problem there rolls everything back.
            summary.extras.append(import_files[name](benchmark=benchmark, path=path))
    tables_analyze(OrderedJudgment, CanonicalPair, Proposal, Context)
    return summary


def _name_key(name: str) -> str:
    """A model name as people read it: Unicode compatibility form, case folded."""
    return unicodedata.normalize("NFKC", name).casefold()


class _Writer:
    """Applies parsed records to one benchmark; collects conflicts with stored data."""

    def __init__(self, benchmark: Benchmark, parsed: Parsed, summary: ImportSummary) -> None:
        self.benchmark = benchmark
        self.parsed = parsed
        self.summary = summary
        self.created: dict[str, int] = defaultdict(int)

    def conflict(self, ref: Ref, field_name: str | None, message: str) -> None:
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
        """The contexts: those the files give text (with their papers), then the verdict-only ones; proposals of a
        context that neither the files nor the benchmark hold are problems."""
        existing = {c.external_id: c for c in self.benchmark.contexts.all()}
        new_with_text = self._contexts_with_text(existing)
        Context.objects.bulk_create([c for c, _ in new_with_text if c.pk is None])
        papers = [Paper(context=c, position=i, **paper) for c, items in new_with_text for i, paper in enumerate(items)]
        Paper.objects.bulk_create(papers, batch_size=2000)
        self.created["papers"] += len(papers)
        text_ids = set(self.parsed.contexts)
        for (context_id, _), (ref, _) in self.parsed.proposals.items():
            if context_id not in existing and context_id not in text_ids:
                self.conflict(ref, "context_id", f"no context {context_id!r} in the contexts file or the benchmark")
        self.context_ids = {external_id: c.pk for external_id, c in existing.items()}
        self._verdict_only_contexts()

    def _contexts_with_text(self, existing: dict[str, Context]) -> list[tuple[Context, list[dict[str, Any]]]]:
        """The contexts of the contexts files not stored with text yet, each with its papers, given their text (a new
        one unsaved, one stored verdict-only saved); one stored with text is compared with the file. ``existing``
        (external id -> context) gains the new ones."""
        new_with_text: list[tuple[Context, list[dict[str, Any]]]] = []
        for context_id, (ref, values) in self.parsed.contexts.items():
            context = existing.get(context_id)
            if context is not None and context.has_text:
                self._stored_context_compare(context, context_id, ref, values)
                continue
            context = self._context_text_set(context, context_id, values)
            existing[context_id] = context
            self.summary.contexts_with_text += 1
            new_with_text.append((context, values["papers"]))
        return new_with_text

    def _stored_context_compare(self, context: Context, context_id: str, ref: Ref, values: dict[str, Any]) -> None:
        """A context stored with text must have the file's text and papers."""
        given = {k: values[k] for k in (*CONTEXT_TEXT_FIELDS, *CONTEXT_OPTIONAL_FIELDS)} | {"metadata": values["metadata"]}
        stored = {k: getattr(context, k) for k in given}
        if stored != given:
            differing = sorted(k for k in stored if stored[k] != given[k])
            self.conflict(ref, ", ".join(differing), f"context {context_id!r} is already stored with different text")
        elif self._stored_papers(context) != values["papers"]:
            self.conflict(ref, "papers", f"context {context_id!r} is already stored with different papers")

    def _context_text_set(self, context: Context | None, context_id: str, values: dict[str, Any]) -> Context:
        """A new context (None: made here, not saved) or a verdict-only one (saved) given the file's text and batch."""
        batch_name = values["batch"] or self.parsed.context_batches.get(context_id)
        is_new = context is None
        if context is None:
            context = Context(benchmark=self.benchmark, external_id=context_id)
            self.created["contexts"] += 1
        for key in (*CONTEXT_TEXT_FIELDS, *CONTEXT_OPTIONAL_FIELDS):
            setattr(context, key, values[key])
        context.metadata = values["metadata"]
        context.has_text = True
        if batch_name and context.batch_id is None:
            context.batch = self.batches[batch_name]
        if not is_new:
            context.save()  # a verdict-only context gets its text (rare: one row per context)
        return context

    def _verdict_only_contexts(self) -> None:
        """The contexts only verdicts name (most of a release's): written in one COPY, their ids read back by name."""
        missing: dict[str, int | None] = {}
        for verdict in self.parsed.verdicts.values():
            if verdict.context_id not in self.context_ids and verdict.context_id not in missing:
                batch_name = self.parsed.context_batches.get(verdict.context_id)
                missing[verdict.context_id] = self.batches[batch_name].pk if batch_name else None
        if missing:
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
        # A new name that differs from another only by case or Unicode form ("claude-sonnet-4.6") would be a model
        # of its own that reads as the other one: refused, naming the one meant.
        seen = {_name_key(name): name for name in existing}
        for name in sorted(names - set(existing)):
            like = seen.setdefault(_name_key(name), name)
            if like != name:
                where = next((ref for (_, m), (ref, _) in self.parsed.proposals.items() if m == name), Ref("models", None))
                self.conflict(
                    where,
                    "model",
                    f"model {name!r} differs from {like!r} only by case or Unicode form; write it as {like!r} "
                    f"(names are compared exactly)",
                )
        if self.parsed.problems:
            raise ReleaseImportError(self.parsed.problems)
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

        # One pair per context and two models, whatever its id: a pair_id spelt otherwise (a name's space kept, the
        # models the other way round) made a second pair of the same two proposals, and a second judge's verdicts on it
        # matched nothing of the first's.
        members = {(context, models): key for key, (_, models, context) in pairs.items()}

        def new_rows() -> Iterator[tuple[Any, ...]]:
            """The new pairs' rows, made while COPY sends them (the server stores while this loop runs)."""
            seed, benchmark_pk = self.benchmark.orientation_seed, self.benchmark.pk
            participant_ids = {name: p.pk for name, p in self.participants.items()}
            for verdict in self.parsed.verdicts.values():
                known = pairs.get(verdict.pair_key)
                held = members.get((verdict.context_id, verdict.models))
                if known is None and held is not None:  # a stored key is taken as stored (older duplicates included)
                    self.conflict(
                        verdict.ref,
                        "pair_id",
                        f"pair {verdict.pair_key!r} compares {list(verdict.models)} in context {verdict.context_id!r}, "
                        f"which pair {held!r} already does (one pair per context and two models); use that pair_id",
                    )
                    continue
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
                members[(verdict.context_id, verdict.models)] = verdict.pair_key
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

    def _run(self, verdict: Verdict, runs: dict[tuple[str, str], JudgeRun]) -> JudgeRun:
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
