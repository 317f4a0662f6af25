"""Fixtures for judge and generation runs.

Celery runs eagerly here (its own in-process mode, not a stand-in): a launch or resume inside a
transactional test would otherwise put a real message on whatever broker the settings name (the
filesystem broker under var/ by default) for no worker to take. Tests marked ``services`` talk to a
real Celery worker through Redis instead and keep the configured broker.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _celery_in_process(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("services"):
        yield
        return
    from lit2test_web.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = previous
