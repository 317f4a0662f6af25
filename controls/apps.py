from __future__ import annotations

from django.apps import AppConfig


class ControlsConfig(AppConfig):
    """Diagnostic controls (PROTOCOL.md §1): variants of real proposals that test the judge, kept apart from
    the leaderboard's data. They extend Lit2Test benchmarks (``--pairs controls`` judges them) and hold none of their
    own."""

    name = "controls"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from arena.extensions import export_file_register, import_file_register
        from arena.protocols import ProtocolSpec, SelectionRoute, protocol_register
        from arena.registry import Lazy
        from jobs.subjects import subjects_register

        from .judging import CONTROLS_PREFIX, KIND

        subjects_register(KIND)
        # A Lit2Test release export writes controls.jsonl too, so that an export imports back with its controls.
        # Named, not imported (the import/export module and its LLM client load at the first export: arena.registry.Lazy).
        export_file_register("controls", Lazy("controls.import_export.control_export_rows"))
        import_file_register("controls", Lazy("controls.import_export.controls_import_line"))
        protocol_register(
            ProtocolSpec(
                name="controls",
                label="Diagnostic controls",
                holds_benchmarks=False,
                urls="controls.urls",
                routes=(
                    SelectionRoute(
                        protocol=KIND.protocol,
                        prefix=CONTROLS_PREFIX,
                        task_kind=KIND.name,
                        help="controls · controls:KIND,KIND (the approved diagnostic control variants against their clean "
                        "sources; never in a leaderboard)",
                    ),
                ),
            )
        )
