"""Reading a Lit2Test release: every release format present in a folder, checked before anything is written.

Every value is checked before the database sees it: its type, its length against the column it goes to, its range
against the integer column, and, anywhere in a line, what the database cannot store (the JSONL toolkit,
``arena.jsonl``). Problems name the file, the line and the field. :func:`release_parse` returns what the files hold
(:class:`Parsed`); ``lit2test.release.writing`` writes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from arena.jsonl import (
    EXTERNAL_ID,
    MODEL_NAME,
    Column,
    Fields,
    JsonlReading,
    Problem,
    Ref,
    check_json,
    column_integer_range,
    column_max_length,
    json_loads,
    json_type,
    read_jsonl,
    show,
)
from arena.models import Batch, Benchmark, CanonicalPair, Context, JudgeRun, OrderedJudgment, Paper, Proposal
from arena.schemas import PROPOSAL_SCHEMAS, SIX_FIELD, VERDICT_SCALES

RELEASE_JUDGE = "Gemini-3.1-Pro-Preview"
DEFAULT_BENCHMARK = "lit2test"  # the name of a benchmark imported without one
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

# new_public_id() makes 16 hex digits; shorter ids would be guessable, and anything but hex could
# carry a model's name past the blindness rule (public ids are what annotators see).
PUBLIC_ID_MIN_HEX = 16
_HTTP_URL = URLValidator(schemes=["http", "https"])

BATCH_NAME: Column = (Batch, "name")
PAIR_KEY: Column = (CanonicalPair, "internal_key")
PUBLIC_ID: Column = (CanonicalPair, "public_id")
CONFIDENCE: Column = (OrderedJudgment, "confidence")


@dataclass
class ImportSummary:
    benchmark: Benchmark
    files: list[str]
    created: dict[str, int] = field(default_factory=dict)
    contexts_with_text: int = 0
    extras: list[str] = field(default_factory=list)  # the summary lines of the extra files imported with it

    def line(self) -> str:
        c = self.created
        if not any(c.values()):
            head = f"nothing new: {', '.join(self.files)} already imported into {self.benchmark}"
        else:
            head = (
                f"created {c['contexts']} contexts ({self.contexts_with_text} with text), {c['papers']} papers, "
                f"{c['participants']} participants, {c['proposals']} proposals, {c['pairs']} pairs, "
                f"{c['judgments']} ordered judgments in {c['runs']} run(s) of {self.benchmark}"
            )
        return "; ".join([head, *self.extras])


@dataclass(slots=True)
class Verdict:
    ref: Ref
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
class Parsed(JsonlReading):
    """What a release's files hold, with every problem found (``problems``) and the lines read (``lines``)."""

    benchmark_meta: dict[str, Any] = field(default_factory=dict)
    contexts: dict[str, tuple[Ref, dict[str, Any]]] = field(default_factory=dict)
    proposals: dict[tuple[str, str], tuple[Ref, dict[str, Any]]] = field(default_factory=dict)
    verdicts: dict[tuple[str, str, str, str], Verdict] = field(default_factory=dict)
    context_batches: dict[str, str] = field(default_factory=dict)
    public_ids: dict[str, str] = field(default_factory=dict)  # pair key -> public id given by the release


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


def remember(table: dict, key: Any, ref: Ref, item: Any, problems: list[Problem], what: str) -> None:
    """Keep the first record for ``key``; an identical repeat is ignored, a different one is an error."""
    if key not in table:
        table[key] = item if isinstance(item, Verdict) else (ref, item)
        return
    first = table[key]
    first_ref, first_value = (first.ref, first.comparable()) if isinstance(first, Verdict) else first
    new_value = item.comparable() if isinstance(item, Verdict) else item
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


def _parse_benchmark(path: Path, parsed: Parsed) -> None:
    """benchmark.json: one JSON object whose values become the benchmark's settings."""
    problems = parsed.problems
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(Problem(path.name, line, None, f"not UTF-8 text ({exc.reason})"))
        return
    loaded = json_loads(text)
    meta = loaded.value
    if loaded.problem:
        problems.append(Problem(path.name, loaded.line, None, loaded.problem.removesuffix("; truncated line?")))
        return
    if not isinstance(meta, dict):
        problems.append(Problem(path.name, None, None, f"expected a JSON object, got {json_type(meta)}"))
        return
    ref = Ref(path.name, None)
    if not check_json(meta, ref, problems):
        return
    f = Fields(meta, ref, problems)
    values: dict[str, Any] = {
        "name": f.text("name", (Benchmark, "name"), identifier=True, required=False, numbers=True),
        "version": f.text("version", (Benchmark, "version"), identifier=True, required=False, numbers=True),
        "description": f.text("description", required=False, keep_blank=True),
        "canonical_judge": f.text("canonical_judge", (Benchmark, "canonical_judge"), required=False),
        "verdict_rule": f.choice("verdict_rule", list(VERDICT_SCALES), default=""),
        "proposal_schema": f.choice("proposal_schema", list(PROPOSAL_SCHEMAS), default=""),
        "orientation_seed": f.integer("orientation_seed", (Benchmark, "orientation_seed")),
    }
    parsed.benchmark_meta = {k: v for k, v in values.items() if k in meta and v not in (None, "")}
    if "description" in meta:
        parsed.benchmark_meta["description"] = values["description"]


def _parse_papers(f: Fields) -> list[dict[str, Any]]:
    papers = f.record.get("papers")
    if not isinstance(papers, list) or not papers:
        f.problem("papers", "missing" if papers is None else "must be a non-empty list")
        return []
    most = column_integer_range(Paper, "position")[1] + 1
    if len(papers) > most:
        f.problem("papers", f"has {len(papers)} papers; the limit is {most}")
        return []
    known = {"title", "paper_id", "source_paper_id", *PAPER_TEXT_FIELDS, *PAPER_SHORT_FIELDS}
    items = []
    for index, paper in enumerate(papers):
        where = f"papers[{index}]"
        if not isinstance(paper, dict):
            f.problem(where, "must be an object")
            continue
        p = Fields(paper, f.ref, f.problems, prefix=f"{where}.")
        item: dict[str, Any] = {"title": p.text("title")}
        for key in PAPER_TEXT_FIELDS:
            item[key] = p.text(key, required=False, numbers=True, keep_blank=True)
        for key in PAPER_SHORT_FIELDS:
            item[key] = p.text(key, (Paper, key), required=False, numbers=True, keep_blank=True)
        if item["url"]:
            try:
                _HTTP_URL(item["url"])
            except ValidationError:
                # It becomes a link on the annotators' page: javascript: and the like must not.
                p.problem("url", f"must be an http or https URL, got {show(item['url'])}")
        id_key = "paper_id" if paper.get("paper_id") else "source_paper_id"
        item["source_paper_id"] = p.text(id_key, (Paper, "source_paper_id"), required=False, numbers=True, keep_blank=True)
        item["metadata"] = {k: v for k, v in paper.items() if k not in known}
        items.append(item)
    return items


def _parse_contexts(path: Path, parsed: Parsed) -> None:
    problems = parsed.problems
    for number, record, clean in read_jsonl(path, parsed):
        ref = Ref(path.name, number)
        before = len(problems)
        f = Fields(record, ref, problems)
        context_id = f.text("context_id", EXTERNAL_ID, identifier=True)
        values: dict[str, Any] = {k: f.text(k) for k in CONTEXT_TEXT_FIELDS}
        values |= {k: f.text(k, (Context, k), required=False, numbers=True) for k in CONTEXT_OPTIONAL_FIELDS}
        values["batch"] = f.text("batch", BATCH_NAME, required=False, numbers=True, identifier=True) or None
        metadata = record.get("pool_metadata", record.get("metadata", {}))
        values["metadata"] = metadata if isinstance(metadata, dict) else {"pool_metadata": metadata}
        values["papers"] = _parse_papers(f)
        if clean and len(problems) == before:
            remember(parsed.contexts, context_id, ref, values, problems, "context")


def _parse_proposals(path: Path, parsed: Parsed) -> None:
    problems = parsed.problems
    for number, record, clean in read_jsonl(path, parsed):
        ref = Ref(path.name, number)
        before = len(problems)
        f = Fields(record, ref, problems)
        context_id = f.text("context_id", EXTERNAL_ID, identifier=True)
        model = f.text("model", MODEL_NAME, identifier=True)
        schema_name = f.text("schema", (Proposal, "schema"), required=False)
        schema = PROPOSAL_SCHEMAS.get(schema_name or SIX_FIELD.name)
        if schema is None:
            f.problem("schema", f"unknown proposal schema {schema_name!r}")
            continue
        values = {
            "schema": schema.name,
            # Field problems (missing, empty, wrong type, too long) are the proposal's
            # validation status, not import errors: an invalid proposal is data too.
            "content": {k: record[k] for k in schema.fields if k in record},
            "release_metadata": {k: record[k] for k in RELEASE_PROPOSAL_META if k in record},
        }
        if clean and len(problems) == before:
            remember(parsed.proposals, (context_id, model), ref, values, problems, "proposal")


def _pair_key(context_id: str, models: tuple[str, str]) -> str:
    first, second = (m.replace(" ", "_") for m in models)
    return f"{context_id}__{first}__vs__{second}"


def fold_label(original: str | None, reverse: str | None) -> tuple[str, str]:
    """(stability_label, folded_winner) in the release's vocabulary."""
    if original is not None and original == reverse and original != TIE:
        return "order-stable", original
    return "order-unstable", "consistency_tie"


# What the folded file's line fields become: (pair key, context id, sorted models, batch, winners, confidences,
# reverse judgment source), winners and confidences by order.
FoldedLine = tuple[str, str, tuple[str, str], str | None, dict[str, str], dict[str, str], str]


#: (order, winner field, confidence field) of the folded line's two ordered verdicts, named once for the fast path.
_FOLDED_VERDICT_FIELDS = tuple((order, f"gemini_{order}_winner", f"gemini_{order}_confidence") for order in ORDERS)


def folded_limits() -> tuple[int, int, int, int, int]:
    """Column limits of a folded line's values: pair key, context id, model name, batch, confidence."""
    return tuple(column_max_length(*c) or 0 for c in (PAIR_KEY, EXTERNAL_ID, MODEL_NAME, BATCH_NAME, CONFIDENCE))  # type: ignore[return-value]


def folded_line_plain(record: dict[str, Any], limits: tuple[int, int, int, int, int]) -> FoldedLine | None:
    """The values of a folded line whose every field is plainly right, else None.

    The fast path of :func:`_parse_folded` (about 56,000 lines in a 2,000-context release): only type tests,
    lengths and comparisons, so that a line passing them is one on which :func:`folded_line_checked` finds no problem
    and reads the same values. Anything unusual (a number for a text, a blank or unknown winner, a label that
    contradicts the verdicts, too long a name) returns None, and the checked path says what is wrong. The pair's key,
    context and models are checked here, the rest of the line in :func:`_plain_batch_and_verdicts` (one call per line).
    """
    get = record.get
    pair_key, context_id, models = get("pair_id"), get("context_id"), get("model_pair")
    pair_limit, context_limit, model_limit, batch_limit, confidence_limit = limits
    if not (
        type(pair_key) is str
        and type(context_id) is str
        and len(pair_key) <= pair_limit
        and len(context_id) <= context_limit
        and pair_key.strip()
        and context_id.strip()
        and pair_key.startswith(context_id)
        and type(models) is list
        and len(models) == 2
    ):
        return None
    first, second = models
    if not (
        type(first) is str
        and type(second) is str
        and first != second
        and len(first) <= model_limit
        and len(second) <= model_limit
        and first.strip()
        and second.strip()
    ):
        return None
    rest = _plain_batch_and_verdicts(get, first, second, batch_limit, confidence_limit)
    if rest is None:
        return None
    pair: tuple[str, str] = (first, second) if first < second else (second, first)
    return (pair_key, context_id, pair, *rest)


def _plain_batch_and_verdicts(
    get: Any, first: str, second: str, batch_limit: int, confidence_limit: int
) -> tuple[str | None, dict[str, str], dict[str, str], str] | None:
    """(batch, winners, confidences, reverse judgment source) of a folded line of models ``first`` and ``second``
    (``get`` is the line's ``dict.get``) whose batch, confidences and source are plain text within their columns, whose
    two ordered verdicts each name one of the models or a tie, and whose labels, if given, agree with them; else None."""
    batch = get("batch")
    if batch is not None:
        if type(batch) is not str or len(batch) > batch_limit:
            return None
        batch = batch if batch.strip() else None
    winners: dict[str, str] = {}
    confidences: dict[str, str] = {}
    for order, winner_key, confidence_key in _FOLDED_VERDICT_FIELDS:
        winner, confidence = get(winner_key), get(confidence_key, "")
        if type(winner) is not str or type(confidence) is not str or len(confidence) > confidence_limit:
            return None
        if winner.lower() == TIE:
            winner = TIE
        elif winner != first and winner != second:  # also a blank one
            return None
        winners[order], confidences[order] = winner, confidence
    source = get("reverse_judgment_source")
    if source is None:
        source = ""
    elif type(source) is not str:
        return None
    label, folded = fold_label(winners["original"], winners["reverse"])
    if get("stability_label", label) != label or get("folded_winner", folded) != folded:
        return None
    return batch, winners, confidences, source if source.strip() else ""


def folded_line_checked(record: dict[str, Any], ref: Ref, problems: list[Problem], clean: bool) -> FoldedLine | None:
    """The values of a folded line, every problem of it reported (None when a field cannot be read)."""
    before = len(problems)
    f = Fields(record, ref, problems)
    pair_key = f.text("pair_id", PAIR_KEY, identifier=True)
    context_id = f.text("context_id", EXTERNAL_ID, identifier=True)
    models = f.models("model_pair")
    batch = f.text("batch", BATCH_NAME, required=False, numbers=True, identifier=True) or None
    winners: dict[str, str] = {}
    confidences: dict[str, str] = {}
    for order in ORDERS:
        key = f"gemini_{order}_winner"
        winner = f.text(key)
        if winner and models and winner not in models and winner.lower() != TIE:
            f.problem(key, f"{winner!r} is not one of the pair's models {list(models)}")
        winners[order] = TIE if winner.lower() == TIE else winner
        confidences[order] = f.text(f"gemini_{order}_confidence", CONFIDENCE, required=False, numbers=True, keep_blank=True)
    source = f.text("reverse_judgment_source", required=False)
    if pair_key and context_id and not pair_key.startswith(context_id):
        f.problem("pair_id", f"does not belong to context {context_id!r}")
    if not clean or len(problems) != before or models is None:
        return None
    label, folded = fold_label(winners["original"], winners["reverse"])
    for key, expected in (("stability_label", label), ("folded_winner", folded)):
        if key in record and record[key] != expected:
            f.problem(key, f"says {record[key]!r} but the two ordered verdicts fold to {expected!r}")
    # Kept even with a wrong label (the import fails anyway): a later line of the same pair is compared with it.
    return pair_key, context_id, models, batch, winners, confidences, source


def _parse_folded(path: Path, parsed: Parsed) -> None:
    """corrected_folded_pairs.jsonl: each line is a canonical pair with both ordered verdicts of the release's
    judge, so it becomes two verdicts. Most lines take the plain path (:func:`folded_line_plain`); objects that every
    verdict of the file holds alike (the run's settings, the metadata) are shared, not made per line."""
    problems = parsed.problems
    run_label = FOLDED_FILE.removesuffix(".jsonl")
    run_meta = {"provider": JudgeRun.Provider.RECORDED, "is_canonical": True, "run_type": "holistic"}
    no_metadata: dict[str, Any] = {}
    source_metadata: dict[str, dict[str, Any]] = {}
    accepted = OrderedJudgment.Status.ACCEPTED
    verdicts = parsed.verdicts
    limits = folded_limits()
    name = path.name
    for number, record, clean in read_jsonl(path, parsed):
        ref = Ref(name, number)
        line = (folded_line_plain(record, limits) if clean else None) or folded_line_checked(record, ref, problems, clean)
        if line is None:
            continue
        pair_key, context_id, models, batch, winners, confidences, source = line
        if batch:
            parsed.context_batches.setdefault(context_id, batch)
        for order in ORDERS:
            if order == "reverse" and source:
                metadata = source_metadata.setdefault(source, {"reverse_judgment_source": source})
            else:
                metadata = no_metadata
            verdict = Verdict(
                ref=ref,
                pair_key=pair_key,
                context_id=context_id,
                batch=batch,
                models=models,
                order=order,
                judge_model=RELEASE_JUDGE,
                run_label=run_label,
                run_meta=run_meta,
                status=accepted,
                winner=winners[order],
                shown_a=None,
                values={"confidence": confidences[order], "metadata": metadata},
                public_id=None,
            )
            key = (RELEASE_JUDGE, run_label, pair_key, order)
            if key in verdicts:
                remember(verdicts, key, ref, verdict, problems, "pair")
            else:
                verdicts[key] = verdict


def _public_id(f: Fields) -> str | None:
    value = f.text("pair_public_id", PUBLIC_ID, required=False)
    if not value:
        return None
    most = column_max_length(*PUBLIC_ID)
    if not re.fullmatch(f"[0-9a-f]{{{PUBLIC_ID_MIN_HEX},{most}}}", value):
        f.problem(
            "pair_public_id",
            f"must be {PUBLIC_ID_MIN_HEX} to {most} lowercase hexadecimal characters (a random id that names no model), "
            f"got {show(value)}",
        )
        return None
    return value


def _parse_judgments(path: Path, parsed: Parsed) -> None:
    """judgments.jsonl: one ordered verdict a line, with the run it belongs to. Each line's fields are read in a fixed
    order (its problems are reported in that order): the pair, order and status, the sides and the winner
    (:func:`_judgment_sides`), the stored values, the run, the batch and the public id."""
    problems = parsed.problems
    for number, record, clean in read_jsonl(path, parsed):
        ref = Ref(path.name, number)
        before = len(problems)
        f = Fields(record, ref, problems)
        pair_key = f.text("pair_id", PAIR_KEY, identifier=True)
        context_id = f.text("context_id", EXTERNAL_ID, identifier=True)
        judge_model = f.text("judge_model", (JudgeRun, "judge_model"), identifier=True)
        order, status = _judgment_order_and_status(f)
        models, winner, shown_a = _judgment_sides(f, record, status)
        if pair_key and context_id and not pair_key.startswith(context_id):
            f.problem("pair_id", f"does not belong to context {context_id!r}")
        values = _judgment_values(f, record)
        run_label, run_meta = _judgment_run(f, path)
        batch = f.text("batch", BATCH_NAME, required=False, numbers=True, identifier=True) or None
        public_id = _public_id(f)
        if not clean or len(problems) != before or models is None:
            continue
        verdict = Verdict(
            ref=ref,
            pair_key=pair_key,
            context_id=context_id,
            batch=batch,
            models=models,
            order=order,
            judge_model=judge_model,
            run_label=run_label,
            run_meta=run_meta,
            status=status,
            winner=winner,
            shown_a=shown_a,
            values=values,
            public_id=public_id,
        )
        if verdict.batch:
            parsed.context_batches.setdefault(context_id, verdict.batch)
        remember(parsed.verdicts, (judge_model, run_label, pair_key, order), ref, verdict, problems, "judgment")


def _judgment_order_and_status(f: Fields) -> tuple[str, str]:
    """The line's order ('original' or 'reverse') and status (accepted unless it says otherwise)."""
    order = f.text("order")
    if order and order not in ORDERS:
        f.problem("order", f"must be 'original' or 'reverse', got {order!r}")
    status = f.text("status", required=False) or OrderedJudgment.Status.ACCEPTED
    if status not in OrderedJudgment.Status.values:
        f.problem("status", f"must be 'accepted' or 'invalid', got {status!r}")
    return order, status


def _judgment_sides(f: Fields, record: dict[str, Any], status: str) -> tuple[tuple[str, str] | None, str | None, str | None]:
    """(sorted models or None, winner, the model shown as A): from ``model_pair`` and ``winning_system`` in our export
    of a verdict whose presentation side was never recorded, else from ``system_a``, ``system_b`` and ``winner``."""
    if record.get("system_a") is None and record.get("model_pair") is not None:
        return _exported_sides(f, status)
    return _shown_sides(f, record, status)


def _exported_sides(f: Fields, status: str) -> tuple[tuple[str, str] | None, str | None, None]:
    models = f.models("model_pair")
    winner: str | None = None
    if status == "accepted":
        winning = f.text("winning_system")
        if winning and models and winning not in models and winning.lower() != TIE:
            f.problem("winning_system", f"{winning!r} is not one of the pair's models {list(models)}")
        winner = TIE if winning.lower() == TIE else winning
    return models, winner, None


def _shown_sides(f: Fields, record: dict[str, Any], status: str) -> tuple[tuple[str, str] | None, str | None, str]:
    system_a = f.text("system_a", MODEL_NAME, identifier=True)
    system_b = f.text("system_b", MODEL_NAME, identifier=True)
    models = tuple(sorted((system_a, system_b))) if system_a and system_b else None
    if system_a and system_a == system_b:
        f.problem("system_b", f"is the same model as system_a ({system_a!r})")
        models = None
    winner = _shown_winner(f, record, system_a, system_b, models) if status == "accepted" else None
    return models, winner, system_a  # type: ignore[return-value]


def _shown_winner(f: Fields, record: dict[str, Any], system_a: str, system_b: str, models: tuple[str, ...] | None) -> str | None:
    """The model (or TIE) that ``winner`` ('A', 'B' or 'tie') names, checked against ``winning_system`` if given."""
    label = f.text("winner")
    if label and label.upper() not in ("A", "B", "TIE"):
        f.problem("winner", f"must be 'A', 'B' or 'tie', got {label!r}")
        return None
    if not (label and models):
        return None
    winner = {"A": system_a, "B": system_b, "TIE": TIE}[label.upper()]
    winning = record.get("winning_system")
    expected = "tie" if winner == TIE else winner
    if winning is not None and str(winning).lower() != str(expected).lower():
        f.problem(
            "winning_system",
            f"{winning!r} is not the model of winner {label!r} ({expected!r}); a winner must be one of the pair's two models",
        )
    return winner


def _judgment_values(f: Fields, record: dict[str, Any]) -> dict[str, Any]:
    """What an ordered judgment stores beside its verdict: the judge's answer, errors, attempt, timing and tokens."""
    errors = record.get("judge_errors") or []
    return {
        "confidence": f.text("confidence", CONFIDENCE, required=False, numbers=True, keep_blank=True),
        "main_reason": f.text("main_reason", required=False, keep_blank=True),
        "weakness_a": f.text("weakness_a", required=False, keep_blank=True),
        "weakness_b": f.text("weakness_b", required=False, keep_blank=True),
        "raw_response": f.text("raw_response", required=False, keep_blank=True),
        "errors": errors if isinstance(errors, list) else [errors],
        "attempt": f.integer("attempt", (OrderedJudgment, "attempt"), minimum=1, default=1),
        "latency_seconds": f.number("elapsed_seconds"),
        "prompt_tokens": f.integer("prompt_tokens", (OrderedJudgment, "prompt_tokens")),
        "completion_tokens": f.integer("completion_tokens", (OrderedJudgment, "completion_tokens")),
        "metadata": f.mapping("metadata"),
    }


def _judgment_run(f: Fields, path: Path) -> tuple[str, dict[str, Any]]:
    """The label of the line's run (the file's name unless it says) and the run's settings."""
    run_label = f.text("run_label", (JudgeRun, "label"), required=False, numbers=True) or path.name.removesuffix(".jsonl")
    run_meta = {
        "provider": f.choice("provider", JudgeRun.Provider.values, default=JudgeRun.Provider.RECORDED),
        "is_canonical": f.flag("is_canonical", default=False),
        "run_type": f.text("run_type", (JudgeRun, "run_type"), required=False) or "holistic",
        "prompt_version": f.text("prompt_version", (JudgeRun, "prompt_version"), required=False, numbers=True),
    }
    return run_label, run_meta


def _check_public_ids(parsed: Parsed) -> None:
    """One public id per pair, and no id for two pairs (it is unique in the database)."""
    by_pair: dict[str, tuple[str, Ref]] = {}
    by_id: dict[str, tuple[str, Ref]] = {}
    for verdict in parsed.verdicts.values():
        public_id, ref = verdict.public_id, verdict.ref
        if not public_id:
            continue
        first_id, first_ref = by_pair.setdefault(verdict.pair_key, (public_id, ref))
        if first_id != public_id:
            parsed.problems.append(
                Problem(
                    ref.file,
                    ref.line,
                    "pair_public_id",
                    f"differs from line {first_ref.line} for the same pair ({show(first_id)})",
                )
            )
            continue
        owner, owner_ref = by_id.setdefault(public_id, (verdict.pair_key, ref))
        if owner != verdict.pair_key:
            parsed.problems.append(
                Problem(
                    ref.file,
                    ref.line,
                    "pair_public_id",
                    f"{show(public_id)} is also the public id of another pair (line {owner_ref.line})",
                )
            )
    parsed.public_ids = {pair_key: public_id for pair_key, (public_id, _) in by_pair.items()}


def release_parse(directory: Path, *, source: str | None = None) -> tuple[Parsed, list[str]]:
    parsed = Parsed()
    found = release_files(directory)
    names = [p.name for paths in found.values() for p in paths]
    for path in found["benchmark"]:
        _parse_benchmark(path, parsed)
    for path in found["contexts"]:
        _parse_contexts(path, parsed)
    for path in found["proposals"]:
        _parse_proposals(path, parsed)
    for path in found["folded"]:
        _parse_folded(path, parsed)
    for path in found["judgments"]:
        _parse_judgments(path, parsed)
    _check_public_ids(parsed)
    data_files = [name for name in names if name != BENCHMARK_FILE]
    if not data_files:
        parsed.problems.append(
            Problem(
                source or str(directory),
                None,
                None,
                "no release files found (expected contexts.jsonl, proposals.jsonl, corrected_folded_pairs.jsonl "
                "or judgments.jsonl)",
            )
        )
    elif parsed.lines == 0:
        parsed.problems.append(Problem(", ".join(data_files), None, None, "every release file is empty; nothing to import"))
    return parsed, names


def arguments_check(benchmark_name: str | None, version: str | None, problems: list[Problem]) -> None:
    """The benchmark name and version given by the caller (command line or upload form)."""
    given = {"benchmark": benchmark_name, "version": version}
    ref = Ref("arguments", None)
    if check_json({k: v for k, v in given.items() if v is not None}, ref, problems):
        f = Fields(given, ref, problems)
        f.text("benchmark", (Benchmark, "name"), identifier=True, required=False)
        f.text("version", (Benchmark, "version"), identifier=True, required=False)


# --------------------------------------------------------------------------- writing


def models_check(parsed: Parsed, known: set[str]) -> None:
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
