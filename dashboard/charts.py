"""Inline SVG geometry for the dashboard's charts, computed here so the templates only draw
(pages work without JavaScript). Pure Python, no Django.

The timeline is a polyline per series over a fixed viewBox: x spreads the days evenly across
the plot's width, y maps 0..max onto the plot's height (max at least 1, so an all-zero series
lies on the axis instead of dividing by zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 600
HEIGHT = 160
PAD = 24


@dataclass(frozen=True, slots=True)
class Series:
    label: str
    points: str  # SVG polyline points, "x,y x,y ..."
    total: int


@dataclass(frozen=True, slots=True)
class LineChart:
    width: int
    height: int
    series: list[Series]
    peak: int
    first_day: str
    last_day: str
    baseline: int


def _points(values: Sequence[int], peak: int) -> str:
    n = len(values)
    span_x = WIDTH - 2 * PAD
    span_y = HEIGHT - 2 * PAD
    step = span_x / (n - 1) if n > 1 else 0.0
    return " ".join(
        f"{PAD + i * step:.1f},{HEIGHT - PAD - span_y * v / peak:.1f}" for i, v in enumerate(values)
    )


def line_chart(days: Sequence[str], series: dict[str, Sequence[int]]) -> LineChart:
    """The timeline's polylines: one per named series, all on one y scale."""
    peak = max([1, *(v for values in series.values() for v in values)])
    return LineChart(
        width=WIDTH,
        height=HEIGHT,
        series=[
            Series(label=label, points=_points(values, peak), total=sum(values))
            for label, values in series.items()
        ],
        peak=peak,
        first_day=days[0] if days else "",
        last_day=days[-1] if days else "",
        baseline=HEIGHT - PAD,
    )


def percent_width(value: int, whole: int) -> int:
    """A bar's width in % of its track: value / whole, 0 when whole is 0, at most 100."""
    if whole <= 0:
        return 0
    return min(100, round(100 * value / whole))
