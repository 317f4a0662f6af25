"""HypoArena runs on the shared engine against the scripted endpoint (tests/fake_llm): generation of K-pair
submissions, arena judging in both orders with faults injected, rubric scoring, the leaderboard of the run and the
agreement of two judges, every figure checked against values worked out by hand from the scripted answers.

The scripted judges answer by prompt text (the fake server's "replies" rules): a rule names the first hypothesis of
the submission shown as A and of the one shown as B, so a verdict is scripted per (case, model shown as A, model shown
as B) whatever orientation the benchmark's seed gave the match.
"""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from arena.models import Benchmark, JudgeRun, Participant
from arena.stats.hypoarena import inter_judge_agreement, pairwise_verdict_agreement
from hypoarena.generation import generation_run_create, generation_run_launch
from hypoarena.importing import hypoarena_import
from hypoarena.models import (
    ArenaJudgeTask,
    ArenaVerdict,
    GenerationTask,
    Match,
    RubricJudgeTask,
    RubricJudgment,
    RubricScore,
    Submission,
)
from hypoarena.parsing import parse_arena_answer, parse_rubric_answer
from hypoarena.selectors import verdict_frame
from jobs.parsing import ParseError
from jobs.services import JudgeRunRequest, RunError, judge_run_create, judge_run_execute, judge_run_pause, judge_run_resume

from . import helpers as h

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]

MODELS = ("Orion", "Vega", "Lyra")
CODE = {"Orion": "kiwi", "Vega": "plum", "Lyra": "pear"}  # what a model's texts say instead of its name
J1, J2 = "Judge-One", "Judge-Two"
SECRET = "SECRET CONCLUSION"
K = 2


def hyp(model: str, case: str, i: int) -> str:
    return f"The {CODE[model]} pathway explains case {case}, variant {i}."


def pairs_of(model: str, case: str, k: int) -> list[dict[str, str]]:
    out = [
        {"hypothesis": hyp(model, case, i), "evidence": f"The logs of {case} show the {CODE[model]} pattern {i}."}
        for i in range(k)
    ]
    if model == "Vega" and case == "c1":
        out[0]["evidence"] += " Unlike what Orion reported."  # a name inside a submission: redacted before any judge sees it
    return out


def make_benchmark(tmp_path: Path, *, with_submissions: bool = True) -> Benchmark:
    """Domain ops (multi-pair: c1, c2) and domain safety (singleton: s1); three models; c1 holds a reference conclusion."""
    cases = [
        {
            "case_id": "c1",
            "domain": "ops",
            "context": "The checkout service slowed down on Monday morning.",
            "reference_conclusion": f"{SECRET}: a cache expired.",
        },
        {"case_id": "c2", "domain": "ops", "context": "Disk usage on the build farm doubled overnight."},
        {"case_id": "s1", "domain": "safety", "singleton": True, "context": "An alarm stayed silent during the shift change."},
    ]
    files = {"cases": h.write(tmp_path / "cases.jsonl", cases)}
    if with_submissions:
        subs = [
            {"case_id": c, "model": m, "pairs": pairs_of(m, c, 1 if c == "s1" else K)} for c in ("c1", "c2", "s1") for m in MODELS
        ]
        files["submissions"] = h.write(tmp_path / "submissions.jsonl", subs)
    hypoarena_import(name="arena-runs", files=files)
    benchmark = Benchmark.objects.get(name="arena-runs")
    for m in MODELS:
        Participant.objects.get_or_create(benchmark=benchmark, name=m)
    return benchmark


def first_line(label: str, model: str, case: str) -> str:
    return f"=== SUBMISSION {label} ===\nPair 1\nHypothesis: {hyp(model, case, 0)}"


def arena_rule(judge: str, case: str, a: str, b: str, *answers: Any) -> dict[str, Any]:  # noqa: ANN401
    answers = tuple(
        {"verdict": x, "reason": f"{judge} scripted"} if x in ("A>>B", "A>B", "A=B", "B>A", "B>>A") else x for x in answers
    )
    return {"model": judge, "contains": [first_line("A", a, case), first_line("B", b, case)], "answers": list(answers)}


# The scripted verdicts per (case, model shown as A, model shown as B), from that order's A/B labels.
JUDGE_1 = {
    ("c1", "Orion", "Vega"): "A>>B",
    ("c1", "Vega", "Orion"): "B>A",  # Orion 1 and .75: .875, consistent
    ("c1", "Orion", "Lyra"): "A>B",
    ("c1", "Lyra", "Orion"): "A=B",  # Orion .75 and .5: .625, a tie against a win
    ("c1", "Vega", "Lyra"): "A>B",
    ("c1", "Lyra", "Vega"): "A>B",  # Vega .75 and .25: .5, a conflict
    ("c2", "Orion", "Vega"): "B>A",
    ("c2", "Vega", "Orion"): "A>B",  # Orion .25 twice: .25, consistent
    ("c2", "Orion", "Lyra"): "A>>B",
    ("c2", "Lyra", "Orion"): "B>>A",  # Orion 1 twice: 1, consistent
    ("c2", "Vega", "Lyra"): "A>B",
    ("c2", "Lyra", "Vega"): "B>A",  # Vega .75 twice; the reverse order ends invalid
}
# Judge 2 gives the same outcome (A wins, B wins, tie) as judge 1 in both orders of c1 Orion–Vega, c1 Vega–Lyra,
# c2 Orion–Lyra and c2 Vega–Lyra, and another outcome in both orders of c1 Orion–Lyra and c2 Orion–Vega.
JUDGE_2 = {
    ("c1", "Orion", "Vega"): "A>B",
    ("c1", "Vega", "Orion"): "B>>A",
    ("c1", "Orion", "Lyra"): "B>A",
    ("c1", "Lyra", "Orion"): "A>B",
    ("c1", "Vega", "Lyra"): "A>>B",
    ("c1", "Lyra", "Vega"): "A>B",
    ("c2", "Orion", "Vega"): "A=B",
    ("c2", "Vega", "Orion"): "A=B",
    ("c2", "Orion", "Lyra"): "A>B",
    ("c2", "Lyra", "Orion"): "B>A",
    ("c2", "Vega", "Lyra"): "A>B",
    ("c2", "Lyra", "Vega"): "B>>A",
}
# Every call's first three attempts fail: a timeout (the server sleeps past the run's timeout), a 429, a 500.
FAULTS = [
    {"attempts": [1], "sleep": 0.8, "status": 503},
    {"attempts": [2], "status": 429, "retry_after": 0.01},
    {"attempts": [3], "status": 500, "retry_after": 0.01},
]

# Rubric answers per model: the same in both ops cases (K = 2); s1 is a singleton case (K = 1, d null).
RUBRIC_OPS = {
    "Orion": {"pairs": [{"g": 5, "l": 4, "j": 3}, {"g": 3, "l": 3, "j": 3}], "b": 4, "d": 3, "u": 5},  # q 4, 3; Q_set 4: S 3.75
    "Vega": {"pairs": [{"g": 2, "l": 2, "j": 2}, {"g": 4, "l": 4, "j": 4}], "b": 3, "d": 3, "u": 3},  # q 2, 4; Q_set 3: S 3
    "Lyra": {"pairs": [{"g": 1, "l": 2, "j": 3}, {"g": 1, "l": 1, "j": 1}], "b": 2, "d": 1, "u": 3},  # q 2, 1; Q_set 2: S 1.75
}
RUBRIC_S1 = {
    "Orion": {"pairs": [{"g": 5, "l": 5, "j": 5}], "b": 5, "d": None, "u": 5},  # S = q_1 = 5
    "Vega": {"pairs": [{"g": 3, "l": 3, "j": 3}], "b": 3, "d": None, "u": 3},  # 3
    "Lyra": {"pairs": [{"g": 1, "l": 2, "j": 3}], "b": 2, "d": None, "u": 2},  # 2
}


def start(benchmark: Benchmark, fake: Any, **overrides: Any) -> JudgeRun:  # noqa: ANN401
    fields = {
        "benchmark": benchmark,
        "judge_model": J1,
        "base_url": fake.base_url,
        "task_kind": "hypoarena",
        "run_type": "arena",
        "concurrency": 12,
        "timeout": 0.4,
    } | overrides
    run, skipped = judge_run_create(request=JudgeRunRequest(**fields))
    assert skipped == 0
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    return run


def prompt_texts(log: list[dict[str, Any]]) -> list[str]:
    return ["\n".join(m["content"] for m in entry["messages"]) for entry in log if entry["messages"]]


def match_of(case: str, one: str, other: str) -> Match:
    return Match.objects.select_related("first__participant", "second__participant").get(
        case__external_id=case, first__participant__name__in=[one, other], second__participant__name__in=[one, other]
    )


def run_json(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue())


# --------------------------------------------------------------------------- the full cycle


def _generation_rules() -> list[dict[str, Any]]:
    """Each model's K pairs per case (one in the singleton domain); Lyra's first answer on c2 has one pair too few."""
    contexts = {"c1": "checkout service slowed", "c2": "Disk usage on the build farm", "s1": "alarm stayed silent"}
    rules = []
    for m in MODELS:
        for c, needle in contexts.items():
            good = {"pairs": pairs_of(m, c, 1 if c == "s1" else K)}
            answers = [{"pairs": good["pairs"][:1]}, good] if (m, c) == ("Lyra", "c2") else [good]
            rules.append({"model": m, "contains": needle, "answers": answers})
    return rules


def _run_generation(benchmark: Benchmark, fake_llm: Any) -> Any:  # noqa: ANN401
    """The generation run over every case and model completes."""
    fake_llm.script(replies=_generation_rules())
    gen = generation_run_create(benchmark=benchmark, base_url=fake_llm.base_url, k=K)
    generation_run_launch(run=gen)
    gen.refresh_from_db()
    assert gen.status == "completed"
    return gen


def _check_generated_submissions(benchmark: Benchmark, gen: Any) -> None:  # noqa: ANN401
    """Nine submissions with the scripted pairs, Lyra's c2 retry recorded, and three matches per case."""
    assert Submission.objects.filter(case__benchmark=benchmark).count() == 9
    for s in Submission.objects.select_related("case", "participant"):
        assert s.pairs == pairs_of(s.participant.name, s.case.external_id, 1 if s.case.external_id == "s1" else K)
    retried = GenerationTask.objects.get(run=gen, participant__name="Lyra", case__external_id="c2")
    assert [len(a["problems"]) > 0 for a in retried.attempts] == [True, False]
    assert "exactly 2 were asked for" in retried.attempts[0]["problems"][0]["message"]
    assert Match.objects.filter(case__benchmark=benchmark).count() == 9  # 3 matches in each of the 3 cases


def _check_generation_prompts(fake_llm: Any) -> None:  # noqa: ANN401
    """Ten generation prompts, none with the reference conclusion; the singleton domain asks for one pair."""
    generation_prompts = prompt_texts(fake_llm.log())
    assert len(generation_prompts) == 10 and not any(SECRET in p for p in generation_prompts)
    assert all("Propose exactly 1 hypothesis-evidence pair" in p for p in generation_prompts if "alarm stayed silent" in p)


def _arena_rules(invalid_key: tuple[str, str, str]) -> list[dict[str, Any]]:
    """JUDGE_1's verdicts; c1 Orion (A) vs Lyra (B) answers in prose first; ``invalid_key`` answers badly three times."""
    rules = []
    for (c, a, b), level in JUDGE_1.items():
        if (c, a, b) == invalid_key:
            rules.append(arena_rule(J1, c, a, b, "I cannot decide.", {"verdict": "A≫B", "reason": "x"}, {"verdict": "A>B"}))
        elif (c, a, b) == ("c1", "Orion", "Lyra"):
            rules.append(arena_rule(J1, c, a, b, "A is the better set.", level))
        else:
            rules.append(arena_rule(J1, c, a, b, level))
    return rules


def _run_first_arena_judge(benchmark: Benchmark, fake_llm: Any, invalid_key: tuple[str, str, str]) -> JudgeRun:  # noqa: ANN401
    """Judge 1's arena run over domain ops (both orders, faults before every answer) has 12 tasks and completes."""
    fake_llm.script(replies=_arena_rules(invalid_key), failures=FAULTS)
    run1 = start(benchmark, fake_llm, select="domain:ops")
    assert ArenaJudgeTask.objects.filter(run=run1).count() == 12  # 6 matches of ops × 2 orders; s1's are not judged
    assert judge_run_execute(run_id=run1.pk) == "completed"
    return run1


def _check_arena_verdicts(run1: JudgeRun, invalid_key: tuple[str, str, str]) -> None:
    """Eleven verdicts accepted as scripted (the prose one on its second attempt); the invalid one keeps its errors."""
    verdicts = list(
        ArenaVerdict.objects.filter(run=run1).select_related("match__first__participant", "match__second__participant")
    )
    assert len(verdicts) == 12 and sum(v.status == "accepted" for v in verdicts) == 11
    for v in verdicts:
        a, b = (v.match.first, v.match.second) if v.order == "original" else (v.match.second, v.match.first)
        key = (v.match.case.external_id, a.participant.name, b.participant.name)
        if key == invalid_key:
            assert (v.status, v.verdict, v.order, len(v.errors)) == ("invalid", None, "reverse", 3)
            assert "A≫B" in v.errors[1] and "missing key 'reason'" in v.errors[2]
        else:
            assert (v.status, v.verdict) == ("accepted", JUDGE_1[key])
            assert v.attempt == (2 if key == ("c1", "Orion", "Lyra") else 1)


def _check_arena_tasks(run1: JudgeRun, vl: Match) -> None:
    """Every task is done after its three failed calls, with one call per answer on top."""
    tasks = {(t.match_id, t.order): t for t in ArenaJudgeTask.objects.filter(run=run1)}
    assert {t.status for t in tasks.values()} == {"done"}
    assert {t.failed_calls for t in tasks.values()} == {3}  # the timeout, the 429 and the 500 of each task
    # 3 failed calls plus one per answer: 1 answer, 2 for the prose-first task, 3 for the invalid one.
    assert sorted(t.calls for t in tasks.values()) == [4] * 10 + [5, 6]
    assert "missing key 'reason'" in tasks[(vl.pk, "reverse")].last_error


def _check_arena_prompts_are_blind(fake_llm: Any) -> None:  # noqa: ANN401
    """Blindness: no participant name (the one in Vega's evidence was redacted), no reference conclusion, no match id."""
    arena_prompts = prompt_texts(fake_llm.log())
    public_ids = list(Match.objects.values_list("public_id", flat=True))
    assert len(arena_prompts) == 51  # 12 tasks × 4 calls, one more for the prose answer, two more for the invalid task
    for text in arena_prompts:
        assert not any(name.lower() in text.lower() for name in MODELS), text
        assert SECRET not in text and not any(pid in text for pid in public_ids)
    assert any("pattern 0. Unlike what" in t for t in arena_prompts)  # the redacted sentence is still there


def _rubric_rules() -> list[dict[str, Any]]:
    """The scripted rubric answers; Lyra on c1 (one pair for two) and Orion on s1 (a distinctness score) answer badly first."""
    rules = []
    for m in MODELS:
        for c in ("c1", "c2", "s1"):
            good = (RUBRIC_S1 if c == "s1" else RUBRIC_OPS)[m] | {"reason": "scripted"}
            bad = {("Lyra", "c1"): good | {"pairs": good["pairs"][:1]}, ("Orion", "s1"): good | {"d": 4}}.get((m, c))
            rules.append(
                {
                    "model": J1,
                    "contains": f"=== SUBMISSION ===\nPair 1\nHypothesis: {hyp(m, c, 0)}",
                    "answers": [bad, good] if bad else [good],
                }
            )
    return rules


def _run_rubric_command(benchmark: Benchmark, fake_llm: Any) -> JudgeRun:  # noqa: ANN401
    """``run_judge --run-type rubric --wait`` completes a rubric run of 9 tasks, all accepted."""
    fake_llm.script(replies=_rubric_rules())
    out = io.StringIO()
    call_command(
        "run_judge",
        str(benchmark.pk),
        "--model",
        J1,
        "--base-url",
        fake_llm.base_url,
        "--run-type",
        "rubric",
        "--wait",
        stdout=out,
    )
    rubric_run = JudgeRun.objects.get(benchmark=benchmark, run_type="rubric")
    assert (rubric_run.subjects, rubric_run.status) == ("hypoarena_rubric", "completed")
    assert "9 tasks" in out.getvalue() and "9 accepted, 0 invalid" in out.getvalue()
    return rubric_run


def _check_rubric_judgments(rubric_run: JudgeRun) -> None:
    """Nine accepted judgments (two on the second attempt); the singleton's scores have no distinctness."""
    assert RubricJudgeTask.objects.filter(run=rubric_run).count() == 9
    assert RubricJudgment.objects.filter(run=rubric_run, status="accepted").count() == 9
    assert sorted(RubricJudgment.objects.filter(run=rubric_run).values_list("attempt", flat=True)) == [1] * 7 + [2, 2]
    orion_s1 = RubricScore.objects.get(run=rubric_run, submission__participant__name="Orion", submission__case__external_id="s1")
    assert (orion_s1.grounding, orion_s1.insight, orion_s1.justification, orion_s1.distinctness) == ([5], [5], [5], None)


def _check_rubric_prompts(fake_llm: Any) -> None:  # noqa: ANN401
    """Eleven rubric prompts stating K, none with the reference conclusion or a model's name."""
    rubric_prompts = prompt_texts(fake_llm.log())
    assert len(rubric_prompts) == 11 and all("This submission has K = " in p for p in rubric_prompts)
    assert not any(SECRET in p or any(n.lower() in p.lower() for n in MODELS) for p in rubric_prompts)


def _check_first_leaderboard(benchmark: Benchmark, run1: JudgeRun) -> tuple[dict[str, Any], dict[str, Any]]:
    """Judge 1's ops leaderboard: WR, ranks, consistency and centred ratings by hand; returns the document and its ops board."""
    doc = run_json(
        "hypoarena_leaderboard", str(benchmark.pk), "--run", str(run1.pk), "--replicates", "20", "--seed", "3", "--json"
    )
    ops = doc["leaderboard"]["domains"]["ops"]
    assert {m: e["wr"] for m, e in ops["models"].items()} == pytest.approx({"Orion": 0.6875, "Vega": 0.53125, "Lyra": 0.28125})
    assert {m: e["rank"] for m, e in ops["models"].items()} == {"Orion": 1, "Vega": 2, "Lyra": 3}
    assert (ops["two_order_matches"], ops["one_order_matches"], ops["cases"]) == (5, 1, 2)
    assert ops["consistency"] == pytest.approx(3 / 5) and ops["conflict_share"] == pytest.approx(1 / 5)
    assert sum(e["rating"] for e in ops["models"].values()) / 3 == pytest.approx(1500)  # centered strengths
    assert set(doc["leaderboard"]["domains"]) == {"ops"}
    return doc, ops


def _check_rubric_beside_leaderboard(doc: dict[str, Any], rubric_run: JudgeRun) -> None:
    """Rubric S by hand (see RUBRIC_OPS and RUBRIC_S1), beside the arena ranks."""
    rubric = doc["rubric"]
    assert rubric["run"]["id"] == rubric_run.pk
    assert {m: e["mean_s"] for m, e in rubric["domains"]["ops"]["models"].items()} == pytest.approx(
        {"Orion": 3.75, "Vega": 3.0, "Lyra": 1.75}
    )
    assert {m: e["mean_s"] for m, e in rubric["domains"]["safety"]["models"].items()} == pytest.approx(
        {"Orion": 5.0, "Vega": 3.0, "Lyra": 2.0}
    )
    assert {m: e["mean_s"] for m, e in rubric["pooled"]["models"].items()} == pytest.approx(
        {"Orion": 12.5 / 3, "Vega": 3.0, "Lyra": 5.5 / 3}
    )
    assert {m: e["delta"] for m, e in rubric["domains"]["ops"]["models"].items()} == {"Orion": 0.0, "Vega": 0.0, "Lyra": 0.0}


def _run_second_arena_judge(benchmark: Benchmark, fake_llm: Any) -> JudgeRun:  # noqa: ANN401
    """Judge 2 on the same matches (the same faults) accepts all 12 verdicts."""
    fake_llm.script(replies=[arena_rule(J2, c, a, b, level) for (c, a, b), level in JUDGE_2.items()], failures=FAULTS)
    run2 = start(benchmark, fake_llm, judge_model=J2, select="domain:ops")
    assert judge_run_execute(run_id=run2.pk) == "completed"
    assert ArenaVerdict.objects.filter(run=run2, status="accepted").count() == 12
    return run2


def _check_pairwise_agreement(run1: JudgeRun, run2: JudgeRun) -> None:
    """Forward verdicts of all 6 matches are shared (judge 1's invalid answer was a reverse one); 4 agree."""
    pairwise = pairwise_verdict_agreement(verdict_frame(run=run1), verdict_frame(run=run2))
    assert (pairwise["pooled"]["shared"], pairwise["pooled"]["agree"]) == (6, 4)
    assert pairwise["pooled"]["agreement"] == pytest.approx(4 / 6)


def _check_second_leaderboard_agreement(benchmark: Benchmark, run2: JudgeRun, ops: dict[str, Any]) -> None:
    """Judge 2's WR by hand, and the rank agreement of the two judges' ratings (``ops`` is judge 1's ops board)."""
    doc2 = run_json("hypoarena_leaderboard", str(benchmark.pk), "--run", str(run2.pk), "--replicates", "20", "--json")
    ops2 = doc2["leaderboard"]["domains"]["ops"]
    # Judge 2's shares: Orion .875 .25 .5 .75, Vega .125 .625 .5 .875, Lyra .75 .375 .25 .125.
    assert {m: e["wr"] for m, e in ops2["models"].items()} == pytest.approx({"Orion": 0.59375, "Vega": 0.53125, "Lyra": 0.375})
    agreement = inter_judge_agreement(
        {"ops": {m: e["rating"] for m, e in ops["models"].items()}}, {"ops": {m: e["rating"] for m, e in ops2["models"].items()}}
    )
    # Both judges rank Orion, Vega, Lyra in that order (their WR order): ρ = τ = 1, no rank shift, the same top 3 (a count).
    assert {k: agreement["pooled"][k] for k in ("spearman", "kendall", "rank_shift", "top_k_overlap", "cells")} == pytest.approx(
        {"spearman": 1.0, "kendall": 1.0, "rank_shift": 0.0, "top_k_overlap": 3.0, "cells": 3}
    )


def test_a_full_hypoarena_cycle_against_the_scripted_endpoint(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path, with_submissions=False)

    # 1. Generation: each model proposes K pairs per case (one pair in the singleton domain); Lyra's first answer on c2
    #    has one pair too few, so it is asked again.
    gen = _run_generation(benchmark, fake_llm)
    _check_generated_submissions(benchmark, gen)
    _check_generation_prompts(fake_llm)

    # 2. Arena judging of domain ops, both orders, with a timeout, a 429 and a 500 before every answer; c1 Orion (A)
    #    vs Lyra (B) first answers in prose (refused, asked again); the reverse order of c2 Vega–Lyra answers badly
    #    three times and ends invalid.
    vl = match_of("c2", "Vega", "Lyra")
    invalid_key = ("c2", vl.second.participant.name, vl.first.participant.name)  # the reverse order shows second as A
    run1 = _run_first_arena_judge(benchmark, fake_llm, invalid_key)
    _check_arena_verdicts(run1, invalid_key)
    _check_arena_tasks(run1, vl)
    _check_arena_prompts_are_blind(fake_llm)

    # 3. Rubric run over every submission (ops: K = 2, s1: K = 1). Two first answers are refused and asked again:
    #    Lyra on c1 with one pair for two, Orion on s1 with a distinctness score for a single pair.
    rubric_run = _run_rubric_command(benchmark, fake_llm)
    _check_rubric_judgments(rubric_run)
    _check_rubric_prompts(fake_llm)

    # 4. The leaderboard of the arena run. Debiased shares (see JUDGE_1): Orion .875 .625 .25 1, Vega .125 .5 .75 .75,
    #    Lyra .375 .5 0 .25: WR .6875, .53125, .28125. Five matches have both orders: 3 consistent, 1 conflict.
    #    Every pair of models meets twice, so BTD orders the models as their WR does.
    doc, ops = _check_first_leaderboard(benchmark, run1)
    _check_rubric_beside_leaderboard(doc, rubric_run)

    # 5. A second judge on the same matches (the same faults), and the agreement of the two.
    run2 = _run_second_arena_judge(benchmark, fake_llm)
    _check_pairwise_agreement(run1, run2)
    _check_second_leaderboard_agreement(benchmark, run2, ops)


# --------------------------------------------------------------------------- generation


def test_a_generation_answer_that_stays_malformed_is_recorded_invalid_and_makes_no_submission(
    tmp_path: Path, fake_llm: Any
) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path, with_submissions=False)
    rules = [{"model": m, "contains": "", "answers": [{"pairs": pairs_of(m, "cx", K)}]} for m in ("Orion", "Vega")]
    rules.insert(
        0,
        {
            "model": "Lyra",
            "contains": "checkout service",
            "answers": ["no JSON here", {"pairs": []}, {"pairs": [{"hypothesis": "h"}] * 2}],
        },
    )
    rules.insert(1, {"model": "Lyra", "contains": "", "answers": [{"pairs": pairs_of("Lyra", "cx", K)}]})
    fake_llm.script(replies=rules)
    run = generation_run_create(benchmark=benchmark, base_url=fake_llm.base_url, k=K, cases="domain:ops")
    assert GenerationTask.objects.filter(run=run).count() == 6  # 2 cases of ops × 3 models
    generation_run_launch(run=run)
    run.refresh_from_db()
    assert run.status == "completed"
    bad = GenerationTask.objects.get(run=run, participant__name="Lyra", case__external_id="c1")
    assert bad.status == "done" and bad.last_error.startswith("invalid:")
    assert [a["problems"][0]["code"] for a in bad.attempts] == ["not_json", "schema", "schema"]
    assert not Submission.objects.filter(participant__name="Lyra", case__external_id="c1").exists()
    assert Submission.objects.filter(case__benchmark=benchmark).count() == 5
    # c1 pairs its two submissions, c2 its three.
    assert Match.objects.filter(case__external_id="c1").count() == 1 and Match.objects.filter(case__external_id="c2").count() == 3


def test_what_a_generation_run_refuses(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path, with_submissions=False)
    with pytest.raises(RunError, match="K must be between 1 and 20"):
        generation_run_create(benchmark=benchmark, base_url=fake_llm.base_url, k=0)
    with pytest.raises(RunError, match="not participants"):
        generation_run_create(benchmark=benchmark, base_url=fake_llm.base_url, participants=["Nova"])
    lit2test = Benchmark.objects.create(name="l2t", version="1")
    with pytest.raises(RunError, match="Lit2Test benchmark"):
        generation_run_create(benchmark=lit2test, base_url=fake_llm.base_url)


# --------------------------------------------------------------------------- guards, resume, replay


def test_hypoarena_and_lit2test_kinds_refuse_each_others_benchmarks(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    lit2test = Benchmark.objects.create(name="l2t", version="1")
    base = {"judge_model": J1, "base_url": fake_llm.base_url}
    for kind, run_type in (("hypoarena", "arena"), ("hypoarena_rubric", "rubric")):
        with pytest.raises(RunError, match="Lit2Test benchmark: it has no HypoArena"):
            judge_run_create(request=JudgeRunRequest(benchmark=lit2test, task_kind=kind, run_type=run_type, **base))
    for pairs in ("all", "controls"):
        with pytest.raises(RunError, match="HypoArena benchmark: it has no Lit2Test"):
            judge_run_create(request=JudgeRunRequest(benchmark=benchmark, select=pairs, **base))
    with pytest.raises(RunError, match="is a participant"):
        judge_run_create(
            request=JudgeRunRequest(
                benchmark=benchmark, task_kind="hypoarena", run_type="arena", **(base | {"judge_model": "vega"})
            )
        )
    with pytest.raises(RunError, match="one of arena, not 'holistic'"):
        judge_run_create(request=JudgeRunRequest(benchmark=benchmark, task_kind="hypoarena", **base))
    with pytest.raises(RunError, match="no matches in domain 'bio'; the domains are ops, safety"):
        judge_run_create(
            request=JudgeRunRequest(benchmark=benchmark, task_kind="hypoarena", run_type="arena", select="domain:bio", **base)
        )
    with pytest.raises(RunError, match="never canonical"):
        judge_run_create(
            request=JudgeRunRequest(benchmark=benchmark, task_kind="hypoarena", run_type="arena", canonical=True, **base)
        )
    # Two submissions that read the same are skipped, not refused: tests/hypoarena/test_same_after_redaction.py.
    # sample:N draws N matches with the seed: the same seed, the same matches.
    runs = [start(benchmark, fake_llm, select="sample:4", seed=5, label=f"s{i}") for i in range(2)]
    chosen = [set(ArenaJudgeTask.objects.filter(run=r).values_list("match_id", "order")) for r in runs]
    assert chosen[0] == chosen[1] and len(chosen[0]) == 8


def test_run_judge_picks_the_hypoarena_kind_from_the_benchmark(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    fake_llm.script(replies=[{"contains": "=== SUBMISSION B ===", "answers": [{"verdict": "A=B", "reason": "even"}]}])
    out = io.StringIO()
    call_command(
        "run_judge",
        str(benchmark.pk),
        "--model",
        J1,
        "--base-url",
        fake_llm.base_url,
        "--pairs",
        "sample:2",
        "--wait",
        stdout=out,
    )
    run = JudgeRun.objects.get(benchmark=benchmark)
    assert (run.subjects, run.run_type, run.prompt_version, run.status) == (
        "hypoarena",
        "arena",
        "hypoarena-arena-v1",
        "completed",
    )
    assert "4 ordered tasks" in out.getvalue() and ArenaVerdict.objects.filter(run=run, status="accepted").count() == 4
    with pytest.raises(CommandError, match="a hypoarena run is one of arena, not 'structured'"):
        call_command("run_judge", str(benchmark.pk), "--model", J1, "--base-url", fake_llm.base_url, "--run-type", "structured")
    with pytest.raises(CommandError, match="HypoArena benchmark: it has no Lit2Test pairs"):
        call_command("run_judge", str(benchmark.pk), "--model", J1, "--base-url", fake_llm.base_url, "--task-kind", "pairs")


def test_a_paused_and_resumed_arena_run_completes_without_duplicates(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    fake_llm.script(replies=[arena_rule(J1, c, a, b, level) for (c, a, b), level in JUDGE_1.items()], latency=0.3)
    run = start(benchmark, fake_llm, select="domain:ops", concurrency=2, timeout=10)
    outcome: dict[str, str] = {}
    driver = threading.Thread(target=lambda: outcome.setdefault("status", judge_run_execute(run_id=run.pk)))
    driver.start()
    deadline = time.monotonic() + 30
    while ArenaVerdict.objects.filter(run=run).count() < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    judge_run_pause(run=run)
    driver.join(30)
    assert outcome["status"] == "paused"
    done_before = ArenaVerdict.objects.filter(run=run).count()
    assert 2 <= done_before < 12
    judge_run_resume(run=run)  # Celery runs in process here: the resumed driver finishes before this returns
    run.refresh_from_db()
    assert run.status == "completed"
    keys = list(ArenaVerdict.objects.filter(run=run).values_list("match_id", "order"))
    assert len(keys) == len(set(keys)) == 12
    assert len(fake_llm.log()) == 12  # no task was asked twice: in-flight answers at the pause were stored, not redone


def test_a_replay_gives_the_stored_verdicts_and_scores_back_without_a_call(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    fake_llm.script(replies=[arena_rule(J1, c, a, b, level) for (c, a, b), level in JUDGE_1.items()])
    first = start(benchmark, fake_llm, select="domain:ops")
    assert judge_run_execute(run_id=first.pk) == "completed"
    calls = len(fake_llm.log())
    replay = start(benchmark, fake_llm, provider="recorded", replay_of=first, base_url="", label="replay", select="domain:ops")
    assert judge_run_execute(run_id=replay.pk) == "completed"
    assert len(fake_llm.log()) == calls

    def verdicts(run: JudgeRun) -> dict[tuple[int, str], str | None]:
        return dict(((v.match_id, v.order), v.verdict) for v in ArenaVerdict.objects.filter(run=run))

    assert verdicts(replay) == verdicts(first) and len(verdicts(first)) == 12
    # A rubric run replays an imported rubric run (its scores, in the judge's answer format).
    hypoarena_import(
        name="arena-runs",
        files={
            "rubric": h.write(
                tmp_path / "rubric.jsonl",
                [
                    {
                        "case_id": "c1",
                        "model": m,
                        "judge": J2,
                        "run_label": "imported",
                        "pairs": [{"g": 4, "l": 3, "j": 2}] * K,
                        "b": 4,
                        "d": 2,
                        "u": 3,
                    }
                    for m in MODELS
                ],
            )
        },
    )
    imported = JudgeRun.objects.get(label="imported")
    assert imported.subjects == "hypoarena_rubric"
    rubric = start(
        benchmark,
        fake_llm,
        provider="recorded",
        replay_of=imported,
        base_url="",
        label="rubric-replay",
        task_kind="hypoarena_rubric",
        run_type="rubric",
        select="domain:ops",
    )
    assert judge_run_execute(run_id=rubric.pk) == "failed"  # c2's submissions have no imported score to replay
    scores = RubricScore.objects.filter(run=rubric)
    assert scores.count() == 3 and {(tuple(s.grounding), tuple(s.justification), s.breadth, s.distinctness) for s in scores} == {
        ((4, 4), (2, 2), 4, 2)
    }


# --------------------------------------------------------------------------- parsers


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "A≫B", "reason": "x"}',
        '{"verdict": "a>b", "reason": "x"}',
        '{"verdict": "A > B", "reason": "x"}',
        '{"verdict": "A>B"}',
        '{"verdict": "A>B", "reason": ""}',
        '{"verdict": "tie", "reason": "x"}',
        "A>B",
        '["A>B"]',
    ],
)
def test_the_arena_parser_refuses_anything_but_the_five_levels(text: str) -> None:
    with pytest.raises(ParseError):
        parse_arena_answer(text)


def test_the_arena_parser_reads_each_level_and_a_fenced_answer() -> None:
    for level in ("A>>B", "A>B", "A=B", "B>A", "B>>A"):
        assert parse_arena_answer(json.dumps({"verdict": level, "reason": "why"})).verdict == level
    assert parse_arena_answer('```json\n{"verdict": " B>>A ", "reason": "why", "extra": 1}\n```').verdict == "B>>A"


def test_the_rubric_parser_holds_k_and_the_scale() -> None:
    two = {"pairs": [{"g": 1, "l": 2, "j": 3}, {"g": 5, "l": 5, "j": 5}], "b": 2, "d": 3, "u": 4}
    assert parse_rubric_answer(json.dumps(two), k=2).scores() == two
    one = {"pairs": [{"g": 1, "l": 2, "j": 3}], "b": 2, "d": None, "u": 4}
    assert parse_rubric_answer(json.dumps(one), k=1).d is None
    assert parse_rubric_answer(json.dumps({k: v for k, v in one.items() if k != "d"}), k=1).d is None
    for bad, k, message in (
        (two, 3, "one entry per pair"),
        (one | {"d": 2}, 1, "must be null"),
        (two | {"d": None}, 2, "'d' must be a whole number"),
        (two | {"b": 6}, 2, "'b' must be a whole number 1-5"),
        (two | {"u": True}, 2, "'u'"),
        (two | {"b": 2.5}, 2, "'b'"),
        ({"pairs": [{"g": 1, "l": 2}, {"g": 1, "l": 1, "j": 1}], "b": 1, "d": 1, "u": 1}, 2, "pairs\\[1\\].j"),
        (two | {"reason": 3}, 2, "'reason' must be a string"),
    ):
        with pytest.raises(ParseError, match=message):
            parse_rubric_answer(json.dumps(bad), k=k)
