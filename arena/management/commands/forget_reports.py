from __future__ import annotations

from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandParser

from arena.caching import stored_forget


class Command(BaseCommand):
    help = (
        "Forget the report documents kept in the database (leaderboards, human win rates). Reports are keyed on the data "
        "they read and the code that computes them; after editing data by hand (a shell, SQL), run this with --cache so "
        "the next read computes them afresh."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--cache",
            action="store_true",
            help="also clear the whole cache (cached reports; live runs re-take their rate-limit slots; sessions stay)",
        )

    def handle(self, *args: object, **options: object) -> None:
        rows = stored_forget()
        said = f"forgot {rows} stored report document(s)"
        if options.get("cache"):
            cache.clear()
            said += " and cleared the cache"
        else:
            said += "; cached copies expire within 7 days (--cache clears them now)"
        self.stdout.write(said + ": the next reads compute them afresh")
