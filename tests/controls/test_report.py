"""The diagnostic controls report end to end: variants imported, judged by ``run_judge … --pairs controls`` against
the scripted judge (holistic and structured), and every number of ``controls_report`` checked against values
worked out by hand from what the judge was told to answer; the API gives the same document; the leaderboard never
sees a control.

The scripted judge answers each ordered comparison by the prompt's exact text (the fake server's ``replies``
rules): the test decides who wins each one (clean, variant or tie) and, in a structured run, both sides' 0-4
scores; which label that is comes from the seeded orientation (``controls.judging.clean_shown``).
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from arena.models import Benchmark, JudgeRun
from controls.judging import clean_shown, render_control_task
from controls.models import ControlVariant
from controls.reports import ControlReportError, controls_report
from jobs.prompts import PROMPTS
from lit2test.prompts import DEFAULT_PROMPT
from tests.clients import client_for

from . import helpers as h

pytestmark = pytest.mark.django_db(transaction=True)

JUDGE = "Judge-Local"
TARGETS = ("grounding", "decisive_metric", "falsifiability")
DIMS = ("grounding", "hypothesis_specificity", "minimality_feasibility", "decisive_metric", "falsifiability")
ORDERS = ("original", "reverse")
REPLICATES = 200

Key = tuple[int, str, str | None]  # (source index, kind, target)


# --------------------------------------------------------------------------- set-up


def load(
    benchmark: Benchmark,
    tmp_path: Path,
    kinds: tuple[str, ...] = ("clear", "subtle", "sham", "rendering", "falsifier_off", "naive"),
) -> dict[Key, ControlVariant]:
    """Clear, subtle and sham variants on every target of two sources; rendering, falsifier_off and naive on three."""
    sources = h.sources(benchmark, 3)
    rows = [h.line(s, k, t) for s in sources[:2] for k in ("clear", "subtle", "sham") if k in kinds for t in TARGETS]
    rows += [h.line(s, k) for s in sources for k in ("rendering", "falsifier_off", "naive") if k in kinds]
    call_command("import_controls", str(benchmark.pk), str(h.write(tmp_path / "controls.jsonl", rows)), stdout=StringIO())
    ControlVariant.objects.update(status="approved")
    index = {s.pk: i for i, s in enumerate(sources)}
    return {(index[v.source_id], v.kind, v.target): v for v in ControlVariant.objects.select_related("context")}


def default_winners(variants: dict[Key, ControlVariant]) -> dict[tuple[int, str, str | None, str], str]:
    """The clean side wins everything, except that a sham is a tie (a harmless rewrite should not move the judge)."""
    return {(*key, order): ("tie" if key[1] == "sham" else "clean") for key in variants for order in ORDERS}


def script(fake: Any, benchmark: Benchmark, variants: dict[Key, ControlVariant], winners: dict, scores: Any = None) -> None:  # noqa: ANN401
    """One canned answer per ordered comparison, matched on the prompt's whole user message. ``scores(key)`` gives
    (clean side, variant side) 0-4 scores for a structured run."""
    template = PROMPTS[DEFAULT_PROMPT["structured" if scores else "holistic"]]
    rules = []
    for (*key, order), winner in winners.items():
        variant = variants[tuple(key)]
        rendered = render_control_task(
            benchmark=benchmark, variant=variant, order=order, template=template, context=variant.context
        )
        clean = clean_shown(benchmark, variant, order)
        other = "B" if clean == "A" else "A"
        answer: dict[str, Any] = {
            "winner": {"clean": clean, "variant": other, "tie": "tie"}[winner],
            "confidence": "high",
            "main_reason": "scripted",
            "weakness_a": "",
            "weakness_b": "",
        }
        if scores:
            clean_scores, variant_scores = scores((*key, order))
            answer["scores"] = {clean: clean_scores, other: variant_scores}
        rules.append({"contains": rendered.user, "answers": [answer]})
    # Anything no rule matches would get a random verdict; the log check after each run makes sure nothing did.
    fake.script(replies=rules, judge={"policy": "random", "seed": 1})


def run_judge(benchmark: Benchmark, fake: Any, *args: str) -> JudgeRun:  # noqa: ANN401
    before = set(JudgeRun.objects.values_list("pk", flat=True))
    call_command(
        "run_judge",
        str(benchmark.pk),
        "--model",
        JUDGE,
        "--base-url",
        fake.base_url,
        "--pairs",
        "controls",
        *args,
        stdout=StringIO(),
    )
    [run] = JudgeRun.objects.exclude(pk__in=before)
    run.refresh_from_db()
    assert run.status == "completed" and run.subjects == "controls"
    chats = [e for e in fake.log() if e.get("task")]
    assert chats and all(e.get("reply") is not None for e in chats), "a comparison got no scripted answer"
    return run


def report(benchmark: Benchmark, *args: str) -> str:
    out = StringIO()
    call_command("controls_report", str(benchmark.pk), *args, stdout=out)
    return out.getvalue()


def report_json(benchmark: Benchmark, *args: str) -> dict[str, Any]:
    text = report(benchmark, *args, "--json", "--replicates", str(REPLICATES))
    assert text.count("\n") <= 1  # exactly one JSON object
    return json.loads(text)


def leaderboards(benchmark: Benchmark, client: Client) -> tuple[str, dict]:
    out = StringIO()
    call_command("leaderboard", str(benchmark.pk), "--json", "--replicates", "20", "--seed", "3", stdout=out)
    api = client.get(f"/api/benchmarks/{benchmark.pk}/leaderboard/", {"replicates": 20, "seed": 3})
    assert api.status_code == 200
    return out.getvalue(), api.json()


def assert_ci(estimate: dict[str, Any], value_key: str, low: float, high: float) -> None:
    """The interval holds the estimate and stays within [low, high] (the range of the cases' own values: a percentile
    bootstrap of a ratio of sums cannot leave it); degenerate when low == high."""
    value, ci = estimate[value_key], estimate["ci"]
    assert ci is not None and ci[0] <= value <= ci[1], estimate
    assert low - 1e-12 <= ci[0] and ci[1] <= high + 1e-12, estimate
    if low == high:
        assert ci == [pytest.approx(low), pytest.approx(low)]


# --------------------------------------------------------------------------- the whole report


def holistic_plan(variants: dict[Key, ControlVariant]) -> dict:
    w = default_winners(variants)
    w[(0, "clear", "decisive_metric", "reverse")] = "variant"  # clear decisive_metric: 3/4
    w[(0, "subtle", "grounding", "reverse")] = "variant"  # the variant wins one order: P(clean | subtle) 3/4
    w[(1, "subtle", "decisive_metric", "original")] = w[(1, "subtle", "decisive_metric", "reverse")] = "tie"  # 2/4
    # rendering: source 0 schema wins both orders (a flip); source 1 ties both (same verdict, a tie); source 2 the
    # clean side wins the original order and the prose the reverse one: the same position won twice (same verdict).
    w[(1, "rendering", None, "original")] = w[(1, "rendering", None, "reverse")] = "tie"
    w[(2, "rendering", None, "reverse")] = "variant"
    w[(1, "falsifier_off", None, "original")] = "tie"
    w[(2, "falsifier_off", None, "original")] = "variant"
    w[(2, "naive", None, "original")] = "variant"
    return w


DROPS = {  # clear: the target score the corruption costs, by (source, order)
    "grounding": {(0, "original"): 2, (0, "reverse"): 2, (1, "original"): 3, (1, "reverse"): 1},
    "decisive_metric": dict.fromkeys([(s, o) for s in (0, 1) for o in ORDERS], 1),
    "falsifiability": dict.fromkeys([(s, o) for s in (0, 1) for o in ORDERS], 3),
}


def structured_scores(key: tuple[int, str, str | None, str]) -> tuple[dict[str, int], dict[str, int]]:
    """(clean, variant) scores: the clean side 3 everywhere; the variant loses on its target (clear as DROPS; subtle 1 on
    source 0, nothing on source 1), one clear variant also loses a point off target, falsifier_off loses falsifiability,
    a naive proposal scores 0 everywhere."""
    source, kind, target, order = key
    clean = dict.fromkeys(DIMS, 3)
    variant = dict(clean)
    if kind == "clear":
        variant[target] = 3 - DROPS[target][(source, order)]
        if (source, target, order) == (0, "grounding", "original"):
            variant["hypothesis_specificity"] = 2
    elif kind == "subtle" and source == 0:
        variant[target] = 2
    elif kind == "falsifier_off":
        variant["falsifiability"] = 1
    elif kind == "naive":
        variant = dict.fromkeys(DIMS, 0)
    return clean, variant


def _check_no_report_before_any_run(imported: Benchmark) -> None:
    """Without a controls run the report refuses and says how to launch one."""
    with pytest.raises(CommandError, match=r"has no diagnostic controls run; launch one with run_judge .* --pairs controls"):
        report(imported)


def _load_all_variants(imported: Benchmark, tmp_path: Path) -> dict[Key, ControlVariant]:
    """Every kind of variant is imported and approved: 9 on each of two sources, 3 on each of three."""
    variants = load(imported, tmp_path)
    assert len(variants) == 2 * 9 + 3 * 3
    return variants


def _judge_both_runs(
    imported: Benchmark,
    fake_llm: Any,  # noqa: ANN401
    variants: dict[Key, ControlVariant],
) -> tuple[JudgeRun, JudgeRun, dict]:
    """A holistic run, then a structured one whose overall verdicts differ in two places; returns both and its winners."""
    holistic_winners = holistic_plan(variants)
    script(fake_llm, imported, variants, holistic_winners)
    holistic = run_judge(imported, fake_llm, "--label", "holistic")
    structured_winners = dict(holistic_winners)
    structured_winners[(0, "subtle", "grounding", "reverse")] = "clean"  # two overall verdicts differ from the holistic run's
    structured_winners[(1, "rendering", None, "original")] = "clean"
    script(fake_llm, imported, variants, structured_winners, scores=structured_scores)
    structured = run_judge(imported, fake_llm, "--label", "structured", "--run-type", "structured")
    assert len([e for e in fake_llm.log() if e.get("task")]) == 54  # 27 variants, both orders
    return holistic, structured, structured_winners


def _report_document(imported: Benchmark, holistic: JudgeRun, structured: JudgeRun) -> dict[str, Any]:
    """The JSON report of both runs names them, the benchmark and the bootstrap settings."""
    doc = report_json(imported, "--run", str(holistic.pk), "--structured-run", str(structured.pk), "--seed", "5")
    assert doc["runs"]["run"]["id"] == holistic.pk and doc["runs"]["structured_run"]["id"] == structured.pk
    assert doc["benchmark"]["id"] == imported.pk
    assert doc["method"]["replicates"] == REPLICATES and doc["method"]["seed"] == 5
    return doc


def _check_clear(doc: dict[str, Any]) -> None:
    """Clear: counts, target drops (clean − variant on the target) and non-target drifts (the other four dimensions)."""
    clear = doc["clear"]
    assert {t: (c["clean_wins"], c["ordered"], c["variant_wins"], c["ties"], c["cases"]) for t, c in clear.items()} == {
        "grounding": (4, 4, 0, 0, 2),
        "decisive_metric": (3, 4, 1, 0, 2),
        "falsifiability": (4, 4, 0, 0, 2),
    }
    assert clear["grounding"]["target_drop"]["mean"] == pytest.approx((2 + 2 + 3 + 1) / 4)
    assert clear["grounding"]["nontarget_drift"]["mean"] == pytest.approx(1 / 16)  # one point, 4 judgments × 4 dimensions
    assert clear["decisive_metric"]["target_drop"]["mean"] == pytest.approx(1.0)
    assert clear["falsifiability"]["target_drop"]["mean"] == pytest.approx(3.0)
    for t in ("decisive_metric", "falsifiability"):
        assert clear[t]["nontarget_drift"]["mean"] == 0.0
        assert_ci(clear[t]["nontarget_drift"], "mean", 0.0, 0.0)
    assert_ci(clear["grounding"]["target_drop"], "mean", 2.0, 2.0)  # each source's two orders average 2
    assert_ci(clear["grounding"]["nontarget_drift"], "mean", 0.0, 1 / 8)  # source 0: 1/8, source 1: 0
    assert_ci(clear["decisive_metric"]["target_drop"], "mean", 1.0, 1.0)
    assert_ci(clear["falsifiability"]["target_drop"], "mean", 3.0, 3.0)


def _check_subtle_against_sham(doc: dict[str, Any]) -> None:
    """Subtle against sham: every sham a tie, so the gate passes and P(clean | sham) is 0."""
    subtle = doc["subtle"]
    assert {t: (s["p_clean_subtle"], s["p_clean_sham"], s["adjusted"]["value"]) for t, s in subtle.items()} == {
        "grounding": (0.75, 0.0, 0.75),
        "decisive_metric": (0.5, 0.0, 0.5),
        "falsifiability": (1.0, 0.0, 1.0),
    }
    for t in TARGETS:
        gate = subtle[t]["sham_gate"]
        assert (gate["clean_wins"], gate["ties"], gate["sham_wins"], gate["ordered"], gate["passed"]) == (0, 4, 0, 4, True)
        assert subtle[t]["target_drop"]["mean"] == pytest.approx(0.5)  # source 0 loses 1 point, source 1 none
        assert subtle[t]["nontarget_drift"]["mean"] == 0.0
        assert_ci(subtle[t]["target_drop"], "mean", 0.0, 1.0)
    assert_ci(subtle["grounding"]["adjusted"], "value", 0.5, 1.0)  # per source: 1/2 and 2/2
    assert_ci(subtle["decisive_metric"]["adjusted"], "value", 0.0, 1.0)
    assert_ci(subtle["falsifiability"]["adjusted"], "value", 1.0, 1.0)


def _check_rendering_falsifier_and_naive(doc: dict[str, Any]) -> None:
    """The rendering, falsifier_off and naive sections' counts and the falsifier preference, by hand."""
    assert doc["rendering"] == {
        "pairs": 3,
        "same_verdict": 2,
        "flips": 1,
        "ties": 1,
        "schema_preferred": 1,
        "prose_preferred": 0,
        "incomplete": 0,
    }
    falsifier = doc["falsifier"]
    assert {k: falsifier[k] for k in ("pairs", "ordered", "filled_wins", "empty_wins", "ties")} == {
        "pairs": 3,
        "ordered": 6,
        "filled_wins": 4,
        "empty_wins": 1,
        "ties": 1,
    }
    assert falsifier["preference"]["value"] == pytest.approx((4 - 1) / 6)
    assert_ci(falsifier["preference"], "value", 0.0, 1.0)  # per source: 1, 1/2, 0
    assert doc["naive"] == {"pairs": 3, "ordered": 6, "real_wins": 5, "naive_wins": 1, "ties": 0, "stable_real_wins": 2}


def _check_dimension_audit(doc: dict[str, Any], structured_winners: dict) -> None:
    """The audit: every scored proposal of the structured run (both sides of 54 judgments), and 52 of 54 overall verdicts
    the same as the holistic run's."""
    audit = doc["dimension_audit"]
    assert audit["agreement_counts"] == {"agree": 52, "compared": 54}
    assert audit["structured_vs_holistic_agreement"] == pytest.approx(52 / 54)
    sums = dict.fromkeys(DIMS, 0)
    for key in structured_winners:
        clean_scores, variant_scores = structured_scores(key)
        for d in DIMS:
            sums[d] += clean_scores[d] + variant_scores[d]
    assert audit["mean_scores"] == {d: pytest.approx(sums[d] / 108) for d in DIMS}
    # By hand for one: 54 clean 3s; the variants 3 except 6 naive 0s and the one off-target 2.
    assert audit["mean_scores"]["hypothesis_specificity"] == pytest.approx((54 * 3 + 47 * 3 + 2) / 108)


def _check_same_document_again_and_from_the_api(
    imported: Benchmark,
    holistic: JudgeRun,
    structured: JudgeRun,
    doc: dict[str, Any],
    rita: Client,
    annotator: Any,  # noqa: ANN401
) -> None:
    """The same seed gives the same intervals; the API gives the same document, to researchers only."""
    assert report_json(imported, "--run", str(holistic.pk), "--structured-run", str(structured.pk), "--seed", "5") == doc
    api = rita.get(
        f"/api/benchmarks/{imported.pk}/controls/",
        {"run": holistic.pk, "structured_run": structured.pk, "seed": 5, "replicates": REPLICATES},
    )
    assert api.status_code == 200 and api.json() == doc
    assert client_for(annotator).get(f"/api/benchmarks/{imported.pk}/controls/").status_code == 403
    assert Client().get(f"/api/benchmarks/{imported.pk}/controls/").status_code in (401, 403)


def _check_report_text(imported: Benchmark, holistic: JudgeRun, structured: JudgeRun) -> None:
    """The text report picks the newest holistic run and shows every section's figures."""
    text = report(imported, "--structured-run", str(structured.pk), "--replicates", str(REPLICATES))
    assert (
        text.splitlines()[0]
        == f"run {holistic.pk}: the newest completed holistic controls run of {imported} (name another with --run)"
    )
    assert f"Verdicts: run {holistic.pk}: judge {JUDGE} (holistic, holistic, completed)" in text
    assert "decisive_metric  " in text and "3/4" in text and "2.00 [2.00, 2.00]" in text
    assert "PASS 0–4–0" in text and "FAIL" not in text
    assert "3 pairs with both orders: 2 same verdict (1 all ties), 1 flips; schema preferred 1, prose preferred 0" in text
    assert "filled wins 4, empty wins 1, ties 1; preference (filled − empty) / ordered 0.500 [" in text
    assert "real wins 5/6 ordered, naive wins 1, ties 0; real won both orders in 2" in text
    assert "agrees with the holistic one in 52 of 54 ordered judgments (96.3%)" in text


def _check_report_without_structured_run(imported: Benchmark, holistic: JudgeRun, doc: dict[str, Any]) -> None:
    """Without a structured run, the score figures are null and the text says what would give them."""
    bare = report_json(imported, "--run", str(holistic.pk))
    assert bare["clear"]["grounding"]["target_drop"] is None and bare["dimension_audit"]["mean_scores"] is None
    assert bare["clear"] == {t: c | {"target_drop": None, "nontarget_drift": None} for t, c in doc["clear"].items()}
    assert "Scores: none" in report(imported, "--run", str(holistic.pk), "--replicates", "20")


def _check_controls_never_reach_the_leaderboard(
    imported: Benchmark, rita: Client, holistic: JudgeRun, leaderboard_before: tuple[str, dict]
) -> None:
    """The leaderboard's numbers are the same as before the controls runs, and it refuses a controls run."""
    assert leaderboards(imported, rita) == leaderboard_before
    with pytest.raises(CommandError, match="judged diagnostic controls, which never enter a leaderboard"):
        call_command("leaderboard", str(imported.pk), "--run", str(holistic.pk), "--json", stdout=StringIO())
    assert rita.get(f"/api/benchmarks/{imported.pk}/leaderboard/", {"run": holistic.pk, "replicates": 20}).status_code == 404


def test_every_number_of_the_report_is_the_one_worked_out_by_hand(imported, fake_llm, tmp_path, researcher, annotator) -> None:  # noqa: ANN001
    rita = client_for(researcher)
    leaderboard_before = leaderboards(imported, rita)
    _check_no_report_before_any_run(imported)

    variants = _load_all_variants(imported, tmp_path)
    holistic, structured, structured_winners = _judge_both_runs(imported, fake_llm, variants)

    doc = _report_document(imported, holistic, structured)
    _check_clear(doc)
    _check_subtle_against_sham(doc)
    _check_rendering_falsifier_and_naive(doc)
    _check_dimension_audit(doc, structured_winners)

    # The same seed gives the same intervals; the API gives the same document; the text shows every section.
    _check_same_document_again_and_from_the_api(imported, holistic, structured, doc, rita, annotator)
    _check_report_text(imported, holistic, structured)
    _check_report_without_structured_run(imported, holistic, doc)

    # Controls never reach the leaderboard: its numbers are the same as before the controls runs, and it refuses them.
    _check_controls_never_reach_the_leaderboard(imported, rita, holistic, leaderboard_before)


# --------------------------------------------------------------------------- the sham gate


def test_the_sham_gate_fails_when_the_judge_moves_on_a_sham(imported, fake_llm, tmp_path) -> None:  # noqa: ANN001
    variants = load(imported, tmp_path, kinds=("subtle", "sham"))
    winners = default_winners(variants)
    winners[(0, "sham", "grounding", "original")] = "variant"  # the sham wins one order
    winners[(1, "sham", "grounding", "reverse")] = "clean"  # and loses another
    winners[(1, "subtle", "grounding", "original")] = "tie"
    script(fake_llm, imported, variants, winners)
    run = run_judge(imported, fake_llm, "--label", "shams")

    doc = report_json(imported, "--run", str(run.pk))
    grounding = doc["subtle"]["grounding"]
    assert grounding["sham_gate"] == {"clean_wins": 1, "ties": 2, "sham_wins": 1, "ordered": 4, "tolerance": 0.0, "passed": False}
    assert (grounding["p_clean_subtle"], grounding["p_clean_sham"]) == (0.75, 0.25)
    assert grounding["adjusted"]["value"] == pytest.approx(0.5)
    assert_ci(grounding["adjusted"], "value", 0.0, 1.0)  # per source: 1 − 1/2 and 1/2 − 1/2
    for t in ("decisive_metric", "falsifiability"):
        assert doc["subtle"][t]["sham_gate"]["passed"] and doc["subtle"][t]["adjusted"]["value"] == 1.0
    assert "FAIL 1–2–1" in report(imported, "--run", str(run.pk), "--replicates", "20")
    assert "the sham gate fails on grounding" in report(imported, "--run", str(run.pk), "--replicates", "20")

    # Two decisive of four: a tolerance of 1/4 allows one (still fails), 1/2 allows two (passes).
    assert not report_json(imported, "--run", str(run.pk), "--sham-tolerance", "0.25")["subtle"]["grounding"]["sham_gate"][
        "passed"
    ]
    passed = report_json(imported, "--run", str(run.pk), "--sham-tolerance", "0.5")["subtle"]["grounding"]["sham_gate"]
    assert passed == {"clean_wins": 1, "ties": 2, "sham_wins": 1, "ordered": 4, "tolerance": 0.5, "passed": True}
    assert "PASS 1–2–1" in report(imported, "--run", str(run.pk), "--replicates", "20", "--sham-tolerance", "0.5")


# --------------------------------------------------------------------------- what it refuses


def test_what_the_report_and_its_api_refuse(imported, fake_llm, tmp_path, researcher) -> None:  # noqa: ANN001
    rita = client_for(researcher)
    url = f"/api/benchmarks/{imported.pk}/controls/"
    release_run = JudgeRun.objects.get(benchmark=imported)
    response = rita.get(url)
    assert response.status_code == 404 and "launch one with run_judge" in response.json()["detail"]

    variants = load(imported, tmp_path, kinds=("naive",))
    script(fake_llm, imported, variants, default_winners(variants))
    holistic = run_judge(imported, fake_llm, "--label", "naive")

    with pytest.raises(CommandError, match=f"run {release_run.pk} judged the leaderboard's pairs, not diagnostic controls"):
        report(imported, "--run", str(release_run.pk))
    with pytest.raises(CommandError, match="has no run 999999"):
        report(imported, "--run", "999999")
    with pytest.raises(CommandError, match=f"run {holistic.pk} is a holistic run; --structured-run needs a structured one"):
        report(imported, "--run", str(holistic.pk), "--structured-run", str(holistic.pk))
    with pytest.raises(CommandError, match="replicates must be at least 1"):
        report(imported, "--replicates", "0")
    with pytest.raises(CommandError, match="not a share from 0 to 1"):
        report(imported, "--sham-tolerance", "1.5")
    other = Benchmark.objects.create(name="other", version="1", canonical_judge="J")
    foreign = JudgeRun.objects.create(
        benchmark=other, subjects="controls", judge_model=JUDGE, label="x", provider="openai_compatible"
    )
    with pytest.raises(CommandError, match=f"has no run {foreign.pk} \\(it is a run of benchmark {other.pk}\\)"):
        report(imported, "--run", str(foreign.pk))
    with pytest.raises(ControlReportError, match=f"run {foreign.pk} is not a run of"):
        controls_report(benchmark=imported, run=foreign)
    # A controls run without any verdict yet (and not completed: never the default).
    with pytest.raises(CommandError, match="has no accepted control verdicts yet"):
        call_command("controls_report", "other", "--run", str(foreign.pk), stdout=StringIO())
    assert report_json(imported)["runs"]["run"]["id"] == holistic.pk  # the default

    assert rita.get(url, {"run": release_run.pk}).json() == {
        "detail": f"run {release_run.pk} is not a controls run of benchmark {imported.pk}"
    }
    assert rita.get(url, {"run": foreign.pk}).status_code == 404
    assert rita.get(url, {"run": 999999}).status_code == 404
    assert rita.get(f"/api/benchmarks/{other.pk}/controls/", {"run": foreign.pk}).status_code == 404  # no verdicts yet
    assert rita.get("/api/benchmarks/999999/controls/").json() == {"detail": "no benchmark 999999"}
    response = rita.get(url, {"structured_run": holistic.pk, "replicates": 10})
    assert response.status_code == 404
    assert response.json() == {
        "detail": f"run {holistic.pk} is a holistic run, not a structured controls run of benchmark {imported.pk}"
    }
    for name, value in (
        ("replicates", 0),
        ("replicates", 10**9),
        ("seed", -1),
        ("seed", ""),
        ("sham_tolerance", 2),
        ("sham_tolerance", "nan"),
        ("run", 0),
    ):
        response = rita.get(url, {name: value})
        assert response.status_code == 400 and list(response.json()) == [name], (name, value, response.content)
    assert rita.get(url, {"replicates": 10}).json()["naive"]["real_wins"] == 6


def test_two_variants_of_one_kind_on_one_source_and_target_are_two_cases(imported, fake_llm, tmp_path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    rows = [h.line(source, "clear", "grounding"), h.line(source, "rendering")]
    second = h.line(source, "clear", "grounding", control_id="second-clear")
    second["proposal"]["literature_gap"] = "Another obvious defect."
    rows += [second, h.line(source, "rendering", control_id="second-rendering", prose="Other prose of the same content.")]
    call_command("import_controls", str(imported.pk), str(h.write(tmp_path / "c.jsonl", rows)), stdout=StringIO())
    by_id = {v.control_id: v for v in ControlVariant.objects.select_related("context")}
    first_clear, first_rendering = rows[0]["control_id"], rows[1]["control_id"]
    variants: dict[Key, ControlVariant] = {
        (0, "clear", "grounding"): by_id[first_clear],
        (1, "clear", "grounding"): by_id["second-clear"],
        (0, "rendering", None): by_id[first_rendering],
        (1, "rendering", None): by_id["second-rendering"],
    }
    winners = default_winners(variants)
    winners[(1, "clear", "grounding", "original")] = "tie"
    winners[(1, "rendering", None, "original")] = winners[(1, "rendering", None, "reverse")] = "tie"
    script(fake_llm, imported, variants, winners)
    run = run_judge(imported, fake_llm, "--label", "twice")

    doc = report_json(imported, "--run", str(run.pk))
    grounding = doc["clear"]["grounding"]
    assert (grounding["clean_wins"], grounding["ordered"], grounding["ties"], grounding["cases"]) == (3, 4, 1, 2)
    assert doc["rendering"]["pairs"] == 2 and doc["rendering"]["flips"] == 1 and doc["rendering"]["ties"] == 1
