"""Where answers come from: an OpenAI-compatible endpoint, or a replay of stored judgments.

The API key is read from the environment variable the run names; it is never stored,
rendered or logged.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings

from arena.models import JudgeRun, OrderedJudgment


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
    replay = False

    def __init__(self, *, base_url: str, model: str, api_key_env: str | None, temperature: float | None,
                 max_tokens: int | None, timeout: float) -> None:
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        import openai  # imported on use: the client library is slow to import for every page

        # Our own retry loop backs off and counts attempts; the client's must not retry too.
        self.client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key_from_env(api_key_env), max_retries=0, timeout=timeout)

    async def complete(self, *, messages: list[dict[str, str]], task: tuple[int, str] | None = None) -> Completion:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        import openai

        started = time.perf_counter()
        try:
            response = await self.client.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            raise TransientError("the endpoint timed out") from None
        except openai.APIConnectionError as exc:
            raise TransientError(f"connection failed: {type(exc).__name__}") from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status == 429 or status >= 500:
                header = exc.response.headers.get("retry-after")
                try:
                    retry_after = float(header) if header is not None else None
                except ValueError:
                    retry_after = None
                raise TransientError(f"HTTP {status}", retry_after=retry_after) from None
            raise PermanentError(f"HTTP {status}: {_short(exc.message)}") from None
        latency = time.perf_counter() - started
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content if choice and choice.message else None) or ""
        usage = response.usage
        return Completion(
            text=text,
            latency_seconds=latency,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )

    async def close(self) -> None:
        await self.client.close()


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class RecordedProvider:
    """Answers each ordered task with the verdict a stored run gave it: a replay, never a call."""

    replay = True

    def __init__(self, *, source_run: JudgeRun) -> None:
        self.answers: dict[tuple[int, str], dict[str, Any]] = {}
        for j in OrderedJudgment.objects.filter(run=source_run, status="accepted").select_related("pair"):
            shown_a_id = j.pair.participant_a_id if j.order == "original" else j.pair.participant_b_id
            winner = "tie" if j.is_tie else ("A" if j.winner_id == shown_a_id else "B")
            self.answers[(j.pair_id, j.order)] = {
                "winner": winner,
                "confidence": j.confidence or "medium",
                "main_reason": j.main_reason or f"replayed from run {source_run.pk}",
                "weakness_a": j.weakness_a,
                "weakness_b": j.weakness_b,
            }

    async def complete(self, *, messages: list[dict[str, str]], task: tuple[int, str] | None = None) -> Completion:
        if task is None or task not in self.answers:
            raise PermanentError("the recorded run has no verdict for this task")
        return Completion(text=json.dumps(self.answers[task]), latency_seconds=0.0, prompt_tokens=0, completion_tokens=0)

    async def close(self) -> None:
        return None
