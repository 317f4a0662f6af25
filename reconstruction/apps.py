from __future__ import annotations

from django.apps import AppConfig


class ReconstructionConfig(AppConfig):
    """Reconstruction (PROTOCOL.md §3; issue 13): recovering a paper's idea from its frozen pre-publication
    bibliography. Its benchmarks are ``arena.Benchmark`` rows with ``protocol = "reconstruction"``; seeds, references,
    frozen bibliographies, hypotheses and match labels live in this app's tables."""

    name = "reconstruction"
    verbose_name = "Reconstruction"
    default_auto_field = "django.db.models.BigAutoField"
