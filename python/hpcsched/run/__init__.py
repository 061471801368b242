"""Running one simulation: ``simulate(...) -> Result``.

One job per module, each importing only those above it in this list:

- :mod:`hpcsched.run.options`: checking a run's options (policy, overrun, platform, notice of
  maintenance, decision log); comparisons, sweeps and the command line check theirs there too;
- :mod:`hpcsched.run.result`: :class:`Result` and :func:`read_run`;
- :mod:`hpcsched.run.site`: the run's site, resolved once (``RunSite``: the jobs sized for the
  machine, their partitions, the calendar's partition windows, Slurm's inputs);
- :mod:`hpcsched.run.native`: building the engine (``_core.Simulation``) from a workload, a
  calendar, the run's site and a policy;
- :mod:`hpcsched.run.summary`: the job table, the summary and the result of a finished run;
- :mod:`hpcsched.run.replay`: :func:`simulate`, which checks, reads, builds the engine, drives
  it to the end and assembles the result.

The names below are this package's interface: import them from ``hpcsched.run``. (No module
here is named after a function it exports, so ``hpcsched.run.simulate`` is always the
function.)
"""

from __future__ import annotations

from hpcsched.run.native import NativeRun, native_run, new_simulation
from hpcsched.run.options import (
    DECISION_LOGS,
    OVERRUNS,
    as_policy_spec,
    check_announce_lead,
    check_decision_log,
    check_overrun,
    check_power_model,
    open_platform,
    resolve_platform,
)
from hpcsched.run.replay import ProgressHook, simulate
from hpcsched.run.result import LogFrame, Result, StoredLog, read_run
from hpcsched.run.summary import START_KINDS

__all__ = [
    "DECISION_LOGS",
    "OVERRUNS",
    "START_KINDS",
    "LogFrame",
    "NativeRun",
    "ProgressHook",
    "Result",
    "StoredLog",
    "as_policy_spec",
    "check_announce_lead",
    "check_decision_log",
    "check_overrun",
    "check_power_model",
    "native_run",
    "new_simulation",
    "open_platform",
    "read_run",
    "resolve_platform",
    "simulate",
]
