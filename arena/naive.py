"""The naive keyword/template baseline behind the hidden controls of a calibration study.

A control pairs a real proposal with one this module writes. The baseline is deliberately simple and
fully deterministic: it reads only the context's own words (research context, open problem, paper titles,
abstracts and reviewer-noted limitations), takes the most frequent content words, and fills six fixed
templates, one per field of the six-field contract. No model, no randomness, no outside vocabulary beyond
the fixed template wording: the same context always yields the same proposal.

Humans (and judges) are expected to prefer the real proposal; the detection rate is the control's result.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Bump when the templates or the keyword rule change: stored controls record the version that wrote them.
VERSION = "naive-keyword-template-v1"

_TOKEN = re.compile(r"[a-z][a-z\-]*[a-z]")

# Function words, plus the boilerplate every Lit2Test context shares (it would otherwise win every count).
STOPWORDS = frozenset(
    """
    a about above across after again against all also although among an and another any are as at be because
    been before being below between both but by can could did do does doing done during each either even every
    for from further had has have having here how however if in into is it its itself just least less many may
    might more most much must near neither no nor not now of off often on once one only onto or other others
    our out over own per rather same several shall should show shows shown since so some such than that the
    their them then there these they this those though through thus to too toward towards under until upon us
    use used uses using very via was we well were what when where whether which while who whom whose why will
    with within without would yet you your new based given make makes made first second third two three four
    five however across propose proposes proposed paper papers work works approach approaches method methods
    result results study studies show demonstrate demonstrates present presents introduce introduces
    public iclr openreview neighborhood neighborhoods context contexts grounded reviewer reviewers limitation
    limitations signal signals abstract abstracts title titles fresh tight local cluster concrete next-step
    research test tests model models whether targeting visible supplied review reviews gap evaluation around
    synthesizes step tests form forms fifth next expansion fourth field
    """.split()
)


@dataclass(frozen=True)
class ContextWords:
    """The parts of a context the baseline may read."""

    research_context: str
    open_problem: str
    titles: Sequence[str]
    abstracts: Sequence[str] = ()
    limitations: Sequence[str] = ()


def context_words(context: Any) -> ContextWords:  # noqa: ANN401 - an arena Context (this module imports no models)
    """The :class:`ContextWords` of an ``arena.models.Context``: its texts and its papers' in position order."""
    papers = list(context.papers.order_by("position"))
    return ContextWords(
        research_context=context.research_context,
        open_problem=context.open_problem,
        titles=[p.title for p in papers],
        abstracts=[p.abstract for p in papers],
        limitations=[p.limitation for p in papers],
    )


def keywords(words: ContextWords, *, k: int = 6) -> list[str]:
    """The ``k`` most frequent content words of the context, most frequent first (ties: alphabetical).

    Titles count three times and the open problem twice: they name the neighborhood's topic most directly.
    Words with digits, function words and the shared context boilerplate are skipped.
    """
    counts: Counter[str] = Counter()
    weighted = [(t, 3) for t in words.titles] + [(words.open_problem, 2), (words.research_context, 1)]
    weighted += [(t, 1) for t in (*words.abstracts, *words.limitations)]
    for text, weight in weighted:
        for token in _TOKEN.findall((text or "").lower()):
            if len(token) >= 4 and token not in STOPWORDS:
                counts[token] += weight
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    found = [w for w, _n in ranked[:k]]
    # A context with almost no text still yields six filled fields.
    while len(found) < k:
        found.append(found[len(found) % len(found)] if found else "method")
    return found


def _short_title(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= 90 else title[:87].rstrip() + "..."


def naive_proposal(words: ContextWords) -> dict[str, str]:
    """A six-field proposal filled from the context's keywords and paper titles (deterministic)."""
    k = keywords(words, k=6)
    titles = [_short_title(t) for t in words.titles if t.strip()] or [k[0]]
    t1, t2 = titles[0], titles[1 % len(titles)]
    return {
        "literature_gap": (
            f"The supplied papers study {k[0]} and {k[1]}, but they do not compare {k[2]} and {k[3]} under one protocol. "
            f'"{t1}" and "{t2}" report results in different settings, so it remains unclear how {k[0]} relates to {k[3]}.'
        ),
        "hypothesis": (
            f"Combining {k[0]} with {k[1]} will improve {k[2]} compared with using {k[0]} alone, "
            f"because {k[1]} adds information about {k[4]}."
        ),
        "minimal_test": (
            f'Use the setting of "{t1}" as the baseline. Train the same model with and without {k[1]} on a public '
            f"{k[2]} dataset with the same budget, run one ablation that removes {k[4]}, and repeat with three seeds."
        ),
        "decisive_metric": f"Average {k[2]} performance on the held-out test split, compared between the two variants.",
        "supporting_result": f"The variant with {k[1]} reaches a higher average {k[2]} score than the baseline.",
        "falsifying_result": f"The variant with {k[1]} reaches the same or a lower average {k[2]} score than the baseline.",
    }


# --------------------------------------------------------------------------- hiding a control among real pairs
#
# A hidden control shows its naive proposal once. If every real proposal of its context appears three or four
# times (all six pairs of four models, plus the control's real side), the odd one out is found by counting.
# Showing K of a context's pairs instead, and choosing which ones so that some real proposal also appears
# once, leaves the naive proposal's count inside the range of the real ones.


@dataclass(frozen=True)
class ContextPlan:
    """Which real pairs of a context a study shows, and (in a control context) the control's real side."""

    pairs: list
    control_partner: object | None = None


def appearance_counts(pairs: Sequence[tuple[object, object]], control_partner: object | None = None) -> Counter:
    """How many shown items each real proposal (named by its participant) appears in."""
    counts: Counter = Counter()
    for a, b in pairs:
        counts[a] += 1
        counts[b] += 1
    if control_partner is not None:
        counts[control_partner] += 1
    return counts


def control_is_hidden(pairs: Sequence[tuple[object, object]], control_partner: object) -> bool:
    """True when the naive proposal's one appearance lies within the range of the shown real proposals' counts."""
    shown = [n for n in appearance_counts(pairs, control_partner).values() if n > 0]
    return min(shown) <= 1 <= max(shown)


def plan_context(pairs: Sequence[tuple[object, object]], *, k: int, control: bool, rng: random.Random) -> ContextPlan | None:
    """Choose the ``k`` items a context shows; ``pairs`` are its real pairs as (participant, participant) tuples.

    Without a control: ``k`` real pairs drawn at random. With one: ``k - 1`` real pairs and the control's real
    side, so that every context of the study shows exactly ``k`` items, chosen so that :func:`control_is_hidden`
    holds: one real proposal ``x`` (drawn at random) also appears exactly once, either as the control's real
    side and in no real pair, or in exactly one real pair and not as the control's side; the other pairs are
    drawn at random from those without ``x``. Returns ``None`` when no choice hides the control (``k`` too
    large: with four models, ``k = 6`` leaves every real proposal at two appearances or more; see
    :func:`max_hiding_k`). Precondition: ``1 <= k <= len(pairs)``.
    """
    pairs = list(pairs)
    if not control:
        chosen = set(rng.sample(range(len(pairs)), k))
        return ContextPlan([p for i, p in enumerate(pairs) if i in chosen])
    participants = sorted({x for pair in pairs for x in pair}, key=str)
    # (x, the one real pair holding x or None) for every way of giving some real proposal a single appearance
    options: list[tuple[object, int | None]] = []
    for x in participants:
        without = sum(1 for pair in pairs if x not in pair)
        if k - 1 <= without:
            options.append((x, None))  # x is the control's real side and in no real pair
        if 2 <= k and k - 2 <= without:
            options += [(x, i) for i, pair in enumerate(pairs) if x in pair]
    if not options:
        return None
    x, own = options[rng.randrange(len(options))]
    others = [i for i, pair in enumerate(pairs) if x not in pair]
    if own is None:
        chosen = set(rng.sample(others, k - 1))
        partner = x
    else:
        chosen = {own, *rng.sample(others, k - 2)}
        partner = rng.choice([y for y in participants if y != x])
    plan = ContextPlan([p for i, p in enumerate(pairs) if i in chosen], partner)
    assert control_is_hidden(plan.pairs, partner)
    return plan


def max_hiding_k(pairs: Sequence[tuple[object, object]]) -> int:
    """The largest ``k`` for which :func:`plan_context` can hide a control among ``pairs`` (0: none)."""
    best = 0
    for x in {x for pair in pairs for x in pair}:
        without = sum(1 for pair in pairs if x not in pair)
        best = max(best, without + 2)  # one real pair holding x, the others among pairs without x
    return min(best, len(pairs))
