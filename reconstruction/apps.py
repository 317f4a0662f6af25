from __future__ import annotations

from django.apps import AppConfig


class ReconstructionConfig(AppConfig):
    """Reconstruction (PROTOCOL.md §3; issue 13): recovering a paper's idea from its frozen pre-publication
    bibliography. Its benchmarks are ``arena.Benchmark`` rows with ``protocol = "reconstruction"``; seeds, references,
    frozen bibliographies, hypotheses and match labels live in this app's tables."""

    name = "reconstruction"
    verbose_name = "Reconstruction"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The prompts join the engine's registry; the match and Swiss judging task kinds and the proposer run kind
        # register with the run engine (jobs/ never imports this app).
        from . import judging, runs, swiss  # noqa: F401
        from .prompts import prompts_register

        prompts_register()
