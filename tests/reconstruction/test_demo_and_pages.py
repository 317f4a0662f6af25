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
    return (SeedPaper.objects.count(), Reference.objects.count(), BibliographyFreeze.objects.count(), Hypothesis.objects.count(), MatchLabel.objects.count())


def test_the_demo_stores_what_its_constants_say_and_a_second_run_changes_nothing() -> None:
    call_command("demo_reconstruction", stdout=StringIO())
    seeds = len(demo.DOMAINS) * demo.SEEDS_PER_DOMAIN
    frozen = len(demo.DOMAINS) * (demo.SEEDS_PER_DOMAIN - 1)  # the last seed of each domain is starved
    refs = frozen * (demo.CLEAN_REFS + len(demo.LEAKS)) + len(demo.DOMAINS) * (1 + len(demo.LEAKS))
    hyps = frozen * len(demo.SYSTEMS) * 5
    assert counts() == (seeds, refs, frozen, hyps, hyps * len(demo.JUDGES))
    out = StringIO()
    call_command("demo_reconstruction", stdout=out)
    assert counts() == (seeds, refs, frozen, hyps, hyps * len(demo.JUDGES)) and out.getvalue().startswith("nothing new")
    # Every leak built into it is excluded; the DOI one is shown scrubbed; Birch-J recuses on Birch-M only.
    for leak in ("same-day", "undated", "after", "repeats-abstract"):
        assert not Reference.objects.filter(original_id__endswith=leak, eligible=True).exists(), leak
    assert set(Reference.objects.filter(original_id__endswith="doi-in-text").values_list("eligible", flat=True)) == {True}
    assert all("doi" in r.flags for r in Reference.objects.filter(original_id__endswith="doi-in-text"))
    recused = MatchLabel.objects.filter(recused=True)
    assert recused.count() == frozen * 5 and set(recused.values_list("judge", "hypothesis__participant__name")) == {("Birch-J", "Birch-M")}


@pytest.fixture
def demo_benchmark() -> Benchmark:
    demo.demo_build()
    return Benchmark.objects.get(name=demo.DEMO_NAME)


def test_anonymous_users_go_to_login_and_annotators_get_403(demo_benchmark, annotator, client) -> None:  # noqa: ANN001
    seed = SeedPaper.objects.filter(benchmark=demo_benchmark).first()
    for url in (reverse("reconstruction:benchmark", args=[demo_benchmark.pk]), reverse("reconstruction:seed", args=[demo_benchmark.pk, seed.pk])):
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
