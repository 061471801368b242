"""hpcsched: simulate and run HPC batch-job scheduling.

Replay real workloads (SWF, Batsim/SPARS JSON, generators) under production queue heuristics
with EASY backfilling, SNF, MARS look-ahead and SNF-ICON power management; compare policies,
sweep parameters, and report with plots.

The names below load on first use (PEP 562): ``import hpcsched`` and ``hpcsched --help`` stay
light, and pandas, pyarrow and matplotlib are imported only by what needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hpcsched.exceptions import DecisionError, HpcschedError, InputError, OptionError

#: public name -> the module that defines it
_LAZY = {
    "Comparison": "hpcsched.comparison",
    "compare": "hpcsched.comparison",
    "Platform": "hpcsched.site.platform",
    "load_platform": "hpcsched.site.platform",
    "PolicySpec": "hpcsched.policies",
    "PowerSpec": "hpcsched.policies",
    "SearchSpec": "hpcsched.policies",
    "policy_names": "hpcsched.policies",
    "Result": "hpcsched.run",
    "read_run": "hpcsched.run",
    "simulate": "hpcsched.run",
    "DowntimeCalendar": "hpcsched.workload",
    "Workload": "hpcsched.workload",
    "load_workload": "hpcsched.workload",
    "read_calendar": "hpcsched.workload",
    "__version__": "hpcsched._core",
}

#: Submodules reachable as attributes without their own import (as before they loaded lazily).
_SUBMODULES = {
    "advise",
    "classes",
    "cli",
    "comparison",
    "experiment",
    "gym",
    "metrics",
    "output",
    "parallel",
    "plots",
    "policies",
    "protocol",
    "report",
    "reproduce",
    "run",
    "site",
    "sweep",
    "workload",
}

if TYPE_CHECKING:
    from hpcsched._core import __version__
    from hpcsched.comparison import Comparison, compare
    from hpcsched.policies import PolicySpec, PowerSpec, SearchSpec, policy_names
    from hpcsched.run import Result, read_run, simulate
    from hpcsched.site.platform import Platform, load_platform
    from hpcsched.workload import DowntimeCalendar, Workload, load_workload, read_calendar


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        if name in _SUBMODULES:  # hpcsched.workload.generate... after a plain import hpcsched
            return importlib.import_module(f"hpcsched.{name}")
        raise AttributeError(f"module 'hpcsched' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


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
