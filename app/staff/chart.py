"""The overview's chart, drawn on the server as SVG geometry.

No script draws it, so the strict CSP holds and the page works without JavaScript; colours
come from the stylesheet's classes. The numbers are also in a table beside it for screen
readers (the SVG itself is ``aria-hidden``).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.verifications.reports import Day

WIDTH, HEIGHT = 600, 200
# Room under the bars for the day labels, and above them for the top value.
BOTTOM, TOP = 24, 12
# Room at each side, so that a day label centred under the first or last bar fits.
SIDE = 20


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    verified_y: float
    verified_height: float
    failed_y: float
    failed_height: float
    label: str | None  # a day under every seventh bar, centred on it
    label_x: float
    title: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    baseline: float
    top_value: int
    bars: list[Bar]


def outcome_bars(days: list[Day]) -> Chart:
    """Stacked bars, verified below failed, scaled to the busiest day."""
    top_value = max((d.total for d in days), default=0) or 1
    plot = HEIGHT - BOTTOM - TOP
    slot = (WIDTH - 2 * SIDE) / max(len(days), 1)
    baseline = HEIGHT - BOTTOM
    bars = []
    for index, day in enumerate(days):
        verified = plot * day.verified / top_value
        failed = plot * day.failed / top_value
        bars.append(
            Bar(
                x=round(SIDE + index * slot + slot * 0.15, 2),
                width=round(slot * 0.7, 2),
                verified_y=round(baseline - verified, 2),
                verified_height=round(verified, 2),
                failed_y=round(baseline - verified - failed, 2),
                failed_height=round(failed, 2),
                label=day.day.strftime("%d %b") if (len(days) - 1 - index) % 7 == 0 else None,
                label_x=round(SIDE + index * slot + slot / 2, 2),
                title=f"{day.day.isoformat()}: {day.verified} verified, {day.failed} failed",
            )
        )
    return Chart(WIDTH, HEIGHT, baseline, top_value, bars)
