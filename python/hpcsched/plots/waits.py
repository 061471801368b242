"""Waiting-time figures: box plots per policy and per size class (MARS Figs. 9-10), and the
mean wait by requested node count (SNF-ICON Fig. 7)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from hpcsched.classes import SIZE_CLASSES, size_class_codes
from hpcsched.plots._style import (
    DASH,
    HOUR,
    NBSP,
    Color,
    _hours_log_axis,
    _new_figure,
    _pct,
    _policy_colors,
    _require_results,
    _set_category_ticks,
    _started,
)

if TYPE_CHECKING:
    from hpcsched.run import Result


#: waits below this are drawn at it on log axes (log scales cannot show zero)
WAIT_FLOOR_S = 1.0
#: above this many distinct job sizes, sizes are grouped in powers of two
MAX_DISTINCT_SIZES = 16

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
MEAN_MARKER: dict[str, Any] = {
    "marker": "D",
    "markersize": 6,
    "markerfacecolor": "white",
    "color": "black",
}


# --- wait-time box plots -----------------------------------------------------------------------


def _box_stats(wait_s: np.ndarray, label: str = "") -> dict[str, Any]:
    """Box statistics (hours, waits floored at WAIT_FLOOR_S): quartiles, median, whiskers at
    the 5th and 95th percentile, and the true mean (floored only to stay on the log axis)."""
    hours = np.maximum(wait_s, WAIT_FLOOR_S) / HOUR
    p5, q1, med, q3, p95 = np.percentile(hours, [5, 25, 50, 75, 95])
    mean = max(float(np.mean(wait_s)), WAIT_FLOOR_S) / HOUR
    return {
        "label": label,
        "whislo": p5,
        "q1": q1,
        "med": med,
        "q3": q3,
        "whishi": p95,
        "mean": mean,
        "fliers": [],
    }


def _draw_boxes(
    ax: Axes,
    stats: list[dict[str, Any]],
    positions: Sequence[float],
    colors: Sequence[Color],
    width: float,
) -> None:
    if not stats:
        return
    ax.bxp(
        stats,
        positions=list(positions),
        widths=width,
        patch_artist=True,
        showmeans=False,
        showfliers=False,
        boxprops={"linewidth": 1},
        medianprops={"color": "black", "linewidth": 1.5},
        manage_ticks=False,
    )
    for patch, color in zip(ax.patches[-len(stats) :], colors, strict=True):
        patch.set_facecolor((*color[:3], 0.75))
    # the true means, drawn by hand so they are not recomputed from the floored values
    ax.plot(
        list(positions),
        [s["mean"] for s in stats],
        linestyle="none",
        gid="mean-markers",
        **MEAN_MARKER,
    )


def _box_legend_handles() -> list[Any]:
    return [
        Patch(facecolor="lightgrey", edgecolor="black", label=f"25th{DASH}75th percentile"),
        Line2D([], [], color="black", linewidth=1.5, label="median"),
        Line2D([], [], color="black", linewidth=1, label=f"whiskers: 5th{DASH}95th percentile"),
        Line2D([], [], linestyle="none", label="mean", **MEAN_MARKER),
    ]


def _wait_axis(ax: Axes) -> None:
    _hours_log_axis(ax)
    ax.set_ylabel(
        f"Waiting time (h, log scale;\nwaits < {WAIT_FLOOR_S:g} s shown at {WAIT_FLOOR_S:g} s)"
    )
    ax.grid(axis="y", which="major", alpha=0.4)
    # leave room below the floor so all-zero boxes stay visible
    low, high = ax.get_ylim()
    ax.set_ylim(min(low, WAIT_FLOOR_S / HOUR / 2), max(high, 1.0))


def wait_boxplot(results: Mapping[str, Result]) -> Figure:
    """Waiting time per policy: box = quartiles, whiskers = 5th/95th percentile, no outliers,
    diamond = mean; hours on a log axis (MARS Figs. 9-10). Jobs never started are left out."""
    _require_results(results)
    colors = _policy_colors(list(results))
    fig, axes = _new_figure()
    ax = axes[0, 0]
    stats, positions, tick_labels, box_colors = [], [], [], []
    for i, (label, result) in enumerate(results.items()):
        wait = _started(result)["wait"].to_numpy(dtype=float)
        zero = float(np.mean(wait <= 0)) if len(wait) else 0.0
        tick_labels.append(f"{label}\n{len(wait)}{NBSP}jobs, {_pct(zero)}{NBSP}no{NBSP}wait")
        if len(wait):
            stats.append(_box_stats(wait, label))
            positions.append(i)
            box_colors.append(colors[label])
    _draw_boxes(ax, stats, positions, box_colors, width=0.6)
    _set_category_ticks(ax, range(len(results)), tick_labels)
    ax.set_xlim(-0.6, len(results) - 0.4)
    _wait_axis(ax)
    ax.set_title("Waiting time by policy")
    fig.legend(handles=_box_legend_handles(), loc="outside lower center", ncols=4, fontsize=9)
    return fig


def wait_by_class_boxplot(results: Mapping[str, Result]) -> Figure:
    """Waiting time per size class (S, M, L, XL): one box per policy within each class."""
    _require_results(results)
    labels = list(results)
    colors = _policy_colors(labels)
    started = {label: _started(r) for label, r in results.items()}
    classes = [
        c for c in SIZE_CLASSES if any((df["size_class"] == c).any() for df in started.values())
    ]
    machines = {r.info["inputs"]["nodes"] for r in results.values()}
    ranges = _class_node_ranges(machines.pop()) if len(machines) == 1 else {}
    fig, axes = _new_figure()
    ax = axes[0, 0]
    width = 0.8 / len(labels)
    tick_labels = []
    for g, cls in enumerate(classes):
        counts = [int((df["size_class"] == cls).sum()) for df in started.values()]
        nodes = f": {ranges[cls]}" if cls in ranges else ""
        tick_labels.append(f"{cls}{nodes}\n{_count_text(counts)} jobs")
        stats, positions, box_colors = [], [], []
        for k, label in enumerate(labels):
            wait = started[label].loc[started[label]["size_class"] == cls, "wait"]
            if len(wait):
                stats.append(_box_stats(wait.to_numpy(dtype=float), label))
                positions.append(g - 0.4 + width * (k + 0.5))
                box_colors.append(colors[label])
        _draw_boxes(ax, stats, positions, box_colors, width=width * 0.85)
    _set_category_ticks(ax, range(len(classes)), tick_labels)
    ax.set_xlim(-0.5, max(len(classes), 1) - 0.5)
    for g in range(1, len(classes)):
        ax.axvline(g - 0.5, color="grey", linewidth=0.5, alpha=0.5)
    _wait_axis(ax)
    ax.set_title("Waiting time by job size class (requested nodes)")
    policy_handles = [Patch(facecolor=colors[label], label=label) for label in labels]
    ax.legend(
        handles=policy_handles,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=9,
        title="policy",
        title_fontsize=9,
    )
    fig.legend(handles=_box_legend_handles(), loc="outside lower center", ncols=4, fontsize=9)
    return fig


def _class_node_ranges(machine: int) -> dict[str, str]:
    """``{"S": "1-2 nodes", ...}`` on a machine of ``machine`` nodes (empty classes left out)."""
    codes = size_class_codes(np.arange(1, machine + 1), machine)
    ranges = {}
    for code, cls in enumerate(SIZE_CLASSES):
        sizes = np.flatnonzero(codes == code) + 1
        if len(sizes):
            low, high = int(sizes[0]), int(sizes[-1])
            span = str(low) if low == high else f"{low}{DASH}{high}"
            ranges[cls] = f"{span} node{'' if high == 1 else 's'}"
    return ranges


def _count_text(counts: Sequence[int]) -> str:
    """``n=12``, or ``n=10-12`` when policies started different numbers of jobs."""
    low, high = min(counts), max(counts)
    return f"n={low}" if low == high else f"n={low}{DASH}{high}"


# --- mean wait by job size ---------------------------------------------------------------------


def _size_bins(nodes: np.ndarray, binned: bool) -> np.ndarray:
    """Each job's bin: its node count, or the power of two at the bottom of its bin
    [2^k, 2^(k+1))."""
    if not binned:
        return nodes
    bins: np.ndarray = 2 ** np.floor(np.log2(np.maximum(nodes, 1))).astype(np.int64)
    return bins


def _bin_tick(low: int, binned: bool) -> str:
    if not binned or low == 1:
        return str(low)
    return f"{low}{DASH}{2 * low - 1}"


def _ticks_fit(ticks: np.ndarray) -> bool:
    """Whether every value can be labelled on a log2 axis about 800 px wide."""
    if len(ticks) < 2:
        return True
    positions = np.log2(ticks.astype(float))
    gaps_px = np.diff(positions) / (positions[-1] - positions[0]) * 800
    widths_px = np.array([len(str(t)) for t in ticks]) * 7 + 6  # 10 pt digits and a gap
    return bool(np.all(gaps_px >= widths_px[1:]))


def _hours_text(seconds: float | None) -> str:
    if seconds is None or not np.isfinite(seconds):
        return "no job started"
    return f"mean {seconds / HOUR:.2f} h"


def wait_by_nodes_plot(results: Mapping[str, Result]) -> Figure:
    """Mean waiting time (hours) by requested node count, one line per policy (SNF-ICON
    Fig. 7); sizes are grouped in powers of two when there are many of them."""
    _require_results(results)
    colors = _policy_colors(list(results))
    sizes = np.unique(np.concatenate([r.jobs["nodes"].to_numpy() for r in results.values()]))
    binned = len(sizes) > MAX_DISTINCT_SIZES
    fig, axes = _new_figure()
    ax = axes[0, 0]
    for k, (label, result) in enumerate(results.items()):
        started = _started(result)
        bins = _size_bins(started["nodes"].to_numpy(), binned)
        # a log axis cannot show zero: means below the floor are drawn at it (as the boxes)
        means = started["wait"].groupby(bins).mean().clip(lower=WAIT_FLOOR_S) / HOUR
        mean = result.info["wait"]["mean"]
        ax.plot(
            means.index.to_numpy(),
            means.to_numpy(),
            # shapes and shrinking sizes keep lines that coincide distinguishable
            marker=MARKERS[k % len(MARKERS)],
            markersize=max(8 - 1.0 * k, 4),
            linewidth=max(2.2 - 0.3 * k, 1),
            color=colors[label],
            label=f"{label} (overall {_hours_text(mean)})",
        )
    ax.set_xscale("log", base=2)
    ticks = np.unique(_size_bins(sizes, binned))
    if binned or _ticks_fit(ticks):
        ax.set_xticks(ticks, [_bin_tick(int(t), binned) for t in ticks])
    else:  # labels would collide: label the powers of two only
        powers = 2 ** np.arange(0, math.ceil(np.log2(ticks.max())) + 1)
        ax.set_xticks(powers, [str(p) for p in powers])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(
        "Requested nodes (log₂ scale" + (", grouped in powers of two)" if binned else ")")
    )
    # log scale: one group's mean of days must not flatten the others' minutes
    _hours_log_axis(ax)
    ax.set_ylabel(
        f"Mean waiting time (h, log scale;\nmeans < {WAIT_FLOOR_S:g} s shown at {WAIT_FLOOR_S:g} s)"
    )
    ax.grid(alpha=0.4)
    ax.grid(axis="y", which="minor", alpha=0.15)
    ax.set_title("Mean waiting time by job size")
    ax.legend(fontsize=9)
    return fig
