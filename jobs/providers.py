"""Where answers come from: an OpenAI-compatible endpoint, or a replay of stored judgments.

The API key is read from the environment variable the run names; it is never stored,
rendered or logged.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from django.conf import settings

from .parsing import storable

if TYPE_CHECKING:
    import httpx

CONNECTIONS_PER_POOL = 8
ENCODED_MEMORY = 4096  # request encodings a provider remembers at most (a driver claims twice its concurrency)
KEEPALIVE_SECONDS = 5.0  # httpx's default: an idle connection is dropped after this


class TransientError(Exception):
    """Worth retrying after a pause: 429, 5xx, timeouts, dropped connections."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentError(Exception):
    """Retrying will not help: 4xx other than 429, a bad model name, a missing key."""


class ApiKeyMissing(PermanentError):
    """The environment variable a run names for its API key is not set in this process."""


@dataclass
class Completion:
    text: str
    latency_seconds: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Provider(Protocol):
    replay: bool

    async def complete(self, *, messages: list[dict[str, str]], task: tuple[int, str] | None = None) -> Completion: ...

    async def close(self) -> None: ...


def api_key_env_allowed(variable: str) -> bool:
    """Only variables meant to hold model-endpoint keys may be named: naming SECRET_KEY or DATABASE_URL
    would send the server's own secrets to whatever base URL the run was given."""
    return re.fullmatch(settings.LIT2TEST_API_KEY_ENV_PATTERN, variable) is not None


def api_key_from_env(variable: str | None) -> str:
    if not variable:
        return "not-needed"  # local servers (vLLM, Ollama, llama.cpp) accept any key
    if not api_key_env_allowed(variable):
        raise PermanentError(
            f"{variable!r} is not an API-key variable: names must match {settings.LIT2TEST_API_KEY_ENV_PATTERN} "
            "(set LIT2TEST_API_KEY_ENV_PATTERN to change the rule)"
        )
    value = os.environ.get(variable)
    if not value:
        raise ApiKeyMissing(f"the environment variable {variable} named for the API key is not set")
    return value


class OpenAICompatibleProvider:
    """Chat completions over keep-alive connection pools, one set per driver.

    Not the ``openai`` package: its request building and response models cost about a third of a driver's CPU
    (issue 10), and a judge needs one POST and three fields of the answer. Nor httpx's client around the pools: its
    request and response models, URL merging, auth, cookie and redirect layers cost a third of what a call cost in
    the client (issue 25); the POST goes straight to httpcore's pool, which httpx itself sends through. Where the
    environment names an HTTP proxy (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``) the calls go through httpx as
    before, which honours it. The error classes keep the client's meaning: timeouts, dropped connections, 429 and
    5xx are transient (with the server's Retry-After), other 4xx are permanent.
    """

    replay = False

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None,
        temperature: float | None,
        max_tokens: int | None,
        timeout: float,
        connections: int = 100,
    ) -> None:
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.headers = {
            "Authorization": f"Bearer {api_key_from_env(api_key_env)}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "lit2test-web",
        }
        # httpcore's pool looks at every connection it holds on every request (and polls each idle socket), so
        # one pool of 128 connections cost 12 ms of CPU per call: calls are spread over pools of a few each.
        # Redirects are not followed: a POST must not turn into a GET elsewhere.
        shards = max(1, math.ceil(max(1, connections) / CONNECTIONS_PER_POOL))
        # The JSON of recent requests, by their messages: the call cache's key (``jobs.call_cache``) and the call itself
        # read one encoding, made when the task is claimed (a long prompt's JSON costs ~0.1 ms a time).
        self._encoded: dict[tuple[tuple[str, str], ...], str] = {}
        self.transport = _proxied_transport(self.url, self.headers, timeout, shards) or _PoolTransport(
            self.url, self.headers, timeout, shards
        )

    def request_body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """What a call sends: the model, the messages and every sampling parameter. The call cache (``jobs.call_cache``)
        keys answers on it, so a parameter added here is part of the key at once."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def request_json(self, messages: list[dict[str, str]]) -> str:
        """The JSON a call sends: :meth:`request_body` with sorted keys, compact, UTF-8 text as it is (what the call
        cache's key is made of). Remembered for a while by the messages' roles and contents."""
        if not all(len(m) == 2 and "role" in m and "content" in m for m in messages):
            return canonical_json(self.request_body(messages))
        key = tuple((m["role"], m["content"]) for m in messages)
        text = self._encoded.get(key)
        if text is None:
            text = canonical_json(self.request_body(messages))
            if len(self._encoded) >= ENCODED_MEMORY:
                self._encoded.clear()
            self._encoded[key] = text
        return text

    async def complete(self, *, messages: list[dict[str, str]], task: tuple[int, str] | None = None) -> Completion:
        body = self.request_json(messages).encode()
        started = time.perf_counter()
        status, retry_header, content = await self.transport.post(body)
        if transient_status(status):
            try:
                retry_after = float(retry_header) if retry_header is not None else None
            except ValueError:
                retry_after = None
            raise TransientError(f"HTTP {status}", retry_after=retry_after)
        if status >= 300:
            raise PermanentError(f"HTTP {status}: {shorten(error_message(content))}")
        latency = time.perf_counter() - started
        try:
            data = json.loads(content)
            choices = data.get("choices") or []
            message = ((choices[0] or {}).get("message") if choices else None) or {}
            text = message.get("content") or ""
            usage = data.get("usage") or {}
        except (ValueError, AttributeError, TypeError) as exc:
            raise PermanentError(
                f"the endpoint's answer is not a chat completion ({type(exc).__name__}): "
                f"{shorten(content.decode(errors='replace'))}"
            ) from None
        return Completion(
            text=storable(text if isinstance(text, str) else json.dumps(text)),
            latency_seconds=latency,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )

    async def close(self) -> None:
        await self.transport.close()


class _PoolTransport:
    """POSTs to one URL over httpcore connection pools (round robin): the request line, headers and timeouts are
    made once, each call sends its body and reads the whole answer. Sends what httpx sent but ``Accept-Encoding``
    (an answer is read as sent: a server that compresses anyway is decoded, gzip or deflate)."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float, shards: int) -> None:
        import httpcore
        import httpx

        from arena.asyncio_network import certifi_tls, connection_pool

        self.httpcore = httpcore
        parsed = httpx.URL(url)  # the same parsing (and refusals) as httpx's
        self.url = httpcore.URL(scheme=parsed.raw_scheme, host=parsed.raw_host, port=parsed.port, target=parsed.raw_path)
        self.headers = [(b"Host", parsed.netloc), *((k.encode(), v.encode()) for k, v in headers.items())]
        self.extensions = {"timeout": {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}}
        # TLS as httpx sets it up by default (certifi's roots), one setup shared by every connection of every pool; a
        # deployment naming its own roots goes through httpx.
        self.tls = certifi_tls() if parsed.scheme == "https" else None
        self.pools = [
            connection_pool(tls=self.tls, max_keepalive_connections=CONNECTIONS_PER_POOL * 2, keepalive_expiry=KEEPALIVE_SECONDS)
            for _ in range(shards)
        ]
        self._next = itertools.cycle(self.pools)

    async def post(self, body: bytes) -> tuple[int, str | None, bytes]:
        """(status, Retry-After header or None, the answer's bytes); raises TransientError when no answer came."""
        httpcore = self.httpcore
        try:
            response = await next(self._next).request(
                b"POST",
                self.url,
                headers=[*self.headers, (b"Content-Length", str(len(body)).encode())],
                content=body,
                extensions=self.extensions,
            )
        except httpcore.TimeoutException:
            raise TransientError("the endpoint timed out") from None
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError, httpcore.UnsupportedProtocol) as exc:
            raise TransientError(f"connection failed: {type(exc).__name__}") from None
        retry_after = encoding = None
        for name, value in response.headers:
            lowered = name.lower()
            if lowered == b"retry-after":
                retry_after = value.decode("latin-1")
            elif lowered == b"content-encoding":
                encoding = value.decode("latin-1").strip().lower()
        content = response.content
        # A 429 or 5xx is retried whatever its body says (the caller does not read it): decoded only when it is read.
        if encoding and encoding != "identity" and not transient_status(response.status):
            content = decoded_body(content, encoding, response.status)
        return response.status, retry_after, content

    async def close(self) -> None:
        for pool in self.pools:
            await pool.aclose()


def transient_status(status: int) -> bool:
    """429 and 5xx: worth retrying after a pause."""
    return status == 429 or status >= 500


def decoded_body(content: bytes, encoding: str, status: int = 200) -> bytes:
    """An answer a server compressed though it was not asked to: gzip or deflate (zlib or raw). One that does not
    decode as its Content-Encoding says is a PermanentError naming the status, the encoding and zlib's complaint."""
    import zlib

    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise PermanentError(
            f"the endpoint answered HTTP {status} in an encoding this client does not read: {encoding!r} "
            "(only gzip and deflate are decoded)"
        )
    try:
        if encoding != "deflate":
            return zlib.decompress(content, 16 + zlib.MAX_WBITS)
        try:
            return zlib.decompress(content)
        except zlib.error:
            return zlib.decompress(content, -zlib.MAX_WBITS)
    except zlib.error as exc:
        raise PermanentError(
            f"the endpoint's HTTP {status} answer says Content-Encoding {encoding!r} but does not decode as that "
            f"({exc}): {shorten(repr(content[:100]))}"
        ) from None


class _HttpxTransport:
    """POSTs through httpx's clients, for endpoints reached through a proxy the environment names."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float, shards: int) -> None:
        import httpx

        self.httpx, self.url, self.headers = httpx, url, headers
        self.clients = [
            httpx.AsyncClient(
                timeout=timeout,
                follow_redirects=False,
                limits=httpx.Limits(
                    max_connections=None, max_keepalive_connections=CONNECTIONS_PER_POOL * 2, keepalive_expiry=KEEPALIVE_SECONDS
                ),
            )
            for _ in range(shards)
        ]
        self._next = itertools.cycle(self.clients)

    async def post(self, body: bytes) -> tuple[int, str | None, bytes]:
        """As :meth:`_PoolTransport.post`: (status, Retry-After header or None, the answer's bytes); raises TransientError
        when no answer came, PermanentError when an answer does not decode as its Content-Encoding says."""
        httpx = self.httpx
        client = next(self._next)
        try:
            # Streamed, so that the status is known before the body is decoded (httpx decodes as it reads).
            response = await client.send(client.build_request("POST", self.url, content=body, headers=self.headers), stream=True)
            try:
                return response.status_code, response.headers.get("retry-after"), await self._body(response)
            finally:
                await response.aclose()
        except httpx.TimeoutException:
            raise TransientError("the endpoint timed out") from None
        except httpx.TransportError as exc:
            raise TransientError(f"connection failed: {type(exc).__name__}") from None

    async def _body(self, response: httpx.Response) -> bytes:
        """The answer's bytes, decoded by httpx as its Content-Encoding says. A 429 or 5xx is retried whatever its body
        says (the caller does not read it), so it is read undecoded, as the pool transport leaves it; any other answer
        that does not decode is a PermanentError naming the status, the encoding and httpx's complaint, as there."""
        if transient_status(response.status_code):
            return b"".join([chunk async for chunk in response.aiter_raw()])
        try:
            return await response.aread()
        except self.httpx.DecodingError as exc:
            encoding = response.headers.get("content-encoding", "")
            raise PermanentError(
                f"the endpoint's HTTP {response.status_code} answer says Content-Encoding {encoding!r} but does not decode "
                f"as that ({exc})"
            ) from None

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()


def _proxied_transport(url: str, headers: dict[str, str], timeout: float, shards: int) -> _HttpxTransport | None:
    """httpx's clients when the environment names a proxy for this URL's scheme (or for all) or its own TLS roots
    (``SSL_CERT_FILE``, ``SSL_CERT_DIR``), or the URL carries credentials, else None: httpx then applies its own rules
    (``NO_PROXY``, basic auth from the URL), as it did for every call before."""
    import urllib.request

    import httpx

    parsed = httpx.URL(url)
    proxies = urllib.request.getproxies()
    own_roots = parsed.scheme == "https" and (os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"))
    if proxies.get(parsed.scheme) or proxies.get("all") or parsed.userinfo or own_roots:
        return _HttpxTransport(url, headers, timeout, shards)
    return None


def canonical_json(value: Any) -> str:  # noqa: ANN401
    """Sorted keys, no spaces, text as it is: one spelling for one value (the call cache keys on it)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def error_message(content: bytes) -> str:
    """The message of an OpenAI-style error body (``{"error": {"message": ...}}``), else the body itself."""
    try:
        data = json.loads(content)
    except ValueError:
        return content.decode(errors="replace")
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return json.dumps(error)


def shorten(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class RecordedProvider:
    """Answers each ordered task with the verdict a stored run gave it: a replay, never a call."""

    replay = True

    def __init__(self, *, answers: dict[tuple[int, str], dict[str, Any]]) -> None:
        """``answers``: the stored run's answer to each ordered task, keyed by (subject id, order); its task kind
        builds them (``jobs.subjects.JudgeSubjects.recorded``)."""
        self.answers = answers

    async def complete(self, *, messages: list[dict[str, str]], task: tuple[int, str] | None = None) -> Completion:
        if task is None or task not in self.answers:
            raise PermanentError("the recorded run has no verdict for this task")
        return Completion(text=json.dumps(self.answers[task]), latency_seconds=0.0, prompt_tokens=0, completion_tokens=0)

    async def close(self) -> None:
        return None
