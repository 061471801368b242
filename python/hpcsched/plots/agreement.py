"""How close each policy comes to what happened: the distribution of its jobs' start errors,
``|simulated start - recorded start|``, against the schedule the trace records
(:mod:`hpcsched.agreement`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure

from hpcsched.agreement import CLOSE
from hpcsched.plots._style import (
    HOUR,
    NBSP,
    _hours_log_axis,
    _legend_columns,
    _new_figure,
    _policy_colors,
    _require_results,
)
from hpcsched.workload.record import has_record, recorded_starts

if TYPE_CHECKING:
    from hpcsched.run import Result

#: start errors below this are drawn at it (a log axis cannot show zero), s
ERROR_FLOOR_S = 1.0


def start_errors(results: Mapping[str, Result]) -> dict[str, np.ndarray]:
    """Per run that has an agreement with the recorded schedule (``info["agreement"]``), each
    job's ``|simulated start - recorded start|`` (s), over the jobs started in both schedules,
    in replay order: the errors whose mean is the agreement's ``start_error`` mean.

    The recorded starts come from the run's workload (submit + recorded wait) or, for a run
    read back from its directory (which keeps no recorded waits), from the recorded run among
    ``results``, job by job."""
    reference = next((r for r in results.values() if r.info.get("record")), None)
    errors = {}
    for label, result in results.items():
        if not result.info.get("agreement"):
            continue
        recorded = _recorded_starts(result, reference)
        if recorded is None:
            continue
        simulated = result.jobs["start"].to_numpy(np.float64)
        both = np.isfinite(recorded) & np.isfinite(simulated)
        errors[label] = np.abs(simulated[both] - recorded[both])
    return errors


def _recorded_starts(result: Result, reference: Result | None) -> np.ndarray | None:
    if has_record(result.workload):
        return recorded_starts(result.workload.jobs)
    if reference is not None and np.array_equal(
        reference.jobs["job_id"].to_numpy(), result.jobs["job_id"].to_numpy()
    ):
        return reference.jobs["start"].to_numpy(np.float64)
    return None


def start_error_plot(results: Mapping[str, Result]) -> Figure:
    """The share of jobs (%) each simulated policy started within a given time of their
    recorded start: one curve (an empirical distribution function) per run that has an
    agreement with the recorded schedule, none for the recorded run itself; hours on a log
    axis, with the one-hour mark the agreement's ``within_1h`` reads."""
    _require_results(results)
    errors = start_errors(results)
    if not errors:
        raise ValueError(
            "no run has an agreement with the recorded schedule: the trace records no waits"
        )
    colors = _policy_colors(list(results))  # the colours of every other figure
    fig, axes = _new_figure()
    ax = axes[0, 0]
    drawn = {label: error for label, error in errors.items() if len(error)}
    left = ERROR_FLOOR_S / HOUR / 2
    right = max([2 * CLOSE, *(float(e.max()) for e in drawn.values())]) / HOUR * 1.5  # 1 h shows
    for k, (label, error) in enumerate(drawn.items()):
        hours = np.sort(np.maximum(error, ERROR_FLOOR_S)) / HOUR
        share = 100 * np.arange(1, len(hours) + 1) / len(hours)
        # from the left edge at 0 %, up at each error, flat to the right edge at 100 %
        x = np.concatenate([[left], hours, [right]])
        y = np.concatenate([[0.0], share, [100.0]])
        within = float((error <= CLOSE).mean())
        ax.step(
            x,
            y,
            where="post",
            color=colors[label],
            linewidth=max(2.6 - 0.4 * k, 1.0),  # thinner on top: curves that coincide show
            label=f"{label}: {100 * within:.0f}{NBSP}% within 1{NBSP}h, "
            f"mean {_duration(float(error.mean()))}",
            gid=f"start-error-{label}",
        )
    ax.set_xlim(left, right)
    ax.set_ylim(0, 100)
    _hours_log_axis(ax, "x")
    ax.axvline(CLOSE / HOUR, color="dimgrey", linestyle="--", linewidth=1, zorder=1)
    ax.annotate(
        f"1{NBSP}h",
        (CLOSE / HOUR, 100),
        xytext=(3, -3),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize=9,
        color="dimgrey",
    )
    ax.grid(alpha=0.4)
    ax.set_xlabel(
        f"|simulated start {chr(0x2212)} recorded start| (h, log scale; "
        f"errors < {ERROR_FLOOR_S:g} s shown at {ERROR_FLOOR_S:g} s)"
    )
    ax.set_ylabel("Jobs started within that\nof their recorded start (%)")
    compared = {len(e) for e in errors.values()}
    jobs = f"{compared.pop():,} jobs" if len(compared) == 1 else "the jobs"
    ax.set_title(f"Start error against the recorded schedule ({jobs} started in both)")
    entries = [line.get_label() for line in ax.lines if line.get_gid()]
    # below the axes: inside, a long list of policies would cover the curves
    fig.legend(loc="outside lower center", ncols=_legend_columns(entries), fontsize=9)
    return fig


def _duration(seconds: float) -> str:
    """``42 s``, ``12 min`` or ``4.13 h``: a mean start error in a unit that shows it."""
    if seconds < 60:
        return f"{seconds:.0f}{NBSP}s"
    if seconds < HOUR:
        return f"{seconds / 60:.0f}{NBSP}min"
    return f"{seconds / HOUR:.2f}{NBSP}h"
