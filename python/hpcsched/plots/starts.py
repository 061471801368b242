"""How jobs started: the share of primary, backfill and drain starts per policy (MARS Fig. 12)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from hpcsched import _core
from hpcsched.plots._style import (
    CHAR_PX,
    NBSP,
    _axes_width_px,
    _new_figure,
    _require_results,
    _set_category_ticks,
    _started,
)

if TYPE_CHECKING:
    from hpcsched.run import Result


#: the engine's start kinds
START_KINDS = tuple(_core.start_kind_names())
START_KIND_COLORS = {"primary": "#4c72b0", "backfill": "#dd8452", "drain": "#55a868"}
#: start-kind segments thinner than this (% of the bar) are labelled beside it
MIN_INSIDE_PCT = 6.0
BAR_WIDTH = 0.5


# --- start kinds -------------------------------------------------------------------------------


def has_start_kinds(result: Result) -> bool:
    """Whether the run says how its jobs started: every simulated run does; the recorded
    schedule (``--policy recorded``) does not (the trace records no kind)."""
    started = _started(result)
    return started.empty or bool(started["start_kind"].notna().any())


def start_kinds_plot(results: Mapping[str, Result]) -> Figure:
    """Share (%) of started jobs that started as primary, backfill or drain (MARS Fig. 12),
    per run that says how its jobs started: the recorded schedule is left out (a note says so)
    rather than drawn as an empty bar."""
    _require_results(results)
    left_out = [label for label, r in results.items() if not has_start_kinds(r)]
    results = {label: r for label, r in results.items() if label not in left_out}
    if not results:
        raise ValueError(
            "no run says how its jobs started: the recorded schedule records no start kinds"
        )
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
    footnotes: list[str] = []
    if counts["drain"].any():
        # the tables count drain *decisions*; one decision marks every job waiting then
        footnotes.append(
            "drain: a job that was waiting when MARS chose to start nothing (a drain decision)\n"
            "and started later; one decision marks every job waiting then, so the tables' "
            "drain decisions and these job counts differ"
        )
    if left_out:
        footnotes.append(
            f"Not shown: {', '.join(left_out)} (the trace records when its jobs started, not how)"
        )
    if footnotes:
        fig.supxlabel("\n".join(footnotes), fontsize=8, color="dimgrey")
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
