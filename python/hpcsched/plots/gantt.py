"""One run's schedule as a Gantt chart: nodes by time, each job attempt a box on its nodes,
partitions as bands, nodes down or asleep shaded (``hpcsched.placement`` names the nodes)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch

from hpcsched.exceptions import InputError
from hpcsched.node_ranges import parse_ranges
from hpcsched.placement import Placement, placement
from hpcsched.plots._style import DAY, HOUR, _legend_columns, _new_figure
from hpcsched.plots.power import NODE_STATE_COLORS

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from hpcsched.run import Result

#: gids of the chart's collections (what a test or a caller finds them by)
JOBS_GID = "gantt-jobs"
KILLED_GID = "gantt-killed"
STATES_GID = "gantt-{state}"
#: colours of job boxes, cycled by job id (neighbours in time get different ones)
JOB_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f")
KILLED_COLOR = "#e15759"
#: partition bands: alternate shades behind the boxes
BAND_COLORS = ("#f2f2f2", "#ffffff")
#: a span of the chart at most this long is drawn in hours, else in days
HOURS_SPAN = 3 * DAY
#: the most boxes drawn with outlines
MAX_OUTLINED = 1500
#: the runs a report draws the schedule of (the first ones in display order)
MAX_SCHEDULES = 6


def schedule_plots(results: Mapping[str, Result]) -> list[tuple[str, Callable[[], Figure]]]:
    """(title, figure function) of each run's schedule over the busiest day of the first run
    (the first :data:`MAX_SCHEDULES` runs whose jobs have nodes to draw on: a recorded
    schedule that holds more nodes than the machine has none): what a report shows of its
    schedules."""
    placed: list[tuple[str, Result, Placement]] = []
    for label, result in results.items():
        if len(placed) == MAX_SCHEDULES:
            break
        try:
            placed.append((label, result, placement(result)))
        except InputError:
            continue
    if not placed:
        return []
    span = busiest_day(placed[0][2])
    return [
        (
            f"Schedule: {label}",
            partial(
                gantt_chart,
                result,
                start=span[0],
                end=span[1],
                title=f"Schedule: {label}",
                placed=where,
            ),
        )
        for label, result, where in placed
    ]


def gantt_chart(
    result: Result,
    *,
    start: float | None = None,
    end: float | None = None,
    title: str | None = None,
    placed: Placement | None = None,
) -> Figure:
    """The schedule of ``result`` between ``start`` and ``end`` (seconds of the replay clock;
    default: the whole run): node indices up, time across; a box per job attempt on each run
    of consecutive nodes it held (killed attempts in red), partitions as bands named on the
    right, nodes down, asleep or switching shaded. ``placed``: the run's placement, when the
    caller has it already."""
    placed = placed or placement(result)
    jobs = placed.jobs
    lo = float(jobs["start"].min()) if start is None and len(jobs) else (start or 0.0)
    hi = float(jobs["end"].max()) if end is None and len(jobs) else (end or lo + 1.0)
    if hi <= lo:
        raise ValueError(f"the chart's end ({hi}) must be after its start ({lo})")
    scale = HOUR if hi - lo <= HOURS_SPAN else DAY
    fig, axes = _new_figure(height=5.5)
    ax = axes[0, 0]
    _draw_partitions(ax, placed, lo, hi, scale)
    shown_states = _draw_states(ax, placed, lo, hi, scale)
    inside = jobs[(jobs["end"] > lo) & (jobs["start"] < hi)]
    for killed, gid in ((False, JOBS_GID), (True, KILLED_GID)):
        part = inside[inside["killed"] == killed]
        boxes, ids = _boxes(part, lo, hi, scale, with_ids=True)
        colors = (
            [KILLED_COLOR] * len(boxes)
            if killed
            else [JOB_COLORS[int(i) % len(JOB_COLORS)] for i in ids]
        )
        # outlines tell neighbours apart, until there are so many that they hide the colours
        edges = 0.3 if len(boxes) <= MAX_OUTLINED else 0.0
        collection = PolyCollection(
            boxes, facecolors=colors, edgecolors="#333333", linewidths=edges, zorder=3
        )
        collection.set_gid(gid)
        ax.add_collection(collection)
    ax.set_xlim(lo / scale, hi / scale)
    ax.set_ylim(0, placed.node_count)
    unit = "hours" if scale == HOUR else "days"
    ax.set_xlabel(f"Time since the first submission ({unit})")
    ax.set_ylabel("Node")
    handles = [Patch(facecolor=JOB_COLORS[0], edgecolor="#333333", label="job")]
    if (inside["killed"]).any():
        handles.append(Patch(facecolor=KILLED_COLOR, label="killed by downtime"))
    handles += [
        Patch(facecolor=NODE_STATE_COLORS[s], alpha=0.45, hatch=_hatch(s), label=_label(s))
        for s in shown_states
    ]
    labels = [str(h.get_label()) for h in handles]
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.14),
        ncols=_legend_columns(labels),
        frameon=False,
        fontsize=9,
    )
    named = "laid out by hpcsched" if placed.laid_out else "as the engine placed them"
    ax.set_title(title or f"Schedule: {len(inside):,} job attempts on nodes {named}")
    return fig


def busiest_day(placed: Placement) -> tuple[float, float]:
    """The 24 h (counted from the first start) in which the most attempts started: what a
    chart of one day shows by default."""
    starts = placed.jobs["start"].to_numpy(np.float64)
    if not len(starts):
        return 0.0, DAY
    first = float(starts.min())
    days = np.floor((starts - first) / DAY).astype(np.int64)
    busiest = int(np.argmax(np.bincount(days)))
    return first + busiest * DAY, first + (busiest + 1) * DAY


def _boxes(
    frame: pd.DataFrame, lo: float, hi: float, scale: float, *, with_ids: bool = False
) -> tuple[list[np.ndarray], list[int]]:
    """A rectangle per run of consecutive nodes of each row (``start``, ``end``, ``nodes``;
    clipped to ``[lo, hi]``, in units of ``scale``), and each rectangle's job id
    (``job_id``, when ``with_ids``)."""
    boxes: list[np.ndarray] = []
    ids: list[int] = []
    starts = np.clip(frame["start"].to_numpy(np.float64), lo, hi)
    ends = np.clip(frame["end"].to_numpy(np.float64), lo, hi)
    node_texts = frame["nodes"].tolist()
    job_ids = frame["job_id"].to_numpy() if with_ids else np.zeros(len(node_texts))
    for s, e, text, job in zip(starts, ends, node_texts, job_ids, strict=True):
        x0, x1 = s / scale, e / scale
        for first, last in parse_ranges(text):
            boxes.append(
                np.array([[x0, first], [x1, first], [x1, last + 1], [x0, last + 1]], np.float64)
            )
            ids.append(int(job))
    return boxes, ids


def _draw_states(ax: Axes, placed: Placement, lo: float, hi: float, scale: float) -> list[str]:
    """Nodes down, asleep or switching, shaded; the states drawn."""
    shown = []
    states = placed.states
    for state in ("down", "sleeping", "switching_on", "switching_off"):
        rows = states[(states["state"] == state) & (states["end"] > lo) & (states["start"] < hi)]
        if rows.empty:
            continue
        boxes, _ = _boxes(rows, lo, hi, scale)
        collection = PolyCollection(
            boxes,
            facecolors=NODE_STATE_COLORS[state],
            alpha=0.45,
            hatch=_hatch(state),
            edgecolors="none",
            zorder=2,
        )
        collection.set_gid(STATES_GID.format(state=state))
        ax.add_collection(collection)
        shown.append(state)
    return shown


def _draw_partitions(ax: Axes, placed: Placement, lo: float, hi: float, scale: float) -> None:
    """Each partition's nodes as a band behind the boxes, named at the right edge."""
    for k, (name, ranges) in enumerate(placed.partitions):
        for first, end in ranges:
            ax.axhspan(first, end, color=BAND_COLORS[k % 2], zorder=0, lw=0)
            ax.axhline(first, color="#999999", lw=0.6, zorder=1)
        first = min(a for a, _ in ranges)
        end = max(b for _, b in ranges)
        ax.annotate(
            name,
            xy=(1.0, (first + end) / 2),
            xycoords=("axes fraction", "data"),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
            annotation_clip=False,
        )
    del lo, hi, scale  # bands span the whole time axis


def _hatch(state: str) -> str | None:
    return "//" if state == "down" else None


def _label(state: str) -> str:
    return state.replace("_", " ")
