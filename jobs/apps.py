from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the run kinds (judge, generation) and the "pairs" judging task kind with the engine.
        from . import services  # noqa: F401
