"""Mean wait against wasted energy with the empirical Pareto frontier (SNF-ICON Figs. 6,
8-10), and the frontier itself."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from hpcsched.plots._style import (
    DPI,
    HEIGHT_IN,
    HOUR,
    Color,
    _new_figure,
    _policy_colors,
)

if TYPE_CHECKING:
    pass


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
    # farther out, for crowded spots where every near position covers something
    (12, 24, "left"),
    (12, -32, "left"),
    (-12, 24, "right"),
    (-12, -32, "right"),
    (18, -4, "left"),
    (-18, -4, "right"),
    (0, 34, "center"),
    (0, -44, "center"),
]
#: room kept around a label's estimated width, each side (pixels)
LABEL_MARGIN_PX = 4.0
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
        # (a margin each side: glyphs such as "m" are wider than the average the width assumes)
        width = len(text) * char_w + 2 * LABEL_MARGIN_PX
        for dx, dy, ha in LABEL_OFFSETS:
            left = u + dx * scale - {"left": 0, "center": width / 2, "right": width}[ha]
            left -= LABEL_MARGIN_PX if ha == "left" else -LABEL_MARGIN_PX if ha == "right" else 0
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
