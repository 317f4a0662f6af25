"""Geometry for the leaderboard's SVG plots, computed server-side (no JavaScript charting)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import formatting

#: The plots' drawing width in SVG units; the page scales them to the width of the content column.
FULL_WIDTH = 1100


@dataclass(frozen=True)
class ForestRow:
    model: str
    y: float
    x: float
    lo: float
    hi: float
    label: str


@dataclass(frozen=True)
class Forest:
    width: int
    height: int
    left: int
    zero_x: float
    ticks: list[tuple[float, str]]
    rows: list[ForestRow]


def forest_plot(
    doc: dict[str, Any],
    kind: str = "ordered",
    *,
    digits: int = 2,
    width: int = FULL_WIDTH,
    left: int = 190,
    row: int = 34,
    reference: float = 0.0,
    number: Callable[[float, int], str] = formatting.number,
    tick_digits: int | None = None,
) -> Forest | None:
    """Strengths of one fit with their 95% CIs on a shared axis, best model on top. The axis includes ``reference``
    (the dashed line, ``zero_x``: 0 on the log-ability scale, 1500 on the Elo-style one); ``number(value, digits)``
    writes every number; ``tick_digits`` fixes the tick labels' decimals (default: 2 below a step of 0.1, else 1)."""
    block = doc.get("bt", {}).get(kind) or {}
    models = [m for m in doc.get("models", []) if m in block]
    if not models:
        return None
    values = [v for m in models for v in (block[m]["strength"], *(block[m]["ci"] or [])) if v is not None]
    lo, hi = min(values + [reference]), max(values + [reference])
    pad = (hi - lo) * 0.08 or 0.5
    lo, hi = lo - pad, hi + pad
    plot = width - left - 20

    def sx(v: float) -> float:
        return round(left + (v - lo) / (hi - lo) * plot, 1)

    step = _nice_step((hi - lo) / 6)
    first = int(lo / step) - 1
    ticks = [
        (sx(k * step), number(k * step, tick_digits if tick_digits is not None else 2 if step < 0.1 else 1))
        for k in range(first, first + 40)
        if lo <= k * step <= hi
    ]
    rows = []
    for i, m in enumerate(models):
        s, ci = block[m]["strength"], block[m]["ci"] or [None, None]
        rows.append(
            ForestRow(
                model=m,
                y=30 + i * row,
                x=sx(s),
                lo=sx(ci[0]) if ci[0] is not None else sx(s),
                hi=sx(ci[1]) if ci[1] is not None else sx(s),
                label=number(s, digits) + (f" [{number(ci[0], digits)}, {number(ci[1], digits)}]" if ci[0] is not None else ""),
            )
        )
    return Forest(width=width, height=50 + len(models) * row, left=left, zero_x=sx(reference), ticks=ticks, rows=rows)


def _nice_step(raw: float) -> float:
    for step in (0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100):
        if step >= raw:
            return step
    # Beyond 100 (HypoArena's Elo-like ratings can spread over thousands when a fit separates): 1, 2 or 5 times a power of 10.
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


@dataclass(frozen=True)
class HeatCell:
    x: int
    y: int
    share: float | None
    fill: str
    text: str
    title: str
    text_x: int = 0
    text_y: int = 0


def heat_map(
    doc: dict[str, Any], *, width: int = FULL_WIDTH, cell_height: int = 60, left: int = 190, top: int = 40
) -> dict[str, Any] | None:
    """Folded head-to-head as a matrix: row model's share of decided stable cases against the column model."""
    models = doc.get("models", [])
    if len(models) < 2:
        return None
    cell = (width - left - 20) // len(models)
    pairs = {(h["a"], h["b"]): h for h in doc.get("head_to_head", [])}
    cells = []
    for r, row_model in enumerate(models):
        for c, col_model in enumerate(models):
            x, y = left + c * cell, top + r * cell_height
            centre = {"text_x": x + cell // 2, "text_y": y + cell_height // 2 + 5}
            if r == c:
                cells.append(HeatCell(x, y, None, "#eef1f6", formatting.NONE, row_model, **centre))
                continue
            h = pairs.get((row_model, col_model))
            wins, losses = (h["a_wins"], h["b_wins"]) if h else (0, 0)
            sensitive = h["sensitive"] if h else 0
            if not h and (col_model, row_model) in pairs:
                h = pairs[(col_model, row_model)]
                wins, losses, sensitive = h["b_wins"], h["a_wins"], h["sensitive"]
            share = wins / (wins + losses) if wins + losses else None
            cells.append(
                HeatCell(
                    x,
                    y,
                    share,
                    _diverging(share),
                    formatting.wlt(wins, losses, sensitive),
                    f"{row_model} vs {col_model}: {wins} stable wins, {losses} stable losses, {sensitive} order-sensitive",
                    **centre,
                )
            )
    return {
        "cells": cells,
        "cell": cell,
        "cell_height": cell_height,
        "left": left,
        "top": top,
        "models": models,
        "width": width,
        "height": top + cell_height * len(models) + 10,
        "col_labels": [(left + c * cell + cell // 2, m) for c, m in enumerate(models)],
        "row_labels": [(top + r * cell_height + cell_height // 2, m) for r, m in enumerate(models)],
    }


def _diverging(share: float | None) -> str:
    """Blue when the row model wins, red when it loses, white at parity."""
    if share is None:
        return "#f4f4f4"
    t = abs(share - 0.5) * 2
    base = (36, 86, 201) if share >= 0.5 else (179, 38, 30)
    r, g, b = (round(255 + (ch - 255) * t * 0.85) for ch in base)
    return f"#{r:02x}{g:02x}{b:02x}"


# --------------------------------------------------------------------------- estimates with intervals (controls page)


@dataclass(frozen=True)
class IntervalPoint:
    """One estimate of an interval plot: a row (``label``) of one ``series``, with its 95% CI as whiskers."""

    label: str
    series: str
    y: float
    x: float
    lo: float
    hi: float
    value: float
    ci: tuple[float, float] | None
    text: str
    shape: str  # "circle" or "square": the series are told apart by shape as well as colour
    colour: str


@dataclass(frozen=True)
class IntervalPlot:
    width: int
    height: int
    left: int
    top: int
    bottom: float
    zero_x: float
    ticks: list[tuple[float, str]]
    points: list[IntervalPoint]
    legend: list[tuple[str, str, str, int]]  # (series, shape, colour, x of its marker) in the order first met


#: Colours and shapes per series, in order of appearance; dark enough for text contrast on white (WCAG AA).
SERIES_STYLES = (("circle", "#2456c9"), ("square", "#b3261e"), ("circle", "#1f7a3d"))


def interval_plot(
    rows: list[tuple[str, str, float | None, Any]],
    *,
    domain: tuple[float, float] | None = None,
    digits: int = 2,
    width: int = FULL_WIDTH,
    left: int = 260,
    row: int = 30,
    top: int = 34,
    reference: float = 0.0,
    tick_digits: int | None = None,
    number: Callable[[float, int], str] = formatting.number,
) -> IntervalPlot | None:
    """Points with 95% CI whiskers on one horizontal axis, one line per ``(label, series, value, ci)`` row, in the
    order given; rows whose value is None are not drawn. The axis always includes ``reference`` (0 unless given: the
    plots read against it; ``zero_x`` is its position, where the dashed line goes); ``domain`` fixes it (values outside
    are clipped to its ends), otherwise it spans the values and intervals with a margin. ``tick_digits`` fixes the tick
    labels' decimals (default: 2 below a tick step of 0.1, else 1); ``number(value, digits)`` writes every number (default
    :func:`arena.formatting.number`; ratings around 1500 read better without a thousands separator). None when no row has
    a value."""
    drawn = [(label, series, float(value), _pair(ci)) for label, series, value, ci in rows if value is not None]
    if not drawn:
        return None
    if domain is None:
        values = [v for _, _, value, ci in drawn for v in (value, *(ci or ()))] + [reference]
        lo, hi = min(values), max(values)
        pad = (hi - lo) * 0.08 or 0.5
        lo, hi = lo - pad, hi + pad
    else:
        lo, hi = domain
    plot = width - left - 30

    def sx(v: float) -> float:
        return round(left + (min(max(v, lo), hi) - lo) / (hi - lo) * plot, 1)

    step = _nice_step((hi - lo) / 6)
    first = int(lo / step) - 1
    decimals = tick_digits if tick_digits is not None else 2 if step < 0.1 else 1
    ticks = [(sx(k * step), number(k * step, decimals)) for k in range(first, first + 60) if lo - 1e-9 <= k * step <= hi + 1e-9]
    styles: dict[str, tuple[str, str]] = {}
    points = []
    for i, (label, series, value, ci) in enumerate(drawn):
        shape, colour = styles.setdefault(series, SERIES_STYLES[len(styles) % len(SERIES_STYLES)])
        points.append(
            IntervalPoint(
                label=label,
                series=series,
                y=top + 10 + i * row,
                x=sx(value),
                lo=sx(ci[0]) if ci else sx(value),
                hi=sx(ci[1]) if ci else sx(value),
                value=value,
                ci=ci,
                text=number(value, digits) + (f" [{number(ci[0], digits)}, {number(ci[1], digits)}]" if ci else " (no CI)"),
                shape=shape,
                colour=colour,
            )
        )
    bottom = top + 10 + len(drawn) * row
    return IntervalPlot(
        width=width,
        height=int(bottom) + 44,
        left=left,
        top=top,
        bottom=bottom,
        zero_x=sx(reference),
        ticks=ticks,
        points=points,
        legend=[(series, shape, colour, left + i * 180) for i, (series, (shape, colour)) in enumerate(styles.items())],
    )


def _pair(ci: Any) -> tuple[float, float] | None:  # noqa: ANN401
    """A CI as two floats, or None when it is missing or has a missing end."""
    if not ci or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return None
    return float(ci[0]), float(ci[1])
