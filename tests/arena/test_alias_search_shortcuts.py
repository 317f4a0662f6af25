"""The shortcuts that make alias search cheap on a judge driver (issue 25) find exactly what a full search finds.

``Matcher.hits`` skips an alias whose first token does not occur in the text's lower case, and ``normalise`` returns an
ASCII text as it is; ``arena.prompting.ProposalBlocks`` reuses a rendered block only while everything it was rendered
from is the same, types included. The reference here is the search with no alias skipped.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from arena.aliases import (
    NAME,
    VENDORS,
    WORD,
    Alias,
    Term,
    derive_aliases,
    matcher_for,
    normalise,
)
from arena.models import Participant, Proposal
from arena.prompting import ProposalBlocks, render_proposal

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "lit2test"


def every_vendor_matcher():  # noqa: ANN201
    models = ("GPT 5.2", "Claude-Sonnet-4.6", "GLM-5", "DeepSeek-V3.2", "Gemini-3.1-Pro-Preview")
    terms = [Term(Alias(m, WORD, NAME), m, "participant") for m in models]
    terms += [Term(a, m, "participant") for m in models for a in derive_aliases(m)]
    terms += [Term(Alias(text, mode), v.name, "participant") for v in VENDORS for text, mode in v.aliases]
    return matcher_for(terms)


def full_search(matcher, text: str) -> set[str]:  # noqa: ANN001
    """The aliases found with no alias skipped: the same matcher told that every alias may occur in every text."""
    unskipping = copy.copy(matcher)
    unskipping.firsts = [None] * len(matcher.patterns)
    return {a for h in unskipping.hits(text) for a in h.aliases}


TEXTS = [
    "As Gemını 3, I propose ...",  # dotless ı: a case-insensitive match reads it as i, the text's lower case does not
    "GEMİNİ 2.5 Pro suggests",  # dotted capital İ: lower() makes it i + a combining dot
    "Trained by Meta, the ſonnet family",  # long s
    "A meta-analysis of GLMs by a Claude Shannon reader; GPT-4o and Llama 3.1 70B; deep-seek V3 point 2",
    "Nothing here names a model: an ordinary research proposal about linear models.",
    "月之暗面 的 Kimi 与 深度求索",
    "Ｃｌａｕｄｅ (full width) and Anthropic\u2011made Sonnet\u00a04.6",
]


def test_hits_find_every_alias_a_full_search_finds_in_tricky_and_real_texts() -> None:
    matcher = every_vendor_matcher()
    texts = list(TEXTS)
    if (DATA / "proposals.jsonl").is_file():
        for line in (DATA / "proposals.jsonl").read_text().splitlines():
            content = json.loads(line).get("content") or json.loads(line)
            texts += [v for v in content.values() if isinstance(v, str)]
    checked = 0
    for text in texts:
        reference = full_search(matcher, text)
        got = {a for h in matcher.hits(text) for a in h.aliases}
        assert got == reference, f"hits found {sorted(got)}, a full search {sorted(reference)} in {text[:80]!r}"
        checked += 1
    assert checked >= len(TEXTS)


def test_a_name_spelled_with_a_dotless_or_dotted_i_is_still_found() -> None:
    """The case-insensitive pattern matches 'Gemını' and 'GEMİNİ'; a shortcut that looked for 'gemini' in the text's
    lower case would skip them."""
    matcher = every_vendor_matcher()
    assert {a for h in matcher.hits(TEXTS[0]) for a in h.aliases} == {"gemini"}
    assert "gemini" in {a for h in matcher.hits(TEXTS[1]) for a in h.aliases}


def test_an_ascii_text_normalises_to_itself_with_every_offset() -> None:
    text = "GPT-4o -- said so_ on\tline\n"
    assert normalise(text) == (text, list(range(len(text) + 1)))
    assert normalise("a\u2013b\u200bc") == ("a-bc", [0, 1, 2, 4, 5])


def proposal(pk: int, content: dict, name: str = "GPT 5.2") -> Proposal:
    return Proposal(pk=pk, context_id=1, participant=Participant(name=name), content=content)


def test_a_remembered_block_is_rendered_again_when_anything_it_was_made_from_changes() -> None:
    blocks = ProposalBlocks()
    matcher = every_vendor_matcher()
    first = proposal(7, {"hypothesis": "GPT-5.2 thinks 1", "minimal_test": 1})
    assert blocks.render("A", first, matcher) == render_proposal("A", first, matcher)
    assert "[redacted] thinks 1" in blocks.render("A", first, matcher)

    # The same values as other objects (a new claim reads the row again): the remembered block.
    again = proposal(7, {"hypothesis": "GPT-5.2 thinks 1", "minimal_test": 1})
    assert blocks.render("A", again, matcher) == render_proposal("A", again, matcher)

    # Equal under == but not the same JSON: 1 -> True renders "True", 1 -> 1.0 renders "1.0".
    for value in (True, 1.0):
        changed = proposal(7, {"hypothesis": "GPT-5.2 thinks 1", "minimal_test": value})
        assert blocks.render("A", changed, matcher) == render_proposal("A", changed, matcher)
        assert f"[minimal_test]\n{value}" in blocks.render("A", changed, matcher)

    edited = proposal(7, {"hypothesis": "Claude thinks 2", "minimal_test": 1})
    assert "[redacted] thinks 2" in blocks.render("A", edited, matcher)
    # Stored blind content, current for this content, is what a blind reader sees.
    from arena.aliases import content_digest

    scanned = proposal(7, {"hypothesis": "Claude thinks 2", "minimal_test": 1})
    scanned.blind_content = {"hypothesis": "[redacted] reckons 2", "minimal_test": 1}
    scanned.blind_digest = content_digest(scanned.content)
    assert "[redacted] reckons 2" in blocks.render("A", scanned, matcher)
    assert blocks.render("B", scanned, matcher).startswith("=== PROPOSAL B ===")
    # Another matcher (an alias edited): rendered again with it.
    other = matcher_for([Term(Alias("thinks", WORD), "Thinker", "participant")])
    assert "[hypothesis]\nClaude [redacted]\n" in blocks.render("A", edited, other)  # "thinks 2": a version follows
