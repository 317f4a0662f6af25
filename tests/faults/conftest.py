"""Fault tests run against a private deployment (``stack.Stack``): PostgreSQL and Redis of their own, real
workers started with the README's command. They need Debian's postgresql and redis-server; without them
they skip, unless LIT2TEST_REQUIRE_SERVICES is set (CI), where they fail instead."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .stack import Stack, missing_binaries


@pytest.fixture(scope="module")
def stack(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    missing = missing_binaries()
    if missing:
        message = f"fault tests need {', '.join(missing)} (Debian packages postgresql and redis-server)"
        if os.environ.get("LIT2TEST_REQUIRE_SERVICES"):
            pytest.fail(message)
        pytest.skip(message)
    deployment = Stack(release_dir, tmp_path_factory.mktemp("faults"))
    try:
        yield deployment
    finally:
        deployment.destroy()


@pytest.fixture
def fresh_stack(stack: Stack) -> Iterator[Stack]:
    """The module's deployment with every worker of the previous test stopped."""
    yield stack
    for worker in stack.workers:
        worker.stop()
    stack.workers.clear()
