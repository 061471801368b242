"""Generated workloads (DESIGN §3.3) and writers to Batsim JSON and SWF.

Generators draw with ``numpy.random.default_rng(seed)``; the same arguments always give the same
workload. Submission times are the cumulative sums of the interarrival times, so the first job
arrives one interarrival after the clock's zero; the returned ``Workload`` is shifted so its first
submission is 0, with the subtracted value in ``time_origin`` (``write_batsim`` adds it back).
"""

from __future__ import annotations

import io
import json
import math
import os
from typing import Any

import numpy as np
import pandas as pd

from hpcsched import _core
from hpcsched._io import atomic_write_bytes
from hpcsched.exceptions import OptionError, shown
from hpcsched.workload.model import JOB_COLUMNS, Workload

#: the Batsim profile every written job refers to (the one of the SNF-ICON workloads)
BATSIM_PROFILES = {"100": {"cpu": 10**22, "com": 0, "type": "parallel_homogeneous"}}


def truncated_geometric_mean(p: float, n: int) -> float:
    """Mean of Geometric(p) (support 1, 2, ...) conditioned on being at most ``n``:
    ``Σ_{k=1..n} k·p·(1-p)^(k-1) / Σ_{k=1..n} p·(1-p)^(k-1)``.

    This is the E[size] of the Markovian generator: it is the value that reproduces the bundled
    ``generated-markovian-3000.json.gz`` bit for bit (``1/p`` does not, by about 2e-11 relative,
    since the bundled file was drawn with it). It tends to ``1/p`` as ``n`` grows.
    """
    k = np.arange(1, n + 1)
    pmf = p * (1 - p) ** (k - 1)
    return float((k * pmf).sum() / pmf.sum())


def markovian(
    n_jobs: int = 3000,
    nodes: int = 64,
    mean_runtime: float = 7200.0,
    target_util: float = 0.40,
    p: float = 0.35,
    seed: int = 43,
) -> Workload:
    """The Markovian workload of the SNF-ICON paper.

    Size ``min(Geometric(p), nodes)``; interarrival ``Exp(mean = E[size]·mean_runtime /
    (nodes·target_util))`` with E[size] = :func:`truncated_geometric_mean` (803.5714 s with the
    defaults); run time ``Exp(mean_runtime)``; requested time ``Exp(1.2·mean_runtime)``,
    independent of the run time (so many jobs run past their request, as in the paper).
    Draw order: all sizes, then all interarrivals, then all run times, then all requested times.
    The defaults reproduce ``generated-markovian-3000.json.gz`` exactly (job ids 1..n).
    """
    _check_int("n_jobs", n_jobs, minimum=1, maximum=MAX_GENERATED_JOBS)
    _check_int("nodes", nodes, minimum=1, maximum=_core.MAX_NODES)
    _check_positive("mean_runtime", mean_runtime)
    _check_share("target_util", target_util)
    if not (isinstance(p, (int, float)) and 0 < p <= 1):
        raise OptionError(f"must be in (0, 1], not {shown(p)}", option="p")
    _check_int("seed", seed, minimum=0, maximum=_core.MAX_SEED)

    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.geometric(p, n_jobs), nodes)
    mean_interarrival = truncated_geometric_mean(p, nodes) * mean_runtime / (nodes * target_util)
    interarrivals = rng.exponential(mean_interarrival, n_jobs)
    run_times = rng.exponential(mean_runtime, n_jobs)
    requested = rng.exponential(1.2 * mean_runtime, n_jobs)
    params = {
        "n_jobs": n_jobs,
        "nodes": nodes,
        "mean_runtime": mean_runtime,
        "target_util": target_util,
        "p": p,
        "seed": seed,
    }
    return _workload(
        "markovian",
        params,
        _arrivals(interarrivals),
        run_times,
        requested,
        sizes,
        nodes,
        extra_header={"mean_interarrival": mean_interarrival},
        rate_option="target_util",
    )


def mmk(
    n_jobs: int, servers: int, load: float, mean_runtime: float = 3600.0, seed: int = 0
) -> Workload:
    """An M/M/k workload: single-node jobs on a machine of ``servers`` nodes.

    Interarrivals ``Exp(rate = load·servers/mean_runtime)``, run times ``Exp(mean_runtime)``
    (all interarrivals drawn first, then all run times), requested time = run time. ``load`` is the
    per-server offered load lambda/(k·mu); with ``load >= 1`` the queue is unstable (a warning
    says so). FCFS mean wait can be compared with the Erlang-C formula.
    """
    _check_int("n_jobs", n_jobs, minimum=1, maximum=MAX_GENERATED_JOBS)
    _check_int("servers", servers, minimum=1, maximum=_core.MAX_NODES)
    _check_positive("load", load)  # an offered load: past 1 an overload, which tests use
    _check_positive("mean_runtime", mean_runtime)
    _check_int("seed", seed, minimum=0, maximum=_core.MAX_SEED)
    rng = np.random.default_rng(seed)
    interarrivals = rng.exponential(mean_runtime / (load * servers), n_jobs)
    run_times = rng.exponential(mean_runtime, n_jobs)
    params = {
        "n_jobs": n_jobs,
        "servers": servers,
        "load": load,
        "mean_runtime": mean_runtime,
        "seed": seed,
    }
    workload = _workload(
        "mmk",
        params,
        _arrivals(interarrivals),
        run_times,
        run_times,
        np.ones(n_jobs, dtype=np.int64),
        servers,
        rate_option="load",
    )
    if load >= 1:
        workload.warnings.append(
            f"load {load} >= 1: the M/M/{servers} queue is unstable, waits grow without bound"
        )
    return workload


def _workload(
    name: str,
    params: dict[str, Any],
    arrivals: np.ndarray,
    run_times: np.ndarray,
    requested: np.ndarray,
    sizes: np.ndarray,
    nodes: int,
    extra_header: dict[str, Any] | None = None,
    *,
    rate_option: str,
) -> Workload:
    _check_drawn(
        "mean_runtime", params["mean_runtime"], "run times", np.maximum(run_times, requested),
        "lower it",
    )  # fmt: skip
    _check_drawn(
        rate_option, params[rate_option], "submission times", arrivals,
        "raise it, or lower the mean run time or the number of jobs",
    )  # fmt: skip
    origin = float(arrivals[0])
    n = len(arrivals)
    jobs = pd.DataFrame(
        {
            "job_id": np.arange(1, n + 1),
            "submit": arrivals - origin,
            "run_time": run_times,
            "requested_time": requested,
            "nodes": sizes,
            "user": np.zeros(n, dtype=np.int64),
            "requested_known": np.ones(n, dtype=bool),
        }
    ).astype(JOB_COLUMNS)
    args = ", ".join(f"{k}={shown(v)}" for k, v in params.items())
    return Workload(
        jobs=jobs,
        nodes=int(nodes),
        source=f"{name}({args})",
        format="generated",
        header={"generator": name, **params, **(extra_header or {})},
        time_origin=origin,
    )


#: The most jobs a generator draws: ten times a year-long trace of a large centre, and what
#: fits in memory (each job costs about 60 bytes in every column together).
MAX_GENERATED_JOBS = 100_000_000


def _arrivals(interarrivals: np.ndarray) -> np.ndarray:
    """Submission times: the running sum of the gaps (inf past the float range, which
    :func:`_check_drawn` refuses, without numpy's overflow warning)."""
    with np.errstate(over="ignore"):
        return np.cumsum(interarrivals)


def _check_drawn(option: str, value: object, what: str, values: np.ndarray, hint: str) -> None:
    """Refuses a parameter whose draws fall outside the engine's time range (``_core.MAX_TIME``):
    they would be written as times that no reader, and no run, accepts. Draws are positive."""
    largest = float(values.max())
    if not largest <= _core.MAX_TIME:  # inf and nan too
        raise OptionError(
            f"{shown(value)} draws {what} up to {largest:.3g} s, past the {_core.MAX_TIME:.0e} s "
            f"that times may reach; {hint}",
            option=option,
        )


def _check_int(option: str, value: object, *, minimum: int, maximum: int) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not minimum <= value <= maximum
    ):
        raise OptionError(
            f"must be an integer from {minimum} to {maximum:,}, not {shown(value)}", option=option
        )


def _check_share(option: str, value: object) -> None:
    """A utilization in (0, 1]: past 1 the machine cannot keep up and no run ever reaches it."""
    _check_positive(option, value)
    if float(value) > 1:  # type: ignore[arg-type]
        raise OptionError(
            f"must be at most 1 (a utilization: the share of the machine the jobs keep busy), "
            f"not {shown(value)}",
            option=option,
        )


def _check_positive(option: str, value: object) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise OptionError(f"must be a positive number, not {shown(value)}", option=option)


# ---------------------------------------------------------------------------------------------
# writers


def _number(value: float) -> int | float:
    """A float as JSON: integral values as integers (``1924``, not ``1924.0``), others exactly."""
    return int(value) if float(value).is_integer() else float(value)


def _check_writable(**times: np.ndarray) -> None:
    """Times a reader takes back: finite and within the engine's range (the generators refuse
    parameters that draw others; SWF would turn them into garbage integers)."""
    for name, values in times.items():
        if not (np.abs(values) <= _core.MAX_TIME).all():  # nan too
            raise ValueError(f"cannot write {name} values beyond {_core.MAX_TIME:.0e} s")


def write_batsim(workload: Workload, path: str | os.PathLike[str]) -> None:
    """Write ``workload`` as a Batsim/SPARS JSON workload (gzip when ``path`` ends in ``.gz``).

    Jobs are written in replay order with ``job_id``, ``res`` (nodes), ``subtime`` (``submit +
    time_origin``, i.e. the original clock), ``reqtime`` (the estimate: the requested time, or the
    run time when it was unknown), ``runtime``, ``profile`` ``"100"`` and ``user_id`` (left out when
    unknown, -1), plus ``nb_res`` and the profile table of the SNF-ICON files. Floats are written
    with ``repr`` precision, so reading the file back gives the same numbers. The write is atomic.
    """
    jobs = workload.jobs
    subtime = jobs["submit"].to_numpy(np.float64) + workload.time_origin
    requested = jobs["requested_time"].to_numpy(np.float64)
    run = jobs["run_time"].to_numpy(np.float64)
    _check_writable(submit=subtime, requested_time=requested, run_time=run)
    # json.dumps with indent is slow (pure Python): lay out the jobs by hand, in exactly the
    # layout json.dumps(indent=4) gives, and let json lay out the rest around a placeholder.
    pad = " " * 12
    records = []
    for job_id, res, sub, req, rt, user in zip(
        jobs["job_id"].tolist(),
        jobs["nodes"].tolist(),
        subtime.tolist(),
        requested.tolist(),
        run.tolist(),
        jobs["user"].tolist(),
        strict=True,
    ):
        fields = [
            f'"job_id": {job_id}',
            f'"res": {res}',
            f'"subtime": {_number(sub)!r}',  # every digit (shown() would elide some)
            f'"reqtime": {_number(req)!r}',
            f'"runtime": {_number(rt)!r}',
            '"profile": "100"',
        ]
        if user >= 0:
            fields.append(f'"user_id": {user}')
        records.append("        {\n" + pad + (",\n" + pad).join(fields) + "\n        }")
    placeholder = "@@hpcsched-jobs@@"
    document = {
        "nb_res": int(workload.nodes),
        "jobs": [placeholder] if records else [],
        "profiles": BATSIM_PROFILES,
    }
    text = json.dumps(document, indent=4)
    if records:
        text = text.replace(f'        "{placeholder}"', ",\n".join(records), 1)
    atomic_write_bytes(path, text.encode("utf-8"))


def write_swf(workload: Workload, path: str | os.PathLike[str]) -> None:
    """Write ``workload`` as an 18-field Standard Workload Format trace (gzip for ``.gz``).

    Fields: 1 job id, 2 submit (``submit + time_origin``), 4 run time, 5 and 8 processors
    (the ``procs`` column when present, else ``nodes·procs_per_node``), 9 requested time (-1 when
    it was unknown), 11 status 1, 12 user; every other field -1. SWF holds integers: times are
    rounded to the nearest second (halves up; a known requested time to at least 1 s, since 0 reads
    as unknown), and the header says so when any value changed.
    The header carries ``MaxJobs``, ``MaxRecords``, ``MaxNodes``, ``MaxProcs`` and, when the
    workload knows them, ``UnixStartTime`` and ``TimeZoneString``. The write is atomic.
    """
    jobs = workload.jobs
    n = len(jobs)
    ppn = int(workload.procs_per_node)
    submit = jobs["submit"].to_numpy(np.float64) + workload.time_origin
    run = jobs["run_time"].to_numpy(np.float64)
    req = jobs["requested_time"].to_numpy(np.float64)
    if "requested_known" in jobs:
        known = jobs["requested_known"].to_numpy(bool)
    else:
        known = np.ones(n, dtype=bool)
    if "procs" in jobs:
        procs = jobs["procs"].to_numpy(np.int64)
    else:
        procs = jobs["nodes"].to_numpy(np.int64) * ppn

    _check_writable(submit=submit, run_time=run, requested_time=req[known])
    rounded = [np.floor(x + 0.5) for x in (submit, run, req)]
    # a known request never rounds to 0, which SWF readers take for "unknown"
    rounded[2] = np.maximum(rounded[2], 1.0)
    changed = (
        bool(np.any(rounded[0] != submit))
        or bool(np.any(rounded[1] != run))
        or bool(np.any(rounded[2][known] != req[known]))
    )
    table = np.full((n, 18), -1, dtype=np.int64)
    table[:, 0] = jobs["job_id"].to_numpy(np.int64)
    table[:, 1] = rounded[0]
    table[:, 3] = rounded[1]
    table[:, 4] = procs
    table[:, 7] = procs
    table[:, 8] = np.where(known, rounded[2], -1)
    table[:, 10] = 1
    table[:, 11] = jobs["user"].to_numpy(np.int64)

    source = " ".join(str(workload.source).split())  # one header line, whatever the name holds
    lines = [
        "; Version: 2.2",
        "; Computer: hpcsched",
        f"; Note: written by hpcsched from {source} ({workload.format})",
    ]
    if changed:
        lines.append("; Note: times rounded to whole seconds")
    for key in ("UnixStartTime", "TimeZoneString"):
        if workload.header.get(key) is not None:
            lines.append(f"; {key}: {workload.header[key]}")
    lines += [
        f"; MaxJobs: {n}",
        f"; MaxRecords: {n}",
        f"; MaxNodes: {int(workload.nodes)}",
        f"; MaxProcs: {int(workload.nodes) * ppn}",
    ]
    buffer = io.StringIO()
    buffer.write("\n".join(lines) + "\n")
    np.savetxt(buffer, table, fmt="%d", delimiter=" ")
    atomic_write_bytes(path, buffer.getvalue().encode("utf-8"))


__all__ = [
    "BATSIM_PROFILES",
    "markovian",
    "mmk",
    "truncated_geometric_mean",
    "write_batsim",
    "write_swf",
]
