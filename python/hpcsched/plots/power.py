"""Power-managed runs over time: nodes per power state (one run, or an overview of several)
and the power drawn by the machine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from hpcsched import _core
from hpcsched.plots._style import (
    DAY,
    HEIGHT_IN,
    NBSP,
    TIME_LABEL,
    _legend_columns,
    _new_figure,
    _policy_colors,
    _run_end,
)
from hpcsched.units import duration_text

if TYPE_CHECKING:
    from hpcsched.run import Result


#: most points a node-state timeline is drawn with
MAX_TIMELINE_POINTS = 5000
#: the engine's node states (stacked with computing at the bottom)
NODE_STATES = tuple(sorted(_core.node_state_names(), key=lambda state: state != "computing"))
NODE_STATE_COLORS = {
    "computing": "#2ca02c",
    "idle": "#ffbf00",
    "switching_on": "#d62728",
    "switching_off": "#9467bd",
    "sleeping": "#1f77b4",
    "down": "#7f7f7f",
}


# --- node power states -------------------------------------------------------------------------


def _time_weighted_resample(
    times: np.ndarray, values: np.ndarray, end: float, bins: int
) -> tuple[np.ndarray, np.ndarray]:
    """A step function (``values[i]`` holds from ``times[i]`` to the next time, the last until
    ``end``) averaged over ``bins`` equal bins: bin edges and per-bin means, so the area under
    each curve (node-hours) is exact."""
    edges = np.linspace(times[0], end, bins + 1)
    return edges, _binned_means(times, values, end, edges)


def _binned_means(
    times: np.ndarray, values: np.ndarray, end: float, edges: np.ndarray
) -> np.ndarray:
    """The step function's mean over each bin between ``edges`` (its last value carried past
    ``end``, its first before ``times[0]``)."""
    spans = np.diff(np.r_[times, end])
    # integral of each column up to each change time, then up to each bin edge
    integral = np.vstack([np.zeros(values.shape[1]), np.cumsum(values * spans[:, None], axis=0)])
    idx = np.clip(np.searchsorted(times, edges, side="right") - 1, 0, len(times) - 1)
    at_edges = integral[idx] + values[idx] * (edges - times[idx])[:, None]
    means: np.ndarray = np.diff(at_edges, axis=0) / np.diff(edges)[:, None]
    return means


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
    notes = []
    for i, label in enumerate(timed):
        share = shares[label]
        switching = share.get("switching_on", 0.0) + share.get("switching_off", 0.0)
        parts = [("idle", share.get("idle", 0.0)), ("switching", switching)]
        parts += [(s, share.get(s, 0.0)) for s in ("sleeping", "down") if share.get(s)]
        note = ax_bars.annotate(
            " · ".join(f"{name} {100 * v:.1f}" for name, v in parts) + f"{NBSP}%",
            (left[i], y[i]),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
        notes.append(note)
    ax_bars.set_yticks(y, list(timed), fontsize=8)
    ax_bars.set_ylim(len(timed) - 0.5, -0.5)
    ax_bars.set_xlim(0, max(float(left.max()), 1e-9) * 1.45)
    _fit_notes(fig, ax_bars, notes)
    ax_bars.set_xlabel(
        "Node-hours not computing (% of all node-hours, time 0 to the last completion)"
    )
    ax_bars.grid(axis="x", alpha=0.4)
    return fig


def _fit_notes(fig: Figure, ax: Axes, notes: list[Any]) -> None:
    """Widens ``ax``'s x range until every note written after a bar ends inside the axes (at
    a short bar's end a note ran past the frame)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    for _ in range(3):  # the layout moves when the range grows: measure again
        fig.draw_without_rendering()
        renderer = canvas.get_renderer()  # type: ignore[no-untyped-call]
        frame = ax.get_window_extent(renderer)
        right = max((n.get_window_extent(renderer).x1 for n in notes), default=frame.x1)
        if right <= frame.x1 - 2:
            return
        low, high = ax.get_xlim()
        ax.set_xlim(low, high * (right - frame.x0 + 8) / frame.width)


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
        note = f"averaged over {duration_text(edges[1] - edges[0])} bins"
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
    """Power drawn by the whole machine over time (kW) for the runs with a node-state timeline
    (power-managed runs): the first run's line and, with several runs, a panel below with each
    other run's difference from it on the same time bins (their lines would lie on top of each
    other: most of the power is the jobs', which every policy runs). Long timelines are
    averaged over at most MAX_TIMELINE_POINTS equal bins (the energy under each line stays
    exact). ValueError if no run has one."""
    timed = {
        label: r
        for label, r in results.items()
        if not r.timeline.empty and "power_kw" in r.timeline.columns
    }
    if not timed:
        raise ValueError("power_plot needs a power-managed run (a timeline with power_kw)")
    colors = _policy_colors(list(results))
    steps = {
        label: (
            r.timeline["time"].to_numpy(dtype=float),
            r.timeline[["power_kw"]].to_numpy(dtype=float),
            max(_run_end(r), float(r.timeline["time"].iloc[-1])),
        )
        for label, r in timed.items()
    }
    start = min(t[0] for t, _, _ in steps.values())
    end = max(e for _, _, e in steps.values())
    points = max(len(t) for t, _, _ in steps.values())
    bins = min(points, MAX_TIMELINE_POINTS) if end > start else 1
    edges = np.linspace(start, end if end > start else start + 1.0, bins + 1)
    binned = {label: _binned_means(t, v, e, edges)[:, 0] for label, (t, v, e) in steps.items()}
    note = (
        ""
        if points <= MAX_TIMELINE_POINTS
        else (f"averaged over {duration_text(edges[1] - edges[0])} bins")
    )
    x = edges / DAY
    reference, *others = timed
    if others:
        fig, axes = _new_figure(2, 1, height_ratios=[3, 2], sharex=True)
    else:
        fig, axes = _new_figure()
    ax = axes[0, 0]
    y = np.r_[binned[reference], binned[reference][-1]]
    ax.step(x, y, where="post", color=colors[reference], linewidth=1.0, gid=reference)
    ax.set_ylabel("Power drawn (kW)")
    ax.set_ylim(bottom=0)
    ax.set_xlim(x[0], x[-1])
    ax.set_title(
        f"Power drawn over time: {reference}"
        + (" (above), and each other run's difference from it (below)" if others else ""),
        fontsize=11,
    )
    # the averaging note goes with the time axis: a long title leaves no room beside it
    time_label = TIME_LABEL if not note else f"{TIME_LABEL[:-1]}; {note})"
    if not others:
        ax.set_xlabel(time_label)
        return fig
    below = axes[1, 0]
    below.axhline(0, color=colors[reference], linewidth=1.0)
    for label in others:
        diff = binned[label] - binned[reference]
        below.step(
            x, np.r_[diff, diff[-1]], where="post", color=colors[label], linewidth=1.0, gid=label
        )
    below.set_ylabel(f"minus {reference} (kW)")
    below.set_xlabel(time_label)
    below.grid(axis="y", alpha=0.4)
    fig.legend(
        handles=[Line2D([], [], color=colors[k], label=k) for k in timed],
        loc="outside lower center",
        ncols=_legend_columns(list(timed)),
        fontsize=9,
    )
    return fig
