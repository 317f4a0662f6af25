"""Fixtures for the controls tests.

Celery runs eagerly here (its own in-process mode, as in tests/jobs/conftest.py): ``run_judge … --pairs controls``
then executes its run against the scripted judge before the command returns, instead of putting a message on a
broker for no worker to take. Tests marked ``services`` keep the configured broker.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _celery_in_process(celery_in_process: None) -> None:
    """Every test here runs launched drivers in process (tests/conftest.py)."""
