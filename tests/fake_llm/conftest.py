"""Make the fake LLM fixtures available to the server's own tests."""

from tests.fake_llm.fixtures import fake_llm, fake_llm_server  # noqa: F401
