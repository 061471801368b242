"""hpcsched: simulate and run HPC batch-job scheduling.

Replay real workloads (SWF, Batsim/SPARS JSON, generators) under production queue heuristics
with EASY backfilling, SNF, MARS look-ahead and SNF-ICON power management; compare policies,
sweep parameters, and report with plots.
"""

from hpcsched._core import __version__
from hpcsched.compare import Comparison, compare
from hpcsched.exceptions import DecisionError, HpcschedError, InputError, OptionError
from hpcsched.platform import Platform, load_platform
from hpcsched.policies import PolicySpec, PowerSpec, SearchSpec, policy_names
from hpcsched.run import Result, read_run, simulate
from hpcsched.workload import DowntimeCalendar, Workload, load_workload, read_calendar

__all__ = [
    "Comparison",
    "DecisionError",
    "DowntimeCalendar",
    "HpcschedError",
    "InputError",
    "OptionError",
    "Platform",
    "PolicySpec",
    "PowerSpec",
    "Result",
    "SearchSpec",
    "Workload",
    "__version__",
    "compare",
    "load_platform",
    "load_workload",
    "policy_names",
    "read_calendar",
    "read_run",
    "simulate",
]
