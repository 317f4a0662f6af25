"""A scriptable, OpenAI-compatible chat-completions server for tests (standard library only).

Run:  python tests/fake_llm/server.py --port 0 --port-file PATH [--parent-pid PID]

Endpoints
  POST /v1/chat/completions   OpenAI chat completions (non-streaming)
  POST /v1/completions        legacy completions of the toy model (``toy_lm.py``) with prompt log-probabilities
  POST /tokenize              vLLM's tokenizer endpoint, for the same toy model
  POST /_script               replace the script (JSON object) and reset counters and the log
  GET  /_log                  every chat request since the last /_script
  GET  /_health               {"ok": true}

See ``DEFAULT_SCRIPT`` and ``validate_script`` (``script_rules.py``) for the script schema, and ``parse_proposals``
for how a judge prompt is read (``=== PROPOSAL A ===`` / ``=== PROPOSAL B ===`` blocks, ``[field]`` lines).

Canned answers (``"replies"``, optional): a list of rules ``{"contains": str | [str, ...], "model": str
(optional), "answers": [str | object, ...]}``. A chat request whose messages contain every ``contains`` text
(and, if given, whose model is ``model``) is answered by the first matching rule with its next answer, in order
(an object is sent as its JSON text); once a rule's answers are used up its last one repeats. Counters restart
with each ``/_script``. Failure rules still come first; requests no rule matches get the ``mode`` answer. The log
entry of a canned answer says which: ``"reply": [rule index, answer index]``.

Completions (``"completions"``, optional): ``{"logprobs_mode": "raw_logprobs" | "raw_logits" |
"processed_logprobs" | "processed_logits", "tokenize": bool, "max_model_len": int}``. ``/v1/completions`` scores
a string prompt with the toy model of ``toy_lm.py`` (``<s>`` first): with ``echo: true`` and ``logprobs: N`` the
choice's ``logprobs`` holds ``tokens``, ``token_logprobs`` (None for ``<s>``), ``text_offset`` (character offsets)
and ``top_logprobs`` (the N best tokens by string) for the prompt, followed by the generated tokens (``max_tokens``
greedy tokens, 16 if absent; 0 generates none); vLLM's ``prompt_logprobs: N`` adds ``choices[0].prompt_logprobs`` =
``[None, {"<token id>": {"logprob", "rank", "decoded_token"}, ...}, ...]`` with the prompt token and the N best.
As in vLLM's ``--logprobs-mode``, the "logprob" values are log-softmax values in the ``*_logprobs`` modes (the
default) and raw logits in the ``*_logits`` modes (the toy model has no sampling processors, so raw and processed
agree). ``/tokenize`` answers ``{"tokens", "count", "max_model_len"}`` (plus ``token_strs`` when
``return_token_strs`` is true), or 404 when ``tokenize`` is false (servers without it). A prompt longer than
``max_model_len`` tokens is refused with 400, as vLLM does.

Failure rules apply to chat and completions requests alike (the task key of a completion is a hash of its prompt);
a rule with ``"model": NAME`` applies to that model's requests only; a rule with ``"endpoints": [...]`` (any of
"chat", "completions", "tokenize") applies to those only, and
``/tokenize`` fails only by a rule that names it. Every log entry says its ``endpoint``; completions and tokenize
entries carry the ``prompt`` (their ``messages`` is None). For a completion, ``malformed`` answers a choice without
log-probabilities (its text is the rule's value) and ``missing_key`` drops that key from the choice.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import random
import re
import sys
import threading
import time
import uuid
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

try:
    from tests.fake_llm import toy_lm
    from tests.fake_llm.script_rules import GENERATE_FIELDS, rule_matches, validate_script
    from tests.fake_llm.toy_completions import completion_choice, tokenize_payload
except ImportError:  # run as a script: this folder is on sys.path, the repository may not be
    import toy_lm  # type: ignore[no-redef]
    from script_rules import GENERATE_FIELDS, rule_matches, validate_script  # type: ignore[no-redef]
    from toy_completions import completion_choice, tokenize_payload  # type: ignore[no-redef]

DIMENSIONS = ["grounding", "hypothesis_specificity", "minimality_feasibility", "decisive_metric", "falsifiability"]
STRUCTURED_TOKEN = "STRUCTURED-DIMENSIONS"
MARKER_RE = re.compile(r"^===\s*(.*?)\s*===$")
FIELD_RE = re.compile(r"^\[([^\[\]]+)\]$")
WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9'-]*")


# --------------------------------------------------------------------------- canned replies


def reply_for(
    script: dict[str, Any], model: Any, messages: list[dict[str, Any]], counters: dict[int, int]
) -> tuple[str, list[int]] | None:
    """The canned answer of the first matching ``replies`` rule (advancing its counter), or None."""
    text = "\n".join(content_text(m.get("content")) for m in messages if isinstance(m, dict))
    for index, rule in enumerate(script["replies"]):
        if "model" in rule and rule["model"] != model:
            continue
        if all(needle in text for needle in rule["contains"]):
            used = counters.get(index, 0)
            counters[index] = used + 1
            position = min(used, len(rule["answers"]) - 1)
            answer = rule["answers"][position]
            return (answer if isinstance(answer, str) else json.dumps(answer)), [index, position]
    return None


# --------------------------------------------------------------------------- prompt reading


def content_text(content: Any) -> str:
    """A message's content as text (plain string or a list of OpenAI content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content)


def task_key(messages: list[dict[str, Any]]) -> str:
    joined = "".join(content_text(m.get("content")) for m in messages if isinstance(m, dict))
    return hashlib.sha1(joined.encode()).hexdigest()[:16]


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def parse_proposals(text: str) -> dict[str, dict[str, Any]] | None:
    """Return {"A": {"raw": str, "fields": {name: text}}, "B": ...} or None without both markers.

    A block starts after a line ``=== PROPOSAL A ===`` (or B) and runs to the next ``=== ... ===``
    line (e.g. the other proposal or ``=== END ===``). Inside, a line ``[name]`` starts a field that
    runs to the next ``[...]`` line or the end of the block.
    """
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        marker = MARKER_RE.match(line.strip())
        if marker:
            label = marker.group(1).upper()
            current = label[-1] if label in ("PROPOSAL A", "PROPOSAL B") else None
            if current is not None:
                blocks[current] = []
            continue
        if current is not None:
            blocks[current].append(line)
    if "A" not in blocks or "B" not in blocks:
        return None
    parsed: dict[str, dict[str, Any]] = {}
    for label, lines in blocks.items():
        fields: dict[str, list[str]] = {}
        name: str | None = None
        for line in lines:
            field = FIELD_RE.match(line.strip())
            if field:
                name = field.group(1).strip()
                fields[name] = []
            elif name is not None:
                fields[name].append(line)
        parsed[label] = {
            "raw": "\n".join(lines),
            "fields": {key: "\n".join(value).strip() for key, value in fields.items()},
        }
    return parsed


def words_of(text: str) -> int:
    return len(text.split())


# --------------------------------------------------------------------------- answers


def judge_answer(script: dict[str, Any], messages: list[dict[str, Any]], task: str) -> dict[str, Any] | None:
    proposals = parse_proposals(last_user_text(messages))
    if proposals is None:
        return None
    judge = script["judge"]
    policy = judge["policy"]
    reason = f"policy {policy}"
    if policy == "always_a":
        winner = "A"
    elif policy == "always_b":
        winner = "B"
    elif policy == "always_tie":
        winner = "tie"
    elif policy == "prefer_field":
        field = judge.get("field") or "hypothesis"
        len_a = len(proposals["A"]["fields"].get(field, ""))
        len_b = len(proposals["B"]["fields"].get(field, ""))
        winner = "A" if len_a > len_b else "B" if len_b > len_a else "tie"
        reason = f"[{field}] is {len_a} characters in A and {len_b} in B"
    elif policy == "prefer_text":
        needle = judge.get("text") or ""
        in_a = bool(needle) and needle in proposals["A"]["raw"]
        in_b = bool(needle) and needle in proposals["B"]["raw"]
        winner = "A" if in_a and not in_b else "B" if in_b and not in_a else "tie"
        reason = f"text {needle!r} in A: {in_a}, in B: {in_b}"
    else:  # random
        rng = random.Random(f"{judge.get('seed', 0)}:{task}")
        winner = rng.choice(["A", "B", "tie"])
        reason = f"random choice with seed {judge.get('seed', 0)}"
    answer: dict[str, Any] = {
        "winner": winner,
        "confidence": judge.get("confidence", "high"),
        "main_reason": f"Fake judge: {reason}.",
        "weakness_a": "Fake weakness of proposal A.",
        "weakness_b": "Fake weakness of proposal B.",
    }
    if any(
        STRUCTURED_TOKEN in content_text(m.get("content"))
        for m in messages
        if isinstance(m, dict) and m.get("role") in ("system", "user")
    ):
        score = {"A": 2, "B": 2} if winner == "tie" else {winner: 3, ("B" if winner == "A" else "A"): 1}
        answer["scores"] = {label: {dim: score[label] for dim in DIMENSIONS} for label in ("A", "B")}
        answer["overall"] = winner
    return answer


FALLBACK_WORDS = "the minimal test measures whether the proposed effect holds under a controlled comparison".split()


def generate_answer(script: dict[str, Any], model: str, messages: list[dict[str, Any]]) -> dict[str, str]:
    config = script["generate"]
    fields = list(config.get("fields") or GENERATE_FIELDS)
    n_words = max(1, int(config.get("words", 30)))
    prompt = " ".join(content_text(m.get("content")) for m in messages if isinstance(m, dict))
    model_tokens = {t.lower() for t in re.split(r"[^A-Za-z0-9]+", model or "") if t} | {(model or "").lower()}
    vocabulary = [w.lower() for w in WORD_RE.findall(prompt)]
    vocabulary = [w for w in vocabulary if w not in model_tokens]
    if len(set(vocabulary)) < 5:  # too few distinct prompt words for readable text
        vocabulary += FALLBACK_WORDS
    seed = hashlib.sha1(f"{model}\x00{prompt}".encode()).hexdigest()
    answer = {}
    for field in fields:
        rng = random.Random(f"{seed}:{field}")
        words = [rng.choice(vocabulary) for _ in range(n_words)]
        sentence = " ".join(words)
        answer[field] = sentence[:1].upper() + sentence[1:] + "."
    return answer


# --------------------------------------------------------------------------- state


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.script = validate_script({})
        self.attempts: dict[str, int] = {}
        self.log: list[dict[str, Any]] = []
        self.replies: dict[int, int] = {}  # answers used per replies rule

    def replace(self, script: dict[str, Any]) -> None:
        with self.lock:
            self.script = script
            self.attempts = {}
            self.log = []
            self.replies = {}

    def reply(self, model: Any, messages: list[dict[str, Any]]) -> tuple[str, list[int]] | None:
        with self.lock:
            return reply_for(self.script, model, messages, self.replies)

    def register(
        self, model: Any, messages: Any, task: str | None, *, endpoint: str = "chat", prompt: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        with self.lock:
            attempt = None
            if task is not None:
                attempt = self.attempts[task] = self.attempts.get(task, 0) + 1
            entry = {
                "t": time.time(),
                "endpoint": endpoint,
                "model": model,
                "messages": messages,
                "status": None,
                "task": task,
                "attempt": attempt,
                "fault": None,
            }
            if endpoint != "chat":
                entry["prompt"] = prompt
            self.log.append(entry)
            return self.script, entry

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return copy.deepcopy(self.log)


# --------------------------------------------------------------------------- HTTP


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = "rate_limit_error" if status == 429 else "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "code": None}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in one write: with the default unbuffered writes the client's delayed ACK
    # (Nagle) adds about 40 ms to every answer, which would distort every latency this server simulates.
    wbufsize = -1
    disable_nagle_algorithm = True
    server_version = "FakeLLM/1.0"
    server: FakeLLMServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.verbose:
            super().log_message(format, *args)

    # ---- plumbing
    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True  # the client gave up (e.g. its timeout fired)

    def _json_body(self) -> Any:
        raw = self._read_body()
        return json.loads(raw) if raw.strip() else {}

    # ---- routes
    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        if path == "/_health":
            self._send_json(200, {"ok": True})
        elif path == "/_log":
            self._send_json(200, self.server.state.snapshot())
        else:
            self._send_json(404, {"error": {"message": f"no route GET {path}", "type": "not_found", "code": None}})

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        if path == "/_script":
            try:
                script = validate_script(self._json_body())
            except (ValueError, TypeError) as exc:
                self._send_json(400, {"ok": False, "error": str(exc)})
                return
            self.server.state.replace(script)
            self._send_json(200, {"ok": True})
        elif path in ("/v1/chat/completions", "/chat/completions"):
            self._chat()
        elif path in ("/v1/completions", "/completions"):
            self._completions()
        elif path == "/tokenize":
            self._tokenize()
        else:
            self._read_body()
            self._send_json(404, {"error": {"message": f"no route POST {path}", "type": "not_found", "code": None}})

    def _chat(self) -> None:
        state = self.server.state
        try:
            request = self._json_body()
            if not isinstance(request, dict):
                raise ValueError("body must be a JSON object")
        except ValueError as exc:
            _, entry = state.register(None, None, None)
            entry["status"] = 400
            self._send_json(400, error_body(400, f"invalid JSON body: {exc}"))
            return
        model = request.get("model")
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            _, entry = state.register(model, messages, None)
            entry["status"] = 400
            self._send_json(400, error_body(400, "messages must be a non-empty list"))
            return
        if request.get("stream"):
            _, entry = state.register(model, messages, None)
            entry["status"] = 400
            self._send_json(400, error_body(400, "the fake LLM does not stream"))
            return

        task = task_key(messages)
        script, entry = state.register(model, messages, task)
        rule = self._fault(script, entry, task, "chat")
        if rule is FAILED:
            return

        content: str
        mode = script["mode"]
        canned = None if rule and "malformed" in rule else state.reply(model, messages)
        if rule and "malformed" in rule:
            entry["fault"] = "malformed"
            content = str(rule["malformed"])
        elif canned is not None:
            content, entry["reply"] = canned
        elif mode == "echo":
            content = last_user_text(messages)
        else:
            answer = judge_answer(script, messages, task) if mode == "judge" else generate_answer(script, model, messages)
            if answer is None:
                entry["fault"] = "no proposals found"
                content = "no proposals found"
            else:
                if rule and rule.get("missing_key"):
                    entry["fault"] = f"missing_key {rule['missing_key']}"
                    answer.pop(rule["missing_key"], None)
                content = json.dumps(answer)

        prompt_tokens = sum(words_of(content_text(m.get("content"))) for m in messages if isinstance(m, dict))
        completion_tokens = words_of(content)
        payload = {
            "id": f"chatcmpl-fake-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop", "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        entry["status"] = int(HTTPStatus.OK)
        self._send_json(200, payload)

    def _fault(self, script: dict[str, Any], entry: dict[str, Any], task: str, endpoint: str) -> Any:
        """Apply the scripted latency and the first matching failure rule: the rule, or FAILED once an error was sent."""
        rule = next(
            (r for r in script["failures"] if rule_matches(r, task, entry["attempt"], endpoint, entry.get("model"))), None
        )
        if script["latency"] > 0:
            time.sleep(script["latency"])
        if rule and rule.get("sleep"):
            entry["fault"] = f"sleep {rule['sleep']}"
            time.sleep(float(rule["sleep"]))
        if rule and "status" in rule and int(rule["status"]) != 200:
            status = int(rule["status"])
            headers = {}
            if rule.get("retry_after") is not None:
                retry_after = float(rule["retry_after"])
                headers["Retry-After"] = f"{retry_after:g}"
                headers["retry-after-ms"] = str(int(round(retry_after * 1000)))
            entry["fault"] = f"status {status}"
            entry["status"] = status
            message = "Rate limit reached (fake)" if status == 429 else f"Fake error {status}"
            self._send_json(status, error_body(status, message), headers)
            return FAILED
        return rule

    def _model_request(self, endpoint: str) -> tuple[dict[str, Any], dict[str, Any], Any] | None:
        """Read a completions or tokenize request: (script, log entry, failure rule), or None once answered."""
        state = self.server.state
        try:
            request = self._json_body()
            if not isinstance(request, dict):
                raise ValueError("body must be a JSON object")
        except ValueError as exc:
            _, entry = state.register(None, None, None, endpoint=endpoint)
            entry["status"] = 400
            self._send_json(400, error_body(400, f"invalid JSON body: {exc}"))
            return None
        prompt = request.get("prompt")
        if not isinstance(prompt, str):
            _, entry = state.register(request.get("model"), None, None, endpoint=endpoint, prompt=prompt)
            entry["status"] = 400
            self._send_json(400, error_body(400, "prompt must be a string (the fake LLM takes no token lists)"))
            return None
        task = hashlib.sha1(f"{endpoint}\x00{prompt}".encode()).hexdigest()[:16]
        script, entry = state.register(request.get("model"), None, task, endpoint=endpoint, prompt=prompt)
        rule = self._fault(script, entry, task, endpoint)
        if rule is FAILED:
            return None
        ids = toy_lm.tokenize(prompt)
        limit = script["completions"]["max_model_len"]
        if len(ids) > limit:
            entry["status"] = 400
            self._send_json(
                400,
                error_body(
                    400,
                    f"This model's maximum context length is {limit} tokens. "
                    f"However, you requested {len(ids)} tokens in the prompt.",
                ),
            )
            return None
        return request, entry, rule

    def _tokenize(self) -> None:
        script = self.server.state.script
        if not script["completions"]["tokenize"]:
            try:
                request = self._json_body()
            except ValueError:
                request = None
            request = request if isinstance(request, dict) else {}
            _, entry = self.server.state.register(
                request.get("model"), None, None, endpoint="tokenize", prompt=request.get("prompt")
            )
            entry["status"] = 404
            self._send_json(404, {"detail": "Not Found"})  # what a server without the route answers
            return
        read = self._model_request("tokenize")
        if read is None:
            return
        request, entry, _ = read
        payload = tokenize_payload(request, script["completions"]["max_model_len"])
        entry["status"] = 200
        self._send_json(200, payload)

    def _completions(self) -> None:
        read = self._model_request("completions")
        if read is None:
            return
        request, entry, rule = read
        script = self.server.state.script
        raw_logits = script["completions"]["logprobs_mode"].endswith("_logits")
        choice, ids, generated = completion_choice(request, raw_logits)
        if rule and "malformed" in rule:
            entry["fault"] = "malformed"
            choice.update({"text": str(rule["malformed"]), "logprobs": None})
            choice.pop("prompt_logprobs", None)
        elif rule and rule.get("missing_key"):
            entry["fault"] = f"missing_key {rule['missing_key']}"
            choice.pop(rule["missing_key"], None)
        payload = {
            "id": f"cmpl-fake-{uuid.uuid4().hex[:24]}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": request.get("model"),
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(ids),
                "completion_tokens": len(generated),
                "total_tokens": len(ids) + len(generated),
            },
        }
        entry["status"] = 200
        self._send_json(200, payload)


FAILED = object()  # a failure rule answered the request with an error status


class FakeLLMServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True

    def __init__(self, port: int = 0, verbose: bool = False) -> None:
        self.state = State()
        self.verbose = verbose
        super().__init__(("127.0.0.1", port), Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if self.verbose:
            super().handle_error(request, client_address)


def _watch_parent(pid: int, server: FakeLLMServer) -> None:
    while True:
        time.sleep(0.5)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass
        if os.getppid() == 1 and pid != 1:
            os._exit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", help="write the chosen port here once listening")
    parser.add_argument("--parent-pid", type=int, help="exit when this process is gone")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)

    server = FakeLLMServer(args.port, verbose=args.verbose)
    port = server.server_address[1]
    if args.port_file:
        tmp = f"{args.port_file}.tmp{os.getpid()}"
        with open(tmp, "w") as handle:
            handle.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    if args.parent_pid:
        threading.Thread(target=_watch_parent, args=(args.parent_pid, server), daemon=True).start()
    print(f"fake LLM listening on http://127.0.0.1:{port}/v1", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
