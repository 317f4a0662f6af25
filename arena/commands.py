from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from .numbers import whole_number


class VersionedBenchmarkCommand(BaseCommand):
    """A command whose ``--version`` names a benchmark version, not Django's version."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: object) -> CommandParser:
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)


def seed_argument(raw: str) -> int:
    """An argparse ``type`` for a command's ``--seed``: a whole number from 0 to the API's largest seed (numpy's generators
    take no negative seed, and a seed is stored with what it made), else the option's error naming the value."""
    from argparse import ArgumentTypeError

    from .apis import MAX_SEED

    value = raw.strip()
    if not (whole_number(value)) or int(value) > MAX_SEED:
        raise ArgumentTypeError(f"{raw!r}: a seed is a whole number from 0 to {MAX_SEED}")
    return int(value)
