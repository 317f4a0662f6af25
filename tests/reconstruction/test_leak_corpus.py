"""The corpus of crafted leaks (``leak_corpus.py``; issue 22, item 4) through the audit, the freeze's re-check, the
real import, the rendered proposer prompt and the audit page: no documented kind reaches a prompt, each gets its
documented outcome and the page flags it, and ordinary text that looks a little like a leak is shown as it is. Then
the normalisation the audit reads text through, and the dense numbering of the shown ids.

What reaches a prompt is judged by this module's own comparison (:func:`squashed`: NFKC, case and accents folded,
letters and digits only), not by the code under test.
"""

from __future__ import annotations

import html
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from jobs.prompts import PROMPTS
from reconstruction import leakage
from reconstruction.importing import import_files, reconstruction_import
from reconstruction.models import Reference, SeedPaper
from reconstruction.prompts import PROPOSER_V1, render_proposer_task
from reconstruction.services import render_bibliography
from tests.clients import client_for

from . import helpers as h
from .leak_corpus import (
    CASES,
    CLEAN,
    CLEAN_CASES,
    EXCLUDED,
    FILLERS,
    RED_TEAM,
    SCRUBBED,
    SEED_ABSTRACT,
    SEED_TITLE,
    T0,
    TITLE_REPEAT,
    Case,
)


def _plain(text: str) -> str:
    text = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def squashed(text: str) -> str:
    """Letters and digits only, NFKC, case and accents folded: a leak is found however it is spaced or punctuated."""
    return "".join(c for c in _plain(text) if c.isalnum())


def words(text: str) -> str:
    """NFKC, case and accents folded, whitespace collapsed: ordinary text is kept word for word."""
    return " ".join(_plain(text).split())


def audited(case: Case) -> leakage.Audited:
    return leakage.audit_reference(
        leakage.ReferenceIn(case.ref_id, case.title, case.abstract, case.published, case.precision),
        seed_title=SEED_TITLE,
        seed_abstract=SEED_ABSTRACT,
        t0=T0,
    )


def outcome_problems(case: Case, *, eligible: bool, reason: str, flags: list[str]) -> list[str]:
    """What differs from the case's documented outcome (empty when it is the one documented)."""
    out = []
    if eligible != (case.expect != EXCLUDED):
        out.append(f"expected {case.expect}, got {'shown' if eligible else 'excluded'} ({reason or 'no reason'})")
    if case.expect == EXCLUDED and not reason.startswith(case.reason):
        out.append(f"expected a reason starting {case.reason!r}, got {reason!r}")
    if flags != sorted(case.flags):
        out.append(f"expected flags {sorted(case.flags)}, got {flags}")
    return out


def text_problems(case: Case, shown: str) -> list[str]:
    """A leak of the case found in ``shown``, or a kept phrase missing from it."""
    out = [f"{leak!r} reaches it" for leak in case.leaks if squashed(leak) in squashed(shown)]
    out += [f"{keep!r} is missing from it" for keep in case.kept if words(keep) not in words(shown)]
    return out


# ---------------------------------------------------------------------------------------------------- the corpus


def test_the_corpus_holds_every_kind_issue_22_measured_and_more() -> None:
    kinds = [c.kind for c in CASES]
    assert len(kinds) == len(set(kinds)), "two cases share a kind; each case is a seed of its own"
    assert len(RED_TEAM) >= 39 and all(c.red_team for c in RED_TEAM)
    assert {c.expect for c in CASES} == {EXCLUDED, SCRUBBED, CLEAN} and len(CLEAN_CASES) >= 10
    assert all(c.leaks for c in CASES if c.expect != CLEAN), "every leak case names what must not reach a prompt"


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_the_audit_gives_each_case_its_documented_outcome(case: Case) -> None:
    a = audited(case)
    problems = outcome_problems(case, eligible=a.eligible, reason=a.exclusion_reason, flags=a.flags)
    if a.eligible:
        shown = f"{a.shown_title}\n{a.shown_abstract}"
        problems += [f"the shown text: {p}" for p in text_problems(case, shown)]
        problems += [f"the shown text still holds {kind} {hit!r}" for kind, hit in leakage.metadata_hits(shown)]
    assert not problems, f"case {case.kind!r}: " + "; ".join(problems)


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.expect != EXCLUDED or c.reason == TITLE_REPEAT],
    ids=[c.kind for c in CASES if c.expect != EXCLUDED or c.reason == TITLE_REPEAT],
)
def test_the_freeze_recheck_finds_what_the_audit_would_remove(case: Case) -> None:
    """As if the audit had let the reference through as it was: the freeze's own check of the text must refuse it,
    naming each kind of metadata and the seed's title; and it must not refuse ordinary text."""
    text = leakage.bibliography_text([("R1", case.title, case.abstract)])
    problems = leakage.shown_text_problems(text, seed_title=SEED_TITLE, original_ids=[case.ref_id])
    expected = [f"{kind}: " for kind in case.flags] + (["the seed's title"] if case.reason == TITLE_REPEAT else [])
    missing = [e for e in expected if not any(p.startswith(e) for p in problems)]
    assert not missing, f"case {case.kind!r}: the freeze re-check misses {missing} in {text!r} (found {problems})"
    if case.expect == CLEAN:
        assert problems == [], f"case {case.kind!r}: ordinary text refused at freezing: {problems}"


# ---------------------------------------------------------------------------------------------------- import, prompt, page


def corpus_folder(tmp: Path) -> Path:
    """The corpus as Reconstruction files: a seed per case with the three fillers and the case's reference, no
    anonymous id given (the import draws them)."""
    seeds, refs = [], []
    for case in CASES:
        seeds.append({"seed_id": case.kind, "domain": "md", "title": SEED_TITLE, "abstract": SEED_ABSTRACT, "t0": T0.isoformat()})
        for n, (title, abstract) in enumerate(FILLERS, start=1):
            refs.append(
                {"seed_id": case.kind, "ref_id": f"F{n}", "title": title, "abstract": abstract, "published": "2019-03-04"}
            )
        published = case.published.isoformat()[: {"day": 10, "month": 7, "year": 4}[case.precision]] if case.published else None
        refs.append(
            {"seed_id": case.kind, "ref_id": case.ref_id, "title": case.title, "abstract": case.abstract, "published": published}
        )
    return h.folder(tmp, seeds=seeds, references=refs, hypotheses=[], labels=[], tournament=[])


@pytest.fixture
def corpus(db: Any, tmp_path: Path) -> dict[str, SeedPaper]:  # noqa: ANN401
    summary = reconstruction_import(name="leak-corpus", files=import_files(corpus_folder(tmp_path)))
    assert not summary.not_frozen, f"every corpus seed has three clean fillers and must be frozen: {summary.not_frozen}"
    return {s.external_id: s for s in SeedPaper.objects.filter(benchmark=summary.benchmark)}


def proposer_prompt(seed: SeedPaper) -> str:
    messages = render_proposer_task(bibliography=render_bibliography(seed), template=PROMPTS[PROPOSER_V1])
    return "\n".join(m["content"] for m in messages)


def test_no_leak_of_the_corpus_reaches_a_rendered_proposer_prompt(corpus: dict[str, SeedPaper]) -> None:
    failures = []
    for case in CASES:
        seed = corpus[case.kind]
        ref = Reference.objects.get(seed=seed, original_id=case.ref_id)
        prompt = proposer_prompt(seed)
        problems = outcome_problems(case, eligible=ref.eligible, reason=ref.exclusion_reason, flags=ref.flags)
        problems += [f"the prompt: {p}" for p in text_problems(case, prompt)]
        if squashed(SEED_TITLE) in squashed(prompt):
            problems.append("the prompt holds the seed's title")
        if not ref.eligible and squashed(case.title) in squashed(prompt):
            problems.append("the prompt holds the excluded reference's title")
        if ref.original_id in prompt:
            problems.append("the prompt holds the reference's original id")
        shown_ids = re.findall(r"^\[(R\d+)\]", render_bibliography(seed), re.MULTILINE)
        if shown_ids != [f"R{n}" for n in range(1, len(shown_ids) + 1)] or len(shown_ids) != 3 + ref.eligible:
            problems.append(f"the shown ids are {shown_ids}, not R1..R{3 + ref.eligible} without a gap")
        failures += [f"{case.kind}: {p}" for p in problems]
    assert not failures, "crafted leaks the import let through:\n" + "\n".join(failures)


def _row(page: str, ref_id: str) -> str:
    """The text of the audit table's row of the reference ``ref_id`` (tags dropped, entities decoded)."""
    rows = re.findall(r"<tr>.*?</tr>", page.split('id="audit"', 1)[1], re.DOTALL)
    row = next((r for r in rows if f"<code>{html.escape(ref_id)}</code>" in r), "")
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split())


def test_the_audit_page_flags_each_case(corpus: dict[str, SeedPaper], researcher: Any) -> None:  # noqa: ANN401
    client = client_for(researcher)
    failures = []
    for case in CASES:
        seed = corpus[case.kind]
        page = client.get(reverse("reconstruction:seed", args=[seed.benchmark_id, seed.pk])).content.decode()
        row = _row(page, case.ref_id)
        if case.expect == EXCLUDED:
            ok = " excluded " in f" {row} " and case.reason in row
        elif case.expect == SCRUBBED:
            ok = " shown scrubbed " in f" {row} " and f"removed: {', '.join(sorted(case.flags))}" in row
        else:
            ok = " shown " in f" {row} " and "scrubbed" not in row and "removed:" not in row
        if not ok:
            failures.append(f"{case.kind}: expected {case.expect} {case.reason or ', '.join(case.flags)}; the row says {row!r}")
    assert not failures, "the audit page does not flag:\n" + "\n".join(failures)


@pytest.mark.django_db
def test_drawn_ids_number_the_shown_references_first(tmp_path: Path) -> None:
    # helpers' seed s1 without its given ids: W100-W102 are eligible, W103-W106 excluded (test_leakage.py).
    refs = [{k: v for k, v in r.items() if k != "anon_id"} for r in h.references()]
    reconstruction_import(
        name="rec", files=import_files(h.folder(tmp_path, references=refs, hypotheses=[], labels=[], tournament=[]))
    )
    ids = dict(Reference.objects.filter(seed__external_id="s1").values_list("original_id", "anon_id"))
    assert {ids[w] for w in ("W100", "W101", "W102")} == {"R1", "R2", "R3"}
    assert {ids[w] for w in ("W103", "W104", "W105", "W106")} == {"R4", "R5", "R6", "R7"}
    seed = SeedPaper.objects.get(external_id="s1")
    assert re.findall(r"^\[(R\d+)\]", render_bibliography(seed), re.MULTILINE) == ["R1", "R2", "R3"]


# ---------------------------------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("Ef\ufb01cient \ufb02ow, \ufb00t", "Efficient flow, fft"),
        ("\uff2e\uff45\uff54 \uff12\uff10\uff12\uff14", "Net 2024"),
        ("Net\u00adworks\u200b and\u00a0more\u2060", "Networks and more"),
        ("Net-\nworks and Bose-\n  Einstein", "Networks and Bose-Einstein"),
        ("Net- works  stay\t\tspaced\n\n", "Net- works stay spaced"),
        ("Netwo\u0308rks", "Netw\u00f6rks"),
    ],
)
def test_the_shown_text_is_normalised(raw: str, shown: str) -> None:
    assert leakage.display_text(raw) == shown


@pytest.mark.parametrize(
    ("raw", "folded"),
    [
        ("Netw\u00f6rks \u00c9T\u00c9", "networks ete"),
        ("Stra\u00dfe \u00c6sop \u00d8re \u0141\u00f3d\u017a", "strasse aesop ore lodz"),
        ("Gr\u0430ph \u0399CML", "graph icml"),  # a Cyrillic a, a Greek capital iota
        ("Net\u2013works \u2014 x", "net-works - x"),
    ],
)
def test_compared_text_is_folded(raw: str, folded: str) -> None:
    assert leakage.fold(raw) == folded


def test_the_skeleton_keeps_every_position() -> None:
    text = leakage.display_text("\u00d6zdemir \u2014 \u0399CML\u201924 \u5f20\u4f1f \u0141\u00f3d\u017a \u00e6 \u03b1-helix")
    plain = leakage.skeleton(text)
    assert len(plain) == len(text) and plain == "Ozdemir - ICML'24 \u5f20\u4f1f Lodz a a-helix"


def test_every_format_character_is_dropped() -> None:
    unseen = [
        f"U+{cp:04X}"
        for cp in range(sys.maxunicode + 1)
        if unicodedata.category(chr(cp)) == "Cf" and leakage.INVISIBLE.sub("", chr(cp))
    ]
    assert not unseen, f"leakage.INVISIBLE misses these format characters (Unicode {unicodedata.unidata_version}): {unseen}"
