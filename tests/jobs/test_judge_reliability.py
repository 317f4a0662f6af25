"""The judge-reliability panel of a run (issue 26): the same document from ``manage.py judge_reliability --json``, the
API and the run page, for every kind that compares two sides (Lit2Test pairs, controls, HypoArena arena runs,
Reconstruction Swiss votes); checked against counts taken straight from the stored rows or the release files."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from arena.models import JudgeRun, OrderedJudgment
from jobs.reliability import run_reliability
from tests.clients import client_for

SIX = ("literature_gap", "hypothesis", "minimal_test", "decisive_metric", "supporting_result", "falsifying_result")


def _command(*args: str) -> str:
    out = StringIO()
    call_command("judge_reliability", *args, stdout=out)
    return out.getvalue()


def _page_numbers(html: str) -> dict[str, str]:
    """The value cell of each row of the page's panel, by the row's id."""
    return dict(re.findall(r'<tr id="(rel-[\w-]+)"><th scope="row">.*?</th><td class="num">([^<]*)</td>', html, re.S))


def _shown(value: float | None) -> str:
    """As researcher pages write a figure: three decimals, a real minus sign (U+2212)."""
    return "—" if value is None else f"{value:.3f}".replace("-", "\u2212")


def _release_longer_wins(release_dir: Path) -> tuple[int, int]:
    """(verdicts the longer proposal won, decisive verdicts with two proposals of unequal length), from the files."""
    words = {}
    for line in (release_dir / "proposals.jsonl").read_text().splitlines():
        row = json.loads(line)
        words[(row["context_id"], row["model"])] = sum(len(str(row[f]).split()) for f in SIX)
    agree = n = 0
    for line in (release_dir / "corrected_folded_pairs.jsonl").read_text().splitlines():
        row = json.loads(line)
        a, b = row["model_pair"]
        if (row["context_id"], a) not in words or (row["context_id"], b) not in words:
            continue
        wa, wb = words[(row["context_id"], a)], words[(row["context_id"], b)]
        if wa == wb:
            continue
        for winner in (row["gemini_original_winner"], row["gemini_reverse_winner"]):
            n += 1
            agree += winner == (a if wa > wb else b)
    return agree, n


def test_the_release_panel_is_the_same_from_the_command_the_api_and_the_page(
    imported, researcher, release_dir: Path, django_assert_num_queries
) -> None:
    run = imported.runs.select_related("benchmark").get()
    # A fixed number of queries whatever the run's size: its verdicts, their texts, the participants' names, and a few
    # invalid answers.
    with django_assert_num_queries(4):
        run_reliability(run)
    doc = json.loads(_command(imported.name, "--run", str(run.pk), "--json"))
    client = client_for(researcher)
    api = client.get(reverse("jobs:api-run-reliability", args=[run.pk]))
    assert api.status_code == 200 and api.json() == doc
    stable = sum(
        json.loads(line)["stability_label"] == "order-stable"
        for line in (release_dir / "corrected_folded_pairs.jsonl").read_text().splitlines()
    )
    c = doc["position_consistency"]
    assert (c["items"], c["consistent"]) == (1200, stable) == (1200, 950)
    assert doc["verdicts"] == {"total": 2400, "valid": 2400, "invalid": 0, "ties": 0}
    # The release did not record which side was shown first: no order effect, no first-shown share.
    assert doc["order_effect"]["reason"] == "no_known_order" and doc["first_shown"]["decisive"] == 0
    # The judge (Gemini) is of no participant's family.
    s = doc["self_preference"]
    assert (s["judge_family"], s["reason"], s["participants_of_family"]) == ("google", "no_own_family_participant", [])
    agree, n = _release_longer_wins(release_dir)
    assert (doc["baselines"]["longer_wins"]["agree"], doc["baselines"]["longer_wins"]["n"]) == (agree, n)
    assert doc["baselines"]["shorter_wins"]["agree"] == n - agree

    html = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    shown = _page_numbers(html)
    assert shown == {
        "rel-consistency": _shown(c["share"]),
        "rel-first-shown": "—",
        "rel-fairness": "—",
        "rel-order-effect": "—",
        "rel-self-preference": "—",
        "rel-longer": _shown(doc["baselines"]["longer_wins"]["share"]),
        "rel-shorter": _shown(doc["baselines"]["shorter_wins"]["share"]),
        "rel-first-baseline": "—",
        "rel-invalid": "0",
    }
    assert doc["order_effect"]["why"] in html
    # The leaderboard of the run shows the same panel, drawn from the cache the second time (no refit).
    leaderboard = client.get(reverse("lit2test:leaderboard", args=[imported.pk]) + f"?run={run.pk}").content.decode()
    assert _page_numbers(leaderboard) == shown
    with django_assert_num_queries(1):  # the verdicts' count and newest id, the cache key
        from jobs.templatetags.reliability_panel import run_reliability as panel

        assert panel(run)["position_consistency"] == c
    text = _command(imported.name, "--run", str(run.pk))
    assert f"position consistency: {_shown(c['share'])} (950 of 1200 items" in text
    assert "order effect γ: not estimable" in text


@pytest.fixture
def ordered_run(imported):  # noqa: ANN001, ANN201
    """A run of the release's verdicts with the side shown first recorded (A first in the original order, B in the
    reverse), and two invalid answers."""
    source = imported.runs.get()
    run = JudgeRun.objects.create(
        benchmark=imported, label="with sides", judge_model="Claude-Judge", provider=JudgeRun.Provider.RECORDED
    )
    rows = []
    for j in OrderedJudgment.objects.filter(run=source).select_related("pair"):
        shown = j.pair.participant_a_id if j.order == "original" else j.pair.participant_b_id
        rows.append(
            OrderedJudgment(run=run, pair_id=j.pair_id, order=j.order, shown_a_id=shown, winner_id=j.winner_id, is_tie=j.is_tie)
        )
    rows[0].status, rows[0].winner_id, rows[0].raw_response, rows[0].errors = "invalid", None, "not json {", ["no JSON object"]
    rows[1].status, rows[1].winner_id, rows[1].raw_response = "invalid", None, "A or B?"
    OrderedJudgment.objects.bulk_create(rows)
    return run


def test_a_run_that_recorded_the_order_has_its_order_effect_and_first_shown_share(ordered_run, researcher) -> None:
    run = ordered_run
    decisive = OrderedJudgment.objects.filter(run=run, status="accepted", is_tie=False)
    first_wins = sum(j.winner_id == j.shown_a_id for j in decisive)
    doc = json.loads(_command(run.benchmark.name, "--run", str(run.pk), "--json", "--replicates", "100"))
    f, o = doc["first_shown"], doc["order_effect"]
    assert (f["decisive"], f["first_wins"]) == (decisive.count(), first_wins)
    assert o["estimable"] and o["ci"][0] <= o["gamma"] <= o["ci"][1] and o["replicates"] == 100
    assert doc["verdicts"]["invalid"] == 2
    assert [e["answer"] for e in doc["invalid_examples"]] == ["not json {", "A or B?"]
    assert doc["invalid_examples"][0]["errors"] == ["no JSON object"]
    # A Claude judge meets its own family's participant; alone it cannot tell self-preference from strength.
    s = doc["self_preference"]
    assert s["participants_of_family"] == ["Claude-Sonnet-4.6"] and s["reason"] == "confounded_without_reference"
    # The page shows the document at its default replicates, as the API gives it.
    rita = client_for(researcher)
    page_doc = rita.get(reverse("jobs:api-run-reliability", args=[run.pk])).json()
    assert page_doc["first_shown"] == f and page_doc["order_effect"]["gamma"] == o["gamma"]
    o = page_doc["order_effect"]
    html = rita.get(reverse("jobs:run", args=[run.pk])).content.decode()
    shown = _page_numbers(html)
    assert shown["rel-first-shown"] == _shown(f["share"]) and shown["rel-invalid"] == "2"
    assert shown["rel-order-effect"] == _shown(o["gamma"])
    assert shown["rel-fairness"] == _shown(f["fairness"])
    assert f"[{_shown(o['ci'][0])}, {_shown(o['ci'][1])}]" in html


def test_a_reference_run_by_another_family_makes_self_preference_estimable(ordered_run) -> None:
    reference = ordered_run.benchmark.runs.get(label="corrected_folded_pairs")  # Gemini: another family
    doc = json.loads(
        _command(
            ordered_run.benchmark.name,
            "--run",
            str(ordered_run.pk),
            "--reference-run",
            str(reference.pk),
            "--json",
            "--replicates",
            "50",
        )
    )
    s = doc["self_preference"]
    assert s["estimable"] and s["ci"][0] <= s["delta"] <= s["ci"][1]
    assert doc["references"] == [{"id": reference.pk, "judge_model": reference.judge_model, "label": reference.label}]
    # The same verdicts in both runs (but the two answers made invalid): the Claude judge prefers Claude as Gemini does.
    assert s["delta"] == pytest.approx(0.0, abs=0.01)
    assert s["ci"][0] <= 0 <= s["ci"][1] + 1e-9


def test_the_command_refuses_a_run_of_another_benchmark_and_says_what_to_do(imported) -> None:
    with pytest.raises(CommandError, match=r"has no judge run 999999; its runs are listed by the runs page"):
        _command(imported.name, "--run", "999999")


def test_the_api_is_for_researchers_and_refuses_what_it_cannot_do(imported, researcher, annotator, outsider) -> None:
    run = imported.runs.get()
    url = reverse("jobs:api-run-reliability", args=[run.pk])
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(outsider).get(url).status_code == 403
    rita = client_for(researcher)
    assert rita.post(url).status_code == 405
    assert rita.get(reverse("jobs:api-run-reliability", args=[999999])).status_code == 404
    bad = rita.get(url, {"replicates": "-1"})
    assert bad.status_code == 400 and list(bad.json()) == ["replicates"]
    # A bad id among the references is named by its place, in the API's flat 400 shape (found by the schema fuzz test).
    huge = rita.get(url, {"reference": [str(run.pk), str(2**63)]})
    assert huge.status_code == 400 and huge.json() == {
        "reference": ["value 2: Ensure this value is less than or equal to 9223372036854775807."]
    }
    own = rita.get(url, {"reference": str(run.pk)})  # a run is not its own reference
    assert own.status_code == 400 and "must be another run of canonical pairs" in own.json()["reference"][0]
    # Listed by the API root and documented by the schema, as every operation is.
    paths = {(e["method"], e["path"]) for e in rita.get("/api/").json()["endpoints"]}
    assert ("GET", "/api/runs/{run_id}/reliability/") in paths
    schema = rita.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/runs/{run_id}/reliability/"]["get"]
    assert operation["summary"] == "Judge reliability of a run"
    assert {p["name"] for p in operation["parameters"]} >= {"run_id", "reference", "replicates", "seed"}


def _first_label_won(verdicts: list[str | None], wins: tuple[str, ...]) -> int:
    """Verdicts in which the side labelled A (always the one shown first, in the order's own labels) won."""
    return sum(v in wins for v in verdicts)


def test_every_kind_that_compares_two_sides_has_the_panel_and_others_say_they_have_none(imported, researcher) -> None:
    from controls.demo import HOLISTIC_LABEL, demo_controls_record
    from controls.models import ControlJudgment, ControlVariant
    from controls.services import controls_generate
    from hypoarena.demo import demo_build
    from hypoarena.models import ArenaVerdict
    from reconstruction import demo as reconstruction_demo
    from reconstruction.models import SwissVote

    controls_generate(benchmark=imported, kinds=["clear", "rendering", "falsifier_off", "naive"], contexts=2, seed=0)
    ControlVariant.objects.filter(benchmark=imported).update(status=ControlVariant.Status.APPROVED)
    demo_controls_record(benchmark=imported, execute=False)
    controls_run = JudgeRun.objects.get(benchmark=imported, label=HOLISTIC_LABEL)
    arena_benchmark = demo_build(cases_per_domain=2).benchmark
    reconstruction_demo.demo_build()
    reconstruction_demo.demo_swiss()
    cases = [(controls_run, ControlJudgment, ("A",))]
    cases += [
        (r, ArenaVerdict, ("A>>B", "A>B")) for r in JudgeRun.objects.filter(benchmark=arena_benchmark, subjects="hypoarena")[:1]
    ]
    cases += [(r, SwissVote, ("A",)) for r in JudgeRun.objects.filter(subjects="reconstruction_swiss")[:1]]
    assert len(cases) == 3
    for run, model, wins in cases:
        stored = list(model.objects.filter(run=run).values_list("verdict", flat=True))
        doc = json.loads(_command(str(run.benchmark_id), "--run", str(run.pk), "--json", "--replicates", "20"))
        assert doc["available"], run.subjects
        assert doc["verdicts"]["total"] == len(stored), run.subjects
        assert doc["first_shown"]["first_wins"] == _first_label_won(stored, wins), run.subjects
        assert doc["order_effect"]["estimable"] or doc["order_effect"]["reason"] == "not_identified", run.subjects
    # The demo's controls judge is "the longer text wins" (ties within 2%): the baseline agrees with every decisive verdict.
    doc = json.loads(_command(str(imported.pk), "--run", str(controls_run.pk), "--json", "--replicates", "0"))
    assert doc["baselines"]["longer_wins"]["n"] > 0 and doc["baselines"]["longer_wins"]["share"] == 1.0
    # A Swiss judge recuses on its own family: no own-family comparison to measure.
    swiss = cases[2][0]
    doc = json.loads(_command(str(swiss.benchmark_id), "--run", str(swiss.pk), "--json", "--replicates", "0"))
    assert doc["self_preference"]["judge_family_source"] == "declared"
    assert doc["self_preference"]["reason"] == "no_own_family_participant"
    # A rubric run scores one submission at a time: no panel, and its page says why.
    rubric = JudgeRun.objects.get(benchmark=arena_benchmark, subjects="hypoarena_rubric")
    doc = json.loads(_command(str(rubric.benchmark_id), "--run", str(rubric.pk), "--json"))
    assert not doc["available"] and "does not compare two sides" in doc["unavailable_reason"]
    html = client_for(researcher).get(reverse("jobs:run", args=[rubric.pk])).content.decode()
    assert 'id="reliability-unavailable"' in html
    # A wrong reference is refused there too, as for every other run (it was ignored: the panel is unavailable anyway).
    wrong = client_for(researcher).get(
        reverse("jobs:api-run-reliability", args=[rubric.pk]), {"reference": str(controls_run.pk), "replicates": "0"}
    )
    assert wrong.status_code == 400 and f"reference run {controls_run.pk} must be another run of" in wrong.json()["reference"][0]
