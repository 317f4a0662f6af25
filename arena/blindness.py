"""Blindness against self-identification: model aliases of a benchmark, and their redaction from proposals.

One policy for every blind reader (judge prompts, annotator screens, the human-study pages): a proposal is
shown as its ``blind_content``, in which every alias of every participant of its benchmark and of every
judge of the benchmark (its canonical judge and the judge of each of its runs) is replaced by
``arena.aliases.PLACEHOLDER``. The researcher keeps the text as received (``Proposal.content``, also what an
export writes) and a record of each replacement (``Proposal.redactions``).

When redaction happens:

* at import: ``release_import`` calls :func:`benchmark_redact` once its rows are written;
* at generation: ``lit2test.generation`` (and every elicitation that stores a proposal) stores :func:`proposal_blind_fields` with it;
* when a researcher edits a participant's aliases (:func:`participant_aliases_update`) or asks for a re-scan
  (:func:`benchmark_redact`; ``manage.py blindness_scan``).

A proposal whose ``blind_content`` is missing or was made from other content (its digest differs) is
redacted when it is read, with the benchmark's aliases as they are then (:func:`proposal_blind_content`):
nothing is ever shown unredacted to a blind reader. The judge's gate (``jobs.gates.blindness_problem``)
looks for aliases once more in each rendered prompt and refuses a task whose proposals still name one (for
example a judge whose run was created after the last scan: re-scan, then resume).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from .aliases import (
    DERIVED,
    NAME,
    RESEARCHER,
    WORD,
    Alias,
    AliasError,
    Matcher,
    Term,
    content_digest,
    derive_aliases,
    matcher_for,
    parse_alias_lines,
    redact_content,
)
from .bulk import rows_update
from .models import Benchmark, Context, Participant, Proposal

__all__ = ["AliasError", "benchmark_redact", "participant_aliases_update", "proposal_blind_content"]

PARTICIPANT, JUDGE = "participant", "judge"


# --------------------------------------------------------------------------- aliases


def participant_aliases(participant: Participant) -> list[Alias]:
    """The stored aliases; derived ones while nothing is stored and no researcher has saved any."""
    if participant.aliases or participant.aliases_reviewed_at is not None:
        return [Alias.from_dict(a) for a in participant.aliases]
    return derive_aliases(participant.name, participant.provider)


def _model_terms(name: str, aliases: Sequence[Alias], role: str) -> list[Term]:
    return [Term(Alias(name, WORD, NAME), name, role)] + [Term(a, name, role) for a in aliases]


def judge_names(*, benchmark_id: int) -> list[str]:
    """The canonical judge and the judge of every run of the benchmark (one query)."""
    rows = Benchmark.objects.filter(pk=benchmark_id).values_list("canonical_judge", "runs__judge_model")
    return sorted({name for row in rows for name in row if name})


def benchmark_terms(*, benchmark_id: int) -> list[Term]:
    """Every alias of every participant and judge of a benchmark (two queries)."""
    terms: list[Term] = []
    participants = list(Participant.objects.filter(benchmark_id=benchmark_id))
    for p in participants:
        terms += _model_terms(p.name, participant_aliases(p), PARTICIPANT)
    known = {p.name for p in participants}
    for judge in judge_names(benchmark_id=benchmark_id):
        if judge not in known:
            terms += _model_terms(judge, derive_aliases(judge), JUDGE)
    return terms


def benchmark_matcher(*, benchmark_id: int) -> Matcher:
    return matcher_for(benchmark_terms(benchmark_id=benchmark_id))


# --------------------------------------------------------------------------- redaction


@dataclass(frozen=True)
class RedactSummary:
    proposals: int
    redacted: int
    spans: int
    changed: int

    def line(self) -> str:
        return f"scanned {self.proposals} proposals: {self.redacted} with redactions ({self.spans} spans); {self.changed} updated"


def proposal_blind_fields(*, benchmark_id: int, participant_id: int, content: dict[str, Any]) -> dict[str, Any]:
    """``blind_content``, ``blind_digest`` and ``redactions`` for a new proposal (keyword arguments of create)."""
    matcher = benchmark_matcher(benchmark_id=benchmark_id)
    own = Participant.objects.filter(pk=participant_id).values_list("name", flat=True).first() or ""
    redacted = redact_content(content, matcher, own=own)
    return {"blind_content": redacted.content, "blind_digest": content_digest(content), "redactions": redacted.records}


def benchmark_redact(*, benchmark: Benchmark) -> RedactSummary:
    """Store derived aliases for participants that have none yet, then redact every proposal of the
    benchmark again with the benchmark's current aliases. Atomic; takes the benchmark's row lock (as an
    import does), so imports and alias edits of one benchmark run one after the other."""
    with transaction.atomic():
        Benchmark.objects.select_for_update().filter(pk=benchmark.pk).values_list("pk", flat=True).first()
        fresh = []
        for p in Participant.objects.filter(benchmark=benchmark, aliases_reviewed_at__isnull=True):
            if not p.aliases:
                p.aliases = [a.as_dict() for a in derive_aliases(p.name, p.provider)]
                fresh.append(p)
        Participant.objects.bulk_update(fresh, ["aliases"])
        matcher = benchmark_matcher(benchmark_id=benchmark.pk)
        changed = []
        total = redacted = spans = 0
        for proposal in Proposal.objects.filter(context__benchmark=benchmark).select_related("participant").order_by("pk"):
            total += 1
            result = redact_content(proposal.content, matcher, own=proposal.participant.name)
            digest = content_digest(proposal.content)
            redacted += bool(result.records)
            spans += len(result.records)
            if (proposal.blind_content, proposal.blind_digest, proposal.redactions) != (result.content, digest, result.records):
                proposal.blind_content, proposal.blind_digest, proposal.redactions = result.content, digest, result.records
                changed.append(proposal)
        # One pipelined UPDATE per changed proposal (bulk_update's CASE WHEN cost 1.1 s for 1,040 proposals).
        rows_update(
            model=Proposal,
            fields=["blind_content", "blind_digest", "redactions"],
            rows=((p.pk, p.blind_content, p.blind_digest, p.redactions) for p in changed),
        )
    return RedactSummary(proposals=total, redacted=redacted, spans=spans, changed=len(changed))


def blind_is_current(proposal: Proposal) -> bool:
    """Whether the stored blind content was made from the proposal's current content."""
    return proposal.blind_content is not None and proposal.blind_digest == content_digest(proposal.content)


def proposal_blind_content(proposal: Proposal, *, matcher: Matcher | None = None) -> dict[str, Any]:
    """What a blind reader sees of a proposal: its stored blind content while that is current, else its
    content redacted now with the benchmark's aliases (never the raw text). A caller that holds the
    benchmark's matcher passes it, so an unscanned proposal costs no lookups."""
    if blind_is_current(proposal):
        return proposal.blind_content
    if matcher is None:
        benchmark_id = Context.objects.filter(pk=proposal.context_id).values_list("benchmark_id", flat=True).get()
        matcher = benchmark_matcher(benchmark_id=benchmark_id)
    return redact_content(proposal.content, matcher, own=proposal.participant.name).content


def participant_aliases_update(*, participant: Participant, text: str) -> RedactSummary:
    """Replace a participant's aliases with the researcher's (``alias`` or ``alias | mode`` per line) and
    redact the benchmark's proposals again, in one transaction. An alias the vendor table would also derive
    keeps the source "derived"; the others are "researcher". Raises AliasError naming each bad line."""
    pairs = parse_alias_lines(text)
    derived = {a.key for a in derive_aliases(participant.name, participant.provider)}
    aliases: dict[tuple[str, str], Alias] = {}
    for alias_text, mode in pairs:
        alias = Alias(alias_text, mode, DERIVED)
        alias = alias if alias.key in derived else Alias(alias_text, mode, RESEARCHER)
        if alias.key != Alias(participant.name, WORD).key:  # the name is always matched anyway
            aliases.setdefault(alias.key, alias)
    with transaction.atomic():
        Benchmark.objects.select_for_update().filter(pk=participant.benchmark_id).values_list("pk", flat=True).first()
        Participant.objects.filter(pk=participant.pk).update(
            aliases=[a.as_dict() for a in aliases.values()], aliases_reviewed_at=timezone.now()
        )
        participant.refresh_from_db()
        return benchmark_redact(benchmark=participant.benchmark)


# --------------------------------------------------------------------------- researcher page


@dataclass
class RedactedProposal:
    proposal: Proposal
    records: list[dict[str, Any]]
    stale: bool


def benchmark_blindness(*, benchmark: Benchmark) -> dict[str, Any]:
    """The researcher's view: each model's aliases, the proposals with redactions (what, where, with the
    text around it), and how many proposals have no up-to-date scan."""
    participants = list(benchmark.participants.all())
    proposals = list(
        Proposal.objects.filter(context__benchmark=benchmark)
        .select_related("context", "participant")
        .order_by("context__external_id", "participant__name")
    )
    listed, stale = [], 0
    for p in proposals:
        is_stale = not blind_is_current(p)
        stale += is_stale
        if p.redactions:
            records = []
            for r in p.redactions:
                text = p.content.get(r["field"])
                text = text if isinstance(text, str) else ""
                records.append(
                    r | {"before": text[max(0, r["start"] - 60) : r["start"]], "after": text[r["end"] : r["end"] + 60]}
                )
            listed.append(RedactedProposal(p, records, is_stale))
    judges = judge_names(benchmark_id=benchmark.pk)
    known = {p.name for p in participants}
    return {
        "participants": [(p, participant_aliases(p)) for p in participants],
        "judges": [(j, derive_aliases(j)) for j in judges if j not in known],
        "redacted": listed,
        "n_proposals": len(proposals),
        "n_spans": sum(len(r.records) for r in listed),
        "n_stale": stale,
    }
