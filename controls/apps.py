from __future__ import annotations

from django.apps import AppConfig


class ControlsConfig(AppConfig):
    """Diagnostic controls (PROTOCOL.md §1): variants of real proposals that test the judge, kept apart from
    the leaderboard's data."""

    name = "controls"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The release export writes controls.jsonl through a hook, so that arena/ never imports this app.
        from arena.release import register_export

        from . import judging  # noqa: F401  (registers the "controls" judging task kind with the run engine)
        from .services import control_export_rows

        register_export("controls", control_export_rows)
