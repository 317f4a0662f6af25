from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser


class VersionedBenchmarkCommand(BaseCommand):
    """A command whose ``--version`` names a benchmark version, not Django's version."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: object) -> CommandParser:
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)
