from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class IntrinsicConfig(AppConfig):
    """Intrinsic scoring (PROTOCOL.md §4; issue 14): rank a paper's candidate hypotheses by a language model's own
    surprisal over the hypothesis tokens, against a prompted listwise judge. Its benchmarks are ``arena.Benchmark``
    rows with ``protocol = "intrinsic"``; papers, candidates, scorers and their results live in this app's tables."""

    name = "intrinsic"
    verbose_name = "Intrinsic scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The listwise prompt and judging kind and the scoring run kind join the engine (scoring runs then show on the
        # runs page); the protocol joins the registry (jobs/ never imports this app).
        from arena.models import JudgeRun
        from arena.protocols import Figure, ProtocolSpec, RunType, protocol_register
        from jobs.kinds import run_kind_register
        from jobs.subjects import subjects_register

        from .listwise import LISTWISE
        from .models import PROTOCOL, Candidate, IntrinsicScoringRun, Paper, Scorer
        from .prompts import prompts_register
        from .scoring import SCORING

        prompts_register()
        subjects_register(LISTWISE)
        run_kind_register(SCORING)
        protocol_register(
            ProtocolSpec(
                name=PROTOCOL,
                label="Intrinsic scoring",
                run_types=(
                    RunType(
                        "listwise", _("listwise (Intrinsic scoring: the judge's top 5 of a paper's candidates)"), LISTWISE.name
                    ),
                ),
                selection_help=_("all · discipline:NAME · sample:N (papers to rank)"),
                benchmark_page="intrinsic:benchmark",
                figures=(
                    Figure.counting(_("Papers"), Paper),
                    Figure.counting(_("Candidates"), Candidate, "paper__benchmark"),
                    Figure.counting(_("Scorers"), Scorer, help=_("a model with a criterion, or a listwise judge")),
                    Figure.counting(_("Scoring runs"), IntrinsicScoringRun),
                    Figure.counting(_("Judge runs"), JudgeRun, help=_("listwise judge runs")),
                ),
                urls="intrinsic.urls",
                import_command="import_intrinsic",
                report_command="intrinsic_report",
            )
        )
