"""One run of an experiment, described as plain data.

A :class:`RunConfig` says what to replay (a trace file, a slice of one, or a generator), on which
platform and calendar, under which policy. It is picklable, so a process pool or a Ray worker
can run it, and it hashes to a key that names the run in a sweep: the key covers every option
and the bytes of every input file, so a finished run is recognised after an interruption and
rerun when anything it depends on changes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from hpcsched._io import check_regular_file
from hpcsched.exceptions import InputError, OptionError, unknown_name
from hpcsched.policies import PolicySpec
from hpcsched.protocol import PythonPolicySpec
from hpcsched.run import Result, simulate
from hpcsched.site.platform import Platform
from hpcsched.workload import Workload, load_workload
from hpcsched.workload import generate as generators

#: Generators a workload spec may name, with the parameters each accepts.
GENERATORS = {
    "markovian": ("jobs", "nodes", "mean_runtime", "target_util", "p", "seed"),
    "mmk": ("jobs", "servers", "load", "mean_runtime", "seed"),
}


@dataclass(frozen=True)
class WorkloadSpec:
    """A workload to replay: a trace ``path`` or a ``generator`` with its ``params``, optionally
    only the jobs ``[start, stop)`` in replay order (resubmitted from time 0, as a slice of a
    long trace is studied in the MARS paper)."""

    path: str | None = None
    generator: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    start: int = 0
    stop: int | None = None
    format: str | None = None
    procs_per_node: int | str = 1
    name: str | None = None

    def __post_init__(self) -> None:
        if (self.path is None) == (self.generator is None):
            raise OptionError("a workload is either a path or a generator", option="workload")
        if self.generator is not None:
            if self.generator not in GENERATORS:
                raise OptionError(
                    unknown_name("generator", self.generator, GENERATORS),
                    option="generate",
                )
            unknown = sorted(set(dict(self.params)) - set(GENERATORS[self.generator]))
            if unknown:
                raise OptionError(
                    f"{self.generator} takes no parameter {unknown[0]!r} "
                    f"(it takes {', '.join(GENERATORS[self.generator])})",
                    option=unknown[0],
                )
        if isinstance(self.start, bool) or not isinstance(self.start, int) or self.start < 0:
            raise OptionError(f"must be an integer >= 0, not {self.start!r}", option="slice")
        if self.stop is not None and (
            isinstance(self.stop, bool) or not isinstance(self.stop, int) or self.stop <= self.start
        ):
            raise OptionError(
                f"the slice must end after it starts, not [{self.start}, {self.stop}]",
                option="slice",
            )

    @property
    def label(self) -> str:
        """A short name: the given one, the file's stem, or the generator with its seed."""
        if self.name:
            return self.name
        if self.path is not None:
            base = os.path.basename(self.path)
            for suffix in (".gz", ".swf", ".json"):
                base = base.removesuffix(suffix)
        else:
            seed = dict(self.params).get("seed")
            base = f"{self.generator}" if seed is None else f"{self.generator}-seed{seed}"
        if self.start or self.stop is not None:
            base += f"[{self.start}:{'' if self.stop is None else self.stop}]"
        return str(base)

    def load(self, nodes: int | None = None) -> Workload:
        """The workload, read for ``nodes`` nodes when given (a platform's size)."""
        if self.path is not None:
            workload = load_workload(
                self.path, format=self.format, nodes=nodes, procs_per_node=self.procs_per_node
            )
        else:
            workload = _generate(self.generator or "", dict(self.params), nodes)
        if self.start or self.stop is not None:
            workload = slice_workload(workload, self.start, self.stop)
        return workload

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "generator": self.generator,
            "params": dict(self.params),
            "start": self.start,
            "stop": self.stop,
            "format": self.format,
            "procs_per_node": self.procs_per_node,
            "name": self.name,
        }


def _included_files(platform: str | None) -> list[str]:
    """The files a slurm.conf platform's ``Include`` lines read (their bytes are the run's
    inputs too); none for any other platform, whose keys then stay as they were."""
    if platform is None or not platform.endswith(".conf") or not os.path.isfile(platform):
        return []
    from hpcsched.site.slurm.conf import read_slurm_conf

    return list(read_slurm_conf(platform).included)


def slice_workload(
    workload: Workload, start: int, stop: int | None, *, option: str = "slice"
) -> Workload:
    """Jobs ``[start, stop)`` of ``workload`` in replay order, their clock restarted at the first
    one's submission. A slice that is empty or ends past the last job is an ``OptionError``
    naming ``option``."""
    jobs = workload.jobs.iloc[start:stop].reset_index(drop=True)
    piece = f"[{start}:{'' if stop is None else stop}]"
    if jobs.empty:
        raise OptionError(
            f"the slice {piece} of {workload.source} is empty (it has {len(workload):,} jobs)",
            option=option,
        )
    if stop is not None and stop > len(workload):
        raise OptionError(
            f"the slice {piece} of {workload.source} ends past its last job (it has "
            f"{len(workload):,} jobs, 0 to {len(workload) - 1:,})",
            option=option,
        )
    origin = float(jobs["submit"].iloc[0])
    jobs["submit"] -= origin
    return replace(  # what the reader kept of the trace (header, names, counts) stays
        workload,
        jobs=jobs,
        source=f"{workload.source}[{start}:{'' if stop is None else stop}]",
        skipped=dict(workload.skipped),
        warnings=list(workload.warnings),
        time_origin=workload.time_origin + origin,
    )


def _generate(name: str, params: dict[str, Any], nodes: int | None) -> Workload:
    params = dict(params)
    jobs = params.pop("jobs", 3000 if name == "markovian" else 10000)
    try:
        if name == "markovian":
            if nodes is not None:
                params.setdefault("nodes", nodes)
            return generators.markovian(jobs, **params)
        servers = params.pop("servers", nodes if nodes is not None else 16)
        return generators.mmk(jobs, servers, params.pop("load", 0.8), **params)
    except OptionError as exc:
        if exc.option != "n_jobs":
            raise
        # the generators' n_jobs is this spec's (and a sweep file's) jobs
        raise OptionError(exc.reason, option="jobs") from None


@dataclass(frozen=True)
class RunConfig:
    """Everything one run depends on. ``workload`` is a :class:`WorkloadSpec` or, from the
    Python API, a :class:`Workload` already in memory; ``platform`` a preset name or TOML path;
    ``downtime`` a calendar path."""

    workload: WorkloadSpec | Workload
    policy: PolicySpec | PythonPolicySpec
    platform: str | None = None
    downtime: str | None = None
    announce_lead: float | None = None
    overrun: str = "continue"
    nodes: int | None = None
    #: the site's associations and QOS for ``--policy slurm`` (a file; with ``platform``)
    slurm_accounts: str | None = None
    #: what decisions.parquet holds (``compact`` or ``full``: see ``simulate``)
    decision_log: str = "compact"
    #: parameters the user varied or set, shown as columns of a results table
    parameters: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def workload_label(self) -> str:
        if isinstance(self.workload, Workload):
            return os.path.basename(self.workload.source)
        return self.workload.label

    def to_dict(self) -> dict[str, Any]:
        """The configuration as JSON-able data (in-memory workloads by content digest)."""
        if isinstance(self.workload, Workload):
            workload: dict[str, Any] = {
                "memory": self.workload.source,
                "digest": _frame_digest(self.workload.jobs),
                "nodes": self.workload.nodes,
            }
        else:
            workload = self.workload.to_dict()
        config = {
            "workload": workload,
            "policy": self.policy.to_dict(),
            "platform": self.platform,
            "downtime": self.downtime,
            "announce_lead": self.announce_lead,
            "overrun": self.overrun,
            "nodes": self.nodes,
        }
        if self.decision_log != "compact":  # the default leaves keys as they were
            config["decision_log"] = self.decision_log
        if self.slurm_accounts is not None:
            config["slurm_accounts"] = self.slurm_accounts
        return config

    def key(self) -> str:
        """A hash of the full configuration, the hpcsched version and the input files' bytes."""
        from hpcsched import __version__

        inputs = [
            self.workload.path if isinstance(self.workload, WorkloadSpec) else None,
            self.downtime,
            self.platform if self.platform and os.path.isfile(self.platform) else None,
        ]
        if self.slurm_accounts is not None:  # absent, the keys stay as they were before it
            inputs.append(self.slurm_accounts)
        inputs += _included_files(self.platform)
        document = {
            "config": self.to_dict(),
            "version": __version__,
            "files": [file_digest(p) if p else None for p in inputs],
        }
        text = json.dumps(document, sort_keys=True, default=_json_default)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def execute(self) -> Result:
        """Runs the simulation (no run directory is written)."""
        workload = self.workload
        if isinstance(workload, WorkloadSpec):
            from hpcsched.run import resolve_platform

            # (a platform's size; on partitions, the trace's own units: see resolve_platform)
            _, nodes = resolve_platform(self.platform, self.nodes)
            workload = workload.load(nodes)
        platform: str | Platform | None = self.platform
        if self.slurm_accounts is not None and self.platform is not None:
            from hpcsched.run.options import with_slurm_accounts

            platform = with_slurm_accounts(self.platform, self.slurm_accounts)
        return simulate(
            workload,
            self.policy,
            downtime=self.downtime,
            announce_lead=self.announce_lead,
            overrun=self.overrun,
            platform=platform,
            nodes=self.nodes,
            decision_log=self.decision_log,
        )


@functools.lru_cache(maxsize=64)
def _cached_digest(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_digest(path: str) -> str:
    """SHA-256 of a file's bytes (cached per size and modification time)."""
    check_regular_file(path)  # (a device would be hashed for ever)
    try:
        stat = os.stat(path)
        return _cached_digest(os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=path) from None


def _frame_digest(frame: pd.DataFrame) -> str:
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes()).hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | set):
        return list(value)
    raise TypeError(f"not JSON-able: {value!r}")


#: Columns of a results table (one row per run), after the run's labels and parameters: the
#: keys of ``summary_row``, in its order (a test holds them equal).
METRIC_COLUMNS = (
    "jobs",
    "completed",
    "never_started",
    "wait_mean",
    "wait_median",
    "wait_p95",
    "wait_p99",
    "wait_max",
    "wait_median_waited",
    "bsld_mean",
    "utilization",
    "utilization_before_maintenance",
    "makespan",
    "energy_total_mwh",
    "energy_wasted_mwh",
    "icon_share",
    "searches",
    "drains",
    "start_error_mean",
    "start_within_1h",
    "wait_rank_corr",
    "wait_mean_diff",
    "wait_p95_diff",
    "utilization_diff",
    "simulate_seconds",
)
#: The only columns that differ between two runs of the same configuration.
TIMING_COLUMNS = ("simulate_seconds",)


def summary_row(info: dict[str, Any]) -> dict[str, Any]:
    """The headline metrics of a run (from its ``summary.json``), as one table row. Waits are
    in seconds; utilization a fraction; energy in MWh (NaN without a power model); the
    agreement with the recorded schedule as :mod:`hpcsched.agreement` defines it (NaN without
    one)."""
    wait = info["wait"]
    energy = info.get("energy") or {}
    search = info.get("search") or {}
    agreement = info.get("agreement") or {}
    nan = float("nan")

    def number(value: Any) -> float:
        return nan if value is None else float(value)

    return {
        "jobs": int(info["workload"]["jobs"]),
        "completed": int(info["jobs"]["completed"]),
        "never_started": int(info["jobs"].get("never_started") or 0),
        "wait_mean": number(wait["mean"]),
        "wait_median": number(wait["median"]),
        "wait_p95": number(wait["p95"]),
        "wait_p99": number(wait["p99"]),
        "wait_max": number(wait["max"]),
        "wait_median_waited": number(wait.get("median_of_waited")),
        "bsld_mean": number(info["bounded_slowdown"]["mean"]),
        "utilization": number(info["utilization"]["overall_uptime"]),
        "utilization_before_maintenance": _mean_before(info["utilization"]),
        "makespan": float(info["makespan"]),
        "energy_total_mwh": number(energy.get("total_mwh")),
        "energy_wasted_mwh": number(energy.get("wasted_mwh")),
        "icon_share": _icon_share(energy.get("mode_occupancy") or {}),
        "searches": int(search.get("searches", 0)),
        "drains": int(search.get("drains", 0)),
        # agreement with the recorded schedule (NaN for a trace without one, and for it)
        "start_error_mean": number(agreement.get("start_error", {}).get("mean")),
        "start_within_1h": number(agreement.get("start_error", {}).get("within_1h")),
        "wait_rank_corr": number(agreement.get("wait_rank_correlation")),
        "wait_mean_diff": number(agreement.get("wait_mean_difference")),
        "wait_p95_diff": number(agreement.get("wait_p95_difference")),
        "utilization_diff": number(agreement.get("utilization_difference")),
        "simulate_seconds": float(info["timing"]["simulate_seconds"]),
        # where jobs share nodes: each other resource's utilization (memory, each GRES kind)
        **_resource_columns(info["utilization"]),
    }


def _resource_columns(utilization: dict[str, Any]) -> dict[str, float]:
    """``utilization_memory``, ``utilization_gres/gpu``, ...: each resource but the CPUs
    (the headline utilization), for runs on shared nodes only (none otherwise)."""
    by_resource = utilization.get("by_resource") or {}
    return {
        f"utilization_{name}": float("nan") if value is None else float(value)
        for name, value in by_resource.items()
        if name != "cpus"
    }


def _mean_before(utilization: dict[str, Any]) -> float:
    """Mean utilization over the 48 h before each scheduled maintenance (NaN without one)."""
    windows = [w["utilization"] for w in utilization.get("before_maintenance") or []]
    windows = [w for w in windows if w is not None]
    return float(sum(windows) / len(windows)) if windows else float("nan")


def _icon_share(modes: dict[str, float]) -> float:
    """Share of time in ICON mode; NaN for runs without SNF-ICON's two modes."""
    if not modes or set(modes) == {"ipm"}:
        return float("nan")
    return float(modes.get("icon", 0.0))
