"""Reads of diagnostic controls, for the judge integration, the report and the review page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet

from arena.aliases import Matcher, redact_content
from arena.blindness import benchmark_matcher, proposal_blind_content
from arena.models import Benchmark

from .models import ControlVariant


def benchmark_controls(
    *,
    benchmark: Benchmark,
    kinds: Sequence[str] | None = None,
    statuses: Sequence[str] | None = (ControlVariant.Status.APPROVED,),
) -> QuerySet[ControlVariant]:
    """The benchmark's variants (by default the approved ones: those a judge run may include), with their context
    and source proposal, in control-id order. ``statuses=None`` gives every status."""
    found = ControlVariant.objects.filter(benchmark=benchmark).select_related("context", "source__participant")
    if kinds is not None:
        found = found.filter(kind__in=list(kinds))
    if statuses is not None:
        found = found.filter(status__in=list(statuses))
    return found.order_by("control_id")


def control_case_key(variant: ControlVariant) -> str:
    """The statistics' resampling unit for a variant (``arena.stats.controls``, column ``case``): its source proposal
    and its target, or its kind when it has none. The subtle and the sham variant of one source and target share a
    key, so a case bootstrap moves them together."""
    return f"{variant.source_id}:{variant.target or variant.kind}"


def control_blind_texts(
    *, variant: ControlVariant, matcher: Matcher | None = None
) -> tuple[dict[str, Any], dict[str, Any] | str]:
    """What a blind judge sees of a control pair: the clean source's blind content, and the variant's content (or
    prose) with every model alias of the benchmark redacted, exactly as proposals are (``arena.blindness``).

    A variant is text derived from a proposal, so it can carry the source model's name; it is redacted when read,
    with the benchmark's aliases as they are then. Pass ``matcher`` (``benchmark_matcher``) when reading many.
    """
    matcher = matcher or benchmark_matcher(benchmark_id=variant.benchmark_id)
    clean = proposal_blind_content(variant.source, matcher=matcher)
    if variant.kind == ControlVariant.Kind.RENDERING:
        return clean, redact_content({"prose": variant.prose}, matcher).content["prose"]
    return clean, redact_content(variant.content or {}, matcher).content
