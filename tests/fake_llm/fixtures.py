"""pytest fixtures for the fake LLM server.

Import into a conftest:  ``from tests.fake_llm.fixtures import fake_llm, fake_llm_server  # noqa: F401``
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fake_llm import FakeLLM


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[FakeLLM]:
    """One server process per test session (per xdist worker)."""
    server = FakeLLM.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_llm(fake_llm_server: FakeLLM) -> FakeLLM:
    """The session server with the default script (prefer_field judge) and an empty log."""
    fake_llm_server.script()
    return fake_llm_server
