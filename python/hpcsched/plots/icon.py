"""SNF-ICON's mode over time and its spare-node target (SNF-ICON Fig. 5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from hpcsched.plots._style import (
    DAY,
    TIME_LABEL,
    Color,
    _new_figure,
    _pct,
    _policy_colors,
    _run_end,
)

if TYPE_CHECKING:
    from hpcsched.run import Result


MODE_COLORS = {"icon": "#2ca02c", "fallback": "#ff7f0e", "ipm": "#9e9e9e"}
MODE_NAMES = {"icon": "ICON (queueing model)", "fallback": "fallback (IPM rules)", "ipm": "IPM"}


# --- SNF-ICON modes ----------------------------------------------------------------------------


def _power_log(result: Result) -> pd.DataFrame:
    """The power manager's log: ``decisions``, or ``power_decisions`` beside a look-ahead's."""
    if "mode" in result.power_decisions.columns:
        return result.power_decisions
    return result.decisions


def _is_icon(result: Result) -> bool:
    d = _power_log(result)
    return "mode" in d.columns and bool((d["mode"] != "ipm").any())


def _mode_segments(decisions: pd.DataFrame, end: float) -> list[tuple[str, float, float]]:
    """(mode, start, end) runs up to ``end``: a decision's mode holds until the next decision.
    Decisions after ``end`` (idle-timeout calls after the last completion) are left out, as
    the summary's mode occupancy leaves them out."""
    times = decisions["time"].to_numpy(dtype=float)
    modes = decisions["mode"].astype(str).to_numpy()
    keep = times < end
    times, modes = times[keep], modes[keep]
    if len(times) == 0:
        return []
    change = np.flatnonzero(np.r_[True, modes[1:] != modes[:-1]])
    starts = times[change]
    ends = np.r_[starts[1:], end]
    return [(str(modes[c]), s, e) for c, s, e in zip(change, starts, ends, strict=True)]


def icon_modes_plot(results: Mapping[str, Result]) -> Figure:
    """SNF-ICON's mode over time (a band per policy, SNF-ICON Fig. 5) and, when set, its
    spare-node target. ValueError if no result is an SNF-ICON run."""
    icon = {label: r for label, r in results.items() if _is_icon(r)}
    if not icon:
        raise ValueError("icon_modes_plot needs an SNF-ICON run (decisions with ICON modes)")
    colors = _policy_colors(list(results))
    has_target = any(
        _power_log(r)["target"].notna().any()
        for r in icon.values()
        if "target" in _power_log(r).columns
    )
    band_height = 0.5 + 0.45 * len(icon)
    if has_target:
        fig, axes = _new_figure(
            2, 1, height=band_height + 3.5, sharex=True, height_ratios=[band_height, 3.0]
        )
    else:
        fig, axes = _new_figure(1, 1, height=band_height + 1.6)
    ax = axes[0, 0]
    modes_seen: list[str] = []
    tick_labels = []
    horizon_days = 0.0
    for row, (label, result) in enumerate(icon.items()):
        end = _run_end(result) or float(_power_log(result)["time"].iloc[-1])
        horizon_days = max(horizon_days, end / DAY)
        segments = _mode_segments(_power_log(result), end)
        for mode in dict.fromkeys(m for m, _, _ in segments):
            spans = [(s / DAY, (e - s) / DAY) for m, s, e in segments if m == mode]
            ax.broken_barh(
                spans,
                (row - 0.4, 0.8),
                facecolors=MODE_COLORS.get(mode, "black"),
                gid=f"mode-{mode}",
            )
            if mode not in modes_seen:
                modes_seen.append(mode)
        tick_labels.append(f"{label}\n{_occupancy_text(result, segments)}")
    ax.set_yticks(range(len(icon)), tick_labels, fontsize=8)
    ax.set_ylim(len(icon) - 0.5, -0.5)
    ax.set_title("SNF-ICON mode in force over time")
    handles = [
        Patch(color=MODE_COLORS.get(m, "black"), label=MODE_NAMES.get(m, m)) for m in modes_seen
    ]
    ax.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(1.0, 0.0),
        fontsize=8,
        title="mode",
        title_fontsize=8,
    )
    if has_target:
        ax_t = axes[1, 0]
        for label, result in icon.items():
            d = _power_log(result)
            if "target" not in d.columns or d["target"].isna().all():
                continue
            _draw_targets(ax_t, d, colors[label], label)
        ax_t.set_ylabel("Warm-spare target\n(nodes)")
        ax_t.set_ylim(bottom=0)
        ax_t.grid(alpha=0.4)
        ax_t.legend(
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
            fontsize=8,
            title="policy",
            title_fontsize=8,
        )
        ax_t.text(
            0.0,
            1.01,
            "a target holds until the next decision; gaps: no target chosen",
            transform=ax_t.transAxes,
            fontsize=8,
            color="dimgrey",
            va="bottom",
        )
        ax_t.set_xlabel(TIME_LABEL)
    else:
        ax.set_xlabel(TIME_LABEL)
    ax.set_xlim(0, horizon_days)
    return fig


def _draw_targets(ax: Axes, decisions: pd.DataFrame, color: Color, label: str) -> None:
    """Each chosen target as a flat segment until the next decision (short ones get a dot so
    they stay visible); no line where no target was chosen."""
    times = decisions["time"].to_numpy(dtype=float) / DAY
    targets = decisions["target"].to_numpy(dtype=float)
    ends = np.r_[times[1:], times[-1]]
    chosen = ~np.isnan(targets)
    ax.hlines(targets[chosen], times[chosen], ends[chosen], color=color, linewidth=1.5, label=label)
    ax.plot(times[chosen], targets[chosen], linestyle="none", marker=".", markersize=3, color=color)


def _occupancy_text(result: Result, segments: list[tuple[str, float, float]]) -> str:
    """``icon 67 % · fallback 33 %`` of the run, from the summary when it has it."""
    shares = (result.info.get("energy") or {}).get("mode_occupancy")
    if not shares:
        total = sum(e - s for _, s, e in segments) or 1.0
        shares = {}
        for m, s, e in segments:
            shares[m] = shares.get(m, 0.0) + (e - s) / total
    return " · ".join(f"{m} {_pct(v)}" for m, v in sorted(shares.items(), key=lambda kv: -kv[1]))
