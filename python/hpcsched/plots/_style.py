"""What every figure shares: size and resolution, units and typography, policy colours, the
figure factory, category ticks and legends that fit, the log-hours axis, and PNG output."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

if TYPE_CHECKING:
    from hpcsched.run import Result


Color = tuple[float, float, float, float]

WIDTH_IN = 9.0
HEIGHT_IN = 4.5
DPI = 100
HOUR = 3600.0
DAY = 86400.0
TIME_LABEL = "Time since first submission (days)"
#: width of a character of 9-10 pt text, in pixels (a generous average)
CHAR_PX = 6.5
#: keeps a number and its unit on one line when tick labels are wrapped
NBSP = "\u00a0"
#: en dash for ranges in figure text
DASH = "\u2013"

# --- shared helpers ----------------------------------------------------------------------------


def _new_figure(
    nrows: int = 1,
    ncols: int = 1,
    *,
    height: float = HEIGHT_IN,
    **subplots: Any,
) -> tuple[Figure, np.ndarray]:
    """A stand-alone figure (no pyplot) and its axes as a 2-D array."""
    fig = Figure(figsize=(WIDTH_IN, height), dpi=DPI, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplots)
    return fig, axes


def _require_results(results: Mapping[str, Result]) -> None:
    if not results:
        raise ValueError("no results to plot: give at least one {label: Result}")


def _policy_colors(labels: Sequence[str]) -> dict[str, Color]:
    """One fixed colour per policy, in display order (tab10, tab20 beyond ten policies)."""
    cmap = colormaps["tab10" if len(labels) <= 10 else "tab20"]
    return {label: cmap(i % cmap.N) for i, label in enumerate(labels)}


def _started(result: Result) -> pd.DataFrame:
    jobs = result.jobs
    return jobs[jobs["start"].notna()]


def _axes_width_px(ax: Axes) -> float:
    """The axes' width in pixels, conservatively: the layout engine later trims it for
    outside legends and labels (by up to about a fifth)."""
    return 0.8 * float(ax.get_position().width * WIDTH_IN * DPI)  # figures are WIDTH_IN wide


def _set_category_ticks(ax: Axes, positions: Sequence[float], labels: Sequence[str]) -> None:
    """Category tick labels: as given when they fit side by side, else wrapped to the width of
    their slot, else on one slanted line in a smaller font."""
    ax.set_xticks(list(positions))
    slot_chars = int(_axes_width_px(ax) / max(len(labels), 1) / CHAR_PX) - 2  # keep a gap
    longest = max((len(line) for s in labels for line in s.split("\n")), default=0)
    if longest <= slot_chars:
        ax.set_xticklabels(labels)
    elif slot_chars >= 10:
        wrapped = [
            "\n".join(
                "\n".join(textwrap.wrap(line, slot_chars, break_long_words=False))
                for line in s.split("\n")
            )
            for s in labels
        ]
        ax.set_xticklabels(wrapped, fontsize=9)
    else:
        flat = [s.replace("\n", " · ") for s in labels]
        ax.set_xticklabels(flat, rotation=30, ha="right", rotation_mode="anchor", fontsize=8)


def _legend_columns(labels: Sequence[str], width_px: float = WIDTH_IN * DPI * 0.95) -> int:
    """How many legend entries fit side by side across the figure (9 pt text)."""
    entry_px = max((len(s) for s in labels), default=1) * CHAR_PX + 40  # text, patch, gap
    return max(1, min(len(labels), int(width_px // entry_px)))


def _hours_log_axis(ax: Axes, which: str = "y") -> None:
    """Log axis of hours (the y axis, or ``which="x"``) with plain numbers (0.01, 0.1, 1, 10)
    rather than powers of ten; when the data span three decades or less, 2 and 5 times each
    power are labelled too (0.2, 0.5), so that a reader can tell the values apart without
    counting grid lines."""
    axis: Axis = ax.xaxis if which == "x" else ax.yaxis
    if which == "x":
        ax.set_xscale("log")
    else:
        ax.set_yscale("log")
    low, high = axis.get_view_interval()
    narrow = low > 0 and np.log10(high / low) <= 3
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if narrow else (1.0,)))
    axis.set_major_formatter(FuncFormatter(_plain_number))
    axis.set_minor_formatter(NullFormatter())


def _plain_number(value: float, _pos: int | None = None) -> str:
    return f"{value:g}" if value < 1e5 else f"{value:.0e}"


def _pct(share: float) -> str:
    return f"{100 * share:.0f}{NBSP}%"


def _run_end(result: Result) -> float:
    """End of the run as the summary counts it: the energy horizon, else the makespan."""
    energy = result.info.get("energy") or {}
    return float(energy.get("horizon_seconds") or result.info.get("makespan") or 0.0)


def figure_to_png(fig: Figure) -> bytes:
    """The figure as PNG bytes at DPI dots per inch."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()
