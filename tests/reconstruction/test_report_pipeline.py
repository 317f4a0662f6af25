"""The Reconstruction report of a benchmark with a selection pipeline (issue 23): the controls are built over the
proposers only, the sign test compares paper rates, the pipeline is tested against the best single model per paper,
each pair is shown once, a case with fewer than five valid hypotheses is excluded and counted (imports included), and
the paper's mean of paper rates is offered.

The benchmark (one domain, chem; papers q1 and q2; one judge, Gamma-J, so a hypothesis's label is Gamma-J's). Proposers
A (family a), B (b) and C (c); P is a selection pipeline whose champions are imported as copies (``selected_from``)
of proposer hypotheses. M = Match, N = No-match, - = not judged:

    paper  A          B          C                           P (champion <- origin)
    q1     M N N N N  N M N N N  M M M (slots 1-3 only)      A1 M, B2 M, A3 M (judged on its own), B4 N, A5 N
    q2     N N N N N  M N N - -  N N N N N                   B1 M, A2 N, A3 N, A4 N, A5 N

C gave three valid hypotheses on q1: that case is excluded (and counted); its three Matches must reach no rate and no
control. By hand (majority, pooled):

* A 1/10; B (1 + 1) / (5 + 3) = 2/8, paper-mean (1/5 + 1/3) / 2 = 4/15; C 0/5 (q2 only); P (3 + 1) / 10.
* slot oracle over A, B, C: q1 slots 1 and 2 → 2/5 (slot 3 holds only P's and C's Matches: not a proposer's); q2
  slot 1 → 1/5 (slots 4 and 5 are units through A and C); 3/10. With P counted: 3/5 + 1/5 = 4/10.
* top-5 oracle: q1 the best five of A's and B's ten hold 2 Matches → 2/5; q2 1/5; 3/10. With P's copies (and C's
  case) counted: q1 5/5, q2 2/5 = 7/10.
* best single per paper: q1 A and B 1/5 each, equal counts → A (by name); q2 B 1/3 (above A's and C's 0): 2/8.
* sign tests over paper rates: P-B q1 0.6 > 0.2, q2 0.2 < 1/3 (counts 1 and 1 would call q2 a tie); P-best_single
  the same; P-A 2 to 0.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from scipy.stats import binomtest

from arena.models import Benchmark
from reconstruction.importing import import_files, reconstruction_import
from tests.reconstruction.helpers import write

pytestmark = pytest.mark.django_db

PROPOSERS = {"A": "a", "B": "b", "C": "c"}
#: (paper, proposer) -> (Match slots, judged slots); C gives only slots 1-3 on q1.
PROPOSED = {
    ("q1", "A"): ({1}, {1, 2, 3, 4, 5}),
    ("q1", "B"): ({2}, {1, 2, 3, 4, 5}),
    ("q1", "C"): ({1, 2, 3}, {1, 2, 3}),
    ("q2", "A"): (set(), {1, 2, 3, 4, 5}),
    ("q2", "B"): ({1}, {1, 2, 3}),
    ("q2", "C"): (set(), {1, 2, 3, 4, 5}),
}
#: (paper, slot) -> (origin proposer, Gamma-J's label of the champion)
CHAMPIONS = {
    ("q1", 1): ("A", "match"),
    ("q1", 2): ("B", "match"),
    ("q1", 3): ("A", "match"),  # its origin A3 is a No-match: the champion was judged on its own
    ("q1", 4): ("B", "no_match"),
    ("q1", 5): ("A", "no_match"),
    ("q2", 1): ("B", "match"),
    ("q2", 2): ("A", "no_match"),
    ("q2", 3): ("A", "no_match"),
    ("q2", 4): ("A", "no_match"),
    ("q2", 5): ("A", "no_match"),
}


def _hypothesis(paper: str, model: str, family: str, slot: int, origin: str | None = None) -> dict[str, Any]:
    who = origin or model
    line = {
        "seed_id": paper,
        "model": model,
        "family": family,
        "slot": slot,
        "title": f"{who} idea {slot} on {paper}",
        "summary": f"{who} says {slot}.",
        "cited": ["R1"],
    }
    return line | ({"selected_from": {"model": origin, "slot": slot}} if origin else {})


def _label(paper: str, model: str, slot: int, label: str) -> dict[str, Any]:
    return {
        "seed_id": paper,
        "model": model,
        "slot": slot,
        "judge": "Gamma-J",
        "judge_family": "gamma",
        "run_label": "gamma",
        "label": label,
    }


def pipeline_folder(tmp: Path) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    seeds, refs, hyps, labels = [], [], [], []
    for i, paper in enumerate(("q1", "q2")):
        seeds.append(
            {"seed_id": paper, "domain": "chem", "title": f"Seed {i} on {paper}", "abstract": "An abstract.", "t0": "2023-06-01"}
        )
        for j in range(3):
            refs.append(
                {
                    "seed_id": paper,
                    "ref_id": f"W{paper}{j}",
                    "anon_id": f"R{j + 1}",
                    "title": f"Prior work {j} for {paper}",
                    "abstract": f"Earlier result {j}.",
                    "published": f"202{j}-01-01",
                }
            )
    for (paper, model), (matches, judged) in PROPOSED.items():
        for slot in range(1, 6) if model != "C" or paper != "q1" else range(1, 4):
            hyps.append(_hypothesis(paper, model, PROPOSERS[model], slot))
            if slot in judged:
                labels.append(_label(paper, model, slot, "match" if slot in matches else "no_match"))
    for (paper, slot), (origin, label) in CHAMPIONS.items():
        hyps.append(_hypothesis(paper, "P", PROPOSERS[origin], slot, origin=origin))
        labels.append(_label(paper, "P", slot, label))
    write(tmp / "seeds.jsonl", seeds)
    write(tmp / "references.jsonl", refs)
    write(tmp / "hypotheses.jsonl", hyps)
    write(tmp / "labels.jsonl", labels)
    return tmp


@pytest.fixture
def with_pipeline(tmp_path: Path) -> Benchmark:
    return reconstruction_import(name="recon-pipeline", files=import_files(pipeline_folder(tmp_path / "p"))).benchmark


def report(benchmark: Benchmark, *options: str) -> dict[str, Any]:
    out = StringIO()
    call_command("reconstruction_report", str(benchmark.pk), "--json", "--replicates", "100", *options, stdout=out)
    return json.loads(out.getvalue())


def rate(doc: dict[str, Any], system: str, domain: str = "all") -> dict[str, Any]:
    (row,) = [r for r in doc["rates"] if r["system"] == system and r["domain"] == domain]
    return row


def sign(doc: dict[str, Any], a: str, b: str, domain: str = "all") -> dict[str, Any]:
    (row,) = [p for p in doc["pairs"] if p["a"] == a and p["b"] == b and p["domain"] == domain]
    return row["sign_test"]


def test_the_oracles_are_over_the_proposers_only_never_the_pipelines_copies(with_pipeline: Benchmark) -> None:
    doc = report(with_pipeline)
    assert doc["method"]["proposers"] == ["A", "B", "C"] and doc["method"]["pipelines"] == ["P"]
    slot, top = rate(doc, "slot_oracle"), rate(doc, "top5_oracle")
    assert (slot["n_matches"], slot["n_hypotheses"]) == (3, 10) and slot["match_rate"] == pytest.approx(0.3)
    assert (top["n_matches"], top["n_hypotheses"]) == (3, 10) and top["match_rate"] == pytest.approx(0.3)
    assert (rate(doc, "slot_oracle", "chem")["n_matches"], rate(doc, "top5_oracle", "chem")["n_matches"]) == (3, 3)
    assert rate(doc, "P")["match_rate"] == pytest.approx(0.4)  # the pipeline's own row: 4 of 10


def test_a_case_with_fewer_than_five_valid_hypotheses_is_excluded_and_counted_even_when_imported(
    with_pipeline: Benchmark,
) -> None:
    doc = report(with_pipeline)
    assert doc["labels"]["excluded_cases"] == {"C": 1}
    assert "fewer than five valid hypotheses" in doc["method"]["exclusion"]
    c = rate(doc, "C")
    assert (c["n_matches"], c["n_hypotheses"], c["n_papers"]) == (0, 5, 1)  # q2 only: its q1 Matches are out
    out = StringIO()
    call_command("reconstruction_report", str(with_pipeline.pk), "--replicates", "20", stdout=out)
    assert "excluded (fewer than five valid hypotheses): C 1" in out.getvalue()


def test_the_pipeline_is_sign_tested_on_paper_rates_against_each_proposer_and_the_best_single_model(
    with_pipeline: Benchmark,
) -> None:
    doc = report(with_pipeline)
    assert [(p["a"], p["b"]) for p in doc["pairs"] if p["domain"] == "all"] == [
        ("P", "A"),
        ("P", "B"),
        ("P", "C"),
        ("A", "B"),
        ("A", "C"),
        ("B", "C"),
        ("P", "best_single"),
    ]
    best = rate(doc, "best_single")
    assert (best["n_matches"], best["n_hypotheses"]) == (2, 8) and best["kind"] == "control"
    for b in ("B", "best_single"):  # q1 0.6 > 0.2; q2 0.2 < 1/3 (a tie if Match counts were compared)
        assert sign(doc, "P", b) == {
            "n_papers": 2,
            "a_more": 1,
            "b_more": 1,
            "ties": 0,
            "p_value": pytest.approx(binomtest(1, 2, 0.5).pvalue),
        }
    assert sign(doc, "P", "A") | {"p_value": None} == {"n_papers": 2, "a_more": 2, "b_more": 0, "ties": 0, "p_value": None}
    assert sign(doc, "P", "A")["p_value"] == pytest.approx(binomtest(2, 2, 0.5).pvalue)
    assert sign(doc, "A", "B") | {"p_value": None} == {"n_papers": 2, "a_more": 0, "b_more": 1, "ties": 1, "p_value": None}


def test_the_paper_mean_rate_weighs_every_paper_the_same(with_pipeline: Benchmark) -> None:
    pooled, mean = report(with_pipeline), report(with_pipeline, "--rate", "paper-mean")
    assert rate(pooled, "B")["match_rate"] == pytest.approx(2 / 8)
    assert rate(mean, "B")["match_rate"] == pytest.approx((1 / 5 + 1 / 3) / 2)
    assert rate(mean, "best_single")["match_rate"] == pytest.approx((1 / 5 + 1 / 3) / 2)
    assert rate(mean, "P")["match_rate"] == pytest.approx(0.4)  # equal counts: as pooled
    assert mean["method"]["rate"] == "paper-mean" and sign(mean, "P", "B") == sign(pooled, "P", "B")
