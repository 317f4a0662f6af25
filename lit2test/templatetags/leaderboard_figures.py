"""Strengths on the leaderboard's chosen scale (:mod:`arena.stats.scales`): ``{{ x|strength:figures }}`` and
``{{ ci|strength_ci:figures }}``, where ``figures`` is the view's ``"<scale>:<decimals>"`` (``"log-ability:2"`` →
``−0.73``, ``[−0.86, −0.61]``; ``"elo:0"`` → ``1718``, ``[1698, 1741]``). Ratings are written without a thousands
separator, as HypoArena writes them: inside an interval, ``[1,619, 1,755]`` reads as four numbers."""

from __future__ import annotations

from collections.abc import Sequence

from django import template

from lit2test.readers import rank_delta_text, rank_interval_text, rank_set_text, se_text, strength_ci_text, strength_text

register = template.Library()


@register.filter
def strength(value: float | None, figures: str = "log-ability:2") -> str:
    return strength_text(value, figures)


@register.filter
def strength_ci(value: Sequence[float | None] | None, figures: str = "log-ability:2") -> str:
    return strength_ci_text(value, figures)


@register.filter
def rank_interval(value: Sequence[int] | None) -> str:
    return rank_interval_text(value)


@register.filter
def se(value: float | None, figures: str = "log-ability:2") -> str:
    return se_text(value, figures)


@register.filter
def rank_set(value: Sequence[int] | None) -> str:
    return rank_set_text(value)


@register.filter
def rank_delta(value: int | None) -> str:
    return rank_delta_text(value)
