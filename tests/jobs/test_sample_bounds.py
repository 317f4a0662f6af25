"""A run's ``sample`` number is stored with every answer in the call cache (``CallCacheEntry.sample``, a positive
integer column: 2**31 - 1 on PostgreSQL). A larger one was accepted, every call was made and paid for, and then every
answer was refused by the database ("integer out of range"), the run failed with nothing kept. Now the service that
creates judge runs refuses it before any call, naming ``sample``; the largest the column holds is judged and kept.
"""

from __future__ import annotations

from typing import Any

import pytest

from arena.models import Benchmark, JudgeRun, OrderedJudgment
from jobs.models import CallCacheEntry
from jobs.services import JudgeRunRequest, RunError, judge_run_create, judge_run_execute

from .helpers import JUDGE, chat_requests

pytestmark = pytest.mark.django_db(transaction=True)

LARGEST = 2_147_483_647  # the largest PositiveIntegerField value every database Django supports holds


def request_for(benchmark: Benchmark, fake: Any, sample: int) -> JudgeRunRequest:  # noqa: ANN401
    """Three pairs (six ordered tasks) at a temperature where the sample number matters."""
    return JudgeRunRequest(
        benchmark=benchmark, judge_model=JUDGE, base_url=fake.base_url, select="sample:3", sample=sample, temperature=0.7
    )


def test_the_largest_sample_the_call_cache_holds_is_judged_and_every_answer_kept(
    imported: Benchmark,
    fake_llm: Any,  # noqa: ANN401
) -> None:
    run, _ = judge_run_create(request=request_for(imported, fake_llm, LARGEST))
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert judge_run_execute(run_id=run.pk) == "completed"
    assert OrderedJudgment.objects.filter(run=run, status="accepted").count() == 6
    assert list(CallCacheEntry.objects.values_list("sample", flat=True).distinct()) == [LARGEST]


@pytest.mark.parametrize("sample", [LARGEST + 1, 10**25, -1])
def test_a_sample_the_call_cache_cannot_hold_is_refused_before_any_call(
    imported: Benchmark,
    fake_llm: Any,  # noqa: ANN401
    sample: int,
) -> None:
    with pytest.raises(RunError) as refused:
        judge_run_create(request=request_for(imported, fake_llm, sample))
    assert str(refused.value) == (
        f"sample must be a whole number from 0 to 2147483647 (the call cache stores it as such), not {sample}: "
        "choose one in that range"
    )
    assert not JudgeRun.objects.filter(judge_model=JUDGE).exists() and not chat_requests(fake_llm.log())
