"""A result the database refuses (not an outage) must not take its batch down, nor be redone forever (review F5).

The driver stores answers in batches (``jobs.engine.STORE_EVERY``); when the database refuses a batch, its results
are stored one by one and the one still refused ends its task failed, with the reason. A judge's answer holding a
NUL character (which PostgreSQL holds neither in text nor in jsonb) is stored without it.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connections

from arena.models import JudgeRun, OrderedJudgment
from jobs.engine import Driver, DriverHooks, run_blocking
from jobs.models import RunEvent
from jobs.services import judge_run_execute
from lit2test.models import JudgeTask

from .helpers import chat_requests, create_running, hypothesis, per_task, user_text

pytestmark = pytest.mark.django_db(transaction=True)

BAD = 7  # the task whose result the database refuses


def _hooks(tasks: list[int], claims: list[int], running: list[bool]) -> DriverHooks[int]:
    """Tasks stored as real rows (``RunEvent``, one per task); task ``BAD``'s result has no message, which the
    database refuses (NOT NULL) on any engine. A task claimed a third time stops the driver (the bug: forever)."""

    def claim(n: int, held: frozenset[int]) -> list[int]:
        stored = set(RunEvent.objects.filter(kind="test").values_list("run_id", flat=True))
        out = [t for t in tasks if t not in stored and t not in held][:n]
        claims.extend(out)
        if any(claims.count(t) > 2 for t in out):
            running[0] = False
            return []
        return out

    async def work(spec: int, before_call: Any) -> str | None:  # noqa: ANN401
        return None if spec == BAD else f"answer {spec}"

    def store(batch: list[tuple[int, str | None]]) -> None:
        from django.db import transaction

        with transaction.atomic():
            for spec, result in batch:
                RunEvent.objects.create(kind="test", run_id=spec, code="stored", message=result)

    return DriverHooks(
        claim=claim,
        work=work,
        store=store,
        release=lambda specs: None,
        still_running=lambda: running[0],
        heartbeat=lambda held: None,
        count_calls=lambda counts: None,
        others_open=lambda held: False,
        task_id=lambda spec: spec,
        on_error=lambda exc: f"failed: {exc}",
    )


def test_a_refused_result_fails_its_task_once_and_its_batch_mates_are_stored() -> None:
    tasks = list(range(1, 21))
    claims: list[int] = []
    running = [True]
    # A long store interval: all 20 answers arrive while the first waits, so the refused one is in a batch of many.
    run_blocking(Driver(hooks=_hooks(tasks, claims, running), concurrency=8, store_every=0.5).run)

    assert running == [True], f"a task was claimed again and again: claims {sorted(claims)}"
    assert sorted(claims) == tasks  # each task claimed once: nothing redone
    stored = dict(RunEvent.objects.filter(kind="test").values_list("run_id", "message"))
    assert sorted(stored) == tasks and RunEvent.objects.filter(kind="test").count() == len(tasks)
    assert all(stored[t] == f"answer {t}" for t in tasks if t != BAD)
    # The refused task's failure names what happened and the database's reason.
    assert stored[BAD].startswith("failed: the database refused to store its result (IntegrityError: "), stored[BAD]
    assert "message" in stored[BAD], stored[BAD]  # the column refused, in both engines' words


def test_a_judge_answer_with_a_nul_character_is_stored_without_it_and_the_run_completes(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:4", concurrency=8, lease_seconds=2)
    # One pair's answers carry a NUL in their reason (JSON "\u0000", which parsing turns into the character); the
    # others are the fake's usual answers. On PostgreSQL such a reason cannot be stored as it is.
    task = JudgeTask.objects.filter(run=run).order_by("id").first()
    pair = task.pair
    needles = [hypothesis(pair.context_id, pair.participant_a_id), hypothesis(pair.context_id, pair.participant_b_id)]
    nul_answer = {"winner": "A", "confidence": "high", "main_reason": "A is\x00 sharper", "weakness_a": "", "weakness_b": ""}
    fake_llm.script(replies=[{"contains": needles, "answers": [nul_answer]}])

    outcome: list[str] = []

    def drive() -> None:
        try:
            outcome.append(judge_run_execute(run_id=run.pk))
        finally:
            connections.close_all()  # this thread's connection goes back to the pool (later tests share it)

    driver = threading.Thread(target=drive, daemon=True)
    driver.start()
    driver.join(timeout=60)
    if driver.is_alive():  # the bug: the refused batch is redone after each lease, forever; stop it
        JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.CANCELLED)
        driver.join(timeout=30)
    log = fake_llm.log()
    hit = [entry for entry in chat_requests(log) if all(n in user_text(entry) for n in needles)]

    assert outcome == ["completed"], f"the run did not complete: {outcome}, calls per task {per_task(log)}"
    assert len(hit) == 2, f"{len(hit)} requests held both texts of the pair (one per order expected)"
    assert set(per_task(log).values()) == {1}, f"tasks were asked again: {per_task(log)}"
    n_tasks = JudgeTask.objects.filter(run=run).count()
    judgments = list(OrderedJudgment.objects.filter(run=run).values_list("pair_id", "order", "status", "main_reason"))
    assert len(judgments) == n_tasks == len({(p, o) for p, o, _, _ in judgments})  # each judgment stored once
    assert {s for _, _, s, _ in judgments} == {"accepted"}
    reasons = [r for p, _, _, r in judgments if p == pair.pk]
    assert len(reasons) == 2 and set(reasons) == {"A is sharper"}  # stored, without its NUL
    assert all("\x00" not in r for _, _, _, r in judgments)


def test_every_kind_s_answers_lose_their_nul_where_they_enter() -> None:
    """The parser every kind uses (HypoArena, Reconstruction, listwise, controls, Lit2Test) takes a parsed NUL out,
    as the provider does with a raw one: no kind can hand PostgreSQL an answer it refuses."""
    from jobs.parsing import json_object

    assert json_object('{"verdict": "A\\u0000", "reasons": ["x\\u0000y", {"k\\u0000": 1}]}') == {
        "verdict": "A",
        "reasons": ["xy", {"k": 1}],
    }
