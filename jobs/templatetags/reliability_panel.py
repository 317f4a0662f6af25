"""``{% run_reliability run as panel %}``: the judge-reliability document of a run for its page
(``templates/jobs/_reliability.html``), the same document the command's ``--json`` and the API give."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.simple_tag
def run_reliability(run: Any) -> dict[str, Any]:  # noqa: ANN401
    from jobs.reliability import run_reliability as build  # numpy loads with the first panel drawn

    return build(run)


@register.filter
def ci_text(ci: list[float] | None) -> str:
    """``[0.123, 0.456]``, three decimals as the command prints them; "" without an interval."""
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
