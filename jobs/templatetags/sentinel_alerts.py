"""``{% sentinel_alerts as alerts %}``: the judge configurations whose last sentinel check drifted and is not accepted,
for the dashboard's alert (``templates/jobs/_sentinel_alerts.html``, included by the dashboard)."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.simple_tag
def sentinel_alerts() -> list[dict[str, Any]]:
    from jobs.sentinels import sentinel_alerts as alerts

    return alerts()
