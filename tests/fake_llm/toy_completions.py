"""What ``/v1/completions`` and ``/tokenize`` answer for the toy model of ``toy_lm.py``: greedy generation, the
log-probabilities (or raw logits) at every position, the OpenAI ``logprobs`` block and vLLM's ``prompt_logprobs``.
Standard library only; ``server.py`` imports it whether run as a script or imported from the package. Faults
(failure rules) are the server's: these functions answer a request that got through them.
"""

from __future__ import annotations

import math
from typing import Any

try:
    from tests.fake_llm import toy_lm
except ImportError:  # run as a script: this folder is on sys.path, the repository may not be
    import toy_lm  # type: ignore[no-redef]


def completion_choice(request: dict[str, Any], raw_logits: bool) -> tuple[dict[str, Any], list[int], list[int]]:
    """(the choice, the prompt's token ids, the generated ones) of a completions request whose prompt is a string the
    model's length admits. ``raw_logits``: the endpoint's "logprob" values are raw logits, not log-softmax values."""
    prompt = request["prompt"]
    n_top = request.get("logprobs")
    n_prompt = request.get("prompt_logprobs")
    max_tokens = request.get("max_tokens")
    max_tokens = 16 if max_tokens is None else int(max_tokens)
    ids = toy_lm.tokenize(prompt)
    generated = greedy_tokens(ids, max_tokens)
    every = ids + generated
    rows = position_values(every, raw_logits)
    echo = bool(request.get("echo"))
    shown = range(0 if echo else len(ids), len(every))
    text = "".join(toy_lm.token_bytes(t).decode("utf-8", errors="replace") for t in generated)
    full_text = (prompt if echo else "") + text
    choice: dict[str, Any] = {"index": 0, "text": full_text, "finish_reason": "length", "logprobs": None}
    if n_top is not None:
        choice["logprobs"] = logprobs_block(every, rows, shown, n_top, base=0 if echo else len(prompt))
    if n_prompt is not None:
        choice["prompt_logprobs"] = prompt_logprobs(ids, rows, n_prompt)
    return choice, ids, generated


def greedy_tokens(ids: list[int], max_tokens: int) -> list[int]:
    """``max_tokens`` tokens after ``ids``, each the best next token (ties to the lowest id)."""
    generated: list[int] = []
    for _ in range(max_tokens):
        row = toy_lm.logits((ids + generated)[-1])
        generated.append(max(range(toy_lm.V), key=lambda t: (row[t], -t)))
    return generated


def position_values(every: list[int], raw_logits: bool) -> list[list[float] | None]:
    """What the endpoint reports at each position (predicted from the token before it), for every token: None for the
    first position, then raw logits or log-softmax values."""

    def values(position: int) -> list[float]:
        row = toy_lm.logits(every[position - 1])
        if raw_logits:
            return row
        top = max(row)
        norm = top + math.log(sum(math.exp(z - top) for z in row))
        return [z - norm for z in row]

    return [None] + [values(position) for position in range(1, len(every))]


def logprobs_block(
    every: list[int], rows: list[list[float] | None], shown: range, n_top: Any, *, base: int
) -> dict[str, list[Any]]:
    """The choice's OpenAI ``logprobs``: tokens, their values, character offsets (from ``base``) and the ``n_top``
    best tokens by string, at the ``shown`` positions."""
    offsets = toy_lm.text_offsets(every)
    top_logprobs: list[dict[str, float] | None] = []
    for position in shown:
        row = rows[position]
        if row is None:
            top_logprobs.append(None)
            continue
        best = sorted(range(toy_lm.V), key=lambda t: (-row[t], t))[: int(n_top)]
        top_logprobs.append({toy_lm.token_str(t): row[t] for t in best})
    return {
        "tokens": [toy_lm.token_str(every[p]) for p in shown],
        "token_logprobs": [None if rows[p] is None else rows[p][every[p]] for p in shown],  # type: ignore[index]
        "text_offset": [offsets[p] - base for p in shown],
        "top_logprobs": top_logprobs,
    }


def prompt_logprobs(ids: list[int], rows: list[list[float] | None], n_prompt: Any) -> list[dict[str, dict[str, Any]] | None]:
    """vLLM's ``prompt_logprobs``: None for the first token, then each prompt token and the ``n_prompt`` best, by id,
    with value, rank and text."""
    out: list[dict[str, dict[str, Any]] | None] = [None]
    for position in range(1, len(ids)):
        row = rows[position]
        assert row is not None
        order = sorted(range(toy_lm.V), key=lambda t: (-row[t], t))
        keep = [ids[position]] + [t for t in order[: int(n_prompt)] if t != ids[position]]
        out.append(
            {
                str(t): {
                    "logprob": row[t],
                    "rank": 1 + sum(1 for z in row if z > row[t]),
                    "decoded_token": toy_lm.token_str(t),
                }
                for t in keep
            }
        )
    return out


def tokenize_payload(request: dict[str, Any], max_model_len: int) -> dict[str, Any]:
    """vLLM's ``/tokenize`` answer for a request whose prompt is a string the model's length admits."""
    ids = toy_lm.tokenize(request["prompt"], add_bos=request.get("add_special_tokens", True) is not False)
    payload: dict[str, Any] = {
        "count": len(ids),
        "max_model_len": max_model_len,
        "tokens": ids,
        "token_strs": None,
    }
    if request.get("return_token_strs"):
        payload["token_strs"] = [toy_lm.token_str(token) for token in ids]
    return payload
