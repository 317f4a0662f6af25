"""The seeded demo (what its constants say, idempotent, leaks caught) and the researcher pages (access, content)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from arena.models import Benchmark
from reconstruction import demo
from reconstruction.models import BibliographyFreeze, Hypothesis, MatchLabel, Reference, SeedPaper
from tests.clients import client_for

pytestmark = pytest.mark.django_db


def counts() -> tuple[int, ...]:
    return (
        SeedPaper.objects.count(),
        Reference.objects.count(),
        BibliographyFreeze.objects.count(),
        Hypothesis.objects.count(),
        MatchLabel.objects.count(),
    )


def test_the_demo_stores_what_its_constants_say_and_a_second_run_changes_nothing() -> None:
    call_command("demo_reconstruction", stdout=StringIO())
    seeds = len(demo.DOMAINS) * demo.SEEDS_PER_DOMAIN
    frozen = len(demo.DOMAINS) * (demo.SEEDS_PER_DOMAIN - 1)  # the last seed of each domain is starved
    refs = frozen * (demo.CLEAN_REFS + len(demo.LEAKS)) + len(demo.DOMAINS) * (1 + len(demo.LEAKS))
    hyps = frozen * (len(demo.SYSTEMS) + 1) * 5  # the three proposers' five, and the Swiss selection's five champions
    assert counts() == (seeds, refs, frozen, hyps, hyps * len(demo.JUDGES))
    out = StringIO()
    call_command("demo_reconstruction", stdout=out)
    assert counts() == (seeds, refs, frozen, hyps, hyps * len(demo.JUDGES)) and out.getvalue().startswith("nothing new")
    assert "nothing new: the demo selection exists" in out.getvalue()
    # Every leak built into it is excluded; the DOI one is shown scrubbed; Birch-J recuses on Birch-M only.
    for leak in ("same-day", "undated", "after", "repeats-abstract"):
        assert not Reference.objects.filter(original_id__endswith=leak, eligible=True).exists(), leak
    assert set(Reference.objects.filter(original_id__endswith="doi-in-text").values_list("eligible", flat=True)) == {True}
    assert all("doi" in r.flags for r in Reference.objects.filter(original_id__endswith="doi-in-text"))
    recused = MatchLabel.objects.filter(recused=True, hypothesis__origin__isnull=True)
    assert recused.count() == frozen * 5 and set(recused.values_list("judge", "hypothesis__participant__name")) == {
        ("Birch-J", "Birch-M")
    }
    # A champion inherits its origin's labels, so Birch-J recuses exactly on the champions that are Birch-M's hypotheses.
    champions = Hypothesis.objects.filter(participant__name=demo.DEMO_SELECTION)
    birch = [c for c in champions.select_related("origin__participant") if c.origin.participant.name == "Birch-M"]
    assert set(MatchLabel.objects.filter(recused=True, hypothesis__in=champions).values_list("hypothesis_id", flat=True)) == {
        c.pk for c in birch
    }
    assert all(c.family == c.origin.family for c in champions.select_related("origin"))


@pytest.fixture
def demo_benchmark() -> Benchmark:
    demo.demo_build()
    return Benchmark.objects.get(name=demo.DEMO_NAME)


def test_anonymous_users_go_to_login_and_annotators_get_403(demo_benchmark, annotator, client) -> None:  # noqa: ANN001
    seed = SeedPaper.objects.filter(benchmark=demo_benchmark).first()
    for url in (
        reverse("reconstruction:benchmark", args=[demo_benchmark.pk]),
        reverse("reconstruction:seed", args=[demo_benchmark.pk, seed.pk]),
    ):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url
        assert client_for(annotator).get(url).status_code == 403, url


def test_the_pages_refuse_post_and_other_protocols(researcher, demo_benchmark) -> None:  # noqa: ANN001
    client = client_for(researcher)
    assert client.post(reverse("reconstruction:benchmark", args=[demo_benchmark.pk])).status_code == 405
    lit = Benchmark.objects.create(name="lit")
    assert client.get(reverse("reconstruction:benchmark", args=[lit.pk])).status_code == 404
    other = SeedPaper.objects.filter(benchmark=demo_benchmark).first()
    assert client.get(reverse("reconstruction:seed", args=[lit.pk, other.pk])).status_code == 404


def test_the_seed_page_shows_the_frozen_text_its_hash_and_why_each_reference_was_excluded(researcher, demo_benchmark) -> None:  # noqa: ANN001
    client = client_for(researcher)
    listing = client.get(reverse("reconstruction:benchmark", args=[demo_benchmark.pk])).content.decode()
    assert "mat-1" in listing and "not frozen" in listing and "too few eligible references" in listing
    seed = SeedPaper.objects.get(benchmark=demo_benchmark, external_id="mat-1")
    html = client.get(reverse("reconstruction:seed", args=[demo_benchmark.pk, seed.pk])).content.decode()
    assert seed.freeze.content_hash in html
    for reason in ("same day as the seed", "undated", "published after the seed", "shares a span of 8 words"):
        assert reason in html, reason
    assert "removed: author list, doi, url, venue" in html
    starved = SeedPaper.objects.get(benchmark=demo_benchmark, external_id="mat-3")
    html = client.get(reverse("reconstruction:seed", args=[demo_benchmark.pk, starved.pk])).content.decode()
    assert 'id="not-frozen"' in html and "2 eligible reference(s)" in html


def test_the_bracket_page_shows_each_slot_round_by_round_with_votes_standings_and_champion(
    researcher, annotator, client, demo_benchmark
) -> None:  # noqa: ANN001
    from reconstruction.models import SwissMatch, SwissSelection, SwissTournament, SwissVote

    demo.demo_swiss()
    selection = SwissSelection.objects.get(benchmark=demo_benchmark)
    assert selection.status == "completed" and selection.round == 2  # three candidates: max(1, 3 - 1) rounds
    url = reverse("reconstruction:bracket", args=[demo_benchmark.pk, selection.pk])
    assert client.get(url).status_code == 302 and client_for(annotator).get(url).status_code == 403
    listing = client_for(researcher).get(reverse("reconstruction:benchmark", args=[demo_benchmark.pk])).content.decode()
    assert url in listing
    seed = SwissTournament.objects.filter(selection=selection).order_by("seed_paper_id").first().seed_paper
    html = client_for(researcher).get(url, {"seed": seed.pk}).content.decode()
    assert html.count('class="bracket"') == 5 and html.count("champion-line") == 5
    for t in SwissTournament.objects.filter(selection=selection, seed_paper=seed).select_related("champion__participant"):
        assert f"Champion: <strong>{t.champion.participant.name}</strong>: {t.champion.title}" in html
    # Every vote is on the page, one line per (judge, order), with the side it went to.
    shown = SwissVote.objects.filter(match__tournament__selection=selection, match__tournament__seed_paper=seed)
    assert shown.exists()
    for v in shown.select_related("match__a__participant", "match__b__participant"):
        side = {"a": v.match.a.participant.name, "b": v.match.b.participant.name, "tie": "tie"}[v.winner]
        assert f"{v.judge}, {v.order} order: {side}" in html
    assert (
        html.count("<em>bye</em>")
        == SwissMatch.objects.filter(tournament__seed_paper=seed, tournament__selection=selection, b__isnull=True).count()
        == 10
    )
    # No vote by a judge of either candidate's family.
    for v in SwissVote.objects.filter(match__tournament__selection=selection).select_related("match__a", "match__b"):
        family = dict(demo.SWISS_JUDGES)[v.judge]
        assert family not in (v.match.a.family, v.match.b.family)
    assert (
        client_for(researcher).get(reverse("reconstruction:bracket", args=[demo_benchmark.pk, selection.pk + 99])).status_code
        == 404
    )
