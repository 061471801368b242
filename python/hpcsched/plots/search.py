"""MARS search effort: MCTS iterations and effective branching per searched decision
(MARS Fig. 15)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from hpcsched.plots._style import (
    DAY,
    HEIGHT_IN,
    TIME_LABEL,
    _new_figure,
    _policy_colors,
)

if TYPE_CHECKING:
    from hpcsched.run import Result


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
