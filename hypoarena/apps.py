from __future__ import annotations

from django.apps import AppConfig


class HypoArenaConfig(AppConfig):
    """HypoArena (PROTOCOL.md §2; issue 12): hypothesis-set arenas with 5-level verdicts. Its benchmarks are
    ``arena.Benchmark`` rows with ``protocol = "hypoarena"``; its domains, cases, submissions, matches, verdicts and
    rubric scores live in this app's tables, so no Lit2Test count, fit or page can see them."""

    name = "hypoarena"
    verbose_name = "HypoArena"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The judge prompts join the engine's registry, and the arena and rubric judging task kinds (and the
        # generation run kind) register with the run engine: jobs/ never imports this app.
        from . import generation, judging  # noqa: F401
        from .prompts import prompts_register

        prompts_register()
