"""A run's follow-up step interrupted by a SIGKILLed worker or by PostgreSQL stopped for 8 s (issue 22, item 1), on a
private deployment with real workers: a HypoArena generation's pairing step and a Swiss selection's round transition.

To catch the step in the middle, the test holds a table lock that the step's inserts wait on (the red team's way:
"while the step waited on a row lock"), checks that the step is waiting — the run's tasks are all done, the run still
``running`` with its step pending — and then strikes. The promise: with no manual step, the run reaches its correct
end (every match paired; round 2 played and champions chosen), exactly once.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.fake_llm import FakeLLM

from .stack import Stack

pytestmark = pytest.mark.services

RECOVERY_LIMIT = 180.0
CASES = [f"c{n:02d}" for n in range(12)]
PROPOSERS = ("Alpha", "Beta", "Gamma")
# What a proposer's hypotheses say instead of its name (a name in a text is redacted before a judge sees it).
CODE = {"Alpha": "kiwi", "Beta": "plum", "Gamma": "pear"}


def _wait(stack: Stack, predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:  # noqa: BLE001 - the database may be down on purpose
            pass
        time.sleep(0.25)
    logs = "\n".join(f"--- {w.log_path.name}\n{w.log()[-3000:]}" for w in stack.workers)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}\n{logs}")


@contextmanager
def table_locked(stack: Stack, table: str) -> Iterator[psycopg.Connection]:
    """Hold a lock on ``table`` that every INSERT into it waits for (reads go on), until the block ends or the
    server is stopped."""
    conn = psycopg.connect(stack.pg.url(), autocommit=False)
    try:
        conn.execute(f'LOCK TABLE "{table}" IN SHARE ROW EXCLUSIVE MODE')
        yield conn
    finally:
        try:
            conn.rollback()
            conn.close()
        except psycopg.Error:
            pass  # the server was stopped under it


def inserts_waiting(stack: Stack, table: str) -> int:
    return stack.pg.value(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s", f'INSERT INTO "{table}"%'
    )


def step_state(stack: Stack, kind: str, run_id: int) -> tuple[str, str] | None:
    rows = stack.pg.query("SELECT status, outcome FROM jobs_runstep WHERE kind = %s AND run_id = %s", kind, run_id)
    return rows[0] if rows else None


def strike(stack: Stack, fault: str, table: str) -> None:
    """Kill the worker whose step is waiting, or stop PostgreSQL for 8 s under it; then let the lock go (the test's
    own connection goes with the server)."""
    if fault == "sigkill":
        stack.workers[-1].kill()
        # Its connection dies with it: PostgreSQL would notice only at its next write, so the INSERT it waits on would
        # still run once the lock is let go; a dead host's connections are dropped, and so is this one.
        stack.pg.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
            f'INSERT INTO "{table}"%',
        )
    else:
        stack.pg.stop("fast")  # terminates every connection: the step's transaction is rolled back
        time.sleep(8)
        stack.pg.start()


def done_events(stack: Stack, kind: str, run_id: int) -> list[str]:
    return [
        m
        for (m,) in stack.pg.query(
            "SELECT message FROM jobs_runevent WHERE kind = %s AND run_id = %s AND code IN ('completed', 'tasks_failed')",
            kind,
            run_id,
        )
    ]


# --------------------------------------------------------------------------- HypoArena: pairing after generation


def _arena_files(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cases = [{"case_id": c, "domain": "ops", "context": f"Case {c}: the queue grew on day {n}."} for n, c in enumerate(CASES)]
    pairs = [
        {"hypothesis": "Load grew.", "evidence": "The logs say so."},
        {"hypothesis": "A cache expired.", "evidence": "Misses rose."},
    ]
    # The Reference has every case; the proposers only the first, so that they exist as participants.
    subs = [{"case_id": c, "model": "Ref", "reference": True, "pairs": pairs} for c in CASES]
    subs += [{"case_id": CASES[0], "model": m, "pairs": pairs} for m in PROPOSERS]
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in cases))
    (folder / "submissions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in subs))
    return folder


def _matches(stack: Stack, benchmark: str) -> tuple[int, int]:
    """Matches of the benchmark, and how many distinct pairs of submissions they are."""
    return stack.pg.query(
        "SELECT count(*), count(DISTINCT (least(m.first_id, m.second_id), greatest(m.first_id, m.second_id))) "
        "FROM hypoarena_match m JOIN hypoarena_case c ON c.id = m.case_id JOIN arena_benchmark b ON b.id = c.benchmark_id "
        "WHERE b.name = %s",
        benchmark,
    )[0]


@pytest.mark.parametrize("fault", ["sigkill", "postgresql"])
def test_a_hypoarena_pairing_step_interrupted_pairs_every_submission_once(
    fresh_stack: Stack, fake_llm: FakeLLM, tmp_path: Path, fault: str
) -> None:
    stack = fresh_stack
    name = f"arena-step-{fault}"
    stack.manage("import_hypoarena", name, str(_arena_files(tmp_path / "arena")))
    assert _matches(stack, name) == (6, 6)  # the first case's four submissions
    fake_llm.script(replies=[{"answers": [{"pairs": [{"hypothesis": "Load grew.", "evidence": "Queue depth."}] * 2}]}])
    stack.worker()

    with table_locked(stack, "hypoarena_match"):
        out = stack.manage(
            "hypoarena_generate", name, "--base-url", fake_llm.base_url, "--participants", ",".join(PROPOSERS), "--k", "2"
        ).stdout
        run_id = int(re.search(r"run: (\d+)", out).group(1))  # type: ignore[union-attr]
        _wait(stack, lambda: inserts_waiting(stack, "hypoarena_match") > 0, 90, "the pairing step to wait on the lock")
        # Every submission is in, the step is under way: the run is not completed before it.
        subs = stack.pg.value("SELECT count(*) FROM hypoarena_generationtask WHERE run_id = %s AND status = 'done'", run_id)
        assert subs == 3 * (len(CASES) - 1)
        assert stack.pg.value("SELECT status FROM hypoarena_generationrun WHERE id = %s", run_id) == "running"
        assert step_state(stack, "hypoarena_generation", run_id) == ("pending", "completed")
        strike(stack, fault, "hypoarena_match")
    if fault == "sigkill":
        stack.worker()  # the README's command, nothing else

    _wait(
        stack,
        lambda: stack.pg.value("SELECT status FROM hypoarena_generationrun WHERE id = %s", run_id) == "completed",
        RECOVERY_LIMIT,
        "the generation run to complete with its pairing step",
    )
    # Every two submissions of each case are one match: C(4, 2) = 6 per case, none twice.
    assert _matches(stack, name) == (6 * len(CASES), 6 * len(CASES))
    assert step_state(stack, "hypoarena_generation", run_id) == ("done", "completed")
    assert done_events(stack, "hypoarena_generation", run_id) == [
        "every task is done; then pair the new submissions into matches: done"
    ]
    assert all(w.alive() for w in stack.workers if w is not stack.workers[0] or fault != "sigkill")


# --------------------------------------------------------------------------- Swiss: round 1 -> round 2


def _swiss_files(folder: Path) -> Path:
    """One seed paper with a frozen bibliography; three proposers of three families with five valid hypotheses each."""
    from tests.reconstruction import helpers as h

    folder.mkdir(parents=True, exist_ok=True)
    h.write(folder / "seeds.jsonl", h.seeds())
    h.write(folder / "references.jsonl", h.references())
    rows = [
        {
            "seed_id": "s1",
            "model": model,
            "family": model.lower(),
            "slot": k,
            "title": f"{CODE[model]} idea {k}",
            "summary": f"Mechanism {k} of the films, as the {CODE[model]} proposer saw it.",
            "cited": ["R1"],
        }
        for model in PROPOSERS
        for k in range(1, 6)
    ]
    h.write(folder / "hypotheses.jsonl", rows)
    return folder


def swiss_rules() -> list[dict[str, Any]]:
    """The judge prefers Alpha to Beta to Gamma, whichever label each has."""
    strength = {"Alpha": 3, "Beta": 2, "Gamma": 1}
    return [
        {
            "contains": [f"=== HYPOTHESIS A ===\nTitle: {CODE[a]} idea", f"=== HYPOTHESIS B ===\nTitle: {CODE[b]} idea"],
            "answers": [{"winner": "A" if strength[a] > strength[b] else "B", "reason": "the stronger mechanism"}],
        }
        for a in PROPOSERS
        for b in PROPOSERS
        if a != b
    ]


def _selection(stack: Stack, name: str) -> tuple[int, str, int]:
    return stack.pg.query(
        "SELECT s.id, s.status, s.round FROM reconstruction_swissselection s JOIN arena_benchmark b ON b.id = s.benchmark_id "
        "WHERE b.name = %s",
        name,
    )[0]


def _round_runs(stack: Stack, selection: int, round_no: int) -> list[tuple[int, str]]:
    return stack.pg.query(
        "SELECT id, status FROM arena_judgerun WHERE subjects = 'reconstruction_swiss' "
        "AND (parameters -> 'options' ->> 'selection')::int = %s AND (parameters -> 'options' ->> 'round')::int = %s",
        selection,
        round_no,
    )


@pytest.mark.parametrize("fault", ["sigkill", "postgresql"])
def test_a_swiss_round_transition_interrupted_plays_round_two_once_and_chooses_the_champions(
    fresh_stack: Stack, fake_llm: FakeLLM, tmp_path: Path, fault: str
) -> None:
    stack = fresh_stack
    name = f"swiss-step-{fault}"
    stack.manage("import_reconstruction", name, str(_swiss_files(tmp_path / "recon")))
    fake_llm.script(replies=swiss_rules())
    # Created with no worker up: round 1 is paired and its run waits in the broker's queue.
    stack.manage(
        "reconstruction_swiss", name, "--name", "Swiss-ABG", "--proposers", ",".join(PROPOSERS), "--judges", "J-delta=delta",
        "--base-url", fake_llm.base_url, "--seed", "3",
    )  # fmt: skip
    selection, status, round_no = _selection(stack, name)
    assert (status, round_no) == ("running", 1)
    (round_1,) = _round_runs(stack, selection, 1)

    with table_locked(stack, "reconstruction_swissmatch"):
        stack.worker()
        _wait(stack, lambda: inserts_waiting(stack, "reconstruction_swissmatch") > 0, 90, "round 2's pairing to wait")
        # Round 1 is judged (5 tournaments of 3: one match each, both orders) but not ended before its step.
        assert stack.pg.value("SELECT count(*) FROM reconstruction_swissvote WHERE run_id = %s", round_1[0]) == 10
        assert _round_runs(stack, selection, 1) == [(round_1[0], "running")]
        assert step_state(stack, "judge", round_1[0]) == ("pending", "completed")
        strike(stack, fault, "reconstruction_swissmatch")
    if fault == "sigkill":
        stack.worker()

    _wait(stack, lambda: _selection(stack, name)[1] == "completed", RECOVERY_LIMIT, "the selection to complete")
    assert _selection(stack, name)[2] == 2
    (round_2,) = _round_runs(stack, selection, 2)  # round 2 was launched once ...
    assert round_2[1] == "completed" and _round_runs(stack, selection, 1) == [(round_1[0], "completed")]
    # ... and paired once: per tournament one match and one bye in each round.
    per_round = dict(
        stack.pg.query(
            "SELECT m.round, count(*) FROM reconstruction_swissmatch m JOIN reconstruction_swisstournament t "
            "ON t.id = m.tournament_id WHERE t.selection_id = %s GROUP BY m.round",
            selection,
        )
    )
    assert per_round == {1: 10, 2: 10}
    assert stack.pg.value("SELECT count(*) FROM reconstruction_swissvote WHERE run_id = %s", round_2[0]) == 10
    # The strongest proposer's hypothesis is the champion of every slot.
    champions = stack.pg.query(
        "SELECT h.slot, o.title FROM reconstruction_hypothesis h JOIN arena_participant p ON p.id = h.participant_id "
        "JOIN reconstruction_hypothesis o ON o.id = h.origin_id JOIN arena_benchmark b ON b.id = p.benchmark_id "
        "WHERE p.name = 'Swiss-ABG' AND b.name = %s ORDER BY h.slot",
        name,
    )
    assert champions == [(k, f"kiwi idea {k}") for k in range(1, 6)]
    assert done_events(stack, "judge", round_1[0]) == [
        "every task is done; then move the Swiss selection on (pair and launch its next round, or choose its champions): done"
    ]
