from __future__ import annotations

from django.apps import AppConfig


class Lit2TestWebConfig(AppConfig):
    """The project itself as an app: its system checks (the deployment's secret key, say)."""

    name = "lit2test_web"
    verbose_name = "Lit2Test Web"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the project's system checks)
