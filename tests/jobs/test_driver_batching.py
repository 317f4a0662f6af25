"""Fewer trips to the database per judgment (issue 25 item 4): a driver writes its answers at most every
``store_every`` seconds (a group commit of all answers that arrived meanwhile), and the call ledger's write is one
plain statement per distinct count."""

from __future__ import annotations

import pytest

from jobs.engine import Driver, DriverHooks, run_blocking
from jobs.execution import calls_count
from lit2test.models import JudgeTask

from .helpers import create_running


def _hooks(tasks: list[int], stores: list[list[int]], running: list[bool]) -> DriverHooks[int]:
    def claim(n: int, held: frozenset[int]) -> list[int]:
        done = {t for batch in stores for t in batch}
        return [t for t in tasks if t not in done and t not in held][:n]

    async def work(spec: int, before_call) -> int:  # noqa: ANN001
        await before_call()
        return spec

    return DriverHooks(
        claim=claim,
        work=work,
        store=lambda batch: stores.append([s for s, _ in batch]),
        release=lambda specs: None,
        still_running=lambda: running[0],
        heartbeat=lambda held: None,
        count_calls=lambda counts: None,
        others_open=lambda held: False,
        task_id=lambda spec: spec,
        on_error=lambda exc: None,
    )


def test_answers_that_arrive_together_are_stored_in_one_batch_each_once() -> None:
    tasks = list(range(1, 41))
    stores: list[list[int]] = []
    run_blocking(Driver(hooks=_hooks(tasks, stores, [True]), concurrency=8, store_every=1.0).run)
    assert sorted(t for batch in stores for t in batch) == tasks  # each answer stored, once
    # The first answer is written at once; the 39 others, answered while it waits out its second, in one more batch.
    assert len(stores) == 2, [len(b) for b in stores]


def test_a_run_that_stops_running_is_neither_claimed_nor_stored_further() -> None:
    stores: list[list[int]] = []
    run_blocking(Driver(hooks=_hooks(list(range(1, 41)), stores, [False]), concurrency=8).run)
    assert stores == []


@pytest.mark.django_db
def test_the_ledger_adds_each_tasks_calls_whatever_the_counts(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:4", concurrency=4)
    ids = list(JudgeTask.objects.filter(run=run).order_by("pk").values_list("pk", flat=True))
    calls_count(task_model=JudgeTask, counts={ids[0]: 1, ids[1]: 2, ids[2]: 1})  # two distinct counts: one transaction
    calls_count(task_model=JudgeTask, counts={ids[1]: 3})  # one count: one statement
    calls = dict(JudgeTask.objects.filter(run=run).values_list("pk", "calls"))
    assert [calls[i] for i in ids] == [1, 5, 1] + [0] * (len(ids) - 3)
