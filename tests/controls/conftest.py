"""Fixtures for the controls tests.

Celery runs eagerly here (its own in-process mode, as in tests/jobs/conftest.py): ``run_judge … --pairs controls``
then executes its run against the scripted judge before the command returns, instead of putting a message on a
broker for no worker to take. Tests marked ``services`` keep the configured broker.
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
