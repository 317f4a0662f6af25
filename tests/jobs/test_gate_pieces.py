"""The blindness gate scans a prompt piece by piece (``jobs.gates._scan``): it must refuse exactly what the gate
refused when it squashed the whole prompt and searched it for every name. The reference below is the gate's earlier
code, copied as it was (commit 4f64c89), and both are run on adversarial prompts: names split across the joins
between the system message, the context and the shown blocks, names longer than the pieces they cross, blocks that
also appear inside the context, look-alike and case-folding characters (the Kelvin sign, a dotted capital I, the
Greek final sigma, full-width letters, combining accents, zero-width spaces), names that squash to nothing."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobs import gates
from jobs.gates import blindness_problem, squash
from jobs.prompts import RenderedTask

_OLD_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


def old_squash(text: str) -> str:
    """The gate's squash as documented (``re.sub`` over the lower-cased text; non-ASCII goes too)."""
    return _OLD_NOT_ALNUM.sub("", text.lower().encode("ascii", "ignore").decode("ascii"))


def old_problem(rendered: RenderedTask, internal_key: str, names: list[str]) -> str | None:
    """The name and internal-key checks of the gate before the piecewise scan (4f64c89), verbatim but for ``squash``."""
    text = old_squash(rendered.system + "\n" + rendered.user)
    for name in names:
        if old_squash(name) and old_squash(name) in text:
            return "blindness gate: the prompt contains a participant's name"
    if old_squash(internal_key) in text:
        return "blindness gate: the prompt contains the internal id of what is judged"
    return None


def no_alias(block: str) -> list[object]:
    """A benchmark without aliases: the alias check (unchanged) finds nothing, so the two checks above decide."""
    return []


def task(context: str, block_a: str, block_b: str, system: str = "You judge two proposals.") -> RenderedTask:
    """A task laid out as Lit2Test lays it out (``lit2test.prompts.render_judge_task``)."""
    user = f"{context}\n\n{block_a}\n\n{block_b}\n=== END ===\n\nWhich proposal is the better next experiment? Answer in JSON."
    return RenderedTask(system=system, user=user, block_a=block_a, block_b=block_b)


A = "=== PROPOSAL A ===\n[hypothesis]\n"
B = "=== PROPOSAL B ===\n[hypothesis]\n"
NAMES = ["GPT-5.2", "Claude Opus 4", "o3", "Llama-3.1-70B", "---", ""]

CASES = {
    "clean": task("Prior work on soil microbes.", A + "Plan one.", B + "Plan two."),
    "a name inside the context": task("As GPT 5.2 showed, soil microbes...", A + "Plan one.", B + "Plan two."),
    "a name inside a block": task("Soil.", A + "We, gpt_5.2, plan.", B + "Plan two."),
    "system / user join": task("5.2 on soil.", A + "x", B + "y", system="You are GPT-"),
    "context / block A join": task("Results of G", "PT-5.2 plan", B + "y"),
    "block A / block B join": task("Soil.", A + "claude op", "us-4 and more"),
    "block B / tail join": task("Soil.", A + "x", B + "we ask, is it ===end"),
    "a name across three pieces": task("ends with cl", "aude", " opus 4 says", system="sys"),
    "a name longer than the pieces it crosses": task("L", "lama", "-3.1-70b"),
    "empty blocks": RenderedTask(system="GPT", user="-5.2 wrote", block_a="", block_b=""),
    "blocks not in the user message": RenderedTask(system="s", user="Claude Opus 4", block_a="absent", block_b="o3"),
    "block A also inside the context": task("quote: " + A + "gpt", A + "gpt", B + "-5.2"),
    "Kelvin sign folds to k": task("\u212a", "\u212a", "x", system="\u212a"),
    "dotted capital I folds to i": task("L\u0130", "\u0130ama-3.1-70B", "x"),
    "final sigma between pieces": task("ΟΔΟΣ claude", "ΟΣ opus 4", "x"),
    "full-width letters vanish": task("ＧＰＴ gpt-", "５.２ 5.2", "x"),
    "combining accent inside a name": task("g\u0301pt-5", ".2", "x"),
    "zero-width space inside a name": task("o\u200b", "3 is", "x"),
    "internal key across a join": task("pair-c1-", "m3-m7 plan", "x"),
    "internal key inside a block": task("Soil.", A + "PAIR C1 M3 M7", B + "y"),
    "names only in the header lines": task("Soil.", "=== O3 ===\nx", "=== PROPOSAL B ===\ny"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_piecewise_gate_refuses_what_the_whole_prompt_gate_refused(name: str) -> None:
    rendered = CASES[name]
    for key in ("pair-c1-m3-m7", "", "!!!", "ab"):
        assert blindness_problem(rendered, key, NAMES, no_alias) == old_problem(rendered, key, NAMES), (name, key)
    assert gates._scan(rendered, gates._squashed_names(NAMES))[1] == old_squash(rendered.system + "\n" + rendered.user)


def test_the_cases_reach_both_refusals_and_none() -> None:
    """The cases above are not all alike: each of the gate's answers occurs, on the old gate's own reading."""
    answers = {old_problem(r, "pair-c1-m3-m7", NAMES) for r in CASES.values()}
    assert answers == {
        None,
        "blindness gate: the prompt contains a participant's name",
        "blindness gate: the prompt contains the internal id of what is judged",
    }


def test_a_piece_seen_again_with_other_names_is_searched_for_those() -> None:
    """The memory of pieces is per list of names: a block that named nobody of one benchmark may name one of another."""
    rendered = task("Soil.", A + "Mistral Large plans.", B + "y")
    assert blindness_problem(rendered, "k", ["GPT-5.2"], no_alias) is None
    assert (
        blindness_problem(rendered, "k", ["Mistral-Large"], no_alias)
        == "blindness gate: the prompt contains a participant's name"
    )


def test_squash_of_a_join_is_the_join_of_squashes_for_every_character() -> None:
    """What the piecewise scan rests on, over every code point (surrogates too) in one string and one by one."""
    everything = "".join(map(chr, range(0x110000)))
    assert squash(everything) == "".join(squash(c) for c in everything) == old_squash(everything)


ALPHABET = "aAgGpPtT5.2-_ oO3\n=\u212a\u0130\u03a3\u03c2\uff27\u0301\u200bé"


@settings(max_examples=400, deadline=None)
@given(
    context=st.text(ALPHABET, max_size=30),
    block_a=st.text(ALPHABET, max_size=12),
    block_b=st.text(ALPHABET, max_size=12),
    system=st.text(ALPHABET, max_size=8),
    cuts=st.lists(st.tuples(st.integers(0, 80), st.integers(1, 9)), min_size=1, max_size=4),
    extra=st.lists(st.text(ALPHABET, max_size=6), max_size=3),
)
def test_random_prompts_agree(context: str, block_a: str, block_b: str, system: str, cuts: list, extra: list) -> None:
    """Names cut out of the prompt itself (so that many cross a join) and random ones: the same answers."""
    rendered = task(context, block_a, block_b, system=system)
    whole = rendered.system + "\n" + rendered.user
    # ASCII names only: a name with other characters is also looked for in the folded prompt, which the old gate never
    # did (test_gate_unicode.py compares those with a reference of its own over the same kind of prompts).
    names = [n for n in [whole[at : at + n] for at, n in cuts] + extra if n.isascii()]
    key = whole[cuts[0][0] : cuts[0][0] + 7]
    assert blindness_problem(rendered, key, names, no_alias) == old_problem(rendered, key, names)
    assert blindness_problem(rendered, "zz-no-such-key", names, no_alias) == old_problem(rendered, "zz-no-such-key", names)


def test_many_tasks_sharing_pieces_agree() -> None:
    """Tasks as a driver renders them: few contexts and blocks, each in many tasks, both orders (the memory is used)."""
    rng = random.Random(25)
    words = ["soil", "gpt", "-5", ".2", "claude", " opus", " 4", "o", "3", "llama", "-3.1", "-70b", "\u212a", "x", "=="]
    contexts = ["".join(rng.choices(words, k=rng.randint(0, 12))) for _ in range(6)]
    blocks = [A + "".join(rng.choices(words, k=rng.randint(0, 6))) for _ in range(8)]
    for _ in range(3000):
        a, b = rng.sample(blocks, 2)
        rendered = task(rng.choice(contexts), a, b.replace("PROPOSAL A", "PROPOSAL B"))
        key = rng.choice(["pair-1", "soilgpt", "x3", ""])
        names = rng.choice([NAMES, ["Soil GPT"], ["o3", "x"], []])
        assert blindness_problem(rendered, key, names, no_alias) == old_problem(rendered, key, names)
