"""``{% run_reliability run as panel %}``: the judge-reliability document of a run for its page
(``templates/jobs/_reliability.html``), the same document the command's ``--json`` and the API give."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.simple_tag
def run_reliability(run: Any) -> dict[str, Any]:  # noqa: ANN401
    """The run's document, cached under its verdicts' count and newest id (one indexed aggregate): a page drawn again
    without a new verdict costs no refit (the fit takes about a second at 112,000 verdicts)."""
    from django.core.cache import cache
    from django.db.models import Count, Max

    from jobs.reliability import run_reliability as build  # numpy loads with the first panel drawn
    from jobs.subjects import subjects_of

    stored = subjects_of(run).judgment_model.objects.filter(run=run).aggregate(n=Count("id"), newest=Max("id"))
    key = f"reliability:v1:{run.pk}:{run.created_at.timestamp():.6f}:{stored['n']}:{stored['newest']}"
    document = cache.get(key)
    if document is None:
        document = build(run)
        cache.set(key, document, timeout=7 * 24 * 3600)
    return document


@register.filter
def ci_text(ci: list[float] | None) -> str:
    """``[0.123, 0.456]``, three decimals as the command prints them; "" without an interval."""
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
