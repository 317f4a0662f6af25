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
from typing import Any, Protocol

from django.conf import settings

CONNECTIONS_PER_POOL = 8


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
    """Chat completions over one keep-alive httpx client per driver.

    Not the ``openai`` package: its request building and response models cost about a third of a driver's CPU
    (issue 10), and a judge needs one POST and three fields of the answer. The error classes keep the client's
    meaning: timeouts, dropped connections, 429 and 5xx are transient (with the server's Retry-After), other
    4xx are permanent.
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
        import httpx

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
        self.clients = [
            httpx.AsyncClient(
                timeout=timeout,
                follow_redirects=False,
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=CONNECTIONS_PER_POOL * 2),
            )
            for _ in range(shards)
        ]
        self._next = itertools.cycle(self.clients)

    def request_body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """What a call sends: the model, the messages and every sampling parameter. The call cache (``jobs.call_cache``)
        keys answers on it, so a parameter added here is part of the key at once."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    async def complete(self, *, messages: list[dict[str, str]], task: tuple[int, str] | None = None) -> Completion:
        import httpx

        body = self.request_body(messages)
        started = time.perf_counter()
        try:
            response = await next(self._next).post(self.url, content=json.dumps(body).encode(), headers=self.headers)
        except httpx.TimeoutException:
            raise TransientError("the endpoint timed out") from None
        except httpx.TransportError as exc:
            raise TransientError(f"connection failed: {type(exc).__name__}") from None
        status = response.status_code
        if status == 429 or status >= 500:
            header = response.headers.get("retry-after")
            try:
                retry_after = float(header) if header is not None else None
            except ValueError:
                retry_after = None
            raise TransientError(f"HTTP {status}", retry_after=retry_after)
        if status >= 300:
            raise PermanentError(f"HTTP {status}: {shorten(error_message(response.content))}")
        latency = time.perf_counter() - started
        try:
            data = json.loads(response.content)
            choices = data.get("choices") or []
            message = ((choices[0] or {}).get("message") if choices else None) or {}
            text = message.get("content") or ""
            usage = data.get("usage") or {}
        except (ValueError, AttributeError, TypeError) as exc:
            raise PermanentError(
                f"the endpoint's answer is not a chat completion ({type(exc).__name__}): {shorten(response.text)}"
            ) from None
        return Completion(
            text=text if isinstance(text, str) else json.dumps(text),
            latency_seconds=latency,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()


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
