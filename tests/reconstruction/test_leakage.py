"""The anti-leakage audit and the freeze: bibliographies built to leak are caught, and no prompt text holds the seed's
title, a DOI, a URL or a real reference id. Expected values are hand-computed from the fixtures."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from reconstruction import leakage
from reconstruction.importing import import_files, reconstruction_import
from reconstruction.models import BibliographyFreeze, Reference, SeedPaper
from reconstruction.services import ReconstructionError, bibliography_freeze, render_bibliography

from . import helpers as h

T0 = date(2023, 5, 10)


@pytest.mark.parametrize(
    ("published", "precision", "expected"),
    [
        (None, "day", "undated"),
        (date(2023, 5, 10), "day", "same day as the seed"),
        (date(2023, 5, 11), "day", "published after the seed"),
        (date(2023, 5, 9), "day", None),
        (date(2023, 4, 1), "month", None),  # April ends before 10 May
        (date(2023, 5, 1), "month", "dated only to a month that does not end before the seed's date"),
        (date(2023, 1, 1), "year", "dated only to a year that does not end before the seed's date"),
        (date(2022, 1, 1), "year", None),
    ],
)
def test_only_references_published_strictly_before_t0_are_eligible(
    published: date | None, precision: str, expected: str | None
) -> None:
    assert leakage.temporal_exclusion(published, T0, precision) == expected


def test_a_reference_repeating_the_seed_title_or_abstract_is_excluded() -> None:
    def why(title: str, abstract: str) -> str | None:
        return leakage.overlap_exclusion(seed_title=h.SEED_TITLE, seed_abstract=h.SEED_ABSTRACT, title=title, abstract=abstract)

    assert why("Strain Gradients Stabilise Cubic Perovskite Films!", "Other text.") == "its title repeats the seed's title"
    assert (
        why("A review", "As in 'strain gradients stabilise cubic perovskite films', we ...")
        == "its abstract repeats the seed's title"
    )
    # 8 consecutive words of the abstract ("the cubic phase of lead halide perovskite thin") inside other text.
    assert why("A review", "Earlier, the cubic phase of lead halide perovskite thin was unstable.").startswith(
        "its abstract shares a span of 8 words"
    )
    # 7 consecutive words are not enough, and a topical neighbour is not excluded.
    assert why("A review", "Earlier, the cubic phase of lead halide perovskite was unstable.") is None
    assert why("Phase transitions in halide perovskites", "Temperature drives tetragonal to cubic transitions.") is None


def test_the_jaccard_bound_is_the_documented_one() -> None:
    # Hand count: seed "a b c d e f" has 5-grams {abcde, bcdef}; "a b c d e x" has {abcde, bcdex}: 1 shared of 3 = 0.33 > 0.2.
    assert leakage.jaccard(leakage.ngrams(list("abcdef"), 5), leakage.ngrams(list("abcdex"), 5)) == pytest.approx(1 / 3)
    reason = leakage.overlap_exclusion(seed_title="T", seed_abstract="a b c d e f", title="U", abstract="a b c d e x")
    assert reason is not None and "Jaccard of 5-grams 0.33 > 0.2" in reason
    # 1 shared of 5 (0.2) is not above the bound.
    assert leakage.overlap_exclusion(seed_title="T", seed_abstract="a b c d e f g", title="U", abstract="a b c d e x y") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("see doi:10.1038/nmat1234 for details", "doi"),
        ("see 10.1103/PhysRevB.99.014101.", "doi"),
        ("https://arxiv.org/abs/2101.00001", "url"),
        ("arXiv:2101.00001v2", "arxiv"),
        ("write to a.b@uni.edu", "email"),
        ("as Smith et al. showed", "author list"),
        ("In Proceedings of the 40th ICML", "venue"),
        ("at NeurIPS 2021", "venue"),
    ],
)
def test_identifying_metadata_is_found_and_scrubbed(text: str, kind: str) -> None:
    assert kind in {k for k, _ in leakage.metadata_hits(text)}
    scrubbed, kinds = leakage.scrub(text)
    assert kind in kinds and leakage.SCRUBBED in scrubbed
    assert leakage.metadata_hits(scrubbed) == []


def test_a_reference_s_own_id_is_scrubbed_but_not_inside_other_words() -> None:
    assert leakage.scrub("as in W102, and W1020", also=["W102"]) == ("as in [removed], and W1020", ["reference id"])


def test_the_hash_changes_iff_the_shown_text_changes() -> None:
    entries = [("R2", "Title two", "Abstract two"), ("R10", "Title ten", "Abstract ten")]
    text = leakage.bibliography_text(entries)
    assert text.index("[R2]") < text.index("[R10]")  # ordered by number, not as text
    assert leakage.bibliography_text(list(reversed(entries))) == text
    assert leakage.bibliography_hash(leakage.bibliography_text(list(reversed(entries)))) == leakage.bibliography_hash(text)
    changed = leakage.bibliography_text([("R2", "Title two", "Abstract two."), ("R10", "Title ten", "Abstract ten")])
    assert changed != text and leakage.bibliography_hash(changed) != leakage.bibliography_hash(text)
    import hashlib

    assert leakage.bibliography_hash(text) == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.django_db
def test_a_bibliography_built_to_leak_is_audited_and_its_prompt_text_is_clean(tmp_path: Path) -> None:
    summary = reconstruction_import(name="rec", files=import_files(h.folder(tmp_path)))
    seed = SeedPaper.objects.get(external_id="s1")
    refs = {r.original_id: r for r in Reference.objects.filter(seed=seed)}
    assert {k for k, r in refs.items() if r.eligible} == {"W100", "W101", "W102"}
    assert refs["W103"].exclusion_reason == "same day as the seed"
    assert refs["W104"].exclusion_reason == "undated"
    assert refs["W105"].exclusion_reason.startswith("its abstract shares a span of 8 words")
    assert refs["W106"].exclusion_reason == "dated only to a year that does not end before the seed's date"
    assert refs["W102"].flags == ["author list", "doi", "url"]
    text = render_bibliography(seed)
    assert text == seed.freeze.shown_text and seed.freeze.content_hash == leakage.bibliography_hash(text)
    assert re.findall(r"\[(R\d+)\]", text) == ["R1", "R3", "R6"]
    lowered = text.lower()
    assert h.SEED_TITLE.lower() not in lowered and "strain gradients stabilise" not in lowered
    assert (
        "10.1038" not in text
        and "doi" not in lowered
        and "http" not in lowered
        and "example.org" not in lowered
        and "et al" not in lowered
    )
    assert not any(re.search(rf"\b{ref_id}\b", text) for ref_id in refs)
    assert "same-day" not in lowered and "undated" not in lowered and "extended" not in lowered  # excluded references are absent
    audit = seed.freeze.audit
    assert audit["eligible"] == 3 and {e["anon_id"] for e in audit["excluded"]} == {"R2", "R4", "R5", "R7"}
    assert summary.not_frozen.keys() == {"s2"}


@pytest.mark.django_db
def test_a_seed_with_fewer_than_three_eligible_references_is_refused_with_the_reasons(tmp_path: Path) -> None:
    reconstruction_import(name="rec", files=import_files(h.folder(tmp_path, hypotheses=[], labels=[], tournament=[])))
    seed = SeedPaper.objects.get(external_id="s2")
    with pytest.raises(ReconstructionError) as caught:
        bibliography_freeze(seed=seed)
    assert str(caught.value) == (
        "seed 's2' has 2 eligible reference(s) of 3 (1 published after the seed); a seed needs at least 3 references "
        "published strictly before its date 2022-01-01 to be frozen and used"
    )
    with pytest.raises(ReconstructionError, match="'s2' has no frozen bibliography"):
        render_bibliography(seed)
    assert not BibliographyFreeze.objects.filter(seed=seed).exists()


@pytest.mark.django_db
def test_freezing_again_is_idempotent_and_a_changed_text_is_refused(tmp_path: Path) -> None:
    reconstruction_import(name="rec", files=import_files(h.folder(tmp_path)))
    seed = SeedPaper.objects.get(external_id="s1")
    first = seed.freeze
    again = bibliography_freeze(seed=seed)
    assert not again.created and again.freeze.pk == first.pk
    Reference.objects.filter(seed=seed, original_id="W100").update(shown_abstract="Edited after freezing.")
    with pytest.raises(ReconstructionError, match="A frozen bibliography does not change"):
        bibliography_freeze(seed=seed)
    assert render_bibliography(seed) == first.shown_text


@pytest.mark.django_db
def test_the_freeze_refuses_text_that_would_leak_even_if_the_audit_missed_it(tmp_path: Path) -> None:
    reconstruction_import(name="rec", files=import_files(h.folder(tmp_path)))
    seed = SeedPaper.objects.get(external_id="s1")
    seed.freeze.delete()
    Reference.objects.filter(seed=seed, original_id="W100").update(shown_abstract="see doi:10.1038/abc and " + h.SEED_TITLE)
    with pytest.raises(ReconstructionError, match="doi.*the seed's title; not frozen"):
        bibliography_freeze(seed=seed)
