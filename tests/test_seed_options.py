"""Every command's ``--seed`` takes a whole number from 0 to the API's largest seed, and says so naming the value
(a negative seed was numpy's "expected non-negative integer" traceback; a huge one failed where it was stored)."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from arena.commands import seed_argument

COMMANDS = [
    ("demo_study", []),
    ("generate_controls", ["some-benchmark"]),
    ("controls_report", ["some-benchmark"]),
    ("hypoarena_leaderboard", ["some-benchmark"]),
    ("hypoarena_agreement", ["some-benchmark"]),
    ("demo_hypoarena", []),
    ("intrinsic_score", ["some-benchmark"]),
    ("demo_intrinsic", []),
]


@pytest.mark.parametrize(("command", "positional"), COMMANDS)
@pytest.mark.parametrize("seed", ["-1", "4294967296", "1.5", "²", "seven"])
def test_a_seed_that_is_no_seed_is_refused_naming_the_option(command: str, positional: list[str], seed: str) -> None:
    with pytest.raises(CommandError) as caught:
        call_command(command, *positional, f"--seed={seed}", stdout=io.StringIO(), stderr=io.StringIO())
    message = str(caught.value)
    assert "--seed" in message and repr(seed) in message and "from 0 to 4294967295" in message


def test_the_ends_of_the_range_are_seeds() -> None:
    assert seed_argument("0") == 0 and seed_argument("4294967295") == 4294967295 and seed_argument(" 7 ") == 7
