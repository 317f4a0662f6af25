"""The naive keyword/template baseline: deterministic, six filled fields, only the context's own words."""

from __future__ import annotations

import re

from arena.naive import STOPWORDS, ContextWords, keywords, naive_proposal
from arena.schemas import SIX_FIELD

WORDS = ContextWords(
    research_context="These papers form a neighborhood around machine unlearning and data poisoning.",
    open_problem="Propose one test on unlearning poisoned data in diffusion models.",
    titles=[
        "Machine Unlearning Fails to Remove Data Poisoning Attacks",
        "Localizing Memorization for Unlearning",
        "Certified Unlearning for Diffusion Models",
        "Poisoning Attacks Against Unlearning",
    ],
    abstracts=["Unlearning methods fail to remove poisoned data.", "Memorization localization helps unlearning."],
    limitations=["Only small models.", "No diffusion experiments."],
)


def test_it_is_deterministic_and_fills_all_six_fields() -> None:
    first, second = naive_proposal(WORDS), naive_proposal(WORDS)
    assert first == second
    assert SIX_FIELD.validate(first) == []


def test_keywords_are_the_most_frequent_content_words_of_the_context() -> None:
    found = keywords(WORDS, k=6)
    assert found[0] == "unlearning"  # in every title and the open problem
    assert "poisoning" in found and "data" in found
    text = " ".join([WORDS.research_context, WORDS.open_problem, *WORDS.titles, *WORDS.abstracts, *WORDS.limitations]).lower()
    for word in found:
        assert word in text and word not in STOPWORDS


def test_the_proposal_uses_only_template_words_and_the_contexts_words() -> None:
    proposal = naive_proposal(WORDS)
    other = naive_proposal(
        ContextWords("Graph neural networks over molecules.", "Propose a test.", ["Molecular Graph Transformers"])
    )
    # The two proposals share only the template wording: no keyword of one context leaks into the other.
    for word in keywords(WORDS):
        assert not re.search(rf"\b{word}\b", " ".join(other.values()).lower())
    assert "Machine Unlearning Fails to Remove Data Poisoning Attacks" in proposal["literature_gap"]


def test_a_context_with_almost_no_text_still_gets_six_fields() -> None:
    proposal = naive_proposal(ContextWords("", "", ["Spiking"]))
    assert SIX_FIELD.validate(proposal) == []
