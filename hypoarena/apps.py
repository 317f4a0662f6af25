from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HypoArenaConfig(AppConfig):
    """HypoArena (PROTOCOL.md §2; issue 12): hypothesis-set arenas with 5-level verdicts. Its benchmarks are
    ``arena.Benchmark`` rows with ``protocol = "hypoarena"``; its domains, cases, submissions, matches, verdicts and
    rubric scores live in this app's tables, so no Lit2Test count, fit or page can see them."""

    name = "hypoarena"
    verbose_name = "HypoArena"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Prompts, the arena and rubric judging kinds and the generation runs join the engine; the protocol joins the
        # registry that forms, run_judge, the dashboard and the URLconf read. jobs/ never imports this app.
        from arena.models import JudgeRun, Participant
        from arena.protocols import Figure, Link, ProtocolSpec, RunType, protocol_register
        from jobs.elicitation import elicit_kind_register
        from jobs.prompts import prompt_register
        from jobs.subjects import subjects_register

        from .generation import KIND as GENERATION
        from .generation import TEMPLATE as GENERATION_TEMPLATE
        from .judging import ARENA, RUBRIC
        from .models import PROTOCOL, Case, Domain, GenerationRun, Match, Submission
        from .prompts import prompts_register

        prompts_register()
        prompt_register(GENERATION_TEMPLATE)
        subjects_register(ARENA)
        subjects_register(RUBRIC)
        elicit_kind_register(GENERATION)
        protocol_register(
            ProtocolSpec(
                name=PROTOCOL,
                label="HypoArena",
                run_types=(
                    RunType("arena", _("arena (HypoArena: 5-level A≫B … B≫A)"), ARENA.name),
                    RunType("rubric", _("rubric (HypoArena: 1–5 per criterion)"), RUBRIC.name),
                ),
                selection_help=_("all · domain:NAME · sample:N (matches, or submissions for a rubric run)"),
                benchmark_page="hypoarena:benchmark",
                links=(
                    Link(_("Leaderboard"), "hypoarena:leaderboard", "hypoarena-leaderboard-link"),
                    Link(_("Inter-judge agreement"), "hypoarena:agreement", "hypoarena-agreement-link"),
                ),
                figures=(
                    Figure.counting(_("Domains"), Domain),
                    Figure.counting(_("Cases"), Case),
                    Figure.counting(_("Models"), Participant, help=_("the models whose hypothesis sets compete")),
                    Figure.counting(
                        _("Submissions"), Submission, "case__benchmark", help=_("hypothesis sets, one per case and model")
                    ),
                    Figure.counting(_("Matches"), Match, "case__benchmark"),
                    Figure.counting(_("Judge runs"), JudgeRun),
                    Figure.counting(_("Generation runs"), GenerationRun),
                ),
                urls="hypoarena.urls",
                import_command="import_hypoarena",
                report_command="hypoarena_leaderboard",
            )
        )
