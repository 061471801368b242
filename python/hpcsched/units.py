"""Quantities as people read them."""

from __future__ import annotations

MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0


def duration_text(seconds: float) -> str:
    """A span of time in the unit that reads best, at most one decimal: ``90 s``,
    ``90 min``, ``24 h``, ``36 h``, ``3 d``, ``2.5 d`` (seconds below 2 minutes, minutes below
    2 hours, hours below 2 days, then days)."""
    if seconds < 2 * MINUTE:
        return f"{seconds:.0f} s"
    if seconds < 2 * HOUR:
        return f"{seconds / MINUTE:.0f} min"
    value, unit = (seconds / HOUR, "h") if seconds < 2 * DAY else (seconds / DAY, "d")
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"
