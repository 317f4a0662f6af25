from __future__ import annotations

from django.apps import AppConfig


class IntrinsicConfig(AppConfig):
    """Intrinsic scoring (PROTOCOL.md §4; issue 14): rank a paper's candidate hypotheses by a language model's own
    surprisal over the hypothesis tokens, against a prompted listwise judge. Its benchmarks are ``arena.Benchmark``
    rows with ``protocol = "intrinsic"``; papers, candidates, scorers and their results live in this app's tables."""

    name = "intrinsic"
    verbose_name = "Intrinsic scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The listwise prompt joins the engine's registry; the listwise judging task kind and the scoring run kind
        # register with the run engine, and scoring runs join the runs page's table (jobs/ never imports this app).
        from jobs.views import run_listing_register

        from . import listwise, scoring  # noqa: F401
        from .prompts import prompts_register

        prompts_register()
        run_listing_register(scoring.scoring_runs_listed)
