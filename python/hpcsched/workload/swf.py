"""Standard Workload Format traces (DESIGN §3.1).

The Rust core tokenises the file (one pass, numeric checks, line numbers); this module applies
the rules that depend on options: job sizes in nodes, the machine size, which jobs are kept.
"""

from __future__ import annotations

import os
import re

import numpy as np

from hpcsched import _core
from hpcsched._io import check_regular_file
from hpcsched.exceptions import InputError, OptionError
from hpcsched.workload.model import (
    NO_REQUESTED_TIME_WARNING,
    Workload,
    check_machine_nodes,
    check_procs_per_node,
)

#: Header keys read as integers (their leading integer: "MaxNodes: 338 (batch partition)").
_INT_KEYS = ("MaxNodes", "MaxProcs", "UnixStartTime", "MaxQueues", "TimeZone")
#: Header keys kept as text; repeated keys (Note) are joined with newlines.
_TEXT_KEYS = ("TimeZoneString", "Note", "Computer", "Installation", "Version")

_LEADING_INT = re.compile(r"^\s*([+-]?\d+)")
#: A name line's value: the number, then the name, after an optional "- " (DAS2 writes
#: "Queue: 1 - All jobs submitted to same (and only) queue").
_NAME_LINE = re.compile(r"^([+-]?\d+)(?:\s+(?:-\s+)?(.*))?$", re.DOTALL)
#: A cleaning filter of the Parallel Workloads Archive: "job<=14 (14 jobs removed)".
_REMOVED = re.compile(r"\((\d+) jobs? removed\)")


def parse_header(entries: list[tuple[str, str]]) -> dict[str, object]:
    """The header values hpcsched uses, from ``(key, value)`` pairs."""
    header: dict[str, object] = {}
    for key, value in entries:
        if key in _INT_KEYS:
            match = _LEADING_INT.match(value)
            if match and key not in header:
                header[key] = int(match.group(1))
        elif key in _TEXT_KEYS:
            previous = header.get(key)
            header[key] = value if previous is None else f"{previous}\n{value}"
    return header


def parse_names(entries: list[tuple[str, str]], key: str) -> dict[int, str]:
    """Number -> name from the header's ``; Queue: 1 DSI`` lines (``key`` ``"Queue"`` or
    ``"Partition"``); a number with no name text maps to no entry, the first name of a number
    repeated is kept. ``Queues``, ``MaxQueues`` and such are other keys, not name lines."""
    names: dict[int, str] = {}
    for entry_key, value in entries:
        match = _NAME_LINE.match(value.strip()) if entry_key == key else None
        if match is None:
            continue
        name = (match.group(2) or "").strip()
        if name:
            names.setdefault(int(match.group(1)), name)
    return names


def removed_by_archive(comments: list[str]) -> int | None:
    """The jobs the archive's cleaning filters removed: the sum of every ``(N jobs removed)``
    in the header's comment lines (None when they name no filter)."""
    counts = [int(n) for text in comments for n in _REMOVED.findall(text)]
    return sum(counts) if counts else None


def read_swf(
    path: str | os.PathLike[str],
    *,
    nodes: int | None = None,
    procs_per_node: int | str = 1,
    lenient: bool = False,
    strict: bool = False,
) -> Workload:
    """Reads an SWF trace (plain or gzip) into a :class:`Workload` ready for replay.

    - size = requested processors (field 8) if > 0, else allocated (field 5), converted to
      nodes as ``ceil(procs / procs_per_node)``; ``procs_per_node="auto"`` takes
      ``MaxProcs / MaxNodes`` from the header;
    - machine size: ``nodes``, else ``MaxProcs / procs_per_node``, else ``MaxNodes``, else
      the largest job;
    - skipped and counted: unknown run time (-1), size <= 0, larger than the machine (an error
      with ``strict``), malformed lines (only with ``lenient``; otherwise an error);
    - requested time <= 0: the estimate is the run time (reported in ``warnings``);
    - replay order (submit, id), stable; time 0 is the first kept submission.

    Besides the columns of ``JOB_COLUMNS``, ``jobs`` has ``procs``, ``requested_known``, what
    the site recorded (``status``, ``group``, ``queue``, ``partition``, as written: -1 when
    unknown), ``line`` and, last, ``recorded_wait``: the wait the site recorded (field 3, s;
    NaN when unknown, i.e. negative). ``queue_names``, ``partition_names`` and
    ``removed_by_archive`` come from the header (:func:`parse_names`,
    :func:`removed_by_archive`).
    """
    name = os.fspath(path)
    check_regular_file(name)
    _check_gzip_name(name)
    raw = _core.parse_swf_file(name, lenient)
    header = parse_header(raw["header"])
    ppn = _procs_per_node(procs_per_node, header, name)

    procs = np.where(raw["requested_procs"] > 0, raw["requested_procs"], raw["allocated_procs"])
    job_nodes = np.ceil(procs / ppn)
    machine = _machine_nodes(nodes, header, ppn, job_nodes, name)

    run_time = raw["run_time"]
    unknown_run = run_time < 0
    bad_size = ~unknown_run & (job_nodes <= 0)
    too_large = ~unknown_run & ~bad_size & (job_nodes > machine)
    if strict and too_large.any():
        first = int(np.flatnonzero(too_large)[0])
        raise InputError(
            f"job {raw['job_id'][first]} needs {int(job_nodes[first])} nodes, more than the "
            f"machine's {machine} (drop --strict to skip such jobs)",
            path=name,
            line=int(raw["line"][first]),
            field="8 (requested processors)",
        )
    keep = ~(unknown_run | bad_size | too_large)
    skipped = {
        "unknown run time": int(unknown_run.sum()),
        "non-positive size": int(bad_size.sum()),
        "larger than machine": int(too_large.sum()),
        "malformed line": len(raw["malformed"]),
    }

    requested = raw["requested_time"][keep]
    run = run_time[keep]
    requested_known = requested > 0
    warnings = [
        f"{name}, line {line}: {reason} (skipped)" for line, _, reason in raw["malformed"][:5]
    ]
    import pandas as pd  # after the file is read: a bad file fails before this import

    duplicated = pd.Series(raw["job_id"][keep]).duplicated(keep=False)
    if duplicated.any():
        first = int(raw["job_id"][keep][duplicated.to_numpy()][0])
        warnings.append(
            f"{int(duplicated.sum())} kept jobs share their job id with another job "
            f"(e.g. {first}); they are replayed as distinct jobs"
        )
    if (~requested_known).any():
        warnings.append(NO_REQUESTED_TIME_WARNING.format(n=int((~requested_known).sum())))

    submit = raw["submit"][keep]
    job_id = raw["job_id"][keep]
    order = replay_order(submit, job_id)
    origin = float(submit[order][0]) if len(submit) else 0.0
    rows = np.flatnonzero(keep)[order]  # kept jobs in replay order: one copy per column
    del submit, job_id
    recorded_wait = raw["wait"][rows]  # a copy (rows is an index array)
    recorded_wait[recorded_wait < 0] = np.nan
    jobs = pd.DataFrame(
        {
            "job_id": raw["job_id"][rows],
            "submit": raw["submit"][rows] - origin,
            "run_time": run_time[rows],
            "requested_time": np.where(requested_known, requested, run)[order],
            "nodes": job_nodes[rows].astype(np.int64),
            "user": raw["user"][rows],
            "procs": procs[rows].astype(np.int64),
            # field 10, KB per processor: MB per CPU where a platform's nodes are shared
            "mem_per_cpu": _megabytes_per_cpu(raw["requested_memory"][rows]),
            "requested_known": requested_known[order],
            "status": raw["status"][rows],
            "group": raw["group"][rows],
            "queue": raw["queue"][rows],
            "partition": raw["partition"][rows],
            "line": raw["line"][rows].astype(np.int64),
            "recorded_wait": recorded_wait,
        },
        copy=False,  # one block per column: no consolidated copy of a million-row table
    )
    return Workload(
        jobs=jobs,
        nodes=machine,
        source=name,
        format="swf",
        skipped=skipped,
        warnings=warnings,
        header=header,
        time_origin=origin,
        procs_per_node=ppn,
        queue_names=parse_names(raw["header"], "Queue"),
        partition_names=parse_names(raw["header"], "Partition"),
        removed_by_archive=removed_by_archive(raw["comments"]),
    )


def _megabytes_per_cpu(kilobytes: np.ndarray) -> np.ndarray:
    """SWF's requested memory (field 10, KB per processor, -1 unknown) in MB per CPU, NaN
    when unknown or 0; a part of a MB is a whole one (Slurm counts memory in MB)."""
    return np.where(kilobytes > 0, np.ceil(kilobytes / 1024.0), np.nan)


def _check_gzip_name(name: str) -> None:
    """A ``.gz`` name on data that is not gzip: say so, not "field 1" of a binary line."""
    if name.endswith(".gz"):
        try:
            with open(name, "rb") as f:
                magic = f.read(2)
        except OSError:
            return  # the reader says why
        if magic != b"\x1f\x8b":
            raise InputError("named .gz but not gzip data", path=name)


def replay_order(submit: np.ndarray, job_id: np.ndarray) -> np.ndarray | slice:
    """Indices putting jobs in (submit, id) order, stable; a plain slice when the file is
    already in that order (most traces are), which spares a sort and every column's copy."""
    ds, di = np.diff(submit), np.diff(job_id)
    if np.all((ds > 0) | ((ds == 0) & (di >= 0))):
        return slice(None)
    return np.lexsort((job_id, submit))


def _procs_per_node(option: int | str, header: dict[str, object], path: str) -> int:
    if option == "auto":
        max_procs, max_nodes = header.get("MaxProcs"), header.get("MaxNodes")
        if not (isinstance(max_procs, int) and isinstance(max_nodes, int)) or max_nodes <= 0:
            raise OptionError(
                f"{path}: --procs-per-node auto needs MaxProcs and MaxNodes in the header",
                option="--procs-per-node",
            )
        if max_procs <= 0 or max_procs % max_nodes:
            raise OptionError(
                f"{path}: MaxProcs {max_procs} is not a multiple of MaxNodes {max_nodes}; "
                "give --procs-per-node explicitly",
                option="--procs-per-node",
            )
        return max_procs // max_nodes
    return int(check_procs_per_node(option))


def _header_machine(nodes: int, key: str, path: str) -> int:
    if nodes > _core.MAX_NODES:
        raise InputError(
            f"a machine of {nodes} nodes is past the engine's range (1 to {_core.MAX_NODES}); "
            "give --nodes, or --procs-per-node to count nodes rather than processors",
            path=path,
            field=f"header {key}",
        )
    return nodes


def _machine_nodes(
    option: int | None, header: dict[str, object], ppn: int, job_nodes: np.ndarray, path: str
) -> int:
    if option is not None:
        return check_machine_nodes(option)
    max_procs = header.get("MaxProcs")
    if isinstance(max_procs, int) and max_procs > 0:
        return _header_machine(max_procs // ppn, "MaxProcs", path)
    max_nodes = header.get("MaxNodes")
    if isinstance(max_nodes, int) and max_nodes > 0:
        return _header_machine(max_nodes, "MaxNodes", path)
    largest = float(job_nodes.max()) if len(job_nodes) else 0.0
    if largest <= 0:
        raise InputError(
            "no job with a positive size, and no machine size in the header", path=path
        )
    if largest > _core.MAX_NODES:
        raise InputError(
            f"no machine size in the header, and the largest job ({largest:g} nodes) is past "
            f"the engine's range (1 to {_core.MAX_NODES}); give --nodes",
            path=path,
        )
    return int(largest)
