"""The seeded demo (what its constants say, synthetic labels, idempotent, drawn gold advantages visible) and the
researcher page of an Intrinsic benchmark (access, content, a fixed number of queries, the arena's redirect)."""

from __future__ import annotations

from collections import defaultdict
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from arena.models import Benchmark
from intrinsic import demo
from intrinsic.importing import import_files, intrinsic_import
from intrinsic.models import Candidate, CandidateScore, ListwiseRanking, Paper, Scorer
from tests.clients import client_for

from .test_import_export import folder

pytestmark = pytest.mark.django_db


def counts(name: str = demo.DEMO_NAME) -> tuple[int, ...]:
    return (
        Paper.objects.filter(benchmark__name=name).count(),
        Candidate.objects.filter(paper__benchmark__name=name).count(),
        Scorer.objects.filter(benchmark__name=name).count(),
        CandidateScore.objects.filter(scorer__benchmark__name=name).count(),
        ListwiseRanking.objects.filter(scorer__benchmark__name=name).count(),
    )


def gold_ranks(scorer: Scorer) -> list[int]:
    """The gold's rank per paper, computed here by the pessimistic rule (a tie counts against the gold)."""
    by_paper: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for mean, paper, gold in CandidateScore.objects.filter(scorer=scorer).values_list(
        "mean", "candidate__paper_id", "candidate__gold"
    ):
        by_paper[paper].append((mean, gold))
    ranks = []
    for rows in by_paper.values():
        g = next(m for m, gold in rows if gold)
        ranks.append(1 + sum(m <= g for m, gold in rows if not gold))
    return ranks


def test_the_demo_stores_what_its_constants_say_labelled_synthetic_and_a_second_run_changes_nothing() -> None:
    call_command("demo_intrinsic", stdout=StringIO())
    papers = len(demo.DISCIPLINES) * demo.PAPERS_PER_DISCIPLINE
    scorers = len(demo.MODELS) * len(demo.CRITERIA)
    expected = (papers, papers * demo.CANDIDATES, scorers + 1, scorers * papers * demo.CANDIDATES, papers)
    assert expected == (120, 1920, 7, 11520, 120) and counts() == expected
    out = StringIO()
    call_command("demo_intrinsic", stdout=out)
    assert counts() == expected and out.getvalue().startswith("nothing new")
    # The live run's benchmark: the first paper of each discipline, papers only (make demo scores it with the toy).
    assert counts(demo.LIVE_NAME) == (12, 12 * demo.CANDIDATES, 0, 0, 0)
    assert set(Paper.objects.filter(benchmark__name=demo.LIVE_NAME).values_list("external_id", flat=True)) == {
        f"demo-{d.replace(' ', '-')}-01" for d in demo.DISCIPLINES
    }

    benchmark = Benchmark.objects.get(name=demo.DEMO_NAME)
    assert (
        benchmark.protocol == "intrinsic"
        and "Synthetic" in benchmark.description
        and "no language model" in benchmark.description
    )
    assert all(s.endpoint.startswith("synthetic:") for s in Scorer.objects.all())
    assert set(Paper.objects.values_list("discipline", flat=True)) == set(demo.DISCIPLINES) and len(demo.DISCIPLINES) == 12
    assert all(b.startswith("Synthetic demo paper.") for b in Paper.objects.values_list("background", flat=True))
    assert Candidate.objects.filter(gold=True, paper__benchmark=benchmark).count() == papers
    # Every score obeys the format's own arithmetic, and NLLs are never negative.
    for mean, total, tokens, criterion in CandidateScore.objects.values_list("mean", "total", "tokens", "scorer__criterion"):
        assert abs(mean * tokens - total) < 1e-6 and (criterion != "nll" or mean > 0)


def test_the_demo_s_drawn_gold_advantages_show_in_the_gold_ranks() -> None:
    demo.demo_build()
    chance = 1 / demo.CANDIDATES
    hit1 = {s.name: sum(r == 1 for r in gold_ranks(s)) / len(gold_ranks(s)) for s in Scorer.objects.exclude(criterion="listwise")}
    best = demo.scorer_name(*max(demo.GOLD_ADVANTAGE, key=demo.GOLD_ADVANTAGE.__getitem__))
    weakest = demo.scorer_name(*min(demo.GOLD_ADVANTAGE, key=demo.GOLD_ADVANTAGE.__getitem__))
    assert max(hit1, key=hit1.__getitem__) == best and hit1[best] > 5 * chance  # advantage 1.8 sd
    assert hit1[weakest] < hit1[best] / 2
    # The coarse scorer's energies are rounded to 0.1: some golds tie a distractor, and the tie counts against them.
    coarse = Scorer.objects.get(name=demo.scorer_name(*demo.COARSE))
    by_paper: dict[int, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for mean, paper, gold in CandidateScore.objects.filter(scorer=coarse).values_list(
        "mean", "candidate__paper_id", "candidate__gold"
    ):
        by_paper[paper][gold].append(mean)
    tied = sum(golds[0] in distractors for distractors, golds in by_paper.values())
    assert tied >= 5
    # Listwise: the accepted rankings list five distinct candidates of their paper; a few answers are invalid.
    rankings = list(ListwiseRanking.objects.select_related("paper"))
    accepted = [r for r in rankings if r.status == "accepted"]
    assert 0 < len(rankings) - len(accepted) < len(rankings) * 0.15
    ids = defaultdict(set)
    for paper_id, cid in Candidate.objects.values_list("paper_id", "external_id"):
        ids[paper_id].add(cid)
    assert all(len(set(r.top)) == 5 and set(r.top) <= ids[r.paper_id] for r in accepted)


@pytest.fixture
def small(tmp_path: Path) -> Benchmark:
    intrinsic_import(name="intr", files=import_files(folder(tmp_path)))
    return Benchmark.objects.get(name="intr")


def test_anonymous_users_go_to_login_and_annotators_and_outsiders_get_403(small, annotator, outsider, client) -> None:  # noqa: ANN001
    url = reverse("intrinsic:benchmark", args=[small.pk])
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(outsider).get(url).status_code == 403


def test_the_page_refuses_post_and_other_protocols_and_the_arena_sends_researchers_to_it(researcher, small) -> None:  # noqa: ANN001
    client = client_for(researcher)
    url = reverse("intrinsic:benchmark", args=[small.pk])
    assert client.post(url).status_code == 405
    lit = Benchmark.objects.create(name="lit")
    assert client.get(reverse("intrinsic:benchmark", args=[lit.pk])).status_code == 404
    assert client.get(reverse("intrinsic:benchmark", args=[999999])).status_code == 404
    response = client.get(reverse("arena:benchmark", args=[small.pk]))
    assert response.status_code == 302 and response["Location"] == url
    dashboard = client.get(reverse("arena:dashboard")).content.decode()
    assert "Intrinsic scoring" in dashboard


def test_the_page_lists_papers_with_their_gold_and_the_scorers_with_their_coverage(researcher, small) -> None:  # noqa: ANN001
    html = client_for(researcher).get(reverse("intrinsic:benchmark", args=[small.pk])).content.decode()
    assert "Does warming shift flowering?" in html and "What limits coherence?" in html
    papers = html[html.index('id="papers"') :]
    assert "<td>p1</td><td>ecology</td>" in papers and "<code>c4</code>" in papers and "<code>b1</code>" in papers
    scorers = html[html.index('id="scorers"') : html.index('id="disciplines"')]
    # m1-nll covers p1 and p2, m1-energy p1; the judge ranked p1 and gave one invalid answer (p2).
    assert '<tr><td>m1-nll</td><td>M1</td><td>NLL (−log softmax)</td>\n      <td class="num">2</td>' in scorers
    assert '<tr><td>m1-energy</td><td>M1</td><td>raw-logit energy (−logit)</td>\n      <td class="num">1</td>' in scorers
    assert (
        '<td>judge</td><td>J</td><td>listwise judge (top 5)</td>\n      <td class="num">1</td>\n      <td class="num">1</td>'
        in scorers
    )


def test_the_page_takes_the_same_queries_for_two_papers_and_for_the_demo(researcher, small) -> None:  # noqa: ANN001
    client = client_for(researcher)

    def queries(benchmark: Benchmark) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("intrinsic:benchmark", args=[benchmark.pk])).status_code == 200
        return len(captured)

    demo.demo_build()
    big = Benchmark.objects.get(name=demo.DEMO_NAME)
    assert queries(small) == queries(big)
    html = client.get(reverse("intrinsic:benchmark", args=[big.pk])).content.decode()
    assert "synthetic: drawn by intrinsic/demo.py" in html and html[html.index('id="papers"') :].count("<td>demo-") == 120
