"""The blindness gate checks names beyond ASCII. ``squash`` keeps ASCII letters and digits only, so a participant named
"通义千问" or "Ёлка" squashed to nothing and was never looked for: its prompts went out naming it. Such a name is now
looked for in the prompt read by ``jobs.gates.fold`` (NFKD, case folded, accents dropped, letters and digits of every
script kept), in any spelling (spaces, hyphens, full-width forms), anywhere in the prompt and across the joins of the
piecewise scan; ASCII names are checked as before (and cost no second scan).

The reference below is this module's own reading of the rule (:func:`reference_problem`: the whole prompt, no pieces,
the old gate's ASCII check from ``test_gate_pieces`` plus a fold written here with ``unicodedata`` over whole
strings)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.aliases import LOOKALIKES
from jobs import gates
from jobs.gates import blindness_problem
from jobs.prompts import RenderedTask

from .test_gate_pieces import CASES, NAMES, A, B, no_alias, old_problem, task

NAMED = "blindness gate: the prompt contains a participant's name"
KEYED = "blindness gate: the prompt contains the internal id of what is judged"
QWEN = "通义千问"


#: The look-alike letters the case-blind fold reads as Latin, as documented: those of the table whose two cases look
#: like one Latin letter's two cases. The cases below check key entries by hand.
LOOKALIKE = {k: v for k, v in LOOKALIKES.items() if k.islower() and LOOKALIKES.get(k.upper(), v.upper()).lower() == v}


def reference_fold(text: str) -> str:
    """The fold as documented, over the whole string: NFKD, case folded, NFKD again, look-alike Cyrillic and Greek letters
    read as Latin, letters and digits kept."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    return "".join(LOOKALIKE.get(c, c) for c in decomposed if c.isalnum())


def reference_terms(name: str) -> list[str]:
    """What a name is looked for as in the folded prompt: nothing for a name whose letters the ASCII squash all sees,
    else its fold and each run of non-ASCII characters of its fold, each of at least two characters."""
    folded = reference_fold(name)
    if folded == re.sub(r"[^0-9a-z]+", "", name.lower().encode("ascii", "ignore").decode("ascii")):
        return []
    return [t for t in [folded, *re.findall(r"[^\x00-\x7f]+", folded)] if len(t) >= 2]


def reference_problem(rendered: RenderedTask, internal_key: str, names: list[str]) -> str | None:
    prompt = rendered.system + "\n" + rendered.user
    whole = reference_fold(prompt)
    if any(term in whole for name in names for term in reference_terms(name)):
        return NAMED
    # A prompt with anything beyond ASCII: every name's whole fold too (two characters at least; not digits alone for a
    # name with letters beyond ASCII), so "Clàude" or "Сlaude" with a Cyrillic С is found for "Claude".
    if not prompt.isascii():
        folds = [
            f
            for n in names
            if len(f := reference_fold(n)) >= (2 if reference_terms(n) else 4) and not (f.isdigit() and reference_terms(n))
        ]
        if any(f in whole for f in folds):
            return NAMED
    # The old gate's ASCII check, but for a name with letters it cannot see whose ASCII part is only digits ("文心一言
    # 4.0": "40"), which the folded terms stand for.
    ascii_only = [n for n in names if not (reference_terms(n) and _ascii(n).isdigit())]
    if old_problem(rendered, "\x00", ascii_only) == NAMED:
        return NAMED
    return old_problem(rendered, internal_key, [])


def _ascii(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", name.lower().encode("ascii", "ignore").decode("ascii"))


# --- Names of other scripts, wherever the prompt has them and however it spells them. -------------------------------

NAMED_CASES = {
    "in the system message": (QWEN, task("Soil.", A + "x", B + "y", system=f"You are not {QWEN}.")),
    "in the material before the blocks": (QWEN, task(f"As {QWEN} showed, soil...", A + "x", B + "y")),
    "inside block A": (QWEN, task("Soil.", A + f"我是{QWEN}。", B + "y")),
    "inside block B": (QWEN, task("Soil.", A + "x", B + f"I am {QWEN}, a model.")),
    "across the system / user join": (QWEN, task("千问 on soil.", A + "x", B + "y", system="You are 通义")),
    "across the join before block A": (QWEN, task("Results of 通义", "千问 plan", B + "y")),
    "across the join of the blocks": (QWEN, task("Soil.", A + "as 通", "义千问 and more", system="s")),
    "across three pieces": (QWEN, task("ends with 通", "义千", "问 says")),
    "with spaces": (QWEN, task("Soil.", A + "I am 通义 千问.", B + "y")),
    "with an ideographic space": (QWEN, task("Soil.", A + "I am 通义\u3000千问.", B + "y")),
    "with hyphens": (QWEN, task("Soil.", A + "I am 通-义-千-问.", B + "y")),
    "with full-width hyphens and a zero-width space": (QWEN, task("Soil.", A + "通义\uff0d千\u200b问", B + "y")),
    "in half-width katakana for a full-width name": ("カイト", task("Soil.", A + "I am ｶｲﾄ.", B + "y")),
    "in full-width katakana for a half-width name": ("ｶｲﾄ", task("Soil.", A + "I am カイト.", B + "y")),
    "a Cyrillic name in capitals": ("Ёлка", task("Soil.", A + "I am ЁЛКА.", B + "y")),
    "a Cyrillic name without its accent, spaced": ("Ёлка", task("Soil.", A + "I am е л к а.", B + "y")),
    "a Cyrillic name with a combining accent": ("Ёлка", task("Soil.", A + "I am Е\u0308лка.", B + "y")),
    "a full-width name in ASCII": ("ＧＰＴ５", task("Soil.", A + "I am GPT-5.", B + "y")),
    "a full-width name in full width": ("ＧＰＴ５", task("Soil.", A + "I am ｇｐｔ－５.", B + "y")),
    "the non-ASCII part of a mixed name alone": ("Qwen 通义", task("Soil.", A + "I am 通 义.", B + "y")),
    "the ASCII part of a mixed name alone": ("Qwen 通义", task("Soil.", A + "I am QWEN.", B + "y")),
    "a name with a version": ("文心一言 4.0", task("Soil.", A + "I am 文心一言.", B + "y")),
    # ASCII names spelt with letters beyond ASCII (review of the gate: these went out to the judge).
    "an ASCII name with an accent": ("Claude-Sonnet-4.6", task("Soil.", A + "I am Cl\u00e0ude-Sonnet-4.6.", B + "y")),
    "an ASCII name with a combining accent": ("Claude", task("Soil.", A + "I am C\u0301laude.", B + "y")),
    "an ASCII name with a Cyrillic Es": ("Claude-Sonnet-4.6", task("Soil.", A + "I am \u0421laude-Sonnet-4.6.", B + "y")),
    "an ASCII name with Cyrillic a, e and o": ("DeepSeek", task("Soil.", A + "x", B + "D\u0435\u0435pS\u0435\u0435k")),
    "an ASCII name with a Greek omicron": ("GPT-4o", task("Soil.", A + "x", B + "As GPT-4\u03bf I think")),
    "an accented ASCII name across a join": ("Atlas-7B", task("Results of \u00c0tl", "as-7B plan", B + "y")),
}


@pytest.mark.parametrize("case", sorted(NAMED_CASES))
def test_a_name_in_another_script_is_refused_anywhere_in_any_spelling(case: str) -> None:
    name, rendered = NAMED_CASES[case]
    assert reference_problem(rendered, "pair-c1-m3-m7", [name]) == NAMED, "the case must name the participant"
    assert blindness_problem(rendered, "pair-c1-m3-m7", ["GPT-5.2", name], no_alias) == NAMED
    assert blindness_problem(rendered, "pair-c1-m3-m7", [name], no_alias) == NAMED


CLEAN_CASES = {
    "a prompt without the name": (QWEN, task("Soil and 通义 only.", A + "x", B + "千 and 问")),
    "the name's characters in another order": (QWEN, task("Soil.", A + "千问通义", B + "y")),
    "a name of one CJK character (left to the alias check)": ("问", task("问题: soil.", A + "问", B + "y")),
    "a Cyrillic name of one letter (left to the alias check)": ("Ж", task("Soil Ж.", A + "x", B + "y")),
    "a name that is only punctuation": ("—·—", task("Soil — · —.", A + "x", B + "y")),
    "a Russian sentence and an ASCII name": ("Claude", task("Сергей изучал почву.", A + "Опыт с солью", B + "y")),
    "an accented word that is not the name": ("Claude", task("Soil.", A + "Claudia à Paris", B + "y")),
    # Ordinary Russian, Ukrainian and Greek text whose fold would spell a short name or a loose look-alike (review).
    "Russian 'около 1' and a model named o1": ("o1", task("Soil.", A + "около 1 000 примеров", B + "y")),
    "Ukrainian 'у інших' and a model named Yi": ("Yi", task("Soil.", A + "у інших", B + "y")),
    "Greek 'δοκίμιο' and a model named Kimi": ("Kimi", task("Soil.", A + "το δοκίμιο", B + "y")),
    "Ukrainian 'вірні' and a model named Phi": ("Phi-4", task("Soil.", A + "вірні дані", B + "y")),
}


@pytest.mark.parametrize("case", sorted(CLEAN_CASES))
def test_a_prompt_that_does_not_name_them_passes(case: str) -> None:
    name, rendered = CLEAN_CASES[case]
    assert reference_problem(rendered, "pair-c1-m3-m7", [name]) is None
    assert blindness_problem(rendered, "pair-c1-m3-m7", [name], no_alias) is None


def test_the_internal_key_still_comes_after_the_names() -> None:
    rendered = task("pair-c1-m3-m7", A + "x", B + "y")
    assert blindness_problem(rendered, "pair-c1-m3-m7", [QWEN], no_alias) == KEYED
    assert blindness_problem(task("pair-c1-m3-m7 通义千问", A, B), "pair-c1-m3-m7", [QWEN], no_alias) == NAMED


@pytest.mark.parametrize("case", sorted(CASES))
def test_ascii_names_are_checked_as_before(case: str) -> None:
    """The old gate's cases, with names of other scripts that none of them contains: the old gate's answers."""
    rendered = CASES[case]
    names = [*NAMES, QWEN, "Ёлка", "Qwen 通义"]
    for key in ("pair-c1-m3-m7", "", "!!!", "ab"):
        assert blindness_problem(rendered, key, names, no_alias) == old_problem(rendered, key, NAMES), (case, key)


def test_ascii_names_need_no_second_scan() -> None:
    """The fast path: in an ASCII prompt, when every name's letters are ASCII there is nothing to look for folded."""
    assert gates._folded_names(NAMES) == ()
    assert gates._folded_names(["GPT-5.2", "Claude Opus 4", "K\u212a", "L\u0130"]) == ()
    assert gates._folded_names([QWEN]) != ()


ALPHABET = "aAgGpPtT5.2-_ \n=é\u0301通义千问Ёёелка\u0308\u3000\uff0d\uff47\uff30\u200bｶｲﾄカイト\u212a\u0130\u03a3\u03c2\u0421\u0440\u03bf\u00e0"


@settings(max_examples=400, deadline=None)
@given(
    context=st.text(ALPHABET, max_size=30),
    block_a=st.text(ALPHABET, max_size=12),
    block_b=st.text(ALPHABET, max_size=12),
    system=st.text(ALPHABET, max_size=8),
    cuts=st.lists(st.tuples(st.integers(0, 80), st.integers(1, 9)), min_size=1, max_size=4),
    extra=st.lists(st.text(ALPHABET, max_size=6), max_size=3),
)
def test_random_prompts_agree_with_the_reference(
    context: str, block_a: str, block_b: str, system: str, cuts: list, extra: list
) -> None:
    """Names cut out of the prompt itself (so that many cross a join) and random ones, in several scripts."""
    rendered = task(context, block_a, block_b, system=system)
    whole = rendered.system + "\n" + rendered.user
    names = [whole[at : at + n] for at, n in cuts] + extra
    key = whole[cuts[0][0] : cuts[0][0] + 7]
    assert blindness_problem(rendered, key, names, no_alias) == reference_problem(rendered, key, names)
    assert blindness_problem(rendered, "zz-no-such-key", names, no_alias) == reference_problem(rendered, "zz-no-such-key", names)


# --- End to end: a judge run whose participant's name only the gate catches. ----------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_run_never_sends_a_prompt_naming_a_participant_in_another_script(tmp_path: Path, fake_llm) -> None:  # noqa: ANN001
    """Redaction matches the name "通义千问" as written; a proposal that writes it with a hyphen keeps it, so only the
    gate stands between that text and the judge."""
    from arena.models import Proposal
    from jobs.services import judge_run_execute
    from lit2test.models import JudgeTask
    from lit2test.release import release_import
    from tests.arena import builders

    from .helpers import chat_requests, create_running

    ctx = "ctx_000__v1"
    plain = {field: f"A plain {field} for the soil study." for field in builders.SIX}
    builders.write(
        tmp_path / "release",
        {
            "contexts.jsonl": [builders.context(ctx)],
            "proposals.jsonl": [
                builders.proposal(ctx, QWEN, **plain | {"hypothesis": "As 通义-千问, I expect the effect to double."}),
                builders.proposal(ctx, "Beta-2", **plain | {"hypothesis": "The effect halves."}),
            ],
            "corrected_folded_pairs.jsonl": [builders.folded(ctx, QWEN, "Beta-2", "Beta-2", "Beta-2")],
        },
    )
    benchmark = release_import(directory=tmp_path / "release", benchmark_name="unicode-gate").benchmark
    shown = Proposal.objects.get(context__benchmark=benchmark, participant__name=QWEN).blind_content["hypothesis"]
    assert shown == "As 通义-千问, I expect the effect to double.", "redaction caught it: the gate is not what is tested"

    fake_llm.script(judge={"policy": "prefer_field", "field": "hypothesis"})
    run, _ = create_running(benchmark, fake_llm)
    assert judge_run_execute(run_id=run.pk) == "failed"
    tasks = JudgeTask.objects.filter(run=run)
    assert sorted(t.order for t in tasks) == ["original", "reverse"]
    assert {(t.status, t.last_error) for t in tasks} == {("failed", NAMED)}
    assert chat_requests(fake_llm.log()) == []
    # A judge is refused as a participant by its name in any script, and only by its own: two names of Chinese
    # characters alone both squash to "" and used to meet.
    from jobs.services import JudgeRunRequest, RunError, judge_run_create

    with pytest.raises(RunError, match="is a participant of"):
        judge_run_create(request=JudgeRunRequest(benchmark=benchmark, judge_model="通义 千问", base_url=fake_llm.base_url))
    other, _ = judge_run_create(request=JudgeRunRequest(benchmark=benchmark, judge_model="文心一言", base_url=fake_llm.base_url))
    assert other.judge_model == "文心一言"


def test_a_name_whose_ascii_part_is_only_digits_is_looked_for_by_its_letters_not_its_digits() -> None:
    names = ["文心一言 4.0", "Beta-2"]
    plain = RenderedTask(system="Judge.", user="In 40 patients the effect held.", block_a="", block_b="")
    assert blindness_problem(plain, "k", names, lambda block: []) is None
    named = RenderedTask(system="Judge.", user="文心一言-4.0 wrote this.", block_a="", block_b="")
    assert blindness_problem(named, "k", names, lambda block: []) == "blindness gate: the prompt contains a participant's name"
    part = RenderedTask(system="Judge.", user="As 文心 一言 said.", block_a="", block_b="")
    assert blindness_problem(part, "k", names, lambda block: []) == "blindness gate: the prompt contains a participant's name"
