from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ArenaConfig(AppConfig):
    name = "arena"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # After every migrate and flush: reinstall the benchmark count triggers (a migration remaking a table on
        # SQLite drops them) and recount (flush on SQLite leaves wrong counts); see arena.counts.counts_rebuild.
        # The same for the run change counter's triggers (arena.versions), on which cached leaderboards are keyed.
        from .counts import counts_after_migrate
        from .versions import versions_after_migrate

        post_migrate.connect(counts_after_migrate, sender=self, dispatch_uid="arena.counts.counts_after_migrate")
        post_migrate.connect(versions_after_migrate, sender=self, dispatch_uid="arena.versions.versions_after_migrate")
