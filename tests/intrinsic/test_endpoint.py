"""Scoring one candidate against the scripted completions endpoint (``intrinsic.endpoint``), no database.

Every expected value is computed here from the toy model's logits (``tests/fake_llm/toy_lm.py``: its tokenizer
and its logit formula; the log-softmax, NLL, energy, means, sums and ranks are computed in this file), and the
span tokens of the boundary and Unicode cases are written out by hand.
"""

from __future__ import annotations

import math
from collections.abc import Coroutine
from typing import Any

import pytest

import jobs.engine
from intrinsic.endpoint import CompletionsScorer, EmptyCandidate, build_prompt, score_candidates
from jobs.engine import run_blocking
from jobs.providers import PermanentError
from tests.fake_llm import FakeLLM, toy_lm

BACKGROUND = "Cells grow in a dish."
QUESTION = "Does light matter?"
PREFIX = f"Background: {BACKGROUND}\nResearch Question: {QUESTION}\nHypothesis:"


def run[T](coroutine: Coroutine[Any, Any, T]) -> T:
    """As the engine runs its drivers: in a fresh thread when this one has a running loop (a browser test's)."""
    return run_blocking(lambda: coroutine)


def scorer(llm: FakeLLM, criterion: str = "nll", mode: str | None = None, **kwargs: Any) -> CompletionsScorer:
    mode = mode or {"nll": "raw_logprobs", "energy": "raw_logits"}[criterion]
    return CompletionsScorer(base_url=llm.base_url, model="toy", criterion=criterion, logprobs_mode=mode, **kwargs)


def score(
    llm: FakeLLM, candidate: str, criterion: str = "nll", *, background: str = BACKGROUND, question: str = QUESTION, **kwargs: Any
) -> Any:
    async def go() -> Any:
        s = scorer(llm, criterion, **kwargs)
        try:
            return await s.score(background, question, candidate)
        finally:
            await s.close()

    return run(go())


def log_softmax(prev: int, token: int) -> float:
    row = toy_lm.logits(prev)
    peak = max(row)
    return row[token] - (peak + math.log(sum(math.exp(z - peak) for z in row)))


def value(prev: int, token: int, criterion: str) -> float:
    return -log_softmax(prev, token) if criterion == "nll" else -toy_lm.logit(prev, token)


def expected(candidate: str, criterion: str, *, prefix: str = PREFIX, skip: int = 0) -> tuple[list[str], list[float]]:
    """The span tokens and their values: the full prompt's tokens after the prefix's own token count (plus ``skip``
    more, for a merged boundary, where the caller says which tokens straddle it)."""
    full = toy_lm.tokenize(prefix + " " + candidate)
    start = len(toy_lm.tokenize(prefix)) + skip
    span = range(start, len(full))
    return [toy_lm.token_str(full[i]) for i in span], [value(full[i - 1], full[i], criterion) for i in span]


def assert_score(result: Any, tokens: list[str], values: list[float]) -> None:
    assert result.tokens == tokens
    assert result.values == pytest.approx(values, abs=1e-9)
    assert result.n_tokens == len(values)
    assert result.total == pytest.approx(sum(values), abs=1e-9)
    assert result.mean == pytest.approx(sum(values) / len(values), abs=1e-9)


# --------------------------------------------------------------------------- prompt


def test_the_prompt_follows_the_template_and_a_blank_candidate_is_refused() -> None:
    assert build_prompt("B", "Q", "H x") == "Background: B\nResearch Question: Q\nHypothesis: H x"
    for blank in ("", "   ", "\n\t"):
        with pytest.raises(EmptyCandidate, match="empty"):
            build_prompt("B", "Q", blank)


def test_a_blank_candidate_sends_no_request(fake_llm: FakeLLM) -> None:
    with pytest.raises(EmptyCandidate):
        score(fake_llm, "  ")
    assert fake_llm.log() == []


# --------------------------------------------------------------------------- span and values


def test_a_one_token_candidate_scores_the_hand_computed_logit(fake_llm: FakeLLM) -> None:
    # Candidate "a": the prompt ends ":" (byte 0x3a, id 59) then " a" (merge 10, id 257 + 10 = 267).
    # logit(59, 267) = (1 + (59 % 4) / 2) * (((31*59 + 17*267 + 7) % 97) / 16 - 3)
    #                = 2.5 * ((6375 % 97) / 16 - 3) = 2.5 * (70 / 16 - 3) = 2.5 * 1.375 = 3.4375
    fake_llm.script(completions={"logprobs_mode": "raw_logits"})
    result = score(fake_llm, "a", "energy")
    assert (result.tokens, result.values, result.mean, result.total) == ([" a"], [-3.4375], -3.4375, -3.4375)
    assert result.logits_proved  # +3.4375 cannot be a log-probability
    fake_llm.script(completions={"logprobs_mode": "raw_logprobs"})
    nll = score(fake_llm, "a", "nll")
    row = [2.5 * (((31 * 59 + 17 * t + 7) % 97) / 16 - 3) for t in range(toy_lm.V)]
    assert nll.values == pytest.approx([math.log(sum(math.exp(z) for z in row)) - 3.4375], abs=1e-12)


@pytest.mark.parametrize("criterion", ["nll", "energy"])
def test_span_values_mean_and_sum_match_the_toy_model(fake_llm: FakeLLM, criterion: str) -> None:
    candidate = "The cells of the model grow faster in light and slower in the dark."
    fake_llm.script(completions={"logprobs_mode": "raw_logits" if criterion == "energy" else "raw_logprobs"})
    result = score(fake_llm, candidate, criterion)
    tokens, values = expected(candidate, criterion)
    assert "".join(tokens) == " " + candidate  # the span is exactly the candidate's text, space included
    assert_score(result, tokens, values)
    assert (result.span_method, result.boundary_merged, result.skipped_chars) == ("tokenize", False, 0)
    assert result.criterion == criterion and result.prompt_tokens == len(toy_lm.tokenize(PREFIX + " " + candidate))


def test_the_span_ignores_the_background_and_question_tokens(fake_llm: FakeLLM) -> None:
    # A bigram model: a span's values depend on the prefix only through its last token, ":" in both prompts.
    one = score(fake_llm, "cells grow", background="A long background about cells in a dish and light.")
    two = score(fake_llm, "cells grow", background="Other.", question="Why?")
    assert one.values == two.values and one.tokens == two.tokens == [" cell", "s ", "g", "r", "o", "w"]


@pytest.mark.parametrize("criterion", ["nll", "energy"])
def test_a_prefix_token_merging_with_the_first_characters_falls_back_to_text_offsets(fake_llm: FakeLLM, criterion: str) -> None:
    if criterion == "energy":
        fake_llm.script(completions={"logprobs_mode": "raw_logits"})
    # Prefix alone ends "Hypothe", "sis", ":"; with "(a) ..." the prompt ends "Hypothe", "sis", ": (", "a", ")", ...
    # The straddling ": (" is left out, so the span starts at "a" and " (" (2 characters) is unscored.
    result = score(fake_llm, "(a) the model", criterion)
    tokens, values = expected("(a) the model", criterion)
    assert tokens == ["a", ")", " the", " mod", "el"]  # here the index rule and the text offsets agree
    assert_score(result, tokens, values)
    assert (result.span_method, result.boundary_merged, result.skipped_chars) == ("text_offset", True, 2)

    # "sis: We" swallows two of the prefix's own tokens ("sis", ":"): index >= len(prefix tokens) would drop " ",
    # the token after the straddler; the text offsets keep it.
    result = score(fake_llm, "We test cells", criterion)
    naive, _ = expected("We test cells", criterion)
    assert naive == ["t", "es", "t", " cell", "s"]
    tokens, values = expected("We test cells", criterion, skip=-1)
    assert tokens == [" ", "t", "es", "t", " cell", "s"]
    assert_score(result, tokens, values)
    assert (result.span_method, result.boundary_merged, result.skipped_chars) == ("text_offset", True, 3)


def test_unicode_candidates_score_every_byte_token(fake_llm: FakeLLM) -> None:
    candidate = "Température über 中文 naïve 🙂"
    result = score(fake_llm, candidate)
    tokens, values = expected(candidate, "nll")
    # "é", "ü", "中文" are merges; "ï" is two byte tokens and the emoji four (no merge covers them).
    assert tokens == [
        " ",
        "T",
        "e",
        "m",
        "p",
        "é",
        "r",
        "a",
        "t",
        "u",
        "r",
        "e",
        " ",
        "ü",
        "b",
        "er",
        " ",
        "中文",
        " ",
        "n",
        "a",
        "bytes:\\xc3",
        "bytes:\\xaf",
        "v",
        "e",
        " ",
        "bytes:\\xf0",
        "bytes:\\x9f",
        "bytes:\\x99",
        "bytes:\\x82",
    ]
    assert_score(result, tokens, values)
    assert result.span_method == "tokenize"

    # Without /tokenize the text offsets give the same span: tokens inside a character start at that character.
    fake_llm.script(completions={"tokenize": False})
    fallback = score(fake_llm, candidate)
    assert_score(fallback, tokens, values)
    assert (fallback.span_method, fallback.boundary_merged, fallback.skipped_chars) == ("text_offset", False, 0)
    # A multi-byte character right before the boundary cannot move it either.
    background = "Données 中文 🙂"
    result = score(fake_llm, "x", background=background)
    assert result.tokens == [" ", "x"] and result.skipped_chars == 0


def test_without_tokenize_the_span_comes_from_text_offsets_and_is_the_same(fake_llm: FakeLLM) -> None:
    candidate = "Light and the dark"
    with_tokenize = score(fake_llm, candidate)
    fake_llm.script(completions={"tokenize": False})
    without = score(fake_llm, candidate)
    assert without.values == with_tokenize.values and without.tokens == with_tokenize.tokens
    assert (with_tokenize.span_method, without.span_method) == ("tokenize", "text_offset")
    assert [e["endpoint"] for e in fake_llm.log()] == ["tokenize", "completions"]  # a 404 is asked once only


def test_a_paper_shares_one_tokenization_of_its_prefix(fake_llm: FakeLLM) -> None:
    async def go() -> None:
        s = scorer(fake_llm)
        for candidate in ("one", "two", "three"):
            await s.score(BACKGROUND, QUESTION, candidate)
        await s.close()

    run(go())
    asked = [e["prompt"] for e in fake_llm.log() if e["endpoint"] == "tokenize"]
    assert asked.count(PREFIX) == 1 and len(asked) == 4


# --------------------------------------------------------------------------- ranking a paper


def pessimistic_rank(scores: list[float], gold: int) -> int:
    """1 + the distractors scoring <= the gold (lower is better; a tie counts against the gold)."""
    return 1 + sum(1 for i, m in enumerate(scores) if i != gold and m <= scores[gold])


def test_candidate_ranks_of_a_small_paper_follow_the_toy_model(fake_llm: FakeLLM) -> None:
    candidates = [
        "Light speeds the growth of the cells.",  # gold
        "The dish and the light are unrelated.",
        "(b) cells in the dark grow faster",
        "We find no effect of light.",
        "Ces cellules préfèrent la lumière 🙂",
        "a a a a",
    ]
    skips = [0, 0, 0, -1, 0, 0]  # "We ..." merges two prefix tokens: its span starts one token before the index rule
    orders = {}
    for criterion, mode in (("nll", "raw_logprobs"), ("energy", "raw_logits")):
        fake_llm.script(completions={"logprobs_mode": mode})

        async def go(criterion: str = criterion) -> list[Any]:
            s = scorer(fake_llm, criterion)
            try:
                return await score_candidates(s, [(BACKGROUND, QUESTION, c) for c in candidates], concurrency=3)
            finally:
                await s.close()

        outcomes = run(go())
        assert all(o.error is None and o.calls == 1 for o in outcomes)
        means = [o.completion.mean for o in outcomes]
        sums = [o.completion.total for o in outcomes]
        mine = [expected(c, criterion, skip=k)[1] for c, k in zip(candidates, skips, strict=True)]
        assert means == pytest.approx([sum(v) / len(v) for v in mine], abs=1e-9)
        assert sums == pytest.approx([sum(v) for v in mine], abs=1e-9)
        order = sorted(range(len(mine)), key=lambda i: sum(mine[i]) / len(mine[i]))
        assert sorted(range(len(means)), key=lambda i: means[i]) == order
        assert pessimistic_rank(means, 0) == pessimistic_rank([sum(v) / len(v) for v in mine], 0)
        orders[criterion] = order
    assert orders["nll"] != orders["energy"]  # the two criteria rank this paper differently


# --------------------------------------------------------------------------- criterion and mode


@pytest.mark.parametrize(
    ("criterion", "mode", "flag"),
    [
        ("energy", "raw_logprobs", "--logprobs-mode raw_logits"),
        ("nll", "raw_logits", "--logprobs-mode raw_logprobs"),
        ("energy", "processed_logits", "--logprobs-mode raw_logits"),
    ],
)
def test_a_criterion_the_configured_mode_cannot_give_is_refused_before_any_request(
    fake_llm: FakeLLM, criterion: str, mode: str, flag: str
) -> None:
    with pytest.raises(PermanentError) as refused:
        scorer(fake_llm, criterion, mode)
    message = str(refused.value)
    assert f"criterion {criterion!r}" in message and fake_llm.base_url in message and flag in message
    assert fake_llm.log() == []


def test_a_server_giving_logits_to_a_scorer_configured_for_log_probabilities_is_refused(fake_llm: FakeLLM) -> None:
    fake_llm.script(completions={"logprobs_mode": "raw_logits"})
    with pytest.raises(PermanentError, match=r"returns raw logits \(value \+.*criterion 'nll'.*--logprobs-mode raw_logits"):
        score(fake_llm, "Light speeds the growth of the cells.", "nll")


def test_the_probe_confirms_raw_logits_and_refuses_a_server_that_does_not_show_them(fake_llm: FakeLLM) -> None:
    async def probe(criterion: str) -> Any:
        s = scorer(fake_llm, criterion)
        try:
            return await s.probe()
        finally:
            await s.close()

    fake_llm.script(completions={"logprobs_mode": "raw_logits"})
    assert run(probe("energy")).logits_proved
    fake_llm.script(completions={"logprobs_mode": "raw_logprobs"})
    checked = run(probe("nll"))
    assert not checked.logits_proved and "consistent with log-probabilities" in checked.detail
    with pytest.raises(PermanentError, match="configured as running --logprobs-mode raw_logits.*looks like log-probabilities"):
        run(probe("energy"))


# --------------------------------------------------------------------------- faults


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without a server-sent Retry-After wait 10 ms instead of 0.5 s, 1 s, 2 s, ..."""
    monkeypatch.setattr(jobs.engine, "BACKOFF_BASE", 0.01)


def batch(llm: FakeLLM, candidates: list[str], criterion: str = "nll", **kwargs: Any) -> list[Any]:
    async def go() -> list[Any]:
        s = scorer(llm, criterion, **kwargs)
        try:
            return await score_candidates(s, [(BACKGROUND, QUESTION, c) for c in candidates], concurrency=4)
        finally:
            await s.close()

    return run(go())


def test_transient_faults_of_completions_and_tokenize_are_retried(fake_llm: FakeLLM, quick_backoff: None) -> None:
    candidates = ["Light speeds growth.", "Dark slows growth.", "Nothing changes."]
    clean = [o.completion.values for o in batch(fake_llm, candidates)]
    fake_llm.script(
        failures=[
            {"endpoints": ["completions"], "attempts": [1], "status": 429, "retry_after": 0.01},
            {"endpoints": ["completions"], "attempts": [2], "status": 503},
            {"endpoints": ["tokenize"], "attempts": [1], "status": 500},
        ]
    )
    outcomes = batch(fake_llm, candidates)
    assert [o.error for o in outcomes] == [None] * 3
    assert [o.completion.values for o in outcomes] == clean
    log = fake_llm.log()
    completions = [e for e in log if e["endpoint"] == "completions"]
    assert sorted((e["attempt"], e["status"]) for e in completions) == [(1, 429)] * 3 + [(2, 503)] * 3 + [(3, 200)] * 3
    assert {e["status"] for e in log if e["endpoint"] == "tokenize" and e["attempt"] == 1} == {500}
    # Every try is a call. Per candidate: its prompt's tokenize fault, the 429, the 503, the answer; plus the one
    # candidate that met the shared prefix's tokenize fault (the three ask for it at once).
    assert sum(o.calls for o in outcomes) == 3 * 4 + 1


def test_a_timeout_is_retried(fake_llm: FakeLLM, quick_backoff: None) -> None:
    fake_llm.script(failures=[{"endpoints": ["completions"], "attempts": [1], "sleep": 2}])
    (outcome,) = batch(fake_llm, ["Light speeds growth."], timeout=0.5)
    assert outcome.error is None and outcome.calls == 2
    assert [e["fault"] for e in fake_llm.log() if e["endpoint"] == "completions"] == ["sleep 2", None]


def test_permanent_errors_are_not_retried_and_say_what_is_wrong(fake_llm: FakeLLM, quick_backoff: None) -> None:
    fake_llm.script(completions={"max_model_len": 20})
    (outcome,) = batch(fake_llm, ["Light speeds growth."])
    assert outcome.completion is None and outcome.calls == 1
    assert "HTTP 400" in outcome.error and "maximum context length is 20 tokens" in outcome.error

    # (An answer without log-probabilities is asked again: tests/intrinsic/test_endpoint_answers.py.)

    (outcome,) = batch(fake_llm, ["   "])
    assert outcome.completion is None and "empty" in outcome.error
