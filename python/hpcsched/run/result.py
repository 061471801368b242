"""The outcome of one run: :class:`Result` (in memory, or read back from a run directory by
:func:`read_run`), whose logs may stay in the run directory (:class:`StoredLog`) until first
used."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from hpcsched.logs import DECISIONS, POWER_DECISIONS, TIMELINE
from hpcsched.output import read_run_files, write_run
from hpcsched.workload import DowntimeCalendar, Workload


class StoredLog:
    """A log written to a run directory while the run went: read from there on first use."""

    def __init__(self, path: str) -> None:
        self.path = path

    def read(self) -> pd.DataFrame:
        return pd.read_parquet(self.path) if os.path.exists(self.path) else pd.DataFrame()


#: A log in memory, or left in the run directory.
LogFrame = pd.DataFrame | StoredLog


class Result:
    """The outcome of one run: ``jobs`` (one row per job, replay order), ``summary`` (one-row
    DataFrame of the scalar metrics) and ``info`` (the full nested summary, as in
    ``summary.json``).

    ``decisions`` (one row per invocation of a look-ahead policy or a power manager; empty for
    the others), ``timeline`` (node counts per power state over time, power managers only) and
    ``power_decisions`` (the power manager's log when a look-ahead policy runs under one;
    ``decisions`` is then the look-ahead's) are frames. A run given a directory writes them
    there while it goes and reads them back on first use.
    """

    def __init__(
        self,
        jobs: pd.DataFrame,
        info: dict[str, Any],
        lost: pd.DataFrame,
        reservations: pd.DataFrame,
        decisions: LogFrame,
        timeline: LogFrame,
        workload: Workload,
        calendar: DowntimeCalendar,
        power_decisions: LogFrame | None = None,
    ) -> None:
        self.jobs = jobs
        self.info = info
        #: Attempts killed by downtime: job (replay index), start, end, nodes
        self.lost = lost
        #: EASY reservations as decided: time, top job (replay index), shadow time, extra nodes
        self.reservations = reservations
        self.workload = workload
        self.calendar = calendar
        self._logs: dict[str, LogFrame] = {
            DECISIONS: decisions,
            TIMELINE: timeline,
            POWER_DECISIONS: pd.DataFrame() if power_decisions is None else power_decisions,
        }

    def __repr__(self) -> str:
        return f"Result(jobs=<{len(self.jobs)} jobs>, info={self.info!r})"

    def replace(self, **changes: Any) -> Result:
        """A copy with some of the constructor's arguments changed (as ``dataclasses.replace``)."""
        fields = {
            "jobs": self.jobs,
            "info": self.info,
            "lost": self.lost,
            "reservations": self.reservations,
            "decisions": self._logs[DECISIONS],
            "timeline": self._logs[TIMELINE],
            "workload": self.workload,
            "calendar": self.calendar,
            "power_decisions": self._logs[POWER_DECISIONS],
        }
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"Result has no field {', '.join(sorted(unknown))}")
        return Result(**{**fields, **changes})

    @property
    def decisions(self) -> pd.DataFrame:
        return self.log(DECISIONS)

    @property
    def timeline(self) -> pd.DataFrame:
        return self.log(TIMELINE)

    @property
    def power_decisions(self) -> pd.DataFrame:
        return self.log(POWER_DECISIONS)

    def log(self, name: str) -> pd.DataFrame:
        """The log kept in a run directory as ``name`` (one of :data:`LOG_FILES`)."""
        frame = self._logs[name]
        if isinstance(frame, StoredLog):
            frame = self._logs[name] = frame.read()
        return frame

    @property
    def summary(self) -> pd.DataFrame:
        flat = pd.json_normalize(_scalars(self.info), sep=".")
        return flat

    def write(
        self,
        out: str | os.PathLike[str],
        *,
        csv: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> str:
        """Writes the run directory atomically; returns its path."""
        return write_run(self, out, csv=csv, extra=extra)


def read_run(folder: str | os.PathLike[str]) -> Result:
    """Opens a run directory written by :meth:`Result.write`. The EASY reservations and the
    attempts killed by downtime are not stored there: ``reservations`` and ``lost`` are empty."""
    jobs, info, decisions, timeline = read_run_files(folder)
    power_path = os.path.join(os.fspath(folder), "power_decisions.parquet")
    power_decisions = pd.read_parquet(power_path) if os.path.exists(power_path) else pd.DataFrame()
    workload = Workload(
        jobs=jobs[["job_id", "submit", "run_time", "requested_time", "nodes", "user"]],
        nodes=int(info["inputs"]["nodes"]),
        source=str(info["inputs"]["trace"]),
        format=str(info["inputs"]["format"]),
        time_origin=float(info["workload"]["time_origin"]),
    )
    empty = pd.DataFrame()
    return Result(
        jobs=jobs,
        info=info,
        lost=empty,
        reservations=empty,
        decisions=decisions,
        timeline=timeline,
        workload=workload,
        calendar=DowntimeCalendar((), announce_lead=float(info["inputs"]["announce_lead"])),
        power_decisions=power_decisions,
    )


def _scalars(tree: dict[str, Any]) -> dict[str, Any]:
    """The nested dict without its lists (per-window details stay in ``info``)."""
    return {
        k: _scalars(v) if isinstance(v, dict) else v
        for k, v in tree.items()
        if not isinstance(v, list)
    }
