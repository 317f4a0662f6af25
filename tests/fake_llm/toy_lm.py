"""A deterministic toy language model: the ground truth of the fake server's ``/v1/completions`` and ``/tokenize``.

Tests import this module for the tokenizer and the logits only, and compute log-softmax, NLL and energy
themselves; the client under test (``intrinsic.endpoint``) never imports it.

Vocabulary (ids):
  0            ``<s>``, the beginning-of-sequence token the server puts before every prompt (as vLLM does for
               Llama-style models); it is predicted by nothing, so its position has no log-probability;
  1 .. 256     the single bytes 0x00 .. 0xFF (id = byte + 1): any text is tokenizable, and a character that no
               merge covers (an emoji, a rare accent) becomes one token per UTF-8 byte, as in byte-level BPE;
  257 ..       the multi-character ``MERGES`` below, in that order.

Tokenizer: greedy longest match over the UTF-8 bytes, left to right (maximal munch). A merge may cross the
``Hypothesis:`` boundary of the scoring prompt, which is how the boundary cases are made:
  - ``": ("`` (colon, space, parenthesis): a candidate starting with ``(`` merges one character of the prefix
    with two of the candidate; the prefix tokenized alone ends ``..., "sis", ":"``, the full prompt
    ``..., "sis", ": ("``;
  - ``"sis: We"``: a candidate starting with ``We`` swallows *two* tokens of the prefix tokenized alone
    (``"sis"`` and ``":"``), so "the tokens at index >= len(prefix tokens)" would skip the candidate's next token;
  - otherwise the boundary is clean: the full prompt's tokens are the prefix's tokens followed by the
    candidate's (``" " + candidate``) tokens.

Logits: ``logit(prev, token) = (1 + (prev % 4) / 2) * (((31 * prev + 17 * token + 7) % 97) / 16 - 3)``: a value in
[-3, 3] scaled by 1, 1.5, 2 or 2.5 with the previous token. Some are positive (only raw logits can be), and the
scale makes the softmax normalizer depend on ``prev``, so NLL and energy rank candidates differently. The model is
a bigram model: a span token's logit depends on the token before it only.
"""

from __future__ import annotations

BOS = 0
BYTE_OFFSET = 1

MERGES: list[str] = [
    "Background",
    " Research",
    " Question",
    "Hypothe",
    "sis",
    ": (",
    "sis: We",
    " the",
    " of",
    " and",
    " a",
    "th",
    "in",
    "er",
    "es",
    "ing",
    " mod",
    "el",
    " cell",
    "s ",
    "é",
    "ü",
    "中",
    "文",
    "中文",
    "ñ",
]

VOCAB: list[bytes] = [b""] + [bytes([b]) for b in range(256)] + [m.encode("utf-8") for m in MERGES]
V = len(VOCAB)
_BY_BYTES: dict[bytes, int] = {token: index for index, token in enumerate(VOCAB) if index != BOS}
_LONGEST = max(len(token) for token in VOCAB)


def tokenize(text: str, *, add_bos: bool = True) -> list[int]:
    """Token ids of ``text`` by greedy longest match over its UTF-8 bytes (``<s>`` first unless ``add_bos`` is False)."""
    data = text.encode("utf-8")
    ids = [BOS] if add_bos else []
    position = 0
    while position < len(data):
        for length in range(min(_LONGEST, len(data) - position), 0, -1):
            token = _BY_BYTES.get(data[position : position + length])
            if token is not None:
                ids.append(token)
                position += length
                break
    return ids


def token_bytes(token: int) -> bytes:
    return VOCAB[token]


def token_str(token: int) -> str:
    """The token as the OpenAI API names it: its text, ``<s>``, or ``bytes:\\xNN...`` for part of a character."""
    if token == BOS:
        return "<s>"
    try:
        return VOCAB[token].decode("utf-8")
    except UnicodeDecodeError:
        return "bytes:" + "".join(f"\\x{b:02x}" for b in VOCAB[token])


def text_offsets(ids: list[int]) -> list[int]:
    """Character offset where each token starts in the text the tokens spell (``<s>`` at 0).

    A token that starts inside a multi-byte character gets the offset of that character: whole characters
    before its first byte are counted, the partial one is not.
    """
    data = b"".join(VOCAB[token] for token in ids)
    offsets = []
    position = 0
    for token in ids:
        offsets.append(len(data[:position].decode("utf-8", errors="ignore")))
        position += len(VOCAB[token])
    return offsets


def logit(prev: int, token: int) -> float:
    """The raw logit of ``token`` following ``prev``."""
    return (1 + (prev % 4) / 2) * (((31 * prev + 17 * token + 7) % 97) / 16 - 3)


def logits(prev: int) -> list[float]:
    """The logits of every vocabulary token following ``prev``."""
    return [logit(prev, token) for token in range(V)]


__all__ = ["BOS", "MERGES", "V", "VOCAB", "logit", "logits", "text_offsets", "token_bytes", "token_str", "tokenize"]
