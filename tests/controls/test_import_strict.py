"""Strict import rules (issue 22, item 7): a control's declared ``provenance.generator`` and ``version`` are held to
their columns' lengths and refused when longer, never cut; the declared provenance as a whole has a limit. Each
problem names the file, line and field, what is wrong and the limit; nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from controls.models import ControlVariant

from . import helpers as h
from .test_import import failure, run

pytestmark = pytest.mark.django_db

# The columns' lengths (controls.models.ControlVariant): generator 200, generator_version 100; and the documented limit
# of the declared provenance's JSON text (controls.import_export): 10,000 characters.
GENERATOR_LIMIT = 200
VERSION_LIMIT = 100
PROVENANCE_LIMIT = 10_000
NOTES_JSON = '{"generator": "templates", "notes": ""}'  # the provenance below as JSON, without its notes


def test_a_megabyte_generator_is_refused_not_cut(imported, tmp_path: Path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    rows = [
        h.line(source, "falsifier_off"),
        h.line(source, "rendering", provenance={"generator": "g" * 1_000_000, "version": "1"}),
    ]
    message = failure(imported, h.write(tmp_path / "c.jsonl", rows))
    assert f"c.jsonl, line 2: provenance.generator: has 1000000 characters; the limit is {GENERATOR_LIMIT}" in message


@pytest.mark.parametrize(
    ("provenance", "expected"),
    [
        (
            {"generator": "g" * (GENERATOR_LIMIT + 1)},
            f"provenance.generator: has {GENERATOR_LIMIT + 1} characters; the limit is {GENERATOR_LIMIT}",
        ),
        (
            {"generator": "templates", "version": "v" * (VERSION_LIMIT + 1)},
            f"provenance.version: has {VERSION_LIMIT + 1} characters; the limit is {VERSION_LIMIT}",
        ),
        ({"generator": {"name": "templates"}}, "provenance.generator: must be text, got object"),
        (
            {"generator": "templates", "notes": "n" * PROVENANCE_LIMIT},
            f"provenance: has {len(NOTES_JSON) + PROVENANCE_LIMIT} characters of JSON; the limit is {PROVENANCE_LIMIT}",
        ),
    ],
    ids=["generator", "version", "generator-not-text", "whole-provenance"],
)
def test_provenance_values_beyond_their_limit_are_refused(imported, tmp_path: Path, provenance: dict, expected: str) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    row = h.line(source, "rendering", provenance=provenance)
    message = failure(imported, h.write(tmp_path / "c.jsonl", [row]))
    assert f"c.jsonl, line 1: {expected}" in message


def test_a_generator_and_version_at_their_limits_are_stored_whole(imported, tmp_path: Path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    generator, version = "g" * GENERATOR_LIMIT, "v" * VERSION_LIMIT
    row = h.line(source, "rendering", provenance={"generator": generator, "version": version})
    run(imported, h.write(tmp_path / "c.jsonl", [row]))
    stored = ControlVariant.objects.get()
    assert (stored.generator, stored.generator_version) == (generator, version)
    assert stored.provenance["declared"] == {"generator": generator, "version": version}
