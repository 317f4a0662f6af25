"""An adaptive run's worker SIGKILLed between rounds (issue 27), on a private deployment with a real worker: the step
that refits and adds the next round is caught in the middle (its event insert waits on a table lock the test holds,
with the next round's tasks written but not committed), the worker is killed, and a new worker started with the
README's command. The promise: the run resumes, picks the same next batch as a run that was never interrupted (same
seed), and no verdict is doubled."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fake_llm import FakeLLM
from tests.jobs.test_adaptive_runs import JUDGE_SCRIPT, UNITS, planted_files

from .stack import Stack
from .test_step_faults import RECOVERY_LIMIT, _wait, inserts_waiting, step_state, table_locked

pytestmark = pytest.mark.services

ADAPTIVE = ("--adaptive", "--target", "top-k:1", "--alpha", "0.05", "--batch", "4", "--seed", "7")


def _launch(stack: Stack, fake_llm: FakeLLM, benchmark: str, label: str) -> int:
    out = stack.manage(
        "run_judge", benchmark, "--model", "Judge-Local", "--base-url", fake_llm.base_url, "--label", label, *ADAPTIVE
    ).stdout
    assert "in round 0 (adaptive, target top-k:1)" in out, out
    return int(re.search(r"run: (\d+)", out).group(1))  # type: ignore[union-attr]


def _tasks(stack: Stack, run_id: int) -> list[tuple[int, str]]:
    """The run's (pair, order) tasks."""
    return sorted(stack.pg.query('SELECT pair_id, "order" FROM jobs_judgetask WHERE run_id = %s', run_id))


def _ended(stack: Stack, run_id: int) -> bool:
    return stack.run_status(run_id) == "completed"


def test_a_worker_killed_between_adaptive_rounds_resumes_with_the_same_next_batch(
    fresh_stack: Stack, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    stack = fresh_stack
    stack.manage("import_lit2test", str(planted_files(tmp_path / "planted")), "--benchmark", "planted-faults")
    fake_llm.script(judge=JUDGE_SCRIPT)
    stack.worker()
    reference = _launch(stack, fake_llm, "planted-faults", "never-interrupted")
    _wait(stack, lambda: _ended(stack, reference), RECOVERY_LIMIT, "the reference adaptive run to complete")
    rounds = stack.pg.value("SELECT parameters->'adaptive'->>'round' FROM arena_judgerun WHERE id = %s", reference)
    assert int(rounds) >= 1, "the reference run must have a round after the warm-up for this test to mean anything"

    # Round 0's answers take a second: long enough to hold the lock (which the launch's own event would wait on) before
    # the step comes.
    fake_llm.script(judge=JUDGE_SCRIPT, latency=1.0)
    run_id = _launch(stack, fake_llm, "planted-faults", "killed")
    with table_locked(stack, "jobs_runevent"):
        assert stack.pg.value("SELECT count(*) FROM arena_orderedjudgment WHERE run_id = %s", run_id) == 0
        _wait(stack, lambda: inserts_waiting(stack, "jobs_runevent") > 0, 90, "the between-rounds step to wait on the lock")
        # Round 0 is judged, the step is under way: the run is still running with its step pending, and the next
        # round's tasks are not committed.
        assert stack.run_status(run_id) == "running"
        assert step_state(stack, "judge", run_id) == ("pending", "completed")
        assert len(_tasks(stack, run_id)) == 8
        stack.workers[-1].kill()
        stack.pg.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
            'INSERT INTO "jobs_runevent"%',
        )
    stack.worker()  # the README's command, nothing else

    _wait(stack, lambda: _ended(stack, run_id), RECOVERY_LIMIT, "the killed adaptive run to resume and complete")
    # The same rounds as the run never interrupted: the same subjects in both orders, each judged once.
    assert _tasks(stack, run_id) == _tasks(stack, reference)
    assert len(_tasks(stack, run_id)) < 2 * UNITS
    verdicts = stack.pg.query(
        'SELECT pair_id, "order", count(*) FROM arena_orderedjudgment WHERE run_id = %s GROUP BY pair_id, "order"', run_id
    )
    assert len(verdicts) == len(_tasks(stack, run_id)) and {n for _, _, n in verdicts} == {1}
    same = "SELECT parameters->'adaptive'->'rounds' FROM arena_judgerun WHERE id = %s"
    assert stack.pg.value(same, run_id) == stack.pg.value(same, reference)
    assert stack.pg.value(
        "SELECT count(*) FROM jobs_runevent WHERE kind = 'judge' AND run_id = %s AND code = 'adaptive_round'", run_id
    ) == int(rounds)
