"""Answers without usable log-probabilities, and the requests a candidate costs, at the endpoint client
(``intrinsic.endpoint``; issue 22, item 6), no database.

Against the scripted endpoint: an answer without log-probabilities is asked again like a judge's malformed answer,
then the candidate has a reason a person can read; each request sent (``/tokenize`` included) passes the ledger's
hook once, as the fake server's log shows. On hand-made answers: what is missing or wrong in a ``logprobs`` block
is named in words (null, missing lists, lists of different lengths, NaN, wrong types), never as a Python error.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from intrinsic.endpoint import MalformedLogprobs, read_logprobs, score_with_retries
from tests.fake_llm import FakeLLM

from .test_endpoint import BACKGROUND, QUESTION, batch, expected, quick_backoff, run, scorer  # noqa: F401

PYTHON_ERRORS = ("TypeError", "NoneType", "KeyError", "IndexError", "ValueError", "subscriptable", "Traceback")


# --------------------------------------------------------------------------- asked again, then a readable reason


@pytest.mark.parametrize(
    ("fault", "answers"),
    [
        ({"attempts": [1], "malformed": "no logprobs"}, 2),
        ({"attempts": [1, 2], "missing_key": "logprobs"}, 3),
    ],
    ids=["null-once", "missing-twice"],
)
def test_an_answer_without_logprobs_is_asked_again_and_then_scored(
    fake_llm: FakeLLM, fault: dict[str, Any], answers: int
) -> None:
    candidates = ["Light speeds growth.", "Dark slows growth."]
    fake_llm.script(failures=[{"endpoints": ["completions"], **fault}])
    outcomes = batch(fake_llm, candidates)
    for candidate, outcome in zip(candidates, outcomes, strict=True):
        assert outcome.error is None and outcome.calls == answers
        tokens, values = expected(candidate, "nll")
        assert outcome.completion.tokens == tokens and outcome.completion.values == pytest.approx(values, abs=1e-9)
    asked = [e for e in fake_llm.log() if e["endpoint"] == "completions"]
    assert len(asked) == answers * len(candidates)
    assert sorted(e["attempt"] for e in asked if e["fault"] is None) == [answers] * len(candidates)


def test_an_endpoint_that_never_gives_logprobs_says_so_and_what_to_check(fake_llm: FakeLLM) -> None:
    fake_llm.script(failures=[{"endpoints": ["completions"], "malformed": "no logprobs"}])
    (outcome,) = batch(fake_llm, ["Light speeds growth."])
    assert outcome.completion is None and outcome.calls == 3  # the first answer and two more, as for a judge
    assert outcome.error == (
        f"no usable prompt log-probabilities in 3 answer(s) from the endpoint {fake_llm.base_url}/completions (model "
        "'toy'): the answer came without log-probabilities (choices[0].logprobs is missing or null); check that it "
        "serves legacy completions with echo=true and logprobs=5 for this model (vLLM's /v1/completions does; "
        "chat-only servers do not)"
    )
    assert [e["fault"] for e in fake_llm.log() if e["endpoint"] == "completions"] == ["malformed"] * 3


def test_every_request_sent_passes_the_ledger_hook_once(fake_llm: FakeLLM, quick_backoff: None) -> None:  # noqa: F811
    # A tokenize fault, a 429 and a malformed answer: every request, failed or not, is one pass of the hook.
    fake_llm.script(
        failures=[
            {"endpoints": ["tokenize"], "attempts": [1], "status": 500},
            {"endpoints": ["completions"], "attempts": [1], "status": 429, "retry_after": 0.01},
            {"endpoints": ["completions"], "attempts": [2], "malformed": "no logprobs"},
        ]
    )
    counted: list[str] = []

    class Ledger:
        async def __call__(self) -> None:
            counted.append("call")

        async def failed(self, message: str) -> None:
            counted.append(f"failed: {message}")

    async def go() -> Any:  # noqa: ANN401
        s = scorer(fake_llm)
        try:
            return await score_with_retries(s, (BACKGROUND, QUESTION, "Light speeds growth."), attempts=3, before_call=Ledger())
        finally:
            await s.close()

    outcome = run(go())
    log = fake_llm.log()
    assert outcome.error is None and outcome.completion is not None
    assert counted.count("call") == outcome.requests == len(log)
    assert {e["endpoint"] for e in log} == {"tokenize", "completions"}
    failed = [c.removeprefix("failed: ") for c in counted if c.startswith("failed")]
    assert len(failed) == sum(1 for e in log if e["status"] in (429, 500)) == 3  # the prefix's and prompt's 500, the 429
    assert all(m.startswith("HTTP ") for m in failed)


# --------------------------------------------------------------------------- the logprobs block, by hand


def answer(**block: Any) -> dict[str, Any]:  # noqa: ANN401
    """A completions answer whose ``logprobs`` block is a good one changed by ``block`` (a key given ``...`` is left out)."""
    logprobs = {"tokens": ["<s>", "A", " b"], "token_logprobs": [None, -1.5, -0.25], "text_offset": [0, 0, 1]}
    logprobs.update(block)
    return {"choices": [{"text": "A b", "logprobs": {k: v for k, v in logprobs.items() if v is not ...}}]}


def test_a_well_formed_block_is_read_as_it_is() -> None:
    echoed = read_logprobs(answer(top_logprobs=[None, {"A": -1.5}, {" b": -0.25}]))
    assert (echoed.tokens, echoed.values, echoed.offsets) == (["<s>", "A", " b"], [None, -1.5, -0.25], [0, 0, 1])
    assert echoed.top == [None, {"A": -1.5}, {" b": -0.25}]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (None, r"the answer has no choices\[0\]"),
        ({"choices": []}, r"the answer has no choices\[0\]"),
        ({"choices": [{"text": "A b", "logprobs": None}]}, r"came without log-probabilities \(choices\[0\]\.logprobs is missing"),
        ({"choices": [{"text": "A b"}]}, r"came without log-probabilities \(choices\[0\]\.logprobs is missing or null\)"),
        ({"choices": [{"logprobs": "none"}]}, r'choices\[0\]\.logprobs is a string \("none"\), not an object'),
        (answer(tokens=...), r"logprobs\.tokens is missing"),
        (answer(tokens=None), r"logprobs\.tokens is missing"),
        (answer(text_offset={"0": 0}), r"logprobs\.text_offset is an object \(\{\"0\": 0\}\), not a list"),
        (answer(tokens=["<s>", "A"]), "logprobs has 2 tokens, 3 token_logprobs and 3 text_offset values"),
        (answer(token_logprobs=[None, -1.5]), "logprobs has 3 tokens, 2 token_logprobs and 3 text_offset values"),
        (answer(token_logprobs=[None, math.nan, -0.25]), r"logprobs\.token_logprobs\[1\] is nan, not a finite number"),
        (answer(token_logprobs=[None, -1.5, -math.inf]), r"logprobs\.token_logprobs\[2\] is -inf, not a finite number"),
        (answer(token_logprobs=[None, "-1.5", -0.25]), r'token_logprobs\[1\] is a string \("-1.5"\); it must hold numbers'),
        (answer(token_logprobs=[None, True, -0.25]), r"token_logprobs\[1\] is a boolean \(true\); it must hold numbers"),
        (answer(tokens=["<s>", 65, " b"]), r"logprobs\.tokens\[1\] is a number \(65\); it must hold strings"),
        (answer(text_offset=[0, 0.5, 1]), r"logprobs\.text_offset\[1\] is a number \(0\.5\); it must hold integers"),
    ],
)
def test_what_is_wrong_with_a_logprobs_block_is_named_in_words(data: Any, message: str) -> None:  # noqa: ANN401
    with pytest.raises(MalformedLogprobs, match=message) as raised:
        read_logprobs(data)
    assert not any(word in str(raised.value) for word in PYTHON_ERRORS)
