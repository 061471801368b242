"""Which figures suit a set of runs, in the report's reading order."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from matplotlib.figure import Figure

from hpcsched.plots._style import _require_results
from hpcsched.plots.icon import _is_icon, icon_modes_plot
from hpcsched.plots.power import node_states_overview_plot, node_states_plot, power_plot
from hpcsched.plots.search import _is_lookahead, search_effort_plot
from hpcsched.plots.starts import start_kinds_plot
from hpcsched.plots.utilization import utilization_plot
from hpcsched.plots.waits import wait_boxplot, wait_by_class_boxplot, wait_by_nodes_plot

if TYPE_CHECKING:
    from hpcsched.run import Result


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
