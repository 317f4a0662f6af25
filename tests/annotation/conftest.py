"""Fixtures of the annotation tests: a small formal study on the release sample for the two annotators."""

from __future__ import annotations

import pytest

from .helpers import client_for, make_study


@pytest.fixture
def study(imported, annotator, annotator2):  # noqa: ANN001, ANN201
    """2 contexts (12 real pairs) + 1 hidden control, seen by ann and bob."""
    return make_study(imported, [annotator, annotator2])


@pytest.fixture
def ann_client(annotator):  # noqa: ANN001, ANN201
    return client_for(annotator)


@pytest.fixture
def bob_client(annotator2):  # noqa: ANN001, ANN201
    return client_for(annotator2)
