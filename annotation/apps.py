from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AnnotationConfig(AppConfig):
    """Human calibration (PROTOCOL.md §1): blind studies in which annotators label pairs of a benchmark's canonical
    pairs. It holds no benchmarks of its own; it supplies the human figures that leaderboards show beside a judge's."""

    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from arena.extensions import human_figures_register
        from arena.protocols import Link, ProtocolSpec, protocol_register
        from arena.registry import Lazy

        # Named, not imported: a Celery worker never shows a leaderboard (arena.registry.Lazy).
        human_figures_register("annotation", Lazy("annotation.caching.human_figures"))
        protocol_register(
            ProtocolSpec(
                name="annotation",
                label="Human calibration",
                holds_benchmarks=False,
                urls="annotation.urls",
                actions=(Link(_("Human calibration studies"), "annotation:studies"),),
            )
        )
