"""The call cache's key is the same sha256 it always was (issue 25 builds its JSON around the request's own encoding,
which the call sends, instead of encoding the request twice): entries stored before still hit, and the key still
changes with everything that decides an answer. The reference is the key's definition written out: the sha256 of the
identity's JSON, sorted keys, no spaces, text as it is."""

from __future__ import annotations

import hashlib
import json

import pytest

from jobs.call_cache import KEY_VERSION, call_key
from jobs.providers import OpenAICompatibleProvider

USER = 'Context: "quoted", back\\slash, tab\t, newline\n, ünïcode — 通义, emoji 🙂, control \x01 and \u2028.'


def defined_key(*, url: str, body: dict, order: str, sample: int, template_version: str) -> str:
    identity = {"v": KEY_VERSION, "url": url.rstrip("/"), "request": body, "order": order, "sample": sample}
    identity["template"] = template_version
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(("temperature", "max_tokens"), [(None, None), (0.0, 800), (0.7, None), (None, 1)])
@pytest.mark.parametrize("order", ["original", "reverse", ""])
def test_the_key_is_the_defined_sha256_with_or_without_the_request_encoding(temperature, max_tokens, order: str) -> None:  # noqa: ANN001
    url = "http://127.0.0.1:9/v1/"
    provider = OpenAICompatibleProvider(
        base_url=url, model="Judge-ü 1", api_key_env=None, temperature=temperature, max_tokens=max_tokens, timeout=5
    )
    messages = [{"role": "system", "content": "Judge {A} \u00e9"}, {"role": "user", "content": USER}]
    body = provider.request_body(messages)
    expected = defined_key(url=url, body=body, order=order, sample=3, template_version="judge-holistic-v2")
    options = {"url": url, "body": body, "order": order, "sample": 3, "template_version": "judge-holistic-v2"}
    assert call_key(**options) == expected
    assert call_key(**options, request_json=provider.request_json(messages)) == expected
    assert call_key(**options, request_json=provider.request_json([dict(m) for m in messages])) == expected  # remembered
    # What the call sends is that same JSON: the request, as the endpoint reads it.
    assert json.loads(provider.request_json(messages).encode()) == body


def test_a_change_of_anything_that_decides_the_answer_changes_the_key() -> None:
    url = "http://h/v1"
    provider = OpenAICompatibleProvider(base_url=url, model="m", api_key_env=None, temperature=0.0, max_tokens=5, timeout=5)
    messages = [{"role": "user", "content": USER}]
    base = {"url": url, "order": "original", "sample": 0, "template_version": "t1"}
    key = call_key(**base, body=provider.request_body(messages), request_json=provider.request_json(messages))
    other_text = [{"role": "user", "content": USER + " "}]
    changed = [
        call_key(**base, body=provider.request_body(other_text), request_json=provider.request_json(other_text)),
        call_key(**(base | {"order": "reverse"}), body=provider.request_body(messages)),
        call_key(**(base | {"sample": 1}), body=provider.request_body(messages)),
        call_key(**(base | {"template_version": "t2"}), body=provider.request_body(messages)),
        call_key(**(base | {"url": "http://h/v2"}), body=provider.request_body(messages)),
    ]
    assert key not in changed and len(set(changed)) == len(changed)
