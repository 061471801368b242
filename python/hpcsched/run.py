"""Running one simulation: ``simulate(...) -> Result``."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from hpcsched import _core, metrics
from hpcsched.classes import SIZE_CLASSES, size_class_codes
from hpcsched.exceptions import InputError, OptionError, shown
from hpcsched.logs import (
    BATCH_ROWS,
    DECISIONS,
    LOG_FILES,
    POWER_DECISIONS,
    TIMELINE,
    LogFiles,
    log_names,
    take_logs,
)
from hpcsched.output import RunStaging, check_writable, write_run
from hpcsched.platform import Platform, load_platform
from hpcsched.policies import REWARD_TERMS, PolicySpec, PowerSpec
from hpcsched.protocol import Policy, PythonPolicySpec, is_python_policy, load_policy
from hpcsched.workload import (
    DEFAULT_ANNOUNCE_LEAD,
    DowntimeCalendar,
    Workload,
    load_workload,
    read_calendar,
)

OVERRUNS = ("continue", "kill")
START_KINDS = tuple(_core.start_kind_names())

#: Called with (simulated time, jobs submitted, scheduling invocations) as a run progresses.
ProgressHook = Callable[[float, int, int], None]


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
    from hpcsched.output import read_run_files

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


def simulate(
    workload: Workload | str | os.PathLike[str],
    policy: str | PolicySpec | PythonPolicySpec | Policy = "fcfs",
    *,
    window: int | None = None,
    backfill: str | None = None,
    nodes: int | None = None,
    procs_per_node: int | str = 1,
    format: str | None = None,
    lenient: bool = False,
    strict: bool = False,
    downtime: DowntimeCalendar | str | os.PathLike[str] | None = None,
    announce_lead: float | None = None,
    overrun: str = "continue",
    platform: Platform | str | None = None,
    out: str | os.PathLike[str] | None = None,
    csv: bool = False,
    progress: ProgressHook | None = None,
    decision_log: str = "compact",
) -> Result:
    """Replays ``workload`` (a :class:`Workload` or a trace path) under ``policy``.

    ``policy`` is a name (a MARS Table II heuristic such as ``fcfs``, ``wfp3``, ``sjf``, or
    ``snf``) with ``window`` and ``backfill``, a :class:`PolicySpec`, a Python policy (an
    object with ``decide(view)``, see :mod:`hpcsched.protocol`) or ``"python:MODULE:CLASS"``.
    ``downtime`` is a calendar file or object in the trace's clock. ``platform`` (a preset name
    such as
    ``"AOBA-64"``, a TOML file or a :class:`Platform`) sets the machine size and, with a power
    model, adds energy to the summary. With ``out``, the run directory is written
    (atomically). ``progress`` is called with (simulated time, jobs submitted) as the run goes.
    ``decision_log`` is ``compact`` (one row of scalars per decision) or ``full`` (also every
    candidate of each decision: MARS's distinct outcomes, the power manager's spare targets).
    """
    if decision_log not in DECISION_LOGS:
        raise OptionError(
            f"must be one of {', '.join(DECISION_LOGS)}, not {decision_log!r}",
            option="--decision-log",
        )
    spec = as_policy_spec(policy, window, backfill)
    check_overrun(overrun)
    if out is not None:
        check_writable(out)  # before the run, not after it
    platform, nodes = resolve_platform(platform, nodes)
    t0 = time.perf_counter()
    read_before = workload.load_seconds if isinstance(workload, Workload) else 0.0
    if not isinstance(workload, Workload):
        workload = load_workload(
            workload,
            format=format,
            nodes=nodes,
            procs_per_node=procs_per_node,
            lenient=lenient,
            strict=strict,
        )
    if (
        spec.search is not None
        and spec.search.reward[REWARD_TERMS.index("energy")] > 0
        and (platform is None or platform.power is None)
    ):
        raise OptionError(
            "the energy reward needs a platform with a power model (e.g. --platform AOBA-64)",
            option="--reward",
        )
    if spec.power is not None and (platform is None or platform.power is None):
        # say what is missing: the platform, not the queue policy, is at fault
        missing = (
            "no platform was given"
            if platform is None
            else f"platform {shown(platform.name)} has no power model"
        )
        raise OptionError(
            f"the power manager {spec.power.manager} ({spec.label}) switches nodes on and off "
            f"and needs a platform with a power model, but {missing}; give one "
            "(e.g. --platform AOBA-64)",
            option="--platform",
        )
    if platform is not None and workload.nodes != platform.nodes:
        raise OptionError(
            f"the workload was read for {workload.nodes} nodes but platform {platform.name} has "
            f"{platform.nodes}; read it with nodes={platform.nodes}",
            option="--platform",
        )
    if platform is not None and platform.heterogeneous:
        workload = _fit_groups(workload, platform)
    if len(workload) == 0:
        raise InputError(f"no job to replay{_skips(workload)}", path=workload.source)
    calendar = _calendar(downtime, announce_lead, workload)
    # node power states under a power manager, or a Python policy on a power platform
    manager = _manager(spec, platform)
    t1 = time.perf_counter()
    # the reading of a workload given already read counts too (the command line reads first)
    load_seconds = t1 - t0 + read_before

    sim = new_simulation(
        workload,
        calendar,
        spec.engine_name,
        spec.window,
        str(spec.backfill),  # resolved by the spec
        overrun=overrun,
        platform=platform,
        search=spec.search.to_native(overrun) if spec.search else None,
        manager=manager,
        python=spec.adapter() if isinstance(spec, PythonPolicySpec) else None,
        estimates=getattr(spec, "estimates", "requested"),
        max_wait=getattr(spec, "max_wait", None),
        decision_log=decision_log,
    )
    # With a run directory, the logs go to its staging folder while the run goes; the columns
    # the summary needs stay in memory.
    search_log, power_log_name = log_names(spec.search is not None)
    summary_columns = {}
    if spec.search is not None:
        summary_columns[search_log] = SEARCH_STATS_COLUMNS
    if spec.is_power:
        summary_columns[power_log_name] = MODE_COLUMNS
    with contextlib.ExitStack() as cleanup:
        staging = None if out is None else cleanup.enter_context(RunStaging(out))
        files = None
        if staging is not None:
            files = LogFiles(
                staging.folder,
                search=spec.search is not None,
                power=spec.is_power,
                keep=summary_columns,
            )
            cleanup.callback(files.close)
        _drive(sim, progress, files)
        t2 = time.perf_counter() - (0.0 if files is None else files.seconds)
        if files is not None:
            files.flush(sim, final=True)
            files.close()
        result = _result(
            sim,
            workload,
            calendar,
            spec,
            overrun,
            platform,
            decision_log,
            load_seconds=load_seconds,
            simulate_seconds=t2 - t1,
            options={
                "format": format,
                "procs_per_node": procs_per_node,
                "lenient": lenient,
                "strict": strict,
                "nodes": nodes,
            },
            downtime_source=None if downtime is None else calendar.source,
            stored=None if staging is None or files is None else (staging.target, files),
        )
        if staging is not None:
            staging.commit(result, csv=csv)
    return result


#: The columns of a decision log that the summary reads (``metrics.search_stats``,
#: ``metrics.mode_occupancy``).
SEARCH_STATS_COLUMNS = ["time", "outcomes", "iterations", "drain", "seconds"]
MODE_COLUMNS = ["time", "mode"]


def _result(
    sim: Any,
    workload: Workload,
    calendar: DowntimeCalendar,
    spec: PolicySpec | PythonPolicySpec,
    overrun: str,
    platform: Platform | None,
    decision_log: str,
    *,
    load_seconds: float,
    simulate_seconds: float,
    options: dict[str, Any],
    downtime_source: str | None,
    stored: tuple[str, LogFiles] | None,
) -> Result:
    """The run's outcome from the finished simulation; ``stored``: the run directory and the
    logs written to its staging folder (the result reads them from the run directory on first
    use)."""
    raw = sim.results()
    table = _job_table(workload, raw)
    lost = pd.DataFrame(
        {
            "job_index": raw["lost_job"],
            "start": raw["lost_start"],
            "end": raw["lost_end"],
            "nodes": workload.jobs["nodes"].to_numpy()[raw["lost_job"].astype(np.int64)],
        }
    )
    info = _summary(
        workload,
        calendar,
        spec,
        overrun,
        table,
        lost,
        raw,
        load_seconds=load_seconds,
        simulate_seconds=simulate_seconds,
        options=options,
        downtime_source=downtime_source,
    )
    reservations = pd.DataFrame(
        {
            "time": raw["reservation_time"],
            "job_index": raw["reservation_job"].astype(np.int64),
            "shadow_time": raw["reservation_shadow"],
            "extra": raw["reservation_extra"].astype(np.int64),
        }
    )
    info["inputs"]["platform"] = platform.to_dict() if platform is not None else None
    info["inputs"]["decision_log"] = decision_log
    if "energy_by_state_j" in raw:
        info["energy"] = metrics.energy_summary(
            raw["energy_by_state_j"], raw["node_seconds"], raw["horizon"]
        )
    search_name, power_name = log_names(spec.search is not None)
    logs: dict[str, LogFrame]
    summary_log: Callable[[str], pd.DataFrame]
    if stored is None:
        frames = take_logs(sim, search=spec.search is not None, power=spec.is_power)
        logs = dict(frames)
        summary_log = frames.__getitem__
    else:
        target, files = stored
        written = files.paths()
        logs = {
            name: StoredLog(os.path.join(target, name)) if name in written else pd.DataFrame()
            for name in LOG_FILES
        }
        summary_log = files.kept
    if spec.search is not None:
        info["search"] = metrics.search_stats(summary_log(search_name))
    if spec.is_power:
        info["energy"]["mode_occupancy"] = metrics.mode_occupancy(
            summary_log(power_name), raw["horizon"]
        )
    return Result(
        jobs=table,
        info=info,
        lost=lost,
        reservations=reservations,
        decisions=logs.get(DECISIONS, pd.DataFrame()),
        timeline=logs.get(TIMELINE, pd.DataFrame()),
        workload=workload,
        calendar=calendar,
        power_decisions=logs.get(POWER_DECISIONS, pd.DataFrame()),
    )


def new_simulation(
    workload: Workload,
    calendar: DowntimeCalendar,
    policy: str,
    window: int | None = None,
    backfill: str = "easy",
    *,
    overrun: str = "continue",
    platform: Platform | None = None,
    search: dict[str, Any] | None = None,
    manager: dict[str, Any] | None = None,
    python: Any = None,
    estimates: str = "requested",
    max_wait: float | None = None,
    decision_log: str = "compact",
) -> Any:
    """The engine for `workload` (replay clock) and `calendar` (already shifted to it)."""
    jobs = workload.jobs
    windows = calendar.windows
    return _core.Simulation(
        jobs["job_id"].to_numpy(np.int64),
        jobs["submit"].to_numpy(np.float64),
        jobs["run_time"].to_numpy(np.float64),
        jobs["requested_time"].to_numpy(np.float64),
        jobs["nodes"].to_numpy(np.int64),
        workload.nodes,
        policy,
        window,
        backfill,
        overrun,
        np.array([w.start for w in windows], dtype=np.float64),
        np.array([w.end for w in windows], dtype=np.float64),
        np.array([w.kind == "scheduled" for w in windows], dtype=bool),
        np.array([w.nodes or 0 for w in windows], dtype=np.int64),
        calendar.announce_lead,
        search,
        platform.power.to_dict() if platform is not None and platform.power else None,
        manager,
        python=python,
        user=jobs["user"].to_numpy(np.int64) if "user" in jobs else None,
        estimates=estimates,
        down_asleep=np.array([w.back == "asleep" for w in windows], dtype=bool),
        max_wait=max_wait,
        groups=[(g.nodes, g.power.to_dict()) for g in platform.groups]
        if platform is not None and platform.heterogeneous
        else None,
        decision_log=decision_log,
    )


def as_policy_spec(
    policy: str | PolicySpec | PythonPolicySpec | Policy,
    window: int | None = None,
    backfill: str | None = None,
) -> PolicySpec | PythonPolicySpec:
    """The spec of a policy given as a name (with ``window`` and ``backfill``), a spec,
    ``"python:..."`` or a Python policy object."""
    if isinstance(policy, PolicySpec | PythonPolicySpec):
        return policy
    if isinstance(policy, str):
        if policy.startswith("python:"):
            return load_policy(policy)
        return PolicySpec(policy, window, backfill)
    if is_python_policy(policy):
        return PythonPolicySpec(policy)
    raise OptionError(
        f"a policy is a name, a PolicySpec or an object with decide(view), not {shown(policy)}",
        option="--policy",
    )


def _fit_groups(workload: Workload, platform: Platform) -> Workload:
    """The workload without the jobs larger than every node group (they could never run),
    counted as skipped."""
    largest = max(g.nodes for g in platform.groups)
    too_big = workload.jobs["nodes"].to_numpy() > largest
    if not too_big.any():
        return workload
    skipped = dict(workload.skipped)
    skipped["larger than any node group"] = int(too_big.sum())
    return replace(
        workload,
        jobs=workload.jobs[~too_big].reset_index(drop=True),
        skipped=skipped,
        warnings=[
            *workload.warnings,
            f"{int(too_big.sum())} jobs need more than {largest} nodes, the largest node group "
            f"of {platform.name}: skipped",
        ],
    )


def _manager(
    spec: PolicySpec | PythonPolicySpec, platform: Platform | None
) -> dict[str, Any] | None:
    """Power-manager options: a built-in manager's; on a heterogeneous platform without one,
    a manager that only places jobs (nodes never sleep); or for a Python policy on a platform
    with a power model, node power control with mean transition latencies."""
    if spec.power is not None:
        native: dict[str, Any] = spec.power.to_native()
        return native
    if platform is not None and platform.heterogeneous:
        # Jobs run within one node group: an IPM whose timeout never comes places them.
        placement = PowerSpec(manager="ipm").to_native()
        placement["idle_timeout"] = float("inf")
        return placement
    if isinstance(spec, PythonPolicySpec):
        has_power = platform is not None and platform.power is not None
        return {"sample_transitions": None} if has_power else None
    return None


def resolve_platform(
    platform: Platform | str | os.PathLike[str] | None, nodes: int | None
) -> tuple[Platform | None, int | None]:
    """The platform (loaded when named) and the machine size it implies."""
    if platform is None:
        return None, nodes
    if not isinstance(platform, Platform):
        platform = load_platform(platform)
    if nodes is not None and nodes != platform.nodes:
        raise OptionError(
            f"{nodes} nodes given but platform {platform.name} has {platform.nodes}",
            option="--nodes",
        )
    return platform, platform.nodes


def check_overrun(overrun: str) -> None:
    if overrun not in OVERRUNS:
        raise OptionError(
            f"unknown overrun policy {shown(overrun)}; choose one of: continue, kill",
            option="--overrun",
        )


def _calendar(
    downtime: DowntimeCalendar | str | os.PathLike[str] | None,
    announce_lead: float | None,
    workload: Workload,
) -> DowntimeCalendar:
    lead = DEFAULT_ANNOUNCE_LEAD if announce_lead is None else float(announce_lead)
    if lead < 0 or not np.isfinite(lead):
        raise OptionError(
            f"must be a non-negative number of seconds, not {shown(announce_lead)}",
            option="--announce-lead",
        )
    if downtime is None:
        return DowntimeCalendar((), announce_lead=lead)
    if not isinstance(downtime, DowntimeCalendar):
        downtime = read_calendar(downtime, announce_lead=lead)
    elif announce_lead is not None:
        downtime = DowntimeCalendar(downtime.windows, announce_lead=lead, source=downtime.source)
    downtime.validate_against(workload.nodes)
    # Calendars are in the trace's clock; the replay clock starts at the first submission.
    return downtime.shifted(workload.time_origin)


#: Wall-clock seconds between two progress reports.
PROGRESS_SECONDS = 0.1


def _skips(workload: Workload) -> str:
    """``: every job was skipped (unknown run time: 3, ...)`` when the reader skipped some."""
    reasons = ", ".join(f"{k}: {v}" for k, v in workload.skipped.items() if v)
    return f": every job was skipped ({reasons})" if reasons else ""


def _drive(sim: Any, progress: ProgressHook | None, files: LogFiles | None = None) -> None:
    """Runs to the end in slices of a bounded number of event times (never of simulated time:
    jobs may run for years after the last submission, a window may lie centuries ahead), so
    that a Ctrl-C stops a run within a slice even though the engine runs without the GIL, and
    ``progress`` hears how it goes. Slices grow or shrink to last about 0.1 s; where the run
    pauses does not change its results. Between slices, logs past a batch go to ``files``."""
    events = 256
    more = True
    while more:
        started = time.perf_counter()
        more = sim.run_events(events)
        if progress is not None:
            progress(sim.now, sim.submitted, sim.invocations)
        if files is not None and sim.pending_log_rows >= BATCH_ROWS:
            files.flush(sim)
        elapsed = time.perf_counter() - started
        if elapsed < PROGRESS_SECONDS / 2:
            events = min(2 * events, 1 << 24)
        elif elapsed > 2 * PROGRESS_SECONDS:
            events = max(events // 2, 1)


#: What the decision logs hold: one row of scalars per decision, or also every candidate.
DECISION_LOGS = ("compact", "full")


def _job_table(workload: Workload, raw: dict[str, Any]) -> pd.DataFrame:
    jobs = workload.jobs
    start, end = raw["start"], raw["end"]
    kind_codes = np.where(np.isnan(start), -1, raw["start_kind"].astype(np.int8))
    table = pd.DataFrame(
        {
            "job_id": jobs["job_id"].to_numpy(),
            "submit": jobs["submit"].to_numpy(),
            "start": start,
            "end": end,
            "wait": start - jobs["submit"].to_numpy(),
            "nodes": jobs["nodes"].to_numpy(),
            "requested_time": jobs["requested_time"].to_numpy(),
            "run_time": jobs["run_time"].to_numpy(),
            "size_class": pd.Categorical.from_codes(
                np.asarray(size_class_codes(jobs["nodes"].to_numpy(), workload.nodes), np.int8),
                pd.Index(SIZE_CLASSES),
            ),
            "start_kind": pd.Categorical.from_codes(
                np.asarray(kind_codes, np.int8), pd.Index(START_KINDS)
            ),
            "requeues": raw["requeues"].astype(np.int64),
            "killed": raw["killed"],
            "user": jobs["user"].to_numpy() if "user" in jobs else -1,
        },
        copy=False,  # one block per column: no consolidated copy of a million-row table
    )
    if "energy_by_state_j" in raw:
        # computing energy of each job's final attempt (platforms with a power model)
        table["energy_kwh"] = raw["energy_j"] / 3.6e6
    return table


def _summary(
    workload: Workload,
    calendar: DowntimeCalendar,
    spec: PolicySpec | PythonPolicySpec,
    overrun: str,
    table: pd.DataFrame,
    lost: pd.DataFrame,
    raw: dict[str, Any],
    *,
    load_seconds: float,
    simulate_seconds: float,
    options: dict[str, Any],
    downtime_source: str | None,
) -> dict[str, Any]:
    from hpcsched import __version__

    started = table[~table["start"].isna()]
    executed = (started["end"] - started["start"]).to_numpy()
    wait = started["wait"].to_numpy()
    last_end = float(np.nanmax(table["end"])) if len(started) else 0.0
    n = len(table)
    outside = sum(1 for w in calendar if w.end <= 0.0 or w.start >= last_end)
    warnings = []
    if outside:
        warnings.append(
            f"{outside} of {len(calendar)} downtime windows fall outside the run (replay time 0 "
            f"to {last_end:,.0f} s, i.e. trace time {workload.time_origin:,.0f} to "
            f"{workload.time_origin + last_end:,.0f}): they changed nothing. Calendars are in "
            "the trace's clock."
        )
    return {
        "hpcsched_version": __version__,
        "inputs": {
            "trace": workload.source,
            "format": workload.format,
            "policy": spec.to_dict(),
            "nodes": workload.nodes,
            "nodes_option": options["nodes"],
            "procs_per_node": workload.procs_per_node,
            "lenient": options["lenient"],
            "strict": options["strict"],
            "downtime": downtime_source,
            "announce_lead": calendar.announce_lead,
            "overrun": overrun,
        },
        "workload": {
            "jobs": n,
            "skipped": dict(workload.skipped),
            "skipped_total": int(sum(workload.skipped.values())),
            "warnings": list(workload.warnings),
            "time_origin": workload.time_origin,
            "unix_start_time": workload.unix_start_time,
        },
        "jobs": {
            "completed": len(started),
            "never_started": n - len(started),
            "requeued_jobs": int((table["requeues"] > 0).sum()),
            "requeues": int(table["requeues"].sum()),
            "killed_overrun": int(table["killed"].sum()),
            "start_kinds": {k: int((table["start_kind"] == k).sum()) for k in START_KINDS},
        },
        "wait": metrics.wait_stats(wait),
        "wait_by_class": metrics.by_class(started),
        "bounded_slowdown": {
            "tau": metrics.BSLD_TAU,
            "mean": float(metrics.bounded_slowdown(wait, executed).mean())
            if len(started)
            else None,
        },
        "response_time": {
            "mean": float((started["end"] - started["submit"]).mean()) if len(started) else None
        },
        "makespan": last_end,
        "utilization": metrics.utilization(table, lost, workload.nodes, calendar, (0.0, last_end)),
        "downtime": {
            "windows": len(calendar),
            "outside_run": outside,
            "killed_attempts": len(lost),
            "lost_node_seconds": float(((lost["end"] - lost["start"]) * lost["nodes"]).sum()),
        },
        "engine": {"invocations": int(raw["invocations"]), "event_times": int(raw["event_times"])},
        "warnings": warnings,
        "timing": {
            "load_seconds": load_seconds,
            "simulate_seconds": simulate_seconds,
            "jobs_per_second": n / simulate_seconds if simulate_seconds > 0 else None,
        },
    }
