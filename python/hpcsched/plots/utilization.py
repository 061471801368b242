"""Utilization figures: per uptime window and in the 48 h before each maintenance
(MARS Figs. 13-14)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from hpcsched.plots._style import (
    DASH,
    DAY,
    NBSP,
    Color,
    _axes_width_px,
    _legend_columns,
    _new_figure,
    _policy_colors,
    _require_results,
    _set_category_ticks,
)

if TYPE_CHECKING:
    from hpcsched.run import Result


#: width of a character of 7 pt text (bar value labels), in pixels
LABEL_CHAR_PX = 5.0


# --- utilization -------------------------------------------------------------------------------


def _grouped_bars(
    ax: Axes,
    values: Mapping[str, Sequence[float | None]],
    colors: Mapping[str, Color],
    legend_labels: Mapping[str, str],
) -> None:
    """Bars grouped by index (x = 0, 1, ...), one bar per policy; ``None`` = no bar."""
    labels = list(values)
    width = 0.8 / len(labels)
    n_groups = max((len(v) for v in values.values()), default=0)
    annotate = n_groups * len(labels) <= 24
    # a lone group would stretch across the whole panel: keep room for three
    extra = max(0, 3 - n_groups) / 2
    ax.set_xlim(-0.5 - extra, n_groups - 0.5 + extra)
    bar_px = _axes_width_px(ax) / (n_groups + 2 * extra) * width * 0.95
    for k, label in enumerate(labels):
        heights = np.array([np.nan if v is None else 100 * v for v in values[label]], dtype=float)
        x = np.arange(len(heights)) - 0.4 + width * (k + 0.5)
        bars = ax.bar(
            x, heights, width=width * 0.95, color=colors[label], label=legend_labels[label]
        )
        if annotate:
            # one decimal (bars within a point of each other are told apart); labels wider
            # than their bar would run into the next one's: written upwards inside the bar
            texts = [f"{h:.1f}" if np.isfinite(h) else "" for h in heights]
            if max(map(len, texts), default=0) * LABEL_CHAR_PX <= bar_px:
                ax.bar_label(bars, labels=texts, fontsize=7, padding=1)
            else:
                for bar_x, height, text in zip(x, heights, texts, strict=True):
                    if text:
                        ax.annotate(
                            text,
                            (bar_x, height),
                            xytext=(0, -3),
                            textcoords="offset points",
                            rotation=90,
                            ha="center",
                            va="top",
                            fontsize=7,
                            color="white",
                        )


def _window_tick(index: int, start: float, end: float) -> str:
    return f"#{index + 1}\n{start / DAY:.1f}{DASH}{end / DAY:.1f} d"


def utilization_plot(results: Mapping[str, Result]) -> Figure:
    """Utilization (%) per uptime window and, when maintenance is scheduled, in the 48 h
    before each maintenance (MARS Figs. 13-14)."""
    _require_results(results)
    labels = list(results)
    colors = _policy_colors(labels)
    util = {label: r.info["utilization"] for label, r in results.items()}
    periods = {label: u["uptime_periods"] for label, u in util.items()}
    before = {label: u["before_maintenance"] for label, u in util.items()}
    has_maintenance = any(before.values())
    # panels as wide as their groups of bars (a lone group keeps room for three), so that a bar
    # is as wide in both and its value label reads the same way (upright, not rotated inside a
    # narrow panel's bars)
    slots = [max(3, max(len(p) for p in periods.values()))]
    if has_maintenance:
        slots.append(max(3, max(len(b) for b in before.values())))
    fig, axes = _new_figure(1, len(slots), width_ratios=slots if has_maintenance else None)
    legend_labels = {
        label: f"{label} (overall {_pct_or_dash(util[label]['overall_uptime'])})"
        for label in labels
    }

    ax = axes[0, 0]
    _grouped_bars(
        ax, {k: [p["utilization"] for p in v] for k, v in periods.items()}, colors, legend_labels
    )
    longest = max(labels, key=lambda label: len(periods[label]))
    window_ticks = [_window_tick(i, p["from"], p["to"]) for i, p in enumerate(periods[longest])]
    _set_numbered_ticks(ax, window_ticks)
    ax.set_xlabel("Uptime window (between whole-machine downtimes)")
    ax.set_ylabel("Utilization (% of available node-hours)")
    ax.set_title(
        "Utilization per uptime window"
        if len(window_ticks) > 1
        else "Utilization (no whole-machine downtime: one uptime window)"
    )

    if has_maintenance:
        ax2 = axes[0, 1]
        _grouped_bars(
            ax2,
            {k: [b["utilization"] for b in v] for k, v in before.items()},
            colors,
            legend_labels,
        )
        longest = max(labels, key=lambda label: len(before[label]))
        ticks = [
            f"#{i + 1}\nat {b['maintenance_start'] / DAY:.1f} d"
            for i, b in enumerate(before[longest])
        ]
        _set_numbered_ticks(ax2, ticks)
        ax2.set_xlabel("Scheduled maintenance")
        ax2.set_ylabel("Utilization (%)")
        ax2.set_title("48 h before each maintenance")
    shares = [
        100 * x
        for u in util.values()
        for x in [p["utilization"] for p in u["uptime_periods"]]
        + [b["utilization"] for b in u["before_maintenance"]]
        if x is not None
    ]
    floor = _axis_floor(shares)
    for a in axes.flat:
        a.set_ylim(floor, 105 if floor == 0 else min(105.0, max(shares) + (100 - floor) * 0.08))
        a.grid(axis="y", alpha=0.4)
        if floor > 0:  # say so: bars cut at the floor would otherwise read as proportions
            a.set_ylabel(f"{a.get_ylabel()}\naxis from {floor:.0f}{NBSP}%")
    fig.legend(
        handles=[Patch(color=colors[k], label=legend_labels[k]) for k in labels],
        loc="outside lower center",
        ncols=_legend_columns(list(legend_labels.values())),
        fontsize=9,
    )
    return fig


def _axis_floor(shares: Sequence[float]) -> float:
    """Where the utilization axis starts: 0, unless every value lies high and close to the
    others (91.5 against 91.9 % on a 0-100 axis look equal), then a multiple of 5 % below the
    lowest by a fifth of their spread at least."""
    if not shares:
        return 0.0
    low, high = min(shares), max(shares)
    if low < 40 or high - low > 30:
        return 0.0
    margin = max((high - low) * 0.2, 2.0)
    return float(max(0, 5 * np.floor((low - margin) / 5)))


def _set_numbered_ticks(ax: Axes, ticks: Sequence[str]) -> None:
    """``#k`` ticks with a second line of detail, or just the numbers when crowded."""
    if _axes_width_px(ax) / max(len(ticks), 1) < 70:
        ticks = [str(i + 1) for i in range(len(ticks))]
    _set_category_ticks(ax, range(len(ticks)), ticks)


def _pct_or_dash(share: float | None) -> str:
    return DASH if share is None else f"{100 * share:.1f}{NBSP}%"
