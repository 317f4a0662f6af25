"""Generation runs: each participant proposes once per context it has no proposal for, answers are
checked against the six-field schema (two retries at most), and new valid proposals are paired.

The benchmark is written by hand with the release builders: three models, a context every model has
already answered, one where only an invalid proposal of "Alpha 1" exists, and one with no proposal.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest

from arena.models import Benchmark, CanonicalPair, Proposal
from lit2test.generation import generation_run_create, generation_run_execute, generation_run_launch
from lit2test.models import GenerationRun, GenerationTask
from lit2test.release import release_import
from tests.arena import builders
from tests.fake_llm.server import generate_answer, validate_script

from .helpers import chat_requests, user_text

pytestmark = pytest.mark.django_db(transaction=True)

SIX = builders.SIX
ANSWERED, HALF, EMPTY = "ctx_000__v1", "ctx_001__v1", "ctx_002__v1"


@pytest.fixture
def bench(tmp_path: Path) -> Benchmark:
    contexts = [builders.context(c) for c in (ANSWERED, HALF, EMPTY)]
    proposals = [builders.proposal(ANSWERED, m) for m in builders.MODELS]
    proposals.append(builders.proposal(HALF, "Alpha 1", hypothesis=""))  # stored, but invalid: never paired
    builders.write(tmp_path / "release", {"contexts.jsonl": contexts, "proposals.jsonl": proposals})
    benchmark = release_import(directory=tmp_path / "release", benchmark_name="generation-test").benchmark
    assert not benchmark.pairs.exists()
    return benchmark


def _context_of(entry: dict) -> str:
    return re.search(r"Research context of (ctx_\d+__v1)\.", user_text(entry)).group(1)


def _asked(log: list[dict]) -> Counter[tuple[str, str]]:
    """Requests per (model asked, context shown)."""
    return Counter((e["model"], _context_of(e)) for e in chat_requests(log))


def _new_proposals(run: GenerationRun) -> list[Proposal]:
    return [
        p for p in Proposal.objects.select_related("participant", "context") if p.release_metadata.get("generation_run") == run.pk
    ]


def test_each_participant_proposes_once_for_each_context_it_has_not_answered(bench, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(mode="generate")
    run = generation_run_create(benchmark=bench, base_url=fake_llm.base_url, concurrency=4)
    expected = {(m, EMPTY) for m in builders.MODELS} | {("Beta-2", HALF), ("Gamma-3", HALF)}
    assert {(t.participant.name, t.context.external_id) for t in GenerationTask.objects.filter(run=run)} == expected

    generation_run_launch(run=run)  # Celery runs in-process in these tests: the run is done on return

    run.refresh_from_db()
    assert run.status == "completed"
    log = chat_requests(fake_llm.log())
    assert _asked(log) == Counter(expected)
    stored = _new_proposals(run)
    assert {(p.participant.name, p.context.external_id) for p in stored} == expected
    script = validate_script({"mode": "generate"})
    for p in stored:
        assert p.validation_status == "valid" and p.validation_errors == []
        # Exactly what the model answered to the prompt it was sent.
        entry = next(e for e in log if e["model"] == p.participant.name and _context_of(e) == p.context.external_id)
        assert p.content == generate_answer(script, p.participant.name, entry["messages"])
        assert set(p.content) == set(SIX) and all(p.content[f].strip() for f in SIX)
        assert p.release_metadata["attempts"] == 1
    assert set(GenerationTask.objects.filter(run=run).values_list("status", "calls")) == {("done", 1)}

    # Pairs: every two valid proposals of each generated context, C(k, 2): 3 on EMPTY, 1 on HALF (Alpha's is invalid).
    keys = set(CanonicalPair.objects.filter(benchmark=bench).values_list("internal_key", flat=True))
    assert keys == {builders.pair_id(EMPTY, a, b) for a, b in itertools.combinations(builders.MODELS, 2)} | {
        builders.pair_id(HALF, "Beta-2", "Gamma-3")
    }
    for pair in CanonicalPair.objects.filter(benchmark=bench).select_related("participant_a", "participant_b", "context"):
        assert pair.internal_key == builders.pair_id(pair.context.external_id, pair.participant_a.name, pair.participant_b.name)


def test_a_proposal_missing_a_field_is_asked_for_again_and_then_stored_valid(bench, fake_llm) -> None:  # noqa: ANN001
    # One participant only: the fake server counts attempts per prompt, and every participant gets the same prompt.
    fake_llm.script(mode="generate", failures=[{"attempts": [1], "missing_key": "hypothesis"}])
    run = generation_run_create(benchmark=bench, base_url=fake_llm.base_url, participants=["Beta-2"])
    generation_run_launch(run=run)

    run.refresh_from_db()
    assert run.status == "completed"
    assert _asked(fake_llm.log()) == Counter({("Beta-2", HALF): 2, ("Beta-2", EMPTY): 2})
    for task in GenerationTask.objects.filter(run=run):
        assert (task.status, task.calls) == ("done", 2)
        first, second = task.attempts
        assert [(p["field"], p["code"]) for p in first["problems"]] == [("hypothesis", "missing")]
        assert second["problems"] == []
    stored = _new_proposals(run)
    assert len(stored) == 2
    for p in stored:
        assert p.validation_status == "valid" and p.content["hypothesis"].strip()
        assert p.release_metadata["attempts"] == 2
    # HALF now has Beta's valid proposal and Alpha's invalid one; EMPTY has Beta's alone: nothing to pair.
    assert not CanonicalPair.objects.filter(benchmark=bench).exists()


def test_a_proposal_that_never_fits_the_schema_is_stored_invalid_with_its_reason(bench, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(mode="generate", failures=[{"attempts": "all", "missing_key": "hypothesis"}])
    run = generation_run_create(benchmark=bench, base_url=fake_llm.base_url, concurrency=4)
    assert generation_run_execute(run_id=run.pk) == "pending"  # not launched: nothing is called
    assert not chat_requests(fake_llm.log())
    GenerationRun.objects.filter(pk=run.pk).update(status="running")

    assert generation_run_execute(run_id=run.pk) == "completed"

    asked = _asked(fake_llm.log())
    assert len(asked) == 5 and set(asked.values()) == {3}  # the first answer and two retries each
    for task in GenerationTask.objects.filter(run=run):
        assert (task.status, task.calls, len(task.attempts)) == ("done", 3, 3)
    stored = _new_proposals(run)
    assert len(stored) == 5
    for p in stored:
        assert p.validation_status == "invalid"
        assert [(e["field"], e["code"]) for e in p.validation_errors] == [("hypothesis", "missing")]
        assert "hypothesis" not in p.content and set(p.content) == set(SIX) - {"hypothesis"}
    assert not CanonicalPair.objects.filter(benchmark=bench).exists()
