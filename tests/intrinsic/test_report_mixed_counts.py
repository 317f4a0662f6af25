"""The Intrinsic report of a benchmark whose papers have different candidate counts (issue 23; the importer accepts 2
to 1,000 per paper): every figure is taken per paper over its own candidates, checked against hand computation, in the
document, the command's text and the report page.

The benchmark (one discipline, "x"), mean scores lower is better, * = gold:

    paper  candidates  A-nll                      rank  beats          J's list (best first)   rank  beats
    m1     3           c1 1, *c2 2, c3 3          2     1 of 2         c2 c3 c1 (all three)    1     2 of 2
    m2     6           *c1 1, c2..c6 2..6         1     5 of 5         c2 c3 c4 c5 c6          6     0 of 5 (unlisted)
    m3     2           c1 1, *c2 1 (a tie)        2     0 of 1         c2 c1 (both)            1     1 of 1

A: Hit@1 1/3, Hit@2 = Hit@3 = Hit@5 = 3/3, MRR (1/2 + 1 + 1/2) / 3 = 2/3, beats (1/2 + 1 + 0) / 3 = 1/2.
J: Hit@1 = Hit@2 = Hit@3 = Hit@5 = 2/3 (m2's gold is unlisted: terminal rank 6), beats (1 + 0 + 1) / 3 = 2/3.
A − J on the three papers: ΔHit@1 = −1/3, Δbeats = 1/2 − 2/3 = −1/6.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse

from arena.models import Benchmark
from intrinsic.importing import import_files, intrinsic_import
from tests.clients import client_for

from .test_import_export import folder

pytestmark = pytest.mark.django_db

#: paper -> (gold, A's means in candidate order, J's list)
PAPERS = {
    "m1": ("c2", [1, 2, 3], ["c2", "c3", "c1"]),
    "m2": ("c1", [1, 2, 3, 4, 5, 6], ["c2", "c3", "c4", "c5", "c6"]),
    "m3": ("c2", [1, 1], ["c2", "c1"]),
}


@pytest.fixture
def mixed(tmp_path: Path) -> Benchmark:
    papers, scores, rankings = [], [], []
    for paper, (gold, means, top) in PAPERS.items():
        ids = [f"c{k}" for k in range(1, len(means) + 1)]
        papers.append(
            {
                "paper_id": paper,
                "discipline": "x",
                "background": f"Background of {paper}.",
                "question": f"What explains {paper}?",
                "candidates": [{"id": c, "text": f"Hypothesis {c} of {paper}.", "gold": c == gold} for c in ids],
            }
        )
        for c, mean in zip(ids, means, strict=True):
            scores.append(
                {
                    "paper_id": paper,
                    "candidate_id": c,
                    "scorer": "A-nll",
                    "model": "A",
                    "criterion": "nll",
                    "mean": mean,
                    "sum": mean * 2,
                    "tokens": 2,
                }
            )
        rankings.append({"paper_id": paper, "scorer": "J-listwise", "model": "J", "top": top})
    files = import_files(folder(tmp_path / "mixed", papers_=papers, scores_=scores, listwise_=rankings))
    return intrinsic_import(name="intr-mixed", files=files).benchmark


def command_json(benchmark: Benchmark) -> dict[str, Any]:
    out = StringIO()
    call_command("intrinsic_report", str(benchmark.pk), "--json", "--replicates", "200", stdout=out)
    return json.loads(out.getvalue())


def pooled(doc: dict[str, Any], scorer: str) -> dict[str, float | None]:
    (row,) = [r for r in doc["results"] if r["scorer"] == scorer and r["discipline"] == "all"]
    return {m: (None if v is None else v["value"]) for m, v in row["metrics"].items()} | {
        "rank_distribution": row["rank_distribution"],
        "ties": (row["papers_with_ties"], row["tied_distractors"]),
    }


def test_the_report_takes_each_paper_over_its_own_candidates(mixed: Benchmark) -> None:
    doc = command_json(mixed)
    assert doc["read"]["candidates_per_paper"] is None
    assert doc["read"]["candidate_counts"] == [
        {"candidates": 2, "papers": 1},
        {"candidates": 3, "papers": 1},
        {"candidates": 6, "papers": 1},
    ]
    assert doc["method"]["n_candidates"] is None and doc["method"]["rules"]["candidate_counts"].startswith("per paper")
    assert pooled(doc, "A-nll") == pytest.approx(
        {
            "hit_at_1": 1 / 3,
            "hit_at_2": 1.0,
            "hit_at_3": 1.0,
            "hit_at_5": 1.0,
            "mrr": 2 / 3,
            "beats": 1 / 2,
            "rank_distribution": [1, 2, 0, 0, 0, 0],  # ranks 2, 1, 2
            "ties": (1, 1),  # m3's c1 ties the gold
        }
    )
    assert pooled(doc, "J-listwise") == pytest.approx(
        {
            "hit_at_1": 2 / 3,
            "hit_at_2": 2 / 3,
            "hit_at_3": 2 / 3,
            "hit_at_5": 2 / 3,
            "mrr": None,
            "beats": 2 / 3,
            "rank_distribution": [2, 0, 0, 0, 0, 1],  # ranks 1, 6 (terminal), 1
            "ties": (None, None),
        }
    )
    (pair,) = doc["pairs"]
    assert (pair["a"], pair["b"], pair["n_papers"]) == ("A-nll", "J-listwise", 3)
    assert pair["differences"]["hit_at_1"]["value"] == pytest.approx(-1 / 3)
    assert pair["differences"]["beats"]["value"] == pytest.approx(-1 / 6)
    (nll,) = [g for g in doc["all_models"] if g["criterion"] == "nll" and g["discipline"] == "all"]
    assert nll["metrics"]["beats"]["value"] == pytest.approx(1 / 2) and nll["n_ranked"] == 3


def test_the_command_and_the_page_say_the_counts_are_mixed(mixed: Benchmark, researcher) -> None:  # noqa: ANN001
    out = StringIO()
    call_command("intrinsic_report", mixed.name, "--replicates", "50", stdout=out)
    text = out.getvalue()
    assert "3 papers × mixed candidate counts (1 with 2, 1 with 3, 1 with 6)" in text and "All models, nll" in text
    html = client_for(researcher).get(reverse("intrinsic:report", args=[mixed.pk]), {"replicates": 50}).content.decode()
    assert "3 papers × 2–6 candidates (one gold each; 1 with 2, 1 with 3, 1 with 6)" in html
    # J's distribution: ranks 1..5 and one bar for the unlisted golds (m2's, at its own terminal rank 6)
    plot = html[html.index('data-scorer="J-listwise"', html.index('class="rank-plots"')) :].split("</figure>")[0]
    assert 'data-rank="1" data-count="2"' in plot and 'data-rank="6" data-count="1"' in plot and "2–6*" in plot
