"""New versions of a Lit2Test benchmark: a canonical judge never changes within a version, so another canonical judge
needs a new version carrying the same contexts, papers, participants, proposals and pairs, and no runs."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from arena.models import Benchmark, CanonicalPair, Proposal
from jobs.lifecycle import AlreadyLaunched


def benchmark_new_version(*, benchmark: Benchmark, version: str | None = None, canonical_judge: str = "") -> Benchmark:
    """A new version carrying the same contexts, papers, participants, proposals and pairs, with no runs.

    Raises :class:`AlreadyLaunched` with the version when it exists: made before, or by a request at the same moment
    (the button pressed twice), whose insert PostgreSQL made this one wait for."""
    version = version or benchmark.next_version()
    made = Benchmark.objects.filter(name=benchmark.name, version=version).first()
    if made is not None:
        raise AlreadyLaunched(made, f"{made} exists already; nothing new was made")
    try:
        return _version_copy(benchmark=benchmark, version=version, canonical_judge=canonical_judge)
    except IntegrityError:
        made = Benchmark.objects.filter(name=benchmark.name, version=version).first()
        if made is None:
            raise
        raise AlreadyLaunched(made, f"{made} was made at the same moment by another request; nothing new was made") from None


def _version_copy(*, benchmark: Benchmark, version: str, canonical_judge: str) -> Benchmark:
    with transaction.atomic():
        new = Benchmark.objects.create(
            name=benchmark.name,
            version=version,
            description=benchmark.description,
            canonical_judge=canonical_judge,
            verdict_rule=benchmark.verdict_rule,
            proposal_schema=benchmark.proposal_schema,
            orientation_seed=benchmark.orientation_seed,
            protocol=benchmark.protocol,
        )
        batches = {b.pk: new.batches.create(name=b.name) for b in benchmark.batches.all()}
        people = {p.pk: new.participants.create(name=p.name, provider=p.provider) for p in benchmark.participants.all()}
        contexts = {}
        for c in benchmark.contexts.prefetch_related("papers"):
            old_pk = c.pk
            papers = list(c.papers.all())
            c.pk = None
            c.benchmark = new
            c.batch = batches.get(c.batch_id) if c.batch_id else None
            c.save()
            contexts[old_pk] = c
            for paper in papers:
                paper.pk, paper.context = None, c
                paper.save()
        for p in Proposal.objects.filter(context__benchmark=benchmark):
            p.pk, p.context, p.participant = None, contexts[p.context_id], people[p.participant_id]
            p.save()
        CanonicalPair.objects.bulk_create(
            [
                CanonicalPair(
                    benchmark=new,
                    context=contexts[p.context_id],
                    participant_a=people[p.participant_a_id],
                    participant_b=people[p.participant_b_id],
                    internal_key=p.internal_key,
                )
                for p in benchmark.pairs.all()
            ]
        )
    return new
