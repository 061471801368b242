"""Which figures suit a set of runs, in the report's reading order."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from matplotlib.figure import Figure

from hpcsched.plots._style import _require_results
from hpcsched.plots.agreement import start_error_plot
from hpcsched.plots.gantt import schedule_plots
from hpcsched.plots.icon import _is_icon, icon_modes_plot
from hpcsched.plots.power import node_states_overview_plot, node_states_plot, power_plot
from hpcsched.plots.search import _is_lookahead, search_effort_plot
from hpcsched.plots.starts import has_start_kinds, start_kinds_plot
from hpcsched.plots.utilization import utilization_plot
from hpcsched.plots.waits import wait_boxplot, wait_by_class_boxplot, wait_by_nodes_plot

if TYPE_CHECKING:
    from hpcsched.run import Result


def applicable_plots(results: Mapping[str, Result]) -> list[tuple[str, Callable[[], Figure]]]:
    """(title, zero-argument figure function) for each plot that suits these results, in
    reading order: waits, utilization, start errors against the recorded schedule (runs of a
    trace that records it), start kinds (simulated runs), search effort (look-ahead runs),
    SNF-ICON modes, node states (one figure for all power-managed runs), then each run's
    schedule over the same busiest day (the first ``MAX_SCHEDULES`` runs). The Pareto plot
    needs a table: not here."""
    _require_results(results)
    plots: list[tuple[str, Callable[[], Figure]]] = [
        ("Waiting time by policy", partial(wait_boxplot, results)),
        ("Waiting time by job size class", partial(wait_by_class_boxplot, results)),
        ("Mean waiting time by requested nodes", partial(wait_by_nodes_plot, results)),
        ("Utilization", partial(utilization_plot, results)),
    ]
    if any(r.info.get("agreement") for r in results.values()):
        plots.append(
            ("Start error against the recorded schedule", partial(start_error_plot, results))
        )
    if any(has_start_kinds(r) for r in results.values()):
        plots.append(("Job start kinds", partial(start_kinds_plot, results)))
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
    plots += schedule_plots(results)
    return plots


#: What to read from each figure of ``applicable_plots``, by its title (a report's caption;
#: the title says what is drawn).
READING = {
    "Waiting time by policy": "Each box spans the middle half of the started jobs' waits, the "
    "whiskers the 5th to 95th percentile, the diamond the mean, on a log scale: a lower box "
    "is better for most jobs, a lower top whisker for the unlucky ones.",
    "Waiting time by job size class": "The same per size class: whom a policy favours. A box "
    "that drops for small jobs and rises for large ones is a policy trading one for the other.",
    "Mean waiting time by requested nodes": "Where the lines cross, the policies trade the "
    "waits of jobs of one size against another's; the legend gives each overall mean.",
    "Utilization": "The share of the available node-hours that ran jobs, per uptime window "
    "(and in the 48 h before each maintenance, where a drain shows as a drop): higher means "
    "fewer idle nodes. Mind where the axis starts.",
    "Start error against the recorded schedule": "For each simulated policy, the share of jobs it "
    "started within a given time of when the site's scheduler started them (the recorded "
    "schedule, which has no curve of its own), over the jobs started in both: a curve higher "
    "and further left is closer to what happened; where it crosses the 1 h line is the "
    "agreement table's 'within 1 h'.",
    "Job start kinds": "How the jobs started: in queue order, by EASY backfilling around a "
    "blocked job, or after a deliberate drain (MARS). More backfilling means more jobs "
    "started out of order to fill idle nodes.",
    "MCTS search effort": "Per searched decision: how many distinct outcomes the search "
    "weighed and the iterations it spent; decisions with one outcome need no search and "
    "are not shown.",
    "SNF-ICON modes": "When SNF-ICON trusted its statistics (ICON mode: warm spares planned) "
    "and when it fell back to IPM; the spare target, where drawn, is how many idle nodes it "
    "kept awake.",
    "Power drawn over time": "Above, the first run's power; below, each other run's power "
    "minus it on the same time bins: below zero is power saved, above it power spent (wake-ups "
    "for arriving work, warm spares).",
    "Schedule": "Each box is a job on its nodes over the same day for every run (the day with "
    "the most starts in the first run): gaps are idle nodes, red boxes attempts killed by "
    "downtime, hatched grey nodes down, blue ones asleep. Where a run only counts nodes, "
    "hpcsched lays its jobs out on the lowest free nodes (the title says which).",
    "Node power states": "How many nodes computed, idled, slept or switched: idle nodes are "
    "the energy a power manager could save, switching ones the price of saving it.",
}


def reading_of(title: str) -> str:
    """The caption of a figure of ``applicable_plots``: what to read from it."""
    if title.startswith("Schedule"):
        return READING["Schedule"]
    return READING.get(title) or READING["Node power states"]
