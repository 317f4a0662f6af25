from __future__ import annotations

from django.apps import AppConfig


class IntrinsicConfig(AppConfig):
    """Intrinsic scoring (PROTOCOL.md §4; issue 14): rank a paper's candidate hypotheses by a language model's own
    surprisal over the hypothesis tokens, against a prompted listwise judge. Its benchmarks are ``arena.Benchmark``
    rows with ``protocol = "intrinsic"``; papers, candidates, scorers and their results live in this app's tables."""

    name = "intrinsic"
    verbose_name = "Intrinsic scoring"
    default_auto_field = "django.db.models.BigAutoField"
