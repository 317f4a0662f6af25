"""A protocol written only for the tests, against the public engine API alone: one benchmark kind (items, each a
yes/no question), one judging kind (a judge answers each item once), a report (``toy_report [--json]`` and
``/api/benchmarks/<id>/toy/``), an import command, and its registration here. Nothing outside this folder names it:
the test settings install it, and the shared layers find it in the registries."""

from __future__ import annotations

from django.apps import AppConfig


class ToyProtocolConfig(AppConfig):
    name = "tests.toy_protocol"
    label = "toy_protocol"
    verbose_name = "Toy protocol (tests)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from arena.models import JudgeRun
        from arena.protocols import Figure, Link, ProtocolSpec, RunType, protocol_register
        from jobs.prompts import prompt_register
        from jobs.subjects import subjects_register

        from .judging import KIND, TEMPLATE
        from .models import PROTOCOL, Item

        prompt_register(TEMPLATE)
        subjects_register(KIND)
        protocol_register(
            ProtocolSpec(
                name=PROTOCOL,
                label="Toy protocol",
                run_types=(RunType(TEMPLATE.kind, "yes/no (toy protocol: one question per item)", KIND.name),),
                selection_help="all · topic:NAME · sample:N (items to ask)",
                benchmark_page="toy_protocol:benchmark",
                links=(Link("Toy report", "toy_protocol:benchmark", "toy-report-link"),),
                figures=(Figure.counting("Items", Item), Figure.counting("Judge runs", JudgeRun)),
                urls="tests.toy_protocol.urls",
                import_command="import_toy",
                report_command="toy_report",
            )
        )
