"""The seeded demo: what it stores is what its constants say, a second run changes nothing, and its verdicts come
from the Davidson model it documents."""

from __future__ import annotations

import math
from io import StringIO

import pytest
from django.core.management import call_command

from arena.models import Benchmark, JudgeRun, Participant
from hypoarena import demo
from hypoarena.models import ArenaVerdict, Case, Domain, Match, RubricScore, Submission

pytestmark = pytest.mark.django_db


def stored_counts(benchmark: Benchmark) -> demo.DemoCounts:
    runs = JudgeRun.objects.filter(benchmark=benchmark)
    per_run = {r.label: ArenaVerdict.objects.filter(run=r, status="accepted").count() for r in runs.filter(run_type="arena")}
    assert len(set(per_run.values())) == 1, per_run
    return demo.DemoCounts(
        domains=Domain.objects.filter(benchmark=benchmark).count(),
        cases=Case.objects.filter(benchmark=benchmark).count(),
        models=Participant.objects.filter(benchmark=benchmark).count(),
        submissions=Submission.objects.filter(case__benchmark=benchmark).count(),
        matches=Match.objects.filter(case__benchmark=benchmark).count(),
        verdicts_per_run=next(iter(per_run.values())),
        runs=runs.count(),
        rubric_scores=RubricScore.objects.filter(run__benchmark=benchmark).count(),
    )


def test_the_demo_stores_what_the_generator_says_and_a_second_run_changes_nothing() -> None:
    out = StringIO()
    call_command("demo_hypoarena", "--cases", "2", stdout=out)
    benchmark = Benchmark.objects.get(name=demo.DEMO_NAME)
    assert benchmark.protocol == "hypoarena"
    # 3 domains x 2 cases; 8 models; 28 matches a case; both orders; two arena runs and one rubric run.
    expected = demo.DemoCounts(
        domains=3, cases=6, models=8, submissions=48, matches=168, verdicts_per_run=336, runs=3, rubric_scores=48
    )
    assert demo.demo_counts(2) == expected
    assert stored_counts(benchmark) == expected
    call_command("demo_hypoarena", "--cases", "2", stdout=out)
    assert (
        out.getvalue().splitlines()[-1]
        == f"nothing new: cases.jsonl, submissions.jsonl, verdicts.jsonl, rubric.jsonl already imported into {benchmark}"
    )
    assert stored_counts(benchmark) == expected
    assert set(Submission.objects.filter(is_reference=True).values_list("participant__name", flat=True)) == {"Reference"}
    singleton = Domain.objects.get(singleton=True)
    assert singleton.name == "safety_investigation"
    assert {len(s.pairs) for s in Submission.objects.filter(case__domain=singleton)} == {1}
    assert {len(s.pairs) for s in Submission.objects.exclude(case__domain=singleton)} == {3}
    assert set(RubricScore.objects.filter(submission__case__domain=singleton).values_list("distinctness", flat=True)) == {None}
    assert {r.provider for r in JudgeRun.objects.all()} == {"recorded"} and {
        (r.run_type, r.subjects) for r in JudgeRun.objects.all()
    } == {
        ("arena", "hypoarena"),
        ("rubric", "hypoarena_rubric"),
    }


def test_davidson_probabilities_match_the_formula_by_hand() -> None:
    # Equal strengths: 1 / (2 + ν) each way, ν / (2 + ν) a tie.
    assert demo.davidson_probabilities(0.0, 0.0, 0.5) == pytest.approx((0.4, 0.2, 0.4))
    # π_A = e, π_B = 1, ν = 1: denominator e + 1 + √e.
    d = math.e + 1 + math.sqrt(math.e)
    assert demo.davidson_probabilities(1.0, 0.0, 1.0) == pytest.approx((math.e / d, math.sqrt(math.e) / d, 1 / d))


def test_the_strongest_model_wins_more_of_its_matches_than_the_weakest_in_the_generated_verdicts() -> None:
    records = demo.demo_records(cases_per_domain=demo.CASES_PER_DOMAIN)
    share = {"A>>B": 1.0, "A>B": 0.75, "A=B": 0.5, "B>A": 0.25, "B>>A": 0.0}
    won: dict[str, list[float]] = {}
    for v in records["verdicts"]:
        if v["judge"] == demo.JUDGES[0][0]:
            won.setdefault(v["model_a"], []).append(share[v["verdict"]])
            won.setdefault(v["model_b"], []).append(1 - share[v["verdict"]])
    mean = {m: sum(x) / len(x) for m, x in won.items()}
    assert mean["Aster-L"] > 0.6 > 0.4 > mean["Gorse-Tiny"]
    assert len(records["verdicts"]) == 2 * 2 * demo.demo_counts().matches  # two judges, both orders
