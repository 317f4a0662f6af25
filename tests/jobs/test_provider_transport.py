"""The chat provider's lean HTTP path (issue 25: httpcore's pool on asyncio's streams, no httpx client in between)
sends what the endpoint expects and reads what it answers, keeps connections alive across calls, and steps aside for
httpx where the environment names a proxy. Against the scripted fake endpoint; no database."""

from __future__ import annotations

import asyncio
import gzip
import zlib

import pytest

from jobs.providers import OpenAICompatibleProvider, PermanentError, TransientError, decoded_body

USER = "=== PROPOSAL A ===\n[hypothesis]\nünïcode — one\n\n=== PROPOSAL B ===\n[hypothesis]\ntwo\n=== END ===\n\nWhich?"
MESSAGES = [{"role": "system", "content": "judge"}, {"role": "user", "content": USER}]


def provider(base_url: str, **extra: object) -> OpenAICompatibleProvider:
    options = {"model": "judge-x", "api_key_env": None, "temperature": 0.0, "max_tokens": 50, "timeout": 5.0}
    return OpenAICompatibleProvider(base_url=base_url, **(options | extra))  # type: ignore[arg-type]


async def calls(p: OpenAICompatibleProvider, n: int) -> list:
    try:
        return [await p.complete(messages=MESSAGES) for _ in range(n)]
    finally:
        await p.close()


def test_calls_send_the_request_and_read_the_answer(fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(judge={"policy": "always_a"})
    answers = asyncio.run(calls(provider(fake_llm.base_url), 3))
    assert [a.text.count('"winner"') for a in answers] == [1, 1, 1]
    assert all(a.prompt_tokens and a.completion_tokens for a in answers)
    log = fake_llm.log()
    assert len(log) == 3
    assert {entry["model"] for entry in log} == {"judge-x"}
    assert log[0]["messages"] == MESSAGES


def test_a_server_error_is_transient_and_a_client_error_permanent(fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"attempts": [1], "status": 503}])
    with pytest.raises(TransientError, match="HTTP 503"):
        asyncio.run(calls(provider(fake_llm.base_url), 1))
    fake_llm.script(failures=[{"attempts": "all", "status": 400}])
    with pytest.raises(PermanentError, match="HTTP 400"):
        asyncio.run(calls(provider(fake_llm.base_url), 1))


def test_a_closed_port_is_a_transient_connection_failure() -> None:
    with pytest.raises(TransientError, match="connection failed: ConnectError"):
        asyncio.run(calls(provider("http://127.0.0.1:9/v1"), 1))


def test_a_proxy_the_environment_names_is_used(fake_llm, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """httpx honoured HTTP_PROXY; so must the provider: here the proxy is a closed port, so the call cannot get through
    (without the proxy it would reach the fake endpoint)."""
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    with pytest.raises(TransientError, match="connection failed"):
        asyncio.run(calls(provider(fake_llm.base_url), 1))
    assert fake_llm.log() == []


def test_a_compressed_answer_is_read() -> None:
    body = b'{"choices": []}'
    assert decoded_body(gzip.compress(body), "gzip") == body
    assert decoded_body(zlib.compress(body), "deflate") == body
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert decoded_body(raw.compress(body) + raw.flush(), "deflate") == body
    with pytest.raises(PermanentError, match="'br'"):
        decoded_body(body, "br")
