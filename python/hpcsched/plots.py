"""Figures that compare scheduling policies (MARS and SNF-ICON style), built with matplotlib's
object-oriented API only: no ``pyplot``, no display, no global state.

Each plot function takes ``{policy label: Result}`` (in display order) and returns a
:class:`matplotlib.figure.Figure`; :func:`figure_to_png` turns one into PNG bytes.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from hpcsched import _core
from hpcsched.classes import SIZE_CLASSES, size_class_codes

if TYPE_CHECKING:
    from hpcsched.run import Result

__all__ = [
    "applicable_plots",
    "figure_to_png",
    "icon_modes_plot",
    "node_states_overview_plot",
    "node_states_plot",
    "pareto_frontier",
    "search_effort_plot",
    "start_kinds_plot",
    "utilization_plot",
    "wait_boxplot",
    "wait_by_class_boxplot",
    "wait_by_nodes_plot",
    "wait_energy_pareto",
]

Color = tuple[float, float, float, float]

WIDTH_IN = 9.0
HEIGHT_IN = 4.5
DPI = 100
HOUR = 3600.0
DAY = 86400.0
#: waits below this are drawn at it on log axes (log scales cannot show zero)
WAIT_FLOOR_S = 1.0
#: most points a node-state timeline is drawn with
MAX_TIMELINE_POINTS = 5000
#: above this many distinct job sizes, sizes are grouped in powers of two
MAX_DISTINCT_SIZES = 16

#: the engine's start kinds and node states (stacked with computing at the bottom)
START_KINDS = tuple(_core.start_kind_names())
START_KIND_COLORS = {"primary": "#4c72b0", "backfill": "#dd8452", "drain": "#55a868"}
NODE_STATES = tuple(sorted(_core.node_state_names(), key=lambda state: state != "computing"))
NODE_STATE_COLORS = {
    "computing": "#2ca02c",
    "idle": "#ffbf00",
    "switching_on": "#d62728",
    "switching_off": "#9467bd",
    "sleeping": "#1f77b4",
    "down": "#7f7f7f",
}
MODE_COLORS = {"icon": "#2ca02c", "fallback": "#ff7f0e", "ipm": "#9e9e9e"}
MODE_NAMES = {"icon": "ICON (queueing model)", "fallback": "fallback (IPM rules)", "ipm": "IPM"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
MEAN_MARKER: dict[str, Any] = {
    "marker": "D",
    "markersize": 6,
    "markerfacecolor": "white",
    "color": "black",
}
#: start-kind segments thinner than this (% of the bar) are labelled beside it
MIN_INSIDE_PCT = 6.0
BAR_WIDTH = 0.5
TIME_LABEL = "Time since first submission (days)"
#: width of a character of 9-10 pt text, in pixels (a generous average)
CHAR_PX = 6.5
#: width of a character of 7 pt text (bar value labels), in pixels
LABEL_CHAR_PX = 5.0
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


def _hours_log_axis(ax: Axes) -> None:
    """Log axis of hours with plain numbers (0.01, 0.1, 1, 10) rather than powers of ten."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(_plain_number))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _plain_number(value: float, _pos: int | None = None) -> str:
    return f"{value:g}" if value < 1e5 else f"{value:.0e}"


def _pct(share: float) -> str:
    return f"{100 * share:.0f}{NBSP}%"


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
    fig, axes = _new_figure(
        1, 2 if has_maintenance else 1, width_ratios=[2, 1] if has_maintenance else None
    )
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
    for a in axes.flat:
        a.set_ylim(0, 105)
        a.grid(axis="y", alpha=0.4)
    fig.legend(
        handles=[Patch(color=colors[k], label=legend_labels[k]) for k in labels],
        loc="outside lower center",
        ncols=_legend_columns(list(legend_labels.values())),
        fontsize=9,
    )
    return fig


def _set_numbered_ticks(ax: Axes, ticks: Sequence[str]) -> None:
    """``#k`` ticks with a second line of detail, or just the numbers when crowded."""
    if _axes_width_px(ax) / max(len(ticks), 1) < 70:
        ticks = [str(i + 1) for i in range(len(ticks))]
    _set_category_ticks(ax, range(len(ticks)), ticks)


def _pct_or_dash(share: float | None) -> str:
    return DASH if share is None else f"{100 * share:.1f}{NBSP}%"


# --- start kinds -------------------------------------------------------------------------------


def start_kinds_plot(results: Mapping[str, Result]) -> Figure:
    """Share (%) of started jobs that started as primary, backfill or drain (MARS Fig. 12)."""
    _require_results(results)
    labels = list(results)
    fig, axes = _new_figure()
    ax = axes[0, 0]
    counts = pd.DataFrame(
        {
            label: _started(r)["start_kind"].value_counts().reindex(START_KINDS, fill_value=0)
            for label, r in results.items()
        }
    ).T
    totals = counts.sum(axis=1).replace(0, np.nan)
    shares = counts.div(totals, axis=0).fillna(0.0) * 100
    x = np.arange(len(labels))
    bar_px = _axes_width_px(ax) / len(labels) * BAR_WIDTH
    bottom = np.zeros(len(labels))
    small_labels: dict[int, list[tuple[float, str]]] = {i: [] for i in range(len(labels))}
    for kind in START_KINDS:
        heights = shares[kind].to_numpy()
        bars = ax.bar(
            x,
            heights,
            bottom=bottom,
            width=BAR_WIDTH,
            color=START_KIND_COLORS[kind],
            label=kind,
            gid=f"start-kind-{kind}",
        )
        # counts inside segments tall enough to hold the text, beside the bar otherwise
        texts = [
            _segment_text(n, h, bar_px) if h >= MIN_INSIDE_PCT else ""
            for n, h in zip(counts[kind], heights, strict=True)
        ]
        ax.bar_label(bars, labels=texts, label_type="center", fontsize=8, color="white")
        for i in np.flatnonzero((heights > 0) & (heights < MIN_INSIDE_PCT)).tolist():
            small_labels[i].append((bottom[i] + heights[i] / 2, f"{kind}: {counts[kind].iloc[i]}"))
        bottom += heights
    if len(labels) <= 6:  # beyond that the gaps between bars are too narrow for text
        for i, notes in small_labels.items():
            _label_beside_bar(ax, x[i] + BAR_WIDTH / 2, notes)
    started = counts.sum(axis=1)
    tick_labels = [f"{label}\n{int(started[label])} started" for label in labels]
    _set_category_ticks(ax, range(len(labels)), tick_labels)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylim(0, 100)
    ax.set_ylabel("Share of started jobs (%)")
    ax.set_title("How jobs started: primary (head of queue), backfill, or drain")
    fig.legend(loc="outside right upper", fontsize=9, title="start kind (jobs)")
    if counts["drain"].any():
        # the tables count drain *decisions*; one decision marks every job waiting then
        fig.supxlabel(
            "drain: a job that was waiting when MARS chose to start nothing (a drain decision)\n"
            "and started later; one decision marks every job waiting then, so the tables' "
            "drain decisions and these job counts differ",
            fontsize=8,
            color="dimgrey",
        )
    return fig


def _segment_text(count: int, pct: float, bar_px: float) -> str:
    """``123 (45 %)``, or only ``45 %`` when the bar is too narrow for the count."""
    full = f"{count} ({pct:.0f}{NBSP}%)"
    if len(full) * CHAR_PX <= bar_px:  # 8 pt text, with a margin for the layout's trimming
        return full
    short = f"{pct:.0f}{NBSP}%"
    return short if len(short) * CHAR_PX <= bar_px else ""


def _label_beside_bar(ax: Axes, x: float, notes: list[tuple[float, str]]) -> None:
    """Small-segment counts right of a bar, pushed apart so they do not overlap."""
    last = -math.inf
    for y, text in notes:
        y = max(y, last + 4.0)  # in % of the axis: about one line of 8 pt text
        ax.annotate(
            text,
            (x, y),
            xytext=(3, 0),
            textcoords="offset points",
            fontsize=7,
            va="center",
            ha="left",
        )
        last = y


# --- MARS search effort ------------------------------------------------------------------------


def _is_lookahead(result: Result) -> bool:
    """A MARS or random run: its decision log has the search columns."""
    decisions = result.decisions
    if "outcomes" not in decisions.columns:
        return False
    policy = result.info.get("inputs", {}).get("policy") or {}
    return bool(policy.get("search")) or not decisions.empty


def search_effort_plot(results: Mapping[str, Result]) -> Figure:
    """MCTS iterations and effective branching (distinct root outcomes) per searched decision
    over time, for the look-ahead runs (MARS Fig. 15). A panel whose values are all the same
    (an iteration budget every search used up) is left out and its value given in the title.
    ValueError if there is no look-ahead run."""
    lookahead = {label: r for label, r in results.items() if _is_lookahead(r)}
    if not lookahead:
        raise ValueError("search_effort_plot needs a look-ahead run (MARS or random)")
    colors = _policy_colors(list(results))
    searched = {label: r.decisions[r.decisions["outcomes"] >= 2] for label, r in lookahead.items()}
    # the random baseline chooses without searching: its zero iterations would clutter
    mcts = {label: d for label, d in searched.items() if d["iterations"].to_numpy().any()}
    iteration_values = (
        np.unique(np.concatenate([d["iterations"].to_numpy() for d in mcts.values()]))
        if mcts
        else np.array([], dtype=np.uint64)
    )
    draw_iterations = len(iteration_values) > 1
    if draw_iterations:
        fig, axes = _new_figure(2, 1, height=6.0, sharex=True)
        ax_iter, ax_branch = axes[0, 0], axes[1, 0]
    else:
        fig, axes = _new_figure(1, 1, height=HEIGHT_IN)
        ax_iter, ax_branch = None, axes[0, 0]
    for label, result in lookahead.items():
        d = searched[label]
        days = d["time"].to_numpy(dtype=float) / DAY
        name = f"{label}: {len(d)} of {len(result.decisions)} decisions had ≥ 2 outcomes"
        style = {"s": 10, "alpha": 0.6, "color": colors[label], "linewidths": 0}
        if len(d) and label not in mcts:
            name += " (no MCTS: random choice)"
        elif ax_iter is not None:
            ax_iter.scatter(days, d["iterations"].to_numpy(dtype=float), **style)
        ax_branch.scatter(days, d["outcomes"].to_numpy(dtype=float), label=name, **style)
    if not any(len(d) for d in searched.values()):
        ax_branch.text(
            0.5,
            0.5,
            "no decision had two or more distinct outcomes: nothing was searched",
            transform=ax_branch.transAxes,
            ha="center",
            va="center",
            color="dimgrey",
        )
    ax_branch.set_ylabel("Effective branching\n(distinct root outcomes)")
    for ax in axes.flat:
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.4)
    ax_branch.set_xlabel(TIME_LABEL)
    if ax_iter is not None:
        ax_iter.set_ylabel("MCTS iterations\nper decision")
        ax_iter.set_title("Search effort per searched decision (decisions with ≥ 2 outcomes)")
    else:
        budget = (
            f"; every search ran {int(iteration_values[0]):,} MCTS iterations (summed over trees)"
            if len(iteration_values) == 1
            else ""
        )
        ax_branch.set_title(f"Effective branching per searched decision{budget}", fontsize=11)
    fig.legend(loc="outside lower center", ncols=1, fontsize=9, markerscale=2)
    return fig


# --- Pareto frontier ---------------------------------------------------------------------------


def pareto_frontier(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> np.ndarray:
    """Mask of the points no other point dominates, both coordinates minimised.

    ``q`` dominates ``p`` when it is no worse on both coordinates and better on one. Points
    equal on both coordinates do not dominate each other, so duplicates on the frontier are
    all kept. Points with a NaN coordinate are never on the frontier and dominate nothing.
    """
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(f"x and y must be 1-D and of equal length, not {xs.shape} and {ys.shape}")
    mask = np.zeros(len(xs), dtype=bool)
    valid = np.flatnonzero(~(np.isnan(xs) | np.isnan(ys)))
    order = valid[np.lexsort((ys[valid], xs[valid]))]
    best_y_left = math.inf  # lowest y among points with strictly smaller x
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and xs[order[j]] == xs[order[i]]:
            j += 1
        group = order[i:j]
        group_min = ys[group[0]]  # sorted by y within equal x
        # dominated by a point to the left with y <= own, or one at equal x with a smaller y
        mask[group] = (ys[group] < best_y_left) & (ys[group] == group_min)
        best_y_left = min(best_y_left, group_min)
        i = j
    return mask


def wait_energy_pareto(
    table: pd.DataFrame,
    *,
    x: str = "energy_wasted_mwh",
    y: str = "wait_mean",
    label: str = "policy",
    group: str | None = None,
) -> Figure:
    """Mean wait (column ``y``, seconds, drawn in hours) against wasted energy (column ``x``,
    MWh), one labelled point per row, with the empirical Pareto frontier (both minimised) as a
    step line (SNF-ICON Figs. 6, 8-10). With ``group``, one panel (and frontier) per value, at
    most three panels a row. Rows missing ``x`` or ``y`` are left out (the legend says so)."""
    needed = [c for c in (x, y, label, group) if c is not None]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise ValueError(f"table has no column(s) {missing}; it has {list(table.columns)}")
    data = table.dropna(subset=[x, y])
    dropped = len(table) - len(data)
    if data.empty:
        raise ValueError(f"no row has both {x!r} and {y!r}")
    colors = _policy_colors(list(dict.fromkeys(data[label].astype(str))))
    groups = list(dict.fromkeys(data[group])) if group is not None else [None]
    ncols = min(len(groups), 3)
    nrows = math.ceil(len(groups) / ncols)
    fig, axes = _new_figure(nrows, ncols, height=HEIGHT_IN if nrows == 1 else 3.4 * nrows + 0.6)
    panels = []
    padded = False
    for ax, value in zip(axes.flat, groups, strict=False):
        part = data if value is None else data[data[group] == value]
        panels.append((ax, _pareto_panel(ax, part, x, y, label, colors)))
        padded |= _pad_pareto_axes(ax, part, x)
        if value is not None:
            # the value alone (the figure title says what is grouped); long names shortened
            text = str(value)
            ax.set_title(text if len(text) <= 30 else text[:28] + "…", fontsize=10)
    for ax in list(axes.flat)[len(groups) :]:
        ax.set_visible(False)
    y_name = _axis_name(y) if y in AXIS_NAMES else f"{_axis_name(y)} (h)"
    # x label under the lowest panel of each column (the legend takes the bottom edge)
    for column in range(ncols):
        visible = [ax for ax in axes[:, column] if ax.get_visible()]
        visible[-1].set_xlabel(_axis_name(x))
    if nrows > 1:
        fig.supylabel(y_name, fontsize=10)
    else:
        axes[0, 0].set_ylabel(y_name)
    fig.suptitle(
        f"{_axis_name(y).split(' (')[0]} against {_axis_name(x).split(' (')[0].lower()}"
        + (f", one panel per {group}" if group is not None else "")
        + " (lower left is better)"
    )
    handles = [
        Line2D([], [], color="black", drawstyle="steps-post", label="Pareto frontier"),
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markerfacecolor="lightgrey",
            markeredgecolor="black",
            markeredgewidth=1.2,
            label="on the frontier",
        ),
    ]
    if dropped:
        handles.append(
            Line2D([], [], linestyle="none", label=f"{dropped} row(s) without values left out")
        )
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=3,
        fontsize=9,
        # a widened axis is said where the reader looks for the key
        title=_pad_note(x, data) if padded else None,
        title_fontsize=8,
    )
    # labels go where they do not collide, which needs the final axes sizes
    fig.draw_without_rendering()
    for ax, points in panels:
        _place_point_labels(ax, points, colors)
    return fig


AXIS_NAMES = {
    "energy_wasted_mwh": "Wasted energy (MWh)",
    "energy_total_mwh": "Total energy (MWh)",
    "wait_mean": "Mean waiting time (h)",
    "wait_median": "Median waiting time (h)",
    "wait_p95": "95th-percentile waiting time (h)",
}


def _axis_name(column: str) -> str:
    return AXIS_NAMES.get(column, column.replace("_", " "))


def _pareto_panel(
    ax: Axes,
    part: pd.DataFrame,
    x: str,
    y: str,
    label: str,
    colors: Mapping[str, Color],
) -> list[tuple[float, float, str]]:
    """Draws one panel's points and frontier; returns (x, y, label) of the points."""
    xs = part[x].to_numpy(dtype=float)
    ys = part[y].to_numpy(dtype=float) / HOUR
    names = part[label].astype(str).to_list()
    on_front = pareto_frontier(xs, ys)
    ax.scatter(
        xs,
        ys,
        c=[colors[n] for n in names],
        s=40,
        zorder=3,
        edgecolors="black",
        linewidths=np.where(on_front, 1.2, 0.0).tolist(),
    )
    front = np.argsort(xs[on_front], kind="stable")
    ax.step(
        xs[on_front][front],
        ys[on_front][front],
        where="post",
        color="black",
        linewidth=1,
        zorder=2,
        gid="pareto-frontier",
    )
    ax.grid(alpha=0.4)
    ax.margins(x=0.2, y=0.15)
    return list(zip(xs.tolist(), ys.tolist(), names, strict=True))


#: a Pareto panel's energy axis spans at least this share of the runs' total energy, and its
#: wait axis this share of the largest mean wait: differences below that do not fill a panel
#: and look like a trade-off (issue 14: 0.05 % of the energy drawn edge to edge)
PARETO_MIN_ENERGY_SPAN = 0.01
PARETO_MIN_WAIT_SPAN = 0.10


def _min_x_span(part: pd.DataFrame, x: str) -> tuple[float, bool]:
    """The least x span of a panel, and whether it is a share of total energy (else of the
    largest x)."""
    if x != "energy_total_mwh" and "energy_total_mwh" in part.columns:
        total = part["energy_total_mwh"].to_numpy(dtype=float)
        if np.isfinite(total).any():
            return PARETO_MIN_ENERGY_SPAN * float(np.nanmax(total)), True
    return PARETO_MIN_ENERGY_SPAN * float(np.nanmax(np.abs(part[x].to_numpy(dtype=float)))), False


def _pad_pareto_axes(ax: Axes, part: pd.DataFrame, x: str) -> bool:
    """Widens the panel's axes to their least spans (PARETO_MIN_*), centred on the points and
    never below zero; True if either axis was widened."""
    widened = False
    for axis, least in (
        ("x", _min_x_span(part, x)[0]),
        ("y", PARETO_MIN_WAIT_SPAN * max(ax.dataLim.y1, 0.0)),
    ):
        low, high = ax.get_xlim() if axis == "x" else ax.get_ylim()
        if not least > high - low:
            continue
        centre = (low + high) / 2
        low, high = centre - least / 2, centre + least / 2
        if low < 0:
            low, high = 0.0, high - low
        (ax.set_xlim if axis == "x" else ax.set_ylim)(low, high)
        widened = True
    return widened


def _pad_note(x: str, data: pd.DataFrame) -> str:
    _, of_total = _min_x_span(data, x)
    energy = "of the total energy" if of_total else "of the largest value"
    return (
        f"axes span at least {100 * PARETO_MIN_ENERGY_SPAN:g} % {energy} (x) and "
        f"{100 * PARETO_MIN_WAIT_SPAN:g} % of the largest wait (y): closer points differ by less"
    )


#: label positions tried around a point, in points: (dx, dy, horizontal alignment)
LABEL_OFFSETS = [
    (5, 4, "left"),
    (5, -12, "left"),
    (-5, 4, "right"),
    (-5, -12, "right"),
    (0, 7, "center"),
    (0, -17, "center"),
    (5, 14, "left"),
    (5, -22, "left"),
    (-5, 14, "right"),
    (-5, -22, "right"),
]
#: how bad a label position is: covering another label, a point, or leaving the panel
CLASH_LABEL, CLASH_POINT, CLASH_OUTSIDE = 2, 1, 3


def _place_point_labels(
    ax: Axes, points: list[tuple[float, float, str]], colors: Mapping[str, Color]
) -> None:
    """Labels each point (in a darker shade of its colour), joining the labels of points drawn
    on the same spot, trying a few positions around each point to avoid covering other labels
    and points."""
    scale = DPI / 72.0  # pixels per point
    char_w, line_h = 4.8 * scale, 9.0 * scale  # 8 pt text, roughly
    pixels: np.ndarray = ax.transData.transform(
        np.reshape([(px, py) for px, py, _ in points], (-1, 2))
    )
    spots: dict[tuple[int, int], list[int]] = {}
    for i, (u, v) in enumerate(pixels):
        spots.setdefault((round(u / 3), round(v / 3)), []).append(i)
    frame = ax.get_window_extent()
    markers = [(u - 4, v - 4, u + 4, v + 4) for u, v in pixels]
    taken: list[tuple[float, float, float, float]] = []
    for members in spots.values():
        names = list(dict.fromkeys(points[i][2] for i in members))
        text = " / ".join(names)
        color = _darker(colors[names[0]]) if len(names) == 1 else "black"
        u, v = pixels[members[0]]
        boxes = []
        width = len(text) * char_w
        for dx, dy, ha in LABEL_OFFSETS:
            left = u + dx * scale - {"left": 0, "center": width / 2, "right": width}[ha]
            boxes.append((left, v + dy * scale, left + width, v + dy * scale + line_h))
        # the least bad position; the earlier option on ties
        clashes = [
            CLASH_LABEL * sum(_overlap(box, other) for other in taken)
            + CLASH_POINT * sum(_overlap(box, other) for other in markers)
            + CLASH_OUTSIDE * (not _inside(box, frame.extents))
            for box in boxes
        ]
        k = int(np.argmin(clashes))
        taken.append(boxes[k])
        dx, dy, ha = LABEL_OFFSETS[k]
        note = ax.annotate(
            text,
            (points[members[0]][0], points[members[0]][1]),
            xytext=(dx, dy),
            textcoords="offset points",
            ha=ha,
            va="bottom",
            fontsize=8,
            color=color,
            annotation_clip=False,
        )
        note.set_in_layout(False)  # placed for the current layout: must not move it


def _darker(color: Color, factor: float = 0.7) -> Color:
    """The colour darkened, for text that must stay readable on white."""
    return (color[0] * factor, color[1] * factor, color[2] * factor, 1.0)


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(box: tuple[float, ...], frame: Sequence[float]) -> bool:
    return box[0] >= frame[0] and box[1] >= frame[1] and box[2] <= frame[2] and box[3] <= frame[3]


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


# --- SNF-ICON modes ----------------------------------------------------------------------------


def _power_log(result: Result) -> pd.DataFrame:
    """The power manager's log: ``decisions``, or ``power_decisions`` beside a look-ahead's."""
    if "mode" in result.power_decisions.columns:
        return result.power_decisions
    return result.decisions


def _is_icon(result: Result) -> bool:
    d = _power_log(result)
    return "mode" in d.columns and bool((d["mode"] != "ipm").any())


def _run_end(result: Result) -> float:
    """End of the run as the summary counts it: the energy horizon, else the makespan."""
    energy = result.info.get("energy") or {}
    return float(energy.get("horizon_seconds") or result.info.get("makespan") or 0.0)


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


# --- node power states -------------------------------------------------------------------------


def _time_weighted_resample(
    times: np.ndarray, values: np.ndarray, end: float, bins: int
) -> tuple[np.ndarray, np.ndarray]:
    """A step function (``values[i]`` holds from ``times[i]`` to the next time, the last until
    ``end``) averaged over ``bins`` equal bins: bin edges and per-bin means, so the area under
    each curve (node-hours) is exact."""
    edges = np.linspace(times[0], end, bins + 1)
    spans = np.diff(np.r_[times, end])
    # integral of each column up to each change time, then up to each bin edge
    integral = np.vstack([np.zeros(values.shape[1]), np.cumsum(values * spans[:, None], axis=0)])
    idx = np.clip(np.searchsorted(times, edges, side="right") - 1, 0, len(times) - 1)
    at_edges = integral[idx] + values[idx] * (edges - times[idx])[:, None]
    means = np.diff(at_edges, axis=0) / np.diff(edges)[:, None]
    return edges, means


def node_states_plot(result: Result, *, title: str | None = None) -> Figure:
    """Nodes per power state over time (stacked, computing at the bottom) for one power-managed
    run. Long timelines are averaged over at most MAX_TIMELINE_POINTS equal bins (areas stay
    exact). ValueError if the run has no timeline."""
    if result.timeline.empty:
        raise ValueError("node_states_plot needs a power-managed run (its timeline is empty)")
    fig, axes = _new_figure()
    ax = axes[0, 0]
    policy = (result.info.get("inputs", {}).get("policy") or {}).get("name", "")
    _draw_node_states(ax, result, title or f"Node power states over time: {policy}".rstrip(": "))
    _node_state_legend(fig, ax)
    return fig


def node_states_overview_plot(results: Mapping[str, Result]) -> Figure:
    """One figure for several power-managed runs, whose timelines look alike at a glance:
    the first run's nodes per power state over time, and below it every run's share of
    node-hours in each state other than computing (where the runs differ), the shares
    written beside each bar. ValueError if no run has a timeline."""
    timed = {label: r for label, r in results.items() if not r.timeline.empty}
    if not timed:
        raise ValueError("node_states_overview_plot needs a power-managed run (a timeline)")
    first_label, first = next(iter(timed.items()))
    bars_height = 0.9 + 0.32 * len(timed)
    fig, axes = _new_figure(
        2, 1, height=HEIGHT_IN + bars_height, height_ratios=[HEIGHT_IN - 0.6, bars_height]
    )
    ax, ax_bars = axes[0, 0], axes[1, 0]
    others = "" if len(timed) == 1 else f" (the other {len(timed) - 1}: shares below)"
    _draw_node_states(ax, first, f"Node power states over time: {first_label}{others}")
    _node_state_legend(fig, ax)
    shares = {label: _state_shares(r) for label, r in timed.items()}
    states = [s for s in NODE_STATES if s != "computing" and any(v.get(s) for v in shares.values())]
    y = np.arange(len(timed))
    left = np.zeros(len(timed))
    for state in states:
        width = np.array([100 * shares[label].get(state, 0.0) for label in timed])
        ax_bars.barh(
            y, width, left=left, height=0.6, color=NODE_STATE_COLORS[state], gid=f"share-{state}"
        )
        left += width
    for i, label in enumerate(timed):
        share = shares[label]
        switching = share.get("switching_on", 0.0) + share.get("switching_off", 0.0)
        parts = [("idle", share.get("idle", 0.0)), ("switching", switching)]
        parts += [(s, share.get(s, 0.0)) for s in ("sleeping", "down") if share.get(s)]
        ax_bars.annotate(
            " · ".join(f"{name} {100 * v:.1f}" for name, v in parts) + f"{NBSP}%",
            (left[i], y[i]),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax_bars.set_yticks(y, list(timed), fontsize=8)
    ax_bars.set_ylim(len(timed) - 0.5, -0.5)
    ax_bars.set_xlim(0, max(float(left.max()), 1e-9) * 1.45)
    ax_bars.set_xlabel(
        "Node-hours not computing (% of all node-hours, time 0 to the last completion)"
    )
    ax_bars.grid(axis="x", alpha=0.4)
    return fig


def _state_shares(result: Result) -> dict[str, float]:
    """Each power state's share of the run's node-seconds: the summary's, else integrated from
    the timeline up to the end of the run."""
    counted = (result.info.get("energy") or {}).get("node_seconds")
    if not counted:
        timeline = result.timeline
        times = timeline["time"].to_numpy(dtype=float)
        spans = np.diff(np.r_[times, max(_run_end(result), times[-1])])
        states = [s for s in NODE_STATES if s in timeline.columns]
        counted = dict(zip(states, timeline[states].to_numpy(dtype=float).T @ spans, strict=True))
    total = sum(counted.values()) or 1.0
    return {state: float(v) / total for state, v in counted.items()}


def _draw_node_states(ax: Axes, result: Result, title: str) -> None:
    timeline = result.timeline
    times = timeline["time"].to_numpy(dtype=float)
    states = [s for s in NODE_STATES if s in timeline.columns]
    values = timeline[states].to_numpy(dtype=float)
    end = max(_run_end(result), times[-1])
    note = ""
    if len(times) > MAX_TIMELINE_POINTS and end > times[0]:
        edges, values = _time_weighted_resample(times, values, end, MAX_TIMELINE_POINTS)
        times = edges[:-1]
        note = f"averaged over {_duration_text(edges[1] - edges[0])} bins"
    # repeat the last value at the end so the final step has a width
    x = np.r_[times, end] / DAY
    stacked = np.cumsum(np.vstack([values, values[-1:]]), axis=1)
    below = np.zeros(len(x))
    for k, state in enumerate(states):
        ax.fill_between(
            x,
            below,
            stacked[:, k],
            step="post",
            color=NODE_STATE_COLORS[state],
            linewidth=0,
            label=state.replace("_", " "),
            gid=f"state-{state}",
        )
        below = stacked[:, k]
    machine = int(result.info.get("inputs", {}).get("nodes") or np.max(stacked[:, -1]))
    ax.set_xlim(x[0], x[-1])
    ax.set_ylim(0, machine * 1.02)
    # the averaging note goes with the time axis: a long title leaves no room beside it
    ax.set_xlabel(TIME_LABEL if not note else f"{TIME_LABEL[:-1]}; {note})")
    ax.set_ylabel(f"Nodes (of {machine})")
    ax.set_title(title, fontsize=11)


def _node_state_legend(fig: Figure, ax: Axes) -> None:
    """The states top to bottom in stacking order, like the areas."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(
        handles[::-1],
        labels[::-1],
        loc="outside right upper",
        fontsize=9,
        title="node state",
        title_fontsize=9,
    )


def power_plot(results: Mapping[str, Result]) -> Figure:
    """Power drawn by the whole machine over time (kW), one line per run with a node-state
    timeline (power-managed runs). Long timelines are averaged over at most
    MAX_TIMELINE_POINTS equal bins (the energy under each line stays exact). ValueError if no
    run has one."""
    timed = {
        label: r
        for label, r in results.items()
        if not r.timeline.empty and "power_kw" in r.timeline.columns
    }
    if not timed:
        raise ValueError("power_plot needs a power-managed run (a timeline with power_kw)")
    colors = _policy_colors(list(results))
    fig, axes = _new_figure()
    ax = axes[0, 0]
    note = ""
    for label, result in timed.items():
        timeline = result.timeline
        times = timeline["time"].to_numpy(dtype=float)
        values = timeline[["power_kw"]].to_numpy(dtype=float)
        end = max(_run_end(result), times[-1])
        if len(times) > MAX_TIMELINE_POINTS and end > times[0]:
            edges, values = _time_weighted_resample(times, values, end, MAX_TIMELINE_POINTS)
            times = edges[:-1]
            note = f"averaged over {_duration_text(edges[1] - edges[0])} bins"
        x = np.r_[times, end] / DAY
        y = np.r_[values[:, 0], values[-1, 0]]
        ax.step(x, y, where="post", color=colors[label], linewidth=1.0, label=label, gid=label)
    ax.set_xlabel(TIME_LABEL)
    ax.set_ylabel("Power drawn (kW)")
    ax.set_ylim(bottom=0)
    ax.set_title("Power drawn by the machine over time")
    if note:
        ax.text(1.0, 1.01, note, transform=ax.transAxes, ha="right", va="bottom", fontsize=8)
    ax.legend(fontsize=8, loc="upper right")
    return fig


def _duration_text(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * HOUR:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / HOUR:.1f} h"


# --- which plots, and PNG ----------------------------------------------------------------------


def applicable_plots(results: Mapping[str, Result]) -> list[tuple[str, Callable[[], Figure]]]:
    """(title, zero-argument figure function) for each plot that suits these results, in
    reading order: waits, utilization, start kinds, search effort (look-ahead runs), SNF-ICON
    modes, then node states (one figure for all power-managed runs). The Pareto plot needs a
    table: not here."""
    _require_results(results)
    plots: list[tuple[str, Callable[[], Figure]]] = [
        ("Waiting time by policy", partial(wait_boxplot, results)),
        ("Waiting time by job size class", partial(wait_by_class_boxplot, results)),
        ("Mean waiting time by requested nodes", partial(wait_by_nodes_plot, results)),
        ("Utilization", partial(utilization_plot, results)),
        ("Job start kinds", partial(start_kinds_plot, results)),
    ]
    if any(_is_lookahead(r) for r in results.values()):
        plots.append(("MCTS search effort", partial(search_effort_plot, results)))
    if any(_is_icon(r) for r in results.values()):
        plots.append(("SNF-ICON modes", partial(icon_modes_plot, results)))
    if any(not r.timeline.empty and "power_kw" in r.timeline for r in results.values()):
        plots.append(("Power drawn over time", partial(power_plot, results)))
    timed = {label: r for label, r in results.items() if not r.timeline.empty}
    if len(timed) == 1:
        ((label, result),) = timed.items()
        title = f"Node power states: {label}"
        plots.append((title, partial(node_states_plot, result, title=title)))
    elif timed:  # one figure: the timelines look alike, the shares tell them apart
        plots.append(("Node power states", partial(node_states_overview_plot, timed)))
    return plots


def figure_to_png(fig: Figure) -> bytes:
    """The figure as PNG bytes at DPI dots per inch."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()
