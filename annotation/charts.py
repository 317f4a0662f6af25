"""Geometry of the study page's scatter (judge BT strength against human win rate), computed server-side."""

from __future__ import annotations

from dataclasses import dataclass

from arena.formatting import MINUS


@dataclass(frozen=True)
class ScatterPoint:
    model: str
    x: float
    y: float
    strength: float
    win_rate: float
    label_x: float
    anchor: str
    label_dy: int = -9


@dataclass(frozen=True)
class Scatter:
    width: int
    height: int
    left: int
    top: int
    right: int
    bottom: int
    mid_y: float
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    points: list[ScatterPoint]


def scatter_plot(
    strengths: dict[str, float], win_rates: dict[str, float], *, width: int = 560, height: int = 360
) -> Scatter | None:
    """One dot per model present in both: x = judge BT strength, y = human win rate on [0, 1]."""
    models = [m for m in strengths if m in win_rates]
    if not models:
        return None
    left, right, top, bottom = 56, width - 20, 16, height - 44
    xs = [strengths[m] for m in models]
    lo, hi = min(xs + [0.0]), max(xs + [0.0])
    pad = (hi - lo) * 0.12 or 0.5
    lo, hi = lo - pad, hi + pad

    def sx(v: float) -> float:
        return round(left + (v - lo) / (hi - lo) * (right - left), 1)

    def sy(v: float) -> float:
        return round(bottom - v * (bottom - top), 1)

    step = 0.5 if hi - lo <= 4 else 1.0
    k0 = int(lo / step) - 1
    x_ticks = [(sx(k * step), f"{k * step:g}".replace("-", MINUS)) for k in range(k0, k0 + 40) if lo <= k * step <= hi]
    y_ticks = [(sy(v / 4), f"{v / 4:g}") for v in range(5)]
    points: list[ScatterPoint] = []
    for m in sorted(models, key=lambda m: strengths[m]):
        x, y = sx(strengths[m]), sy(win_rates[m])
        right_half = x > (left + right) / 2
        # Labels of neighbouring dots alternate above and below so they do not overwrite each other.
        crowded = bool(points) and abs(points[-1].x - x) < 110 and abs(points[-1].y - y) < 24 and points[-1].label_dy < 0
        points.append(
            ScatterPoint(
                m,
                x,
                y,
                strengths[m],
                win_rates[m],
                x - 9 if right_half else x + 9,
                "end" if right_half else "start",
                18 if crowded else -9,
            )
        )
    return Scatter(width, height, left, top, right, bottom, (top + bottom) / 2, x_ticks, y_ticks, points)
