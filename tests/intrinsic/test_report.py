"""The Intrinsic-scoring report from stored rows (issue 14): the command's document on a tiny benchmark against hand
computation (and one bootstrap interval recomputed here from the documented draw rule), the command's JSON against
the API's, the access rules and bad parameters, the cache following the rows, and the report page.

The tiny benchmark: papers p1, p2 (biology) and p3 (chemistry), six candidates c1..c6 each; gold c1, c3, c2.
Mean scores (lower is better; * = gold), and the gold's rank by the pessimistic rule:

    scorer  p1                          p2                          p3
    A-nll   *1 2 3 4 5 6      rank 1    1 2.5 *2 3 4 5    rank 2    1 *2 2 4 5 6    rank 3 (c3 ties the gold)
    B-nll   *0.5 1 2 3 4 5    rank 1    1 2 *2.5 3 4 5    rank 3    c6 not scored: left out, counted

Gold beats (distractors scoring strictly worse) / 5: A 5/5, 4/5, 3/5 (p3's c3 ties the gold: not a win); B 5/5, 3/5.
The listwise judge J lists p1 [c2 c1 c3 c4 c5] (gold 2nd: above c3 c4 c5 and the unlisted c6, 4/5), p2 [c1 c2 c4 c5
c6] (gold unlisted: terminal rank 6, above none, 0/5), p3 invalid.

All models, NLL (A and B pooled over the 5 ranked (model, paper) pairs; B's p3 left out): ranks 1, 2, 3, 1, 3, so
Hit@1 2/5, Hit@2 3/5, Hit@3 5/5, MRR (1 + 1/2 + 1/3 + 1 + 1/3) / 5 = 19/30, beats (1 + 0.8 + 0.6 + 1 + 0.6) / 5 = 0.8.
A's p1 candidates other than the gold span 1 token and the gold 10, so by the *sum* its gold is last there.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from arena.models import Benchmark
from intrinsic import demo
from intrinsic.importing import import_files, intrinsic_import
from intrinsic.models import CandidateScore, ListwiseRanking, Scorer
from intrinsic.reports import ReportError, benchmark_intrinsic_report, intrinsic_report_cached, report_inputs
from tests.clients import client_for

from .test_import_export import folder

pytestmark = pytest.mark.django_db

DISCIPLINE = {"p1": "biology", "p2": "biology", "p3": "chemistry"}
GOLD = {"p1": "c1", "p2": "c3", "p3": "c2"}
MEANS = {
    ("A", "p1"): [1, 2, 3, 4, 5, 6],
    ("A", "p2"): [1, 2.5, 2, 3, 4, 5],
    ("A", "p3"): [1, 2, 2, 4, 5, 6],
    ("B", "p1"): [0.5, 1, 2, 3, 4, 5],
    ("B", "p2"): [1, 2, 2.5, 3, 4, 5],
    ("B", "p3"): [1, 2, 3, 4, 5, 6],
}
TOPS = {"p1": ["c2", "c1", "c3", "c4", "c5"], "p2": ["c1", "c2", "c4", "c5", "c6"]}


def tiny_folder(path: Path, *, scores: bool = True) -> Path:
    papers = [
        {
            "paper_id": p,
            "discipline": d,
            "background": f"Background of {p}.",
            "question": f"What explains {p}?",
            "candidates": [{"id": f"c{k}", "text": f"Hypothesis {k} of {p}.", "gold": f"c{k}" == GOLD[p]} for k in range(1, 7)],
        }
        for p, d in DISCIPLINE.items()
    ]
    rows = []
    for (model, paper), means in MEANS.items():
        for k, mean in enumerate(means, start=1):
            tokens = (10 if k == 1 else 1) if (model, paper) == ("A", "p1") else 4
            rows.append(
                {
                    "paper_id": paper,
                    "candidate_id": f"c{k}",
                    "scorer": f"{model}-nll",
                    "model": model,
                    "criterion": "nll",
                    "mean": mean,
                    "sum": mean * tokens,
                    "tokens": tokens,
                }
            )
    rankings = [{"paper_id": p, "scorer": "J-listwise", "model": "J", "top": top} for p, top in TOPS.items()]
    rankings.append(
        {"paper_id": "p3", "scorer": "J-listwise", "model": "J", "status": "invalid", "reason": "unknown label after 2 retries"}
    )
    return folder(path, papers_=papers, scores_=rows if scores else False, listwise_=rankings if scores else False)


@pytest.fixture
def tiny(tmp_path: Path) -> Benchmark:
    benchmark = intrinsic_import(name="intr-tiny", files=import_files(tiny_folder(tmp_path / "tiny"))).benchmark
    # B's run never scored p3's c6: that paper is not ranked by B (as a scoring run that stopped midway leaves it).
    CandidateScore.objects.filter(scorer__name="B-nll", candidate__paper__external_id="p3", candidate__external_id="c6").delete()
    return benchmark


def command_json(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("intrinsic_report", *args, "--json", stdout=out)
    return json.loads(out.getvalue())  # exactly one JSON object


def result(doc: dict[str, Any], scorer: str, scope: str = "all") -> dict[str, Any]:
    (row,) = [r for r in doc["results"] if r["scorer"] == scorer and r["discipline"] == scope]
    return row


def value(row: dict[str, Any], metric: str) -> float | None:
    m = row["metrics"][metric]
    return None if m is None else m["value"]


def _check_document_header(doc: dict[str, Any], tiny: Benchmark) -> None:
    """What the document says it read: the benchmark, its disciplines and scorers, the row counts and the method."""
    assert doc["benchmark"]["id"] == tiny.pk and doc["disciplines"] == ["biology", "chemistry", "all"]
    assert [(s["name"], s["model"], s["criterion"], s["kind"]) for s in doc["scorers"]] == [
        ("A-nll", "A", "nll", "scoring"),
        ("B-nll", "B", "nll", "scoring"),
        ("J-listwise", "J", "listwise", "listwise"),
    ]
    assert doc["read"] == {
        "papers": 3,
        "candidates_per_paper": 6,
        "candidate_counts": [{"candidates": 6, "papers": 3}],
        "scores": 35,
        "rankings": 3,
        "invalid_rankings": 1,
        "scorers_left_out": [],
    }
    assert doc["baselines"] == ["J-listwise"] and doc["method"]["replicates"] == 400 and doc["method"]["seed"] == 3
    assert "pessimistic" in doc["method"]["tie_rule"] and "terminal rank" in doc["method"]["listwise_rule"]
    rules = doc["method"]["rules"]
    assert (rules["beats"], rules["tie_rule"], rules["listwise_rank"]) == ("strict", "pessimistic", "terminal")


def _check_pooled_results(doc: dict[str, Any]) -> None:
    """Each scorer's pooled figures from its gold ranks: A 1, 2, 3; B 1, 3 (p3 left out); J 2 and 6 (p3 invalid)."""
    a = result(doc, "A-nll")  # ranks 1, 2, 3
    assert [value(a, f"hit_at_{k}") for k in (1, 2, 3, 5)] == pytest.approx([1 / 3, 2 / 3, 1, 1])
    assert value(a, "mrr") == pytest.approx((1 + 1 / 2 + 1 / 3) / 3) and value(a, "beats") == pytest.approx((1 + 0.8 + 0.6) / 3)
    assert (a["n_ranked"], a["n_excluded"], a["papers_with_ties"], a["tied_distractors"]) == (3, 0, 1, 1)
    assert a["rank_distribution"] == [1, 1, 1, 0, 0, 0]
    b = result(doc, "B-nll")  # ranks 1, 3; p3 left out
    assert (b["n_ranked"], b["n_excluded"]) == (2, 1) and "without a score" in b["excluded_reason"]
    assert [value(b, f"hit_at_{k}") for k in (1, 2, 3, 5)] == pytest.approx([1 / 2, 1 / 2, 1, 1])
    assert value(b, "mrr") == pytest.approx((1 + 1 / 3) / 2) and value(b, "beats") == pytest.approx((1 + 0.6) / 2)
    j = result(doc, "J-listwise")  # ranks 2 and 6 (terminal); p3 invalid
    assert (j["n_ranked"], j["n_excluded"], j["rank_distribution"]) == (2, 1, [0, 1, 0, 0, 0, 1])
    assert [value(j, f"hit_at_{k}") for k in (1, 2, 3, 5)] == pytest.approx([0, 1 / 2, 1 / 2, 1 / 2])
    assert j["metrics"]["mrr"] is None and set(j["not_reported"]) == {"mrr"} and value(j, "beats") == pytest.approx((0.8 + 0) / 2)


def _check_per_discipline(doc: dict[str, Any]) -> None:
    """Per discipline. Chemistry holds one paper: every resample is p3, so A's intervals are its point; B ranked none."""
    assert value(result(doc, "A-nll", "biology"), "hit_at_1") == pytest.approx(1 / 2)
    chem = result(doc, "A-nll", "chemistry")
    assert chem["metrics"]["mrr"]["ci"] == pytest.approx([1 / 3, 1 / 3]) and chem["metrics"]["hit_at_3"]["ci"] == [1.0, 1.0]
    b_chem = result(doc, "B-nll", "chemistry")
    assert (b_chem["n_ranked"], b_chem["n_excluded"], b_chem["metrics"]["hit_at_1"]["value"]) == (0, 1, None)


def _check_agreement(doc: dict[str, Any]) -> None:
    """Agreement (NLL: A and B) over the papers both ranked (p1, p2): both put the gold first on p1 only."""
    (agree,) = [x for x in doc["agreement"] if x["discipline"] == "all"]
    assert (agree["criterion"], agree["models"], agree["n_papers"], agree["n_excluded"], agree["n_all_first"]) == (
        "nll",
        ["A", "B"],
        2,
        1,
        1,
    )
    assert agree["share"] == pytest.approx(1 / 2)


def _check_paired_differences(doc: dict[str, Any]) -> None:
    """Paired differences, pooled, over the papers both ranked: every pair, a − b in scorer order."""
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    assert set(pairs) == {("A-nll", "B-nll"), ("A-nll", "J-listwise"), ("B-nll", "J-listwise")} and {
        p["discipline"] for p in doc["pairs"]
    } == {"all"}
    ab = pairs[("A-nll", "B-nll")]  # p1, p2: A ranks 1, 2; B ranks 1, 3
    assert ab["n_papers"] == 2
    assert ab["differences"]["hit_at_1"]["value"] == pytest.approx(0) and ab["differences"]["hit_at_2"]["value"] == pytest.approx(
        1 / 2
    )
    assert ab["differences"]["mrr"]["value"] == pytest.approx((1 + 1 / 2) / 2 - (1 + 1 / 3) / 2)
    assert ab["differences"]["beats"]["value"] == pytest.approx((1 + 0.8) / 2 - (1 + 0.6) / 2)
    aj = pairs[("A-nll", "J-listwise")]  # p1, p2: A ranks 1, 2; J ranks 2, 6
    assert aj["n_papers"] == 2 and aj["differences"]["hit_at_1"]["value"] == pytest.approx(1 / 2)
    assert aj["differences"]["hit_at_5"]["value"] == pytest.approx(1 / 2) and aj["differences"]["mrr"] is None
    assert aj["differences"]["beats"]["value"] == pytest.approx((1 + 0.8) / 2 - (0.8 + 0) / 2)


def all_models(doc: dict[str, Any], criterion: str | None, scope: str = "all") -> dict[str, Any]:
    (row,) = [r for r in doc["all_models"] if r["criterion"] == criterion and r["discipline"] == scope]
    return row


def _check_all_models(doc: dict[str, Any]) -> None:
    """The All-models rows (module docstring): NLL pools A and B's (model, paper) pairs; listwise is J alone."""
    assert [(r["discipline"], r["criterion"]) for r in doc["all_models"]] == [
        (d, c) for d in ("biology", "chemistry", "all") for c in ("nll", "listwise")
    ]
    nll = all_models(doc, "nll")
    assert (nll["label"], nll["models"], nll["n_papers"], nll["n_ranked"], nll["n_excluded"]) == (
        "All models, nll",
        ["A", "B"],
        3,
        5,
        1,
    )
    assert [value(nll, f"hit_at_{k}") for k in (1, 2, 3, 5)] == pytest.approx([2 / 5, 3 / 5, 1, 1])
    assert value(nll, "mrr") == pytest.approx(19 / 30) and value(nll, "beats") == pytest.approx(0.8)
    assert nll["rank_distribution"] == [2, 1, 2, 0, 0, 0]
    # biology: A ranks 1, 2 and B 1, 3; chemistry: A's rank 3 only (B left p3 out)
    bio = all_models(doc, "nll", "biology")
    assert value(bio, "hit_at_1") == pytest.approx(2 / 4) and value(bio, "mrr") == pytest.approx((1 + 1 / 2 + 1 + 1 / 3) / 4)
    assert value(bio, "beats") == pytest.approx((1 + 0.8 + 1 + 0.6) / 4)
    chem = all_models(doc, "nll", "chemistry")
    assert (chem["n_ranked"], chem["n_excluded"], value(chem, "hit_at_1"), value(chem, "hit_at_3")) == (1, 1, 0.0, 1.0)
    assert chem["metrics"]["beats"]["ci"] == pytest.approx([0.6, 0.6])  # one ranked pair in every draw of p3
    listwise = all_models(doc, "listwise")
    assert listwise["metrics"] == result(doc, "J-listwise")["metrics"] and listwise["models"] == ["J"]


def _check_length_check(doc: dict[str, Any]) -> None:
    """The length check ranks by the sum: A's p1 gold spans 10 tokens (sum 10), the others 1 (sums 2..6): last there."""
    length = {r["scorer"]: r for r in doc["length_check"]}
    assert set(length) == {"A-nll", "B-nll"} and length["A-nll"]["rank_distribution"] == [0, 1, 1, 0, 0, 1]
    assert length["A-nll"]["metrics"]["hit_at_1"]["value"] == 0.0 and length["B-nll"]["metrics"]["hit_at_1"][
        "value"
    ] == pytest.approx(1 / 2)


def test_the_command_json_holds_the_hand_computed_figures(tiny: Benchmark) -> None:
    doc = command_json(str(tiny.pk), "--replicates", "400", "--seed", "3")
    _check_document_header(doc, tiny)
    _check_pooled_results(doc)
    _check_per_discipline(doc)
    _check_agreement(doc)
    _check_paired_differences(doc)
    _check_all_models(doc)
    _check_length_check(doc)


def test_an_interval_is_the_documented_paper_bootstrap_over_papers_in_external_id_order(tiny: Benchmark) -> None:
    """B's pooled MRR interval, recomputed here: scopes (biology, chemistry, all) each get SeedSequence(seed).spawn(3)[i];
    the pooled scope draws 3 papers (p1, p2, p3) with replacement per replicate; B's MRR per paper is 1, 1/3 and
    undefined (p3 not ranked); a replicate that drew only p3 is undefined, left out and counted."""
    replicates, seed = 500, 11
    doc = benchmark_intrinsic_report(benchmark=tiny, replicates=replicates, seed=seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])
    draws = rng.integers(0, 3, size=(replicates, 3))
    mrr = np.array([1.0, 1 / 3, 0.0])
    ranked = np.array([1.0, 1.0, 0.0])
    counts = np.stack([(draws == p).sum(axis=1) for p in range(3)], axis=1)
    with np.errstate(invalid="ignore"):
        reps = (counts @ mrr) / (counts @ ranked)
    defined = reps[~np.isnan(reps)]
    got = result(doc, "B-nll")["metrics"]["mrr"]
    assert got["n_undefined"] == int(np.isnan(reps).sum()) > 0
    assert got["ci"] == pytest.approx(list(np.quantile(defined, [0.025, 0.975])), abs=1e-12)


def test_the_command_prints_a_table_and_refuses_what_it_cannot_report(tiny: Benchmark, tmp_path: Path) -> None:
    out = StringIO()
    call_command("intrinsic_report", "intr-tiny", "--replicates", "50", stdout=out)
    text = out.getvalue()
    assert (
        "3 papers × 6 candidates" in text and "1 invalid" in text and "33.3 [" in text and "J-listwise: mrr not reported" in text
    )
    with pytest.raises(CommandError, match="no benchmark"):
        call_command("intrinsic_report", "missing-benchmark", stdout=StringIO())
    lit = Benchmark.objects.create(name="lit")
    with pytest.raises(CommandError, match="not an Intrinsic scoring one"):
        call_command("intrinsic_report", str(lit.pk), stdout=StringIO())
    bare = intrinsic_import(name="intr-bare", files=import_files(tiny_folder(tmp_path / "bare", scores=False))).benchmark
    with pytest.raises(CommandError, match="no score and no listwise ranking yet; import scores.jsonl"):
        call_command("intrinsic_report", str(bare.pk), stdout=StringIO())
    assert (
        "All models, nll" in text
        and "All models per discipline:" in text
        and "rules in force: tie_rule: pessimistic; beats: strict" in text
    )
    with pytest.raises(CommandError, match="--replicates must be 1 or more"):
        call_command("intrinsic_report", str(tiny.pk), "--replicates", "0", stdout=StringIO())


def test_one_scorer_per_model_and_criterion_is_reported_and_the_others_are_named(tiny: Benchmark) -> None:
    rerun = Scorer.objects.create(benchmark=tiny, name="A-nll-rerun", model="A", criterion="nll")
    first = CandidateScore.objects.filter(scorer__name="A-nll", candidate__paper__external_id="p1")
    CandidateScore.objects.bulk_create(
        [CandidateScore(scorer=rerun, candidate=s.candidate, mean=s.mean, total=s.total, tokens=s.tokens) for s in first]
    )
    Scorer.objects.create(benchmark=tiny, name="C-energy", model="C", criterion="energy")
    doc = benchmark_intrinsic_report(benchmark=tiny, replicates=20)
    assert [s["name"] for s in doc["scorers"]] == ["A-nll", "B-nll", "J-listwise"]  # A-nll ranked 3 papers, the rerun 1
    assert [(x["name"], x["reason"].split(";")[0]) for x in doc["read"]["scorers_left_out"]] == [
        ("A-nll-rerun", "A-nll reads the same model by the same criterion and ranked more papers (or is newer)"),
        ("C-energy", "no score or ranking stored yet"),
    ]


def test_the_api_returns_the_command_document_to_researchers_only(
    tiny: Benchmark, researcher, annotator, settings, tmp_path: Path
) -> None:  # noqa: ANN001
    url = reverse("intrinsic:api-report", args=[tiny.pk])
    client = client_for(researcher)
    response = client.get(url, {"replicates": 300, "seed": 7})
    assert response.status_code == 200
    assert response.json() == command_json(str(tiny.pk), "--replicates", "300", "--seed", "7")
    assert client_for(annotator).get(url).status_code == 403 and Client().get(url).status_code == 403
    settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES = 500
    for bad in ({"replicates": 501}, {"replicates": 0}, {"seed": -1}, {"seed": ""}, {"replicates": "many"}):
        response = client.get(url, bad)
        assert response.status_code == 400 and next(iter(bad)) in response.json(), bad
    assert "less than or equal to 500" in client.get(url, {"replicates": 501}).json()["replicates"][0]
    assert client.get(reverse("intrinsic:api-report", args=[999_999])).status_code == 404
    lit = Benchmark.objects.create(name="lit")
    response = client.get(reverse("intrinsic:api-report", args=[lit.pk]))
    assert response.status_code == 404 and "not an Intrinsic scoring one" in response.json()["detail"]
    bare = intrinsic_import(name="intr-bare", files=import_files(tiny_folder(tmp_path / "bare", scores=False))).benchmark
    response = client.get(reverse("intrinsic:api-report", args=[bare.pk]))
    assert response.status_code == 404 and "no score and no listwise ranking yet" in response.json()["detail"]


def test_the_cached_document_follows_the_stored_rows(tiny: Benchmark) -> None:
    before = intrinsic_report_cached(benchmark=tiny, replicates=50, seed=0)
    assert result(before, "A-nll")["n_excluded"] == 0
    CandidateScore.objects.filter(scorer__name="A-nll", candidate__paper__external_id="p2", candidate__external_id="c5").delete()
    after = intrinsic_report_cached(benchmark=tiny, replicates=50, seed=0)
    assert result(after, "A-nll")["n_excluded"] == 1 and after == benchmark_intrinsic_report(
        benchmark=tiny, replicates=50, seed=0
    )
    CandidateScore.objects.filter(scorer__benchmark=tiny).delete()
    assert [s["name"] for s in intrinsic_report_cached(benchmark=tiny, replicates=50, seed=0)["scorers"]] == ["J-listwise"]
    ListwiseRanking.objects.filter(scorer__benchmark=tiny).delete()
    with pytest.raises(ReportError, match="no score and no listwise ranking yet"):  # not served from the cache either
        intrinsic_report_cached(benchmark=tiny, replicates=50, seed=0)


def cell(html: str, table: str, row_attr: str, col_attr: str | None = None) -> str:
    """The HTML of a table's row (``data-...="..."``) or of one cell in it."""
    part = html[html.index(f'id="{table}"') :]
    part = part[part.index(row_attr) :].split("</tr>")[0]
    if col_attr is None:
        return part
    return part[part.index(col_attr) :].split("</td>")[0]


def test_the_report_page_is_researcher_only_and_shows_the_document(
    tiny: Benchmark, researcher, annotator, outsider, client
) -> None:  # noqa: ANN001
    url = reverse("intrinsic:report", args=[tiny.pk])
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert client_for(annotator).get(url).status_code == 403 and client_for(outsider).get(url).status_code == 403
    rita = client_for(researcher)
    assert rita.post(url).status_code == 405
    assert f'href="{url}"' in rita.get(reverse("intrinsic:benchmark", args=[tiny.pk])).content.decode()
    html = rita.get(url, {"replicates": 200, "seed": 1}).content.decode()
    # The main table: a row per scorer; A's Hit@1 is 1 of 3 papers; the listwise row has no MRR and says why.
    assert html[html.index('id="intrinsic-table"') :].split("</table>")[0].count("<tr data-scorer=") == 3
    assert cell(html, "intrinsic-table", 'data-scorer="A-nll"', 'data-metric="hit_at_1"').split(">", 1)[1].startswith("33.3 <")
    assert cell(html, "intrinsic-table", 'data-scorer="B-nll"', 'data-metric="mrr"').split(">", 1)[1].startswith("0.667 <")
    assert "1 left out: a candidate without a score" in cell(html, "intrinsic-table", 'data-scorer="B-nll"')
    assert "—" in cell(html, "intrinsic-table", 'data-scorer="J-listwise"', 'data-metric="mrr"') and 'id="listwise-note"' in html
    # The listwise row has its gold-beats rate now (p1 4/5, p2 0/5); the All-models rows follow the scorers: NLL pools
    # A and B over 5 ranked (model, paper) pairs (Hit@1 2/5, beats 0.8), listwise is J alone.
    assert cell(html, "intrinsic-table", 'data-scorer="J-listwise"', 'data-metric="beats"').split(">", 1)[1].startswith("40.0 <")
    nll_row = cell(html, "intrinsic-table", 'data-group="nll|mean"')
    assert "All models, nll" in nll_row and "A, B" in nll_row and "5 <span" in nll_row and "1 left out" in nll_row
    assert cell(html, "intrinsic-table", 'data-group="nll|mean"', 'data-metric="hit_at_1"').split(">", 1)[1].startswith("40.0 <")
    assert cell(html, "intrinsic-table", 'data-group="nll|mean"', 'data-metric="beats"').split(">", 1)[1].startswith("80.0 <")
    assert 'data-group="listwise|"' in html and "a tie is not a win" in html
    # The heat map's All-models columns: biology NLL pools 2 of 4 pairs at rank 1 (50.0); chemistry ranks 1 of 2 pairs.
    assert '<th scope="col" class="num" data-group="nll|mean">All models<span class="sub">NLL</span></th>' in html
    assert cell(html, "heat-map", 'data-discipline="biology"', 'data-group="nll|mean"').startswith('data-group="nll|mean">50.0')
    assert "1 of 2 (model, paper) pairs ranked" in cell(html, "heat-map", 'data-discipline="chemistry"', 'data-group="nll|mean"')
    assert "beats: strict" in html[html.index('id="rules-in-force"') :].split("</dd>")[0]
    # The heat map: biology × A is 1 of 2 (50.0, shade 5); chemistry × B ranked no paper.
    assert cell(html, "heat-map", 'data-discipline="biology"', 'data-scorer="A-nll"').startswith('data-scorer="A-nll">50.0')
    assert 'class="num heat heat-5" data-scorer="A-nll">50.0' in cell(html, "heat-map", 'data-discipline="biology"')
    assert "0 of 1 ranked" in cell(html, "heat-map", 'data-discipline="chemistry"', 'data-scorer="B-nll"')
    # Distributions, agreement, the differences against the baseline and from the best: B (Hit@1 1/2 of the papers it
    # ranked, A 1/3); B − A comes from the document's A − B pair, negated: ΔHit@2 = 1/2 − 1 on p1, p2.
    assert cell(html, "distribution-table", 'data-scorer="J-listwise"').count('<td class="num">') == 6
    assert '<td class="num">1</td><td class="num">1</td><td class="num">1</td><td class="num">0</td>' in cell(
        html, "distribution-table", 'data-scorer="A-nll"'
    )
    assert "1 of 2" in cell(html, "agreement-table", 'data-criterion="NLL"')
    assert "+50.0" in cell(html, "vs-baseline", 'data-pair="A-nll|J-listwise"')
    assert "−50.0" in cell(html, "vs-best", 'data-pair="B-nll|A-nll"') and 'data-pair="B-nll|J-listwise"' in html
    # A bad option is named and the default shown; another protocol's benchmark is not found.
    html = rita.get(url, {"replicates": "lots"}).content.decode()
    assert "replicates must be a whole number" in html and "2,000 replicates" in html
    lit = Benchmark.objects.create(name="lit")
    assert rita.get(reverse("intrinsic:report", args=[lit.pk])).status_code == 404


def test_the_page_says_what_to_do_when_there_is_nothing_to_report(researcher, tmp_path: Path) -> None:  # noqa: ANN001
    bare = intrinsic_import(name="intr-bare", files=import_files(tiny_folder(tmp_path / "bare", scores=False))).benchmark
    html = client_for(researcher).get(reverse("intrinsic:report", args=[bare.pk])).content.decode()
    assert 'id="report-problem"' in html and "import scores.jsonl or listwise.jsonl with import_intrinsic" in html


def test_the_demo_report_ranks_the_demo_s_strongest_scorer_first_reading_in_as_many_queries_as_the_tiny_one(
    researcher, tiny
) -> None:  # noqa: ANN001
    demo.demo_build()
    benchmark = Benchmark.objects.get(name=demo.DEMO_NAME)

    def queries(b: Benchmark) -> int:
        with CaptureQueriesContext(connection) as captured:
            report_inputs(benchmark=b)
        return len(captured)

    assert queries(tiny) == queries(benchmark)
    doc = benchmark_intrinsic_report(benchmark=benchmark, replicates=200)
    hit1 = {r["scorer"]: r["metrics"]["hit_at_1"]["value"] for r in doc["results"] if r["discipline"] == "all"}
    strongest = demo.scorer_name(*max(demo.GOLD_ADVANTAGE, key=demo.GOLD_ADVANTAGE.__getitem__))
    assert max(hit1, key=hit1.__getitem__) == strongest
    assert len(doc["scorers"]) == 7 and len(doc["disciplines"]) == 13 and len(doc["pairs"]) == 21
    coarse = demo.scorer_name(*demo.COARSE)
    assert next(r for r in doc["results"] if r["scorer"] == coarse and r["discipline"] == "all")["papers_with_ties"] > 0
    html = client_for(researcher).get(reverse("intrinsic:report", args=[benchmark.pk]), {"replicates": 100}).content.decode()
    assert '<span class="badge" title="Highest pooled Hit@1, chosen after the fact">best</span>' in cell(
        html, "intrinsic-table", f'data-scorer="{strongest}"'
    )
