"""A scripted scorer endpoint for the demo (``python manage.py intrinsic_demo_endpoint``): an OpenAI-compatible
legacy completions server with prompt log-probabilities and vLLM's ``/tokenize``, backed by a deterministic toy
"model" — NOT a language model. It lets ``make demo`` run a real Intrinsic scoring run end to end on this machine
(the engine, the client's span location, the run page) with no GPU and no network. Standard library only.

Toy model. Tokens are runs of word characters, runs of spaces, and single other characters (``\\w+|\\s+|[^\\w\\s]``),
so the ``Hypothesis:`` boundary is always clean. Token ids are a stable hash of the token text; the log-probability of
token t after token p is ``-(0.2 + (sha1(p + "\\x00" + t) mod 1000) / 200)``, plus a bonus for hypothesis words that
also occur in the prompt's background or question (a crude "grounding" preference, so the demo's gold hypotheses,
which reuse those words, tend to rank higher). The server runs in ``raw_logprobs`` mode: every value is a
log-probability (≤ 0), never a raw logit, so only the NLL criterion can be scored; an energy run is refused by the
client, as it should be.

Endpoints: ``POST /v1/completions`` (``echo: true``, ``logprobs: K``; ``max_tokens`` tokens of "." are generated),
``POST /tokenize`` (``{"tokens", "count", "max_model_len"}``, ``token_strs`` on request), ``GET /health``.
"""

from __future__ import annotations

import hashlib
import json
import re
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
MODEL = "demo-toy-lm"
MAX_MODEL_LEN = 8192


def tokenize(text: str) -> list[tuple[str, int]]:
    """(token text, character offset) pairs; the first token is ``<s>`` at offset 0 with no text of its own."""
    return [("<s>", 0)] + [(m.group(0), m.start()) for m in TOKEN.finditer(text)]


def token_id(text: str) -> int:
    return 1 if text == "<s>" else 2 + int.from_bytes(hashlib.sha1(text.encode()).digest()[:3], "big")


def logprob(prev: str, token: str, grounding: set[str]) -> float:
    """The toy model's log-probability of ``token`` after ``prev`` (≤ 0)."""
    base = 0.2 + int.from_bytes(hashlib.sha1(f"{prev}\x00{token}".encode()).digest()[:4], "big") % 1000 / 200
    if token.strip() and token.lower() in grounding:
        base *= 0.4  # a word of the background or question is less surprising
    return -base


def _grounding(prompt: str) -> set[str]:
    head = prompt.split("\nHypothesis:", 1)[0]
    return {m.group(0).lower() for m in re.finditer(r"\w{4,}", head)}


def completion(body: dict[str, Any]) -> dict[str, Any]:
    prompt = body.get("prompt")
    if not isinstance(prompt, str) or not body.get("echo"):
        raise ValueError("this demo endpoint scores prompts: send a string prompt with echo=true and logprobs")
    tokens = tokenize(prompt)
    if len(tokens) > MAX_MODEL_LEN:
        raise ValueError(f"the prompt has {len(tokens)} tokens, more than max_model_len {MAX_MODEL_LEN}")
    generated = int(body.get("max_tokens") or 0)
    grounding = _grounding(prompt)
    texts = [t for t, _ in tokens] + ["."] * generated
    offsets = [o for _, o in tokens] + [len(prompt)] * generated
    values: list[float | None] = [None] + [round(logprob(texts[i - 1], texts[i], grounding), 6) for i in range(1, len(texts))]
    top = [None] + [{texts[i]: values[i]} for i in range(1, len(texts))]
    return {
        "id": "cmpl-demo",
        "object": "text_completion",
        "model": body.get("model") or MODEL,
        "choices": [
            {
                "index": 0,
                "text": prompt + "." * generated,
                "finish_reason": "length",
                "logprobs": {"tokens": texts, "token_logprobs": values, "text_offset": offsets, "top_logprobs": top},
            }
        ],
        "usage": {"prompt_tokens": len(tokens), "completion_tokens": generated, "total_tokens": len(tokens) + generated},
    }


class Handler(BaseHTTPRequestHandler):
    server_version = "lit2test-demo-scorer/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002, ANN401 - quiet: the demo's terminal stays readable
        return

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/") in ("/health", "/v1/models"):
            self._send(HTTPStatus.OK, {"ok": True, "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._send(HTTPStatus.NOT_FOUND, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if self.path.rstrip("/") == "/v1/completions":
                self._send(HTTPStatus.OK, completion(body))
            elif self.path.rstrip("/") == "/tokenize":
                tokens = tokenize(str(body.get("prompt", "")))
                out: dict[str, Any] = {
                    "tokens": [token_id(t) for t, _ in tokens],
                    "count": len(tokens),
                    "max_model_len": MAX_MODEL_LEN,
                }
                if body.get("return_token_strs"):
                    out["token_strs"] = [t for t, _ in tokens]
                self._send(HTTPStatus.OK, out)
            else:
                self._send(HTTPStatus.NOT_FOUND, {"error": {"message": f"no route {self.path}"}})
        except (ValueError, TypeError) as exc:
            self._send(HTTPStatus.BAD_REQUEST, {"error": {"message": str(exc)}})


def serve(host: str, port: int) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
