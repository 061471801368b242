"""slurmctld.log as the live Slurm benchmarks and tests read it: its time stamps, and when the
priority decay thread first ran, the origin of Slurm's grid of recalculations (one every
``CALC_PERIOD`` s from then), which a replay aligns its first submission with."""

from __future__ import annotations

import re
import time
from datetime import datetime
from pathlib import Path

FIRST_CALC = re.compile(r"^\[(\S+)\] priority/multifactor: _read_last_decay_ran")
CALC_PERIOD = 60.0


def log_time(stamp: str) -> float:
    """slurmctld's log stamp (the machine's local time) as an epoch."""
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f").timestamp()


def first_recalculation(log: Path, wait: float = 30.0) -> float | None:
    """When slurmctld's decay thread first ran, waiting up to ``wait`` s for the line to be
    logged (``None`` if it was not: each caller says so in its own way)."""
    deadline = time.monotonic() + wait
    while True:
        if log.exists():
            for line in log.read_text(errors="replace").splitlines():
                if m := FIRST_CALC.match(line):
                    return log_time(m.group(1))
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)
