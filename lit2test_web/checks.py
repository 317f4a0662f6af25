from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.security, deploy=True)
def secret_key_is_not_the_dev_key(app_configs, **kwargs):  # noqa: ANN001, ANN003, ANN201
    if settings.SECRET_KEY == settings.DEV_SECRET_KEY:
        return [
            Error(
                "SECRET_KEY is the development key.",
                hint="Set the SECRET_KEY environment variable to a long random value.",
                id="lit2test.E001",
            )
        ]
    return []
