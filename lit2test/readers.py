"""What the leaderboard's readers get beside the statistics (issue 24, "Leaderboard readers"), the same on the page, in
``manage.py leaderboard --json`` and from the API: the scale the strengths are on (``--scale``, ``?scale=``) and when
the newest verdict in the figures was stored.

The document itself (:func:`arena.selectors.run_leaderboard`) stays on the log-ability scale and is cached as it is;
the scale is applied to a copy (:func:`arena.stats.scales.document_on_scale`), so switching it never refits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.cache import cache
from django.db.models import Max
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from arena import formatting
from arena.models import JudgeRun, OrderedJudgment
from arena.selectors import run_data_version

#: The scales, the default first (what the paper's Table 1 prints), with the switch's label for each. The names are
#: those of :data:`arena.stats.scales.SCALES` (kept here too so that a page need not load the statistics to list them).
SCALES = {
    "log-ability": _("Log-ability (BT strength)"),
    "elo": _("1500 scale (Elo-style)"),
}
DEFAULT_SCALE = "log-ability"
#: The words of the style-control section as a page prints them in the active language: the feature names and units
#: of :data:`arena.stats.style_leaderboard.STYLE_FEATURES` and its reasons for not fitting (the statistics, the JSON and
#: the command keep the English, which is also what :func:`style_word` gives for a word not listed here).
STYLE_WORDS = {
    "length": pgettext_lazy("style feature", "length"),
    "citations": pgettext_lazy("style feature", "citations"),
    "structure": pgettext_lazy("style feature", "structure"),
    "words": pgettext_lazy("style feature", "words"),
    "headers": pgettext_lazy("style feature", "headers"),
    "lists": pgettext_lazy("style feature", "lists"),
    "bold": pgettext_lazy("style feature", "bold"),
    "word": pgettext_lazy("style unit", "word"),
    "cited paper": pgettext_lazy("style unit", "cited paper"),
    "header, list item or bold span": pgettext_lazy("style unit", "header, list item or bold span"),
    "Markdown header": pgettext_lazy("style unit", "Markdown header"),
    "list item": pgettext_lazy("style unit", "list item"),
    "bold span": pgettext_lazy("style unit", "bold span"),
    "no judged case has the texts of both sides": _("no judged case has the texts of both sides"),
    "the texts of both sides are known in fewer than two contexts": _(
        "the texts of both sides are known in fewer than two contexts"
    ),
}


def scale_choice(value: object) -> str:
    """The scale a GET parameter or option names; the default for anything else (a page never fails on it)."""
    return value if isinstance(value, str) and value in SCALES else DEFAULT_SCALE


def style_choice(value: object, *, strict: bool = True) -> tuple[str, ...]:
    """The style features a ``--style-control`` option or a ``style_control`` parameter names (``"length,citations"``),
    () for none. ``strict`` raises a ValueError naming an unknown feature (the command, the API); otherwise the
    choice is dropped (a page never fails on it)."""
    from arena.stats.style_leaderboard import parse_style

    if not isinstance(value, str) or not value.strip():
        return ()
    try:
        return parse_style(value)
    except ValueError:
        if strict:
            raise
        return ()


def style_word(value: object) -> str:
    """A style feature's name, a unit or a reason of the style fit in the active language (:data:`STYLE_WORDS`)."""
    return str(STYLE_WORDS.get(value, value)) if isinstance(value, str) else str(value)


def style_words(values: Sequence[str]) -> str:
    """Style features' names in the active language, as a list is written in it (``length, citations``)."""
    return str(pgettext_lazy("list separator", ", ")).join(style_word(v) for v in values)


def figures_spec(scale: str, digits: int) -> str:
    """``"<scale>:<decimals>"`` for :func:`strength_text`: on the 1500 scale two fewer decimals than chosen for the
    log-ability (one rating point is 0.006 of log-ability: 2 decimals there read like whole rating points)."""
    return f"{scale}:{max(0, digits - 2) if scale == 'elo' else digits}"


def _spec(figures: str) -> tuple[str, int]:
    scale, _sep, digits = str(figures).partition(":")
    return scale, int(digits or 2)


def strength_text(value: float | None, figures: str) -> str:
    """One strength as the page and the command write it, on the scale and to the decimals ``figures`` names
    (:func:`figures_spec`). Ratings go without a thousands separator, as HypoArena writes them: inside an interval,
    ``[1,619, 1,755]`` reads as four numbers."""
    scale, digits = _spec(figures)
    text = formatting.number(value, digits)
    return text.replace(",", "") if scale == "elo" else text


def strength_ci_text(value: Sequence[float | None] | None, figures: str) -> str:
    """An interval of strengths, ``[lo, hi]`` (``—`` when there is none)."""
    if not value or value[0] is None or value[1] is None:
        return formatting.NONE
    return f"[{strength_text(value[0], figures)}, {strength_text(value[1], figures)}]"


def rank_interval_text(bounds: Sequence[int] | None) -> str:
    """A rank interval as ``1–2``, and ``1–1`` when every replicate gave one rank (``—`` when there is none)."""
    if not bounds:
        return formatting.NONE
    return f"{int(bounds[0])}–{int(bounds[1])}"


def run_last_updated(*, run: JudgeRun) -> dict[str, Any]:
    """When the newest accepted verdict of ``run`` was stored: ``{"judgment_stored_at": ISO 8601 or None, "runs":
    [run id]}``. One aggregate query, cached under the run's change counter (so it is exact whenever a verdict is
    written, and costs one indexed lookup otherwise)."""
    key = f"leaderboard:updated:v1:{run.pk}:{run_data_version(run=run)}"
    stored_at = cache.get(key)
    if stored_at is None:
        newest = OrderedJudgment.objects.filter(run=run, status=OrderedJudgment.Status.ACCEPTED).aggregate(t=Max("created_at"))
        stored_at = newest["t"].isoformat() if newest["t"] is not None else ""
        cache.set(key, stored_at, timeout=7 * 24 * 3600)
    return {"judgment_stored_at": stored_at or None, "runs": [run.pk]}


def se_text(value: float | None, figures: str) -> str:
    """A standard error (a width, no centre) as the page and the command write it: ``±0.08``, ``±13`` rating points."""
    return formatting.NONE if value is None else f"±{strength_text(value, figures)}"


def rank_set_text(bounds: Sequence[int] | None) -> str:
    """A simultaneous rank set as ``{1, 2}`` or ``{1}`` (ranks 1 to 2), written apart from a rank range's ``1–2`` so
    the two cannot be mistaken for each other; ``{1…3}`` for three or more ranks."""
    if not bounds:
        return formatting.NONE
    lo, hi = int(bounds[0]), int(bounds[1])
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo}, {hi}}}" if hi == lo + 1 else f"{{{lo}…{hi}}}"


def rank_delta_text(value: int | None) -> str:
    """A rank Δ (plain rank − style-controlled rank) with its sign: ``+2`` rises once style is controlled, ``−1``
    falls, ``0`` stays."""
    if value is None:
        return formatting.NONE
    return f"+{value}" if value > 0 else formatting.number(value, 0)


def leaderboard_for_readers(*, run: JudgeRun, document: dict[str, Any], scale: str = DEFAULT_SCALE) -> dict[str, Any]:
    """``document`` (the run's leaderboard) on ``scale``, with ``last_updated`` (:func:`run_last_updated`)."""
    from arena.stats.scales import document_on_scale

    return document_on_scale(document, scale_choice(scale)) | {"last_updated": run_last_updated(run=run)}
