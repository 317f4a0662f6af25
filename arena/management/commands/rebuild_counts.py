from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, connections

from arena.counts import counts_rebuild


class Command(BaseCommand):
    help = (
        "Reinstall the triggers that keep the benchmark list's counts and count every benchmark afresh (migrate and "
        "flush do it too): after a restore with triggers disabled, or to repair counts found wrong."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--database",
            default=DEFAULT_DB_ALIAS,
            choices=list(connections),
            help="the database alias (default: %(default)s)",
        )

    def handle(self, *args: object, database: str, **options: object) -> None:
        if not counts_rebuild(using=database):
            raise CommandError(
                f"database {database!r}: no counts to rebuild; run `manage.py migrate` (arena 0011 makes the counts "
                "table) on PostgreSQL or SQLite"
            )
        self.stdout.write(f"database {database!r}: count triggers reinstalled and every benchmark counted afresh")
