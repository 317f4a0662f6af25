from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class Lit2TestConfig(AppConfig):
    """Lit2Test (PROTOCOL.md §1): falsifiable research ideation. Its benchmarks hold the shared core's literature
    neighbourhoods, proposals and canonical pairs (``arena``); this app is the protocol: its judging kind over the
    canonical pairs, its prompts, its generation runs, its release import and export, its leaderboard and pages."""

    name = "lit2test"
    verbose_name = "Lit2Test"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from arena.models import CanonicalPair, Context, JudgeRun, Participant
        from arena.protocols import Figure, Link, ProtocolSpec, RunType, protocol_register
        from arena.registry import Lazy
        from jobs.elicitation import elicit_kind_register
        from jobs.subjects import subjects_register

        from .generation import KIND as GENERATION
        from .judging import PROTOCOL, pairs_kind
        from .models import GenerationRun
        from .prompts import prompts_register
        from .selectors import canonical_judges

        # The pages are named, not imported: lit2test.views (numpy, the statistics, the forms) loads at the first page,
        # never in a Celery worker (arena.registry.Lazy).
        prompts_register()
        pairs = subjects_register(pairs_kind(page=Lazy("lit2test.views.pairs_run_page")))
        elicit_kind_register(GENERATION)
        protocol_register(
            ProtocolSpec(
                name=PROTOCOL,
                label="Lit2Test",
                default=True,
                run_types=(
                    RunType("holistic", _("holistic (A / B / tie)"), pairs.name),
                    RunType("structured", _("structured (0–4 per dimension)"), pairs.name),
                ),
                selection_help="all · batch:NAME · sample:N",
                selection_option="--pairs",
                benchmark_view=Lazy("lit2test.views.benchmark_page"),
                links=(Link(_("Leaderboard"), "lit2test:leaderboard"), Link(_("Export (.zip)"), "lit2test:benchmark-export")),
                figures=(
                    Figure.counting(_("Contexts"), Context),
                    Figure.counting(
                        _("With text"),
                        Context,
                        has_text=True,
                        help=_("contexts whose literature text was imported: the ones judged"),
                    ),
                    Figure.counting(_("Participants"), Participant),
                    Figure.counting(_("Pairs"), CanonicalPair, help=_("canonical pairs")),
                    Figure.counting(_("Judge runs"), JudgeRun),
                    Figure.counting(_("Generation runs"), GenerationRun),
                    Figure(_("Canonical judge"), canonical_judges, numeric=False),
                ),
                urls="lit2test.urls",
                actions=(Link(_("Launch a generation run"), "lit2test:generation-new"),),
                panel=Lazy("lit2test.views.upload_panel"),
                panel_template="lit2test/dashboard_panel.html",
                new_version_url="lit2test:benchmark-new-version",
                import_command="import_lit2test",
                report_command="leaderboard",
            )
        )
        from jobs.signals import run_closed

        from .tasks import leaderboard_store_after_run

        run_closed.connect(leaderboard_store_after_run, dispatch_uid="lit2test.leaderboard_store_after_run")
