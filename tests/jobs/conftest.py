"""Fixtures for judge and generation runs.

Celery runs eagerly here (its own in-process mode, not a stand-in): a launch or resume inside a
transactional test would otherwise put a real message on whatever broker the settings name (the
filesystem broker under var/ by default) for no worker to take. Tests marked ``services`` talk to a
real Celery worker through Redis instead and keep the configured broker.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _celery_in_process(celery_in_process: None) -> None:
    """Every test here runs launched drivers in process (tests/conftest.py)."""
