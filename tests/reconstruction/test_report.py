"""The Reconstruction report from stored labels (issue 13): the command's numbers on a tiny benchmark against hand
computation, the command's JSON against the API, the access rules, and the results page on the demo.

The tiny benchmark: systems Alpha (family alpha) and Beta (family beta), papers p1 and p2 (domain chem) and p3 (bio),
five hypotheses each (a case with fewer is excluded), of which slots 1 and 2 are judged. Judge Gamma-J (gamma) labels
every one of those; Alpha-J (alpha) labels Beta's and is recused on one of Alpha's (missing, not No-match). Labels
(G = Gamma-J, A = Alpha-J):

    paper  Alpha s1        Alpha s2   Beta s1              Beta s2
    p1     G match, A rec  G no       G match, A no (tie)  G no, A no
    p2     G no            G no       G match, A match     G no, A no
    p3     G match         G match    G no, A no           G no, A no

So Alpha: p1 1/2, p2 0/2, p3 2/2 Matches (the recused judgment drops out, G's Match stands); Beta: p1 0/2 (the tie
is not a Match), p2 1/2, p3 0/2. Under the paper's fraction rule Beta's p1 slot 1 (G Match, A No-match) scores 1/2:
Beta p1 1/2 of 2, p2 1/2 (G and A Match on slot 1: 1), p3 0.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from arena.models import Benchmark
from reconstruction import demo
from reconstruction.importing import import_files, reconstruction_import
from tests.clients import client_for
from tests.reconstruction.helpers import write

pytestmark = pytest.mark.django_db

PAPERS = {"p1": "chem", "p2": "chem", "p3": "bio"}
#: (paper, system, slot) -> [(judge, family, label)]; label None = recused.
G, A = ("Gamma-J", "gamma"), ("Alpha-J", "alpha")
LABELS: dict[tuple[str, str, int], list[tuple[tuple[str, str], str | None]]] = {
    ("p1", "Alpha", 1): [(G, "match"), (A, None)],
    ("p1", "Alpha", 2): [(G, "no_match")],
    ("p1", "Beta", 1): [(G, "match"), (A, "no_match")],
    ("p1", "Beta", 2): [(G, "no_match"), (A, "no_match")],
    ("p2", "Alpha", 1): [(G, "no_match")],
    ("p2", "Alpha", 2): [(G, "no_match")],
    ("p2", "Beta", 1): [(G, "match"), (A, "match")],
    ("p2", "Beta", 2): [(G, "no_match"), (A, "no_match")],
    ("p3", "Alpha", 1): [(G, "match")],
    ("p3", "Alpha", 2): [(G, "match")],
    ("p3", "Beta", 1): [(G, "no_match"), (A, "no_match")],
    ("p3", "Beta", 2): [(G, "no_match"), (A, "no_match")],
}


def tiny_folder(tmp: Path, *, labels: bool = True) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    seeds, refs, hyps, labs = [], [], [], []
    for i, (paper, domain) in enumerate(PAPERS.items()):
        seeds.append(
            {
                "seed_id": paper,
                "domain": domain,
                "title": f"Seed paper number {i} on topic {paper}",
                "abstract": f"An abstract about finding {paper}.",
                "t0": "2023-06-01",
            }
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
        for system in ("Alpha", "Beta"):
            for slot in (1, 2, 3, 4, 5):  # slots 3-5 are never judged: not in the labels at all
                hyps.append(
                    {
                        "seed_id": paper,
                        "model": system,
                        "family": system.lower(),
                        "slot": slot,
                        "title": f"{system} idea {slot} on {paper}",
                        "summary": f"Summary {slot}.",
                        "cited": ["R1"],
                    }
                )
    for (paper, system, slot), judgments in LABELS.items():
        for (judge, family), label in judgments:
            line = {
                "seed_id": paper,
                "model": system,
                "slot": slot,
                "judge": judge,
                "judge_family": family,
                "run_label": judge.lower(),
            }
            labs.append(line | ({"label": None, "recused": True} if label is None else {"label": label}))
    write(tmp / "seeds.jsonl", seeds)
    write(tmp / "references.jsonl", refs)
    write(tmp / "hypotheses.jsonl", hyps)
    if labels:
        write(tmp / "labels.jsonl", labs)
    return tmp


@pytest.fixture
def tiny(tmp_path: Path) -> Benchmark:
    return reconstruction_import(name="recon-tiny", files=import_files(tiny_folder(tmp_path / "tiny"))).benchmark


def command_json(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("reconstruction_report", *args, "--json", stdout=out)
    return json.loads(out.getvalue())  # exactly one JSON object (json.loads refuses trailing text)


def rate(doc: dict[str, Any], system: str, domain: str) -> dict[str, Any]:
    (row,) = [r for r in doc["rates"] if r["system"] == system and r["domain"] == domain]
    return row


def pair(doc: dict[str, Any], a: str, b: str, domain: str) -> dict[str, Any]:
    (row,) = [p for p in doc["pairs"] if p["a"] == a and p["b"] == b and p["domain"] == domain]
    return row


def test_the_command_json_equals_hand_computed_figures(tiny: Benchmark) -> None:
    doc = command_json(str(tiny.pk), "--replicates", "400", "--seed", "3")
    assert doc["benchmark"]["id"] == tiny.pk and doc["systems"] == ["Alpha", "Beta"] and doc["domains"] == ["bio", "chem", "all"]
    assert doc["labels"] | {"sources": None} == {
        "judgments": 19,
        "recused": 1,
        "hypotheses": 12,
        "unlabelled": 0,
        "ties": 1,
        "papers": 3,
        "sources": None,
        "excluded_cases": {},
    }
    expected = {  # (system, domain): (matches, hypotheses, papers with a Match, papers, ties)
        ("Alpha", "all"): (3, 6, 2, 3, 0),
        ("Beta", "all"): (1, 6, 1, 3, 1),
        ("Alpha", "chem"): (1, 4, 1, 2, 0),
        ("Beta", "chem"): (1, 4, 1, 2, 1),
        ("Alpha", "bio"): (2, 2, 1, 1, 0),
        ("Beta", "bio"): (0, 2, 0, 1, 0),
    }
    for (system, domain), (m, n, pm, p, ties) in expected.items():
        row = rate(doc, system, domain)
        assert (row["n_matches"], row["n_hypotheses"], row["n_papers_with_match"], row["n_papers"], row["ties"]) == (
            m,
            n,
            pm,
            p,
            ties,
        )
        assert row["match_rate"] == pytest.approx(m / n) and row["success_at_5"] == pytest.approx(pm / p)
        assert row["excluded_unlabelled"] == 0
        low, high = row["match_rate_ci"]
        assert 0 <= low <= m / n <= high <= 1  # a percentile interval of paper resamples brackets this point here
    # bio holds one paper: every resample is that paper, so the intervals are the point.
    assert rate(doc, "Alpha", "bio")["match_rate_ci"] == [1.0, 1.0] and rate(doc, "Beta", "bio")["success_at_5_ci"] == [0.0, 0.0]
    # Oracles over all: slots (p1 s1, p2 s1, p3 s1, p3 s2) hold a Match of 6 → 4/6; top-5 per paper 1/4, 1/4, 2/4 → 4/12.
    assert rate(doc, "slot_oracle", "all")["match_rate"] == pytest.approx(4 / 6)
    assert rate(doc, "top5_oracle", "all")["match_rate"] == pytest.approx(4 / 12)
    assert rate(doc, "slot_oracle", "all")["success_at_5"] == pytest.approx(1.0)
    # Sign test Alpha vs Beta over papers: p1 Alpha more (1 vs 0), p2 Beta more (0 vs 1), p3 Alpha more (2 vs 0).
    # Two-sided exact p of 2 of 3 at ½: P(X ≤ 1) + P(X ≥ 2) = 1.
    ab = pair(doc, "Alpha", "Beta", "all")
    assert ab["sign_test"] == {"n_papers": 3, "a_more": 2, "b_more": 1, "ties": 0, "p_value": pytest.approx(1.0)}
    assert ab["ratio"] == pytest.approx((3 / 6) / (1 / 6))
    assert pair(doc, "Alpha", "Beta", "chem")["sign_test"] | {"p_value": 0} == {
        "n_papers": 2,
        "a_more": 1,
        "b_more": 1,
        "ties": 0,
        "p_value": 0,
    }
    # Beta's bio rate is 0: the ratio is infinite, written "inf" (JSON has no infinity). Each pair is shown once.
    assert pair(doc, "Alpha", "Beta", "bio")["ratio"] == "inf"
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [("Alpha", "Beta")] * 3
    assert doc["method"]["label_rule"] == "majority" and doc["method"]["rate"] == "pooled"
    assert pair(doc, "Alpha", "Beta", "bio")["sign_test"]["p_value"] == pytest.approx(1.0)  # 1 of 1: 2 · ½


def test_the_command_prints_tables_and_refuses_what_it_cannot_report(tiny: Benchmark, tmp_path: Path) -> None:
    out = StringIO()
    call_command("reconstruction_report", "recon-tiny", "--replicates", "50", stdout=out)
    text = out.getvalue()
    assert "1 recused" in text and "1 ties" in text and "3/6" in text and "slot_oracle (control)" in text and "inf" in text
    with pytest.raises(CommandError, match="no benchmark"):
        call_command("reconstruction_report", "missing-benchmark", stdout=StringIO())
    lit = Benchmark.objects.create(name="lit")
    with pytest.raises(CommandError, match="not a Reconstruction one"):
        call_command("reconstruction_report", str(lit.pk), stdout=StringIO())
    bare = reconstruction_import(name="recon-bare", files=import_files(tiny_folder(tmp_path / "bare", labels=False))).benchmark
    with pytest.raises(CommandError, match="no match label yet"):
        call_command("reconstruction_report", str(bare.pk), stdout=StringIO())
    with pytest.raises(CommandError, match="--replicates must be 1 or more"):
        call_command("reconstruction_report", str(tiny.pk), "--replicates", "0", stdout=StringIO())


def test_the_api_returns_the_command_document_to_researchers_only(
    tiny: Benchmark, researcher, annotator, settings, tmp_path: Path
) -> None:  # noqa: ANN001
    url = reverse("reconstruction:api-report", args=[tiny.pk])
    client = client_for(researcher)
    response = client.get(url, {"replicates": 300, "seed": 7})
    assert response.status_code == 200
    assert response.json() == command_json(str(tiny.pk), "--replicates", "300", "--seed", "7")
    assert client_for(annotator).get(url).status_code == 403 and Client().get(url).status_code == 403
    settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES = 500
    for bad in ({"replicates": 501}, {"replicates": 0}, {"seed": -1}, {"seed": ""}, {"replicates": "many"}):
        response = client.get(url, bad)
        assert response.status_code == 400 and next(iter(bad)) in response.json(), bad
    assert client.get(reverse("reconstruction:api-report", args=[999_999])).status_code == 404
    lit = Benchmark.objects.create(name="lit")
    response = client.get(reverse("reconstruction:api-report", args=[lit.pk]))
    assert response.status_code == 404 and "not a Reconstruction one" in json.dumps(response.json())
    bare = reconstruction_import(name="recon-bare", files=import_files(tiny_folder(tmp_path / "bare", labels=False))).benchmark
    assert client.get(reverse("reconstruction:api-report", args=[bare.pk])).status_code == 404


def test_the_results_page_is_researcher_only_and_shows_the_demo_document(researcher, annotator, client) -> None:  # noqa: ANN001
    demo.demo_build()
    benchmark = Benchmark.objects.get(name=demo.DEMO_NAME)
    url = reverse("reconstruction:results", args=[benchmark.pk])
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert client_for(annotator).get(url).status_code == 403
    researcher_client = client_for(researcher)
    assert researcher_client.post(url).status_code == 405
    assert f'href="{url}"' in researcher_client.get(reverse("reconstruction:benchmark", args=[benchmark.pk])).content.decode()
    html = researcher_client.get(url).content.decode()
    doc = command_json(str(benchmark.pk))  # the page uses the default replicates and seed
    for row in doc["rates"]:
        cell = html[html.index(f'data-system="{row["system"]}"') :].split("</tr>")[0]
        cell = cell[cell.index(f'data-domain="{row["domain"]}"') :].split("</td>")[0]
        assert f"{row['match_rate']:.3f}" in cell and f"{row['success_at_5']:.3f}" in cell, (row["system"], row["domain"])
        assert f"{row['n_matches']}/{row['n_hypotheses']} hypotheses" in cell
        low, high = row["match_rate_ci"]
        assert f"[{low:.3f}, {high:.3f}]" in cell
    for p in doc["pairs"]:
        line = html[html.index(f'data-pair="{p["domain"]}|{p["a"]}|{p["b"]}"') :].split("</tr>")[0]
        s = p["sign_test"]
        assert f'<td class="num">{s["a_more"]}</td><td class="num">{s["b_more"]}</td><td class="num">{s["ties"]}</td>' in line
    lit = Benchmark.objects.create(name="lit")
    assert researcher_client.get(reverse("reconstruction:results", args=[lit.pk])).status_code == 404


def test_the_dashboards_benchmark_link_opens_the_reconstruction_pages(tiny: Benchmark, researcher) -> None:  # noqa: ANN001
    # arena's benchmark page sends another protocol's benchmark to that app's "<protocol>:benchmark" page
    answer = client_for(researcher).get(reverse("arena:benchmark", args=[tiny.pk]))
    assert answer.status_code == 302 and answer["Location"] == reverse("reconstruction:benchmark", args=[tiny.pk])


def test_the_papers_rules_are_offered_by_the_command_the_api_and_the_page_and_named(tiny: Benchmark, researcher) -> None:  # noqa: ANN001
    from arena.stats import reconstruction as stats
    from reconstruction import reports

    # the page and the API offer the rules without importing the statistics: the two lists must not drift apart
    assert (reports.LABEL_RULES, reports.RATE_RULES) == (stats.LABEL_RULES, stats.RATE_RULES)
    doc = command_json(str(tiny.pk), "--replicates", "50", "--label-rule", "fraction")
    method = doc["method"]
    assert (method["label_rule"], method["rate"]) == ("fraction", "pooled")
    assert "fraction of its non-recused judges" in method["label_rule_text"] and "1-1 split scores 0.5" in method["tie_rule"]
    # Beta (module doc): p1 1/2 + 0, p2 1 + 0, p3 0 → 1.5 of 6; success@5 the papers' best scores (1/2 + 1 + 0) / 3
    beta = rate(doc, "Beta", "all")
    assert (beta["n_matches"], beta["n_hypotheses"], beta["n_papers_with_match"]) == (1.5, 6, 1.5)
    assert beta["match_rate"] == pytest.approx(0.25) and beta["success_at_5"] == pytest.approx(0.5)
    assert rate(doc, "Beta", "chem")["match_rate"] == pytest.approx(1.5 / 4)
    assert rate(doc, "Alpha", "all")["match_rate"] == pytest.approx(3 / 6)  # single judges: as under majority
    out = StringIO()
    call_command("reconstruction_report", str(tiny.pk), "--replicates", "50", "--label-rule", "fraction", stdout=out)
    text = out.getvalue()
    assert "label rule fraction: a hypothesis scores the fraction of its non-recused judges" in text
    assert "rate pooled:" in text and "1.5/6" in text
    with pytest.raises(CommandError, match="invalid choice: 'share'"):
        call_command("reconstruction_report", str(tiny.pk), "--label-rule", "share", stdout=StringIO())

    client = client_for(researcher)
    url = reverse("reconstruction:api-report", args=[tiny.pk])
    answer = client.get(url, {"replicates": 60, "label_rule": "fraction", "rate": "paper-mean"})
    assert answer.status_code == 200
    expected = command_json(str(tiny.pk), "--replicates", "60", "--label-rule", "fraction", "--rate", "paper-mean")
    assert answer.json() == expected and expected["method"]["rate"] == "paper-mean"
    assert client.get(url, {"replicates": 60}).json()["method"]["label_rule"] == "majority"
    for bad in ({"label_rule": "share"}, {"rate": "mean"}, {"rate": ""}):
        answer = client.get(url, bad)
        assert answer.status_code == 400 and next(iter(bad)) in answer.json(), bad

    page_url = reverse("reconstruction:results", args=[tiny.pk])
    html = client.get(page_url, {"label_rule": "fraction"}).content.decode()
    assert "Label rule <strong>fraction</strong>" in html and '<option value="fraction" selected>' in html
    cell = html[html.index('data-system="Beta"') :].split("</tr>")[0]
    cell = cell[cell.index('data-domain="all"') :].split("</td>")[0]
    assert "0.250" in cell and "1.5/6 hypotheses" in cell and "1.5/3 papers" in cell
    assert f'href="{url}?label_rule=fraction&amp;rate=pooled"' in html
    html = client.get(page_url, {"rate": "mean"}).content.decode()
    assert "rate must be one of pooled, paper-mean, not &#x27;mean&#x27;; showing pooled." in html
    assert "Rate <strong>pooled</strong>" in html and "Label rule <strong>majority</strong>" in html
