from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ArenaConfig(AppConfig):
    name = "arena"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # After every migrate and flush: the triggers that keep the run change counter and the benchmark counts are
        # installed again (a migration remaking a table on SQLite drops them) and the counts counted afresh (flush on
        # SQLite leaves wrong ones); see arena.triggers.
        from .triggers import triggers_after_migrate

        post_migrate.connect(triggers_after_migrate, sender=self, dispatch_uid="arena.triggers.triggers_after_migrate")
