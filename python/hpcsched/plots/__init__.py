"""Figures that compare scheduling policies (MARS and SNF-ICON style), built with matplotlib's
object-oriented API only: no ``pyplot``, no display, no global state.

Each plot function takes ``{policy label: Result}`` (in display order) and returns a
:class:`matplotlib.figure.Figure`; :func:`figure_to_png` turns one into PNG bytes.

One module per family of figures: ``waits`` (box plots, mean wait by job size),
``utilization``, ``agreement`` (start errors against the recorded schedule), ``starts``
(start kinds), ``search`` (MARS search effort), ``pareto`` (wait against energy), ``icon``
(SNF-ICON modes), ``power`` (node power states, power drawn), ``gantt`` (one run's schedule,
nodes by time); ``catalog`` says which suit a
set of runs and ``_style`` holds what they share. Every name is re-exported here:
``hpcsched.plots.wait_boxplot`` and the like.
"""

from __future__ import annotations

from hpcsched.plots._style import CHAR_PX as CHAR_PX
from hpcsched.plots._style import DASH as DASH
from hpcsched.plots._style import DAY as DAY
from hpcsched.plots._style import DPI as DPI
from hpcsched.plots._style import HEIGHT_IN as HEIGHT_IN
from hpcsched.plots._style import HOUR as HOUR
from hpcsched.plots._style import NBSP as NBSP
from hpcsched.plots._style import TIME_LABEL as TIME_LABEL
from hpcsched.plots._style import WIDTH_IN as WIDTH_IN
from hpcsched.plots._style import Color as Color
from hpcsched.plots._style import figure_to_png
from hpcsched.plots.agreement import ERROR_FLOOR_S as ERROR_FLOOR_S
from hpcsched.plots.agreement import start_error_plot, start_errors
from hpcsched.plots.catalog import applicable_plots
from hpcsched.plots.gantt import busiest_day, gantt_chart
from hpcsched.plots.icon import MODE_COLORS as MODE_COLORS
from hpcsched.plots.icon import MODE_NAMES as MODE_NAMES
from hpcsched.plots.icon import icon_modes_plot
from hpcsched.plots.pareto import AXIS_NAMES as AXIS_NAMES
from hpcsched.plots.pareto import CLASH_LABEL as CLASH_LABEL
from hpcsched.plots.pareto import CLASH_OUTSIDE as CLASH_OUTSIDE
from hpcsched.plots.pareto import CLASH_POINT as CLASH_POINT
from hpcsched.plots.pareto import LABEL_OFFSETS as LABEL_OFFSETS
from hpcsched.plots.pareto import PARETO_MIN_ENERGY_SPAN as PARETO_MIN_ENERGY_SPAN
from hpcsched.plots.pareto import PARETO_MIN_WAIT_SPAN as PARETO_MIN_WAIT_SPAN
from hpcsched.plots.pareto import pareto_frontier, wait_energy_pareto
from hpcsched.plots.power import MAX_TIMELINE_POINTS as MAX_TIMELINE_POINTS
from hpcsched.plots.power import NODE_STATE_COLORS as NODE_STATE_COLORS
from hpcsched.plots.power import NODE_STATES as NODE_STATES
from hpcsched.plots.power import _time_weighted_resample as _time_weighted_resample
from hpcsched.plots.power import node_states_overview_plot, node_states_plot
from hpcsched.plots.power import power_plot as power_plot
from hpcsched.plots.search import search_effort_plot
from hpcsched.plots.starts import BAR_WIDTH as BAR_WIDTH
from hpcsched.plots.starts import MIN_INSIDE_PCT as MIN_INSIDE_PCT
from hpcsched.plots.starts import START_KIND_COLORS as START_KIND_COLORS
from hpcsched.plots.starts import START_KINDS as START_KINDS
from hpcsched.plots.starts import has_start_kinds as has_start_kinds
from hpcsched.plots.starts import start_kinds_plot
from hpcsched.plots.utilization import LABEL_CHAR_PX as LABEL_CHAR_PX
from hpcsched.plots.utilization import utilization_plot
from hpcsched.plots.waits import MARKERS as MARKERS
from hpcsched.plots.waits import MAX_DISTINCT_SIZES as MAX_DISTINCT_SIZES
from hpcsched.plots.waits import MEAN_MARKER as MEAN_MARKER
from hpcsched.plots.waits import WAIT_FLOOR_S as WAIT_FLOOR_S
from hpcsched.plots.waits import wait_boxplot, wait_by_class_boxplot, wait_by_nodes_plot

__all__ = [
    "applicable_plots",
    "busiest_day",
    "figure_to_png",
    "gantt_chart",
    "icon_modes_plot",
    "node_states_overview_plot",
    "node_states_plot",
    "pareto_frontier",
    "search_effort_plot",
    "start_error_plot",
    "start_errors",
    "start_kinds_plot",
    "utilization_plot",
    "wait_boxplot",
    "wait_by_class_boxplot",
    "wait_by_nodes_plot",
    "wait_energy_pareto",
]
