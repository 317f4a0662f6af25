from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReconstructionConfig(AppConfig):
    """Reconstruction (PROTOCOL.md §3; issue 13): recovering a paper's idea from its frozen pre-publication
    bibliography. Its benchmarks are ``arena.Benchmark`` rows with ``protocol = "reconstruction"``; seeds, references,
    frozen bibliographies, hypotheses and match labels live in this app's tables."""

    name = "reconstruction"
    verbose_name = "Reconstruction"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Prompts, the match and Swiss judging kinds and the proposer runs join the engine; the protocol joins the
        # registry (jobs/ never imports this app).
        from arena.models import JudgeRun, Participant
        from arena.protocols import Figure, ProtocolSpec, RunOption, RunType, protocol_register
        from jobs.elicitation import elicit_kind_register
        from jobs.subjects import subjects_register

        from .judging import MATCH, SWISS
        from .models import PROTOCOL, BibliographyFreeze, Hypothesis, ProposerRun, SeedPaper, SwissSelection
        from .prompts import prompts_register
        from .runs import KIND as PROPOSERS

        prompts_register()
        subjects_register(MATCH)
        subjects_register(SWISS)
        elicit_kind_register(PROPOSERS)
        family = RunOption(
            "judge_family",
            _("Judge family"),
            _("Reconstruction match runs: the judge's model family. The judge recuses on hypotheses of its own family."),
            required=_(
                "A Reconstruction match run needs the judge's model family: the judge recuses on its own family's hypotheses."
            ),
        )
        protocol_register(
            ProtocolSpec(
                name=PROTOCOL,
                label="Reconstruction",
                run_types=(
                    RunType("match", _("match (Reconstruction: Match / No-match per hypothesis)"), MATCH.name, (family,)),
                ),
                selection_help=_("all · domain:NAME · system:NAME · sample:N (hypotheses to match-judge)"),
                benchmark_page="reconstruction:benchmark",
                figures=(
                    Figure.counting(_("Seed papers"), SeedPaper),
                    Figure.counting(
                        _("Frozen"), BibliographyFreeze, "seed__benchmark", help=_("seed papers with a frozen bibliography")
                    ),
                    Figure.counting(_("Systems"), Participant, help=_("proposer models and Swiss selections")),
                    Figure.counting(_("Hypotheses"), Hypothesis, "seed__benchmark"),
                    Figure.counting(_("Judge runs"), JudgeRun),
                    Figure.counting(_("Proposer runs"), ProposerRun),
                    Figure.counting(_("Swiss selections"), SwissSelection),
                ),
                urls="reconstruction.urls",
                import_command="import_reconstruction",
                report_command="reconstruction_report",
            )
        )
