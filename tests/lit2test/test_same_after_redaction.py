"""A canonical pair whose two proposals read the same once model names are redacted cannot be judged blind (both
orders would show one prompt): a run skips it like a pair without text, counts it and names it in its log, and
judges the rest; a run of such pairs only is refused (jobs.gates.orientation_sort, issue 22 item 8)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from arena.models import CanonicalPair, JudgeRun
from jobs.models import RunEvent
from jobs.services import JudgeRunRequest, RunError, judge_run_create
from lit2test.models import JudgeTask
from lit2test.release import release_import
from tests.arena import builders as b

pytestmark = pytest.mark.django_db

DISTINCT = "ctx_001__v1"  # its proposals differ; ctx_002's say the same but for the model's own name


def release(tmp_path: Path, *, distinct: bool) -> Any:  # noqa: ANN401
    """builders' small release: each proposal names its model in every field ("Alpha 1 hypothesis for ctx_..."), so
    the three proposals of a context read the same once redacted, unless ``distinct`` makes ctx_001's differ."""
    files = b.small_release()
    if distinct:
        for n, row in enumerate(files["proposals.jsonl"]):
            if row["context_id"] == DISTINCT:
                row |= {f: f"Proposal {n}: its own {f}." for f in b.SIX}
    return release_import(directory=b.write(tmp_path / "release", files)).benchmark


def test_pairs_that_read_the_same_once_redacted_are_skipped_and_named(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = release(tmp_path, distinct=True)
    out = io.StringIO()
    call_command("run_judge", str(benchmark.pk), "--model", "Judge-New", "--base-url", fake_llm.base_url, stdout=out)

    run = JudgeRun.objects.get(judge_model="Judge-New")
    same = CanonicalPair.objects.filter(benchmark=benchmark).exclude(context__external_id=DISTINCT)
    assert same.count() == 3 and run.parameters["skipped"] == 3
    judged = set(JudgeTask.objects.filter(run=run).values_list("pair__context__external_id", "order"))
    assert judged == {(DISTINCT, "original"), (DISTINCT, "reverse")}
    assert JudgeTask.objects.filter(run=run).count() == 6
    assert out.getvalue().splitlines()[1] == (
        "6 ordered tasks; 3 pairs skipped: their proposals have no text, or read the same once model names are redacted"
    )
    [event] = RunEvent.objects.filter(run_id=run.pk, code="skipped")
    assert all(f"pair {p.public_id}" in event.message for p in same)


def test_a_run_whose_every_pair_reads_the_same_is_refused(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = release(tmp_path, distinct=False)
    runs = JudgeRun.objects.count()  # the release's own judge
    with pytest.raises(RunError) as refused:
        judge_run_create(request=JudgeRunRequest(benchmark=benchmark, judge_model="Judge-New", base_url=fake_llm.base_url))
    message = str(refused.value)
    assert (
        "none of the chosen pairs with text can be judged blind" in message
        and "read the same once model names are redacted" in message
    )
    assert all(f"pair {p.public_id}" in message for p in CanonicalPair.objects.filter(benchmark=benchmark))
    assert "nothing was launched" in message
    with pytest.raises(CommandError, match="none of the chosen pairs with text can be judged blind"):
        call_command(
            "run_judge", str(benchmark.pk), "--model", "Judge-New", "--base-url", fake_llm.base_url, "--pairs", "sample:3"
        )
    assert JudgeRun.objects.count() == runs
