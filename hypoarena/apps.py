from __future__ import annotations

from django.apps import AppConfig


class HypoArenaConfig(AppConfig):
    """HypoArena (PROTOCOL.md §2; issue 12): hypothesis-set arenas with 5-level verdicts. Its benchmarks are
    ``arena.Benchmark`` rows with ``protocol = "hypoarena"``; its domains, cases, submissions, matches, verdicts and
    rubric scores live in this app's tables, so no Lit2Test count, fit or page can see them."""

    name = "hypoarena"
    verbose_name = "HypoArena"
    default_auto_field = "django.db.models.BigAutoField"
