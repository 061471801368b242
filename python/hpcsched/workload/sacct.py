"""Reader for Slurm's accounting records: ``sacct --parsable2`` text or ``sacct --json``
(docs/formats.md, "Slurm accounting records").

The fields, by the header line sacct prints (any order, names in any case; ``--format`` must
ask for them): ``JobIDRaw`` (or ``JobID``), ``Submit``, ``Start``, ``End``, ``Timelimit`` and
``NNodes`` are needed; ``Eligible``, ``NCPUS`` (or ``AllocCPUS``), ``ReqCPUS``, ``User``, ``Group``,
``Account``, ``Partition``, ``QOS``, ``State`` and ``JobName`` are read when present. Times are
sacct's ``YYYY-MM-DDTHH:MM:SS``, read as UTC: capture with ``TZ=UTC`` (only differences of
times matter to a replay, so another zone shifts nothing but across a daylight-saving change).

- One job per allocation line; the lines of job steps (``123.batch``, ``123.extern``,
  ``123.0``) are read past (counted in a warning). A job array's tasks are jobs of their own,
  by their ``JobIDRaw``.
- A job arrives when it became eligible (``Eligible``, when known and not before its
  submission): holds, dependencies and ``--begin`` are not the scheduler's doing. Its
  recorded wait is ``Start`` minus that; its run time ``End - Start``.
- Skipped and counted: jobs that never started (``Start`` is ``Unknown`` or ``None``: pending,
  or cancelled while pending), jobs still running when recorded (``End`` unknown), jobs of no
  nodes, jobs larger than the machine (an error with ``strict``).
- ``Timelimit`` ``UNLIMITED`` or ``Partition_Limit``: the estimate is the run time
  (``requested_known`` False, and a warning), as for an SWF trace without requested times.
- Columns besides the job table's: ``procs`` (``NCPUS``, when recorded), ``requested_procs``
  (``ReqCPUS``, when recorded: a whole-node job asks for fewer CPUs than it is given, and
  Slurm's first priority counts those), ``recorded_nodes``
  (``NNodes``: on a platform with partitions a job takes at least those), ``requested_known``,
  ``status`` (SWF's codes: 1 completed, 0 failed, timed out or lost, 5 cancelled, -1 other),
  ``state`` (sacct's word), ``user_name``, ``group_name``, ``account``, ``qos``,
  ``partition_name`` (the partitions it could run in, as recorded), ``job_name``, ``line``,
  and ``recorded_wait``. Users are numbered in order of first appearance.

``sacct --json`` (Slurm 22.05's ``openapi/v0.0.38`` shape; tests/workload/fixtures/README.md)
gives the same jobs: one record per job (its steps inside it), times as Unix seconds in
``time`` (``submission``, ``eligible``, ``start``, ``end``: 0 or null when not set), the limit
in minutes (``time.limit``, null when unlimited), ``allocation_nodes``, the allocated CPUs in
``tres.allocated``, those asked for in ``required.CPUs``, ``state.current``; the ``line``
column is then the record's position in ``jobs`` (from 1).

Errors (``InputError``, file and line, or the JSON field): no header line, a needed field missing
from it (named), a line with another number of fields, a time, duration or count that is not
one; JSON that is not sacct's.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import time
from typing import Any

import numpy as np

from hpcsched._io import read_text
from hpcsched.exceptions import InputError, shown
from hpcsched.slurm_text import slurm_duration, slurm_json_number
from hpcsched.workload.model import NO_REQUESTED_TIME_WARNING, Workload, check_machine_nodes

#: Fields a workload cannot be built without (lower case), and those read when present.
NEEDED = ("submit", "start", "end", "timelimit", "nnodes")
OPTIONAL = (
    "eligible",
    "ncpus",
    "alloccpus",
    "reqcpus",
    "user",
    "group",
    "account",
    "partition",
    "qos",
    "state",
    "jobname",
)
#: The warning when the machine's size is not given (a platform with partitions gives it later).
NO_MACHINE_SIZE = "sacct records no machine size"
#: sacct's words for a time that is not set.
_NO_TIME = ("", "unknown", "none", "n/a")
#: State words -> SWF status codes (1 completed, 0 failed, 5 cancelled; others -1).
_STATUS = {
    "COMPLETED": 1,
    "FAILED": 0,
    "TIMEOUT": 0,
    "NODE_FAIL": 0,
    "OUT_OF_MEMORY": 0,
    "BOOT_FAIL": 0,
    "DEADLINE": 0,
    "PREEMPTED": 0,
    "CANCELLED": 5,
}
_STEP = re.compile(r"^\d+(?:_\d+|\+\d+)?\.")


def read_sacct(
    path: str | os.PathLike[str], nodes: int | None = None, strict: bool = False
) -> Workload:
    """Reads a ``sacct --parsable2`` file, plain or gzip-compressed (module docstring)."""
    name = os.fspath(path)
    text = read_text(name)
    if text.lstrip().startswith("{"):
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise InputError(f"not JSON: {exc}", path=name) from None
        return parse_sacct_json(document, name, nodes=nodes, strict=strict)
    return parse_sacct(text, name, nodes=nodes, strict=strict)


def is_sacct_json(head: bytes) -> bool:
    """Whether the first bytes of a JSON file look like ``sacct --json`` output (its ``meta``
    names Slurm's accounting command), not a Batsim workload."""
    text = head.decode("utf-8", "replace")
    # 22.05: "openapi/dbv0.0.38", "Slurm OpenAPI DB"; later: "openapi/slurmdbd", "sacct"
    marks = ("OpenAPI DB", "dbv0", "slurmdbd", '"sacct"')
    return '"meta"' in text and any(m in text for m in marks)


def parse_sacct_json(
    document: Any, path: str = "<input>", nodes: int | None = None, strict: bool = False
) -> Workload:
    """The workload of ``sacct --json`` output (module docstring)."""
    records = document.get("jobs") if isinstance(document, dict) else None
    if not isinstance(records, list):
        raise InputError("not sacct --json output: no 'jobs' list", path=path, field="jobs")
    rows = [_json_row(record, path, k) for k, record in enumerate(records)]
    return _workload(rows, 0, path, nodes, strict)


def _json_row(record: Any, path: str, k: int) -> dict[str, Any]:
    where = f"jobs[{k}]"
    if not isinstance(record, dict):
        raise InputError("a job record is not an object", path=path, field=where)

    def number(value: Any, field: str) -> float | None:
        try:
            return slurm_json_number(value)
        except TypeError:
            raise InputError(
                f"expected a number, not {shown(value)}", path=path, field=field
            ) from None

    def text(key: str) -> str:
        value = record.get(key)
        if isinstance(value, dict):  # state: {"current": ..., "reason": ...}
            value = value.get("current")
        return "" if value is None else str(value)

    times = record.get("time")
    if not isinstance(times, dict):
        raise InputError("no 'time' object", path=path, field=f"{where}.time")

    def when(key: str) -> float | None:
        value = number(times.get(key), f"{where}.time.{key}")
        return value if value else None  # (0: not set)

    job_id = number(record.get("job_id"), f"{where}.job_id")
    if job_id is None:
        raise InputError("missing", path=path, field=f"{where}.job_id")
    limit = number(times.get("limit"), f"{where}.time.limit")
    allocated = (record.get("tres") or {}).get("allocated") or []
    cpus = sum(
        t.get("count") or 0 for t in allocated if isinstance(t, dict) and t.get("type") == "cpu"
    )
    asked = int(number((record.get("required") or {}).get("CPUs"), f"{where}.required") or 0)
    if not cpus:
        cpus = asked
    return {
        "job_id": int(job_id),
        "submit": when("submission"),
        "eligible": when("eligible"),
        "start": when("start"),
        "end": when("end"),
        "limit": None if limit is None else 60.0 * limit,
        "nodes": int(number(record.get("allocation_nodes"), f"{where}.allocation_nodes") or 0),
        "procs": int(cpus),
        "requested_procs": asked,
        "user_name": text("user"),
        "group_name": text("group"),
        "account": text("account"),
        "qos": text("qos"),
        "partition_name": text("partition"),
        "state": text("state").split(" ")[0].upper(),
        "job_name": text("name"),
        "line": k + 1,
    }


def parse_sacct(
    text: str, path: str = "<input>", nodes: int | None = None, strict: bool = False
) -> Workload:
    """The workload of ``sacct --parsable2`` text (module docstring)."""
    lines = text.splitlines()
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is None or "|" not in lines[first]:
        raise InputError(
            "no header line: expected sacct --parsable2 output (JobIDRaw|Submit|Start|...)",
            path=path,
            line=None if first is None else first + 1,
        )
    header = [h.strip().lower() for h in lines[first].split("|")]
    column = {h: k for k, h in enumerate(header)}
    key = "jobidraw" if "jobidraw" in column else "jobid"
    missing = [f for f in (key, *NEEDED) if f not in column]
    if missing:
        raise InputError(
            f"the header has no {missing[0]} field (give sacct --format with JobIDRaw, Submit, "
            "Start, End, Timelimit, NNodes)",
            path=path,
            line=first + 1,
            field=missing[0],
        )
    rows: list[dict[str, Any]] = []
    steps = 0
    for number in range(first + 1, len(lines)):
        line = lines[number]
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) != len(header):
            raise InputError(
                f"{len(fields)} fields, the header has {len(header)}", path=path, line=number + 1
            )
        if _STEP.match(fields[column[key]]):
            steps += 1
            continue
        rows.append(_row(fields, column, key, path, number + 1))
    return _workload(rows, steps, path, nodes, strict)


def _row(
    fields: list[str], column: dict[str, int], key: str, path: str, line: int
) -> dict[str, Any]:
    def get(name: str) -> str:
        return fields[column[name]].strip() if name in column else ""

    def fail(name: str, what: str) -> InputError:
        return InputError(
            f"{what}, not {shown(get(name))}", path=path, line=line, field=_FIELD_NAMES[name]
        )

    def when(name: str) -> float | None:
        value = get(name)
        if value.lower() in _NO_TIME:
            return None
        try:
            return float(calendar.timegm(time.strptime(value, "%Y-%m-%dT%H:%M:%S")))
        except ValueError:
            raise fail(name, "expected a time YYYY-MM-DDTHH:MM:SS") from None

    def count(name: str) -> int:
        value = get(name)
        if not value.isdigit():
            raise fail(name, "expected a whole number")
        return int(value)

    job = get(key)
    job_id = re.sub(r"\D", "", job.split("_")[-1] if key == "jobid" else job)
    if not job_id:
        raise fail(key, "expected a job id")
    limit_text = get("timelimit")
    if limit_text in ("Partition_Limit", ""):
        limit = None
    else:
        try:
            limit = slurm_duration(limit_text)
        except ValueError:
            raise fail("timelimit", "expected a Slurm time limit") from None
    cpus_field = "ncpus" if "ncpus" in column else "alloccpus" if "alloccpus" in column else None
    state = get("state").split(" ")[0].upper()  # "CANCELLED by 0": the word
    return {
        "job_id": int(job_id),
        "submit": when("submit"),
        "eligible": when("eligible") if "eligible" in column else None,
        "start": when("start"),
        "end": when("end"),
        "limit": limit,
        "nodes": count("nnodes"),
        "procs": count(cpus_field) if cpus_field else 0,
        "requested_procs": count("reqcpus") if "reqcpus" in column else 0,
        "user_name": get("user"),
        "group_name": get("group"),
        "account": get("account"),
        "qos": get("qos"),
        "partition_name": get("partition"),
        "state": state,
        "job_name": get("jobname"),
        "line": line,
    }


def _user(users: dict[str, int], name: str) -> int:
    """Users numbered in order of first appearance; -1 when not recorded."""
    return users.setdefault(name, len(users)) if name else -1


_FIELD_NAMES = {
    "jobidraw": "JobIDRaw",
    "jobid": "JobID",
    "submit": "Submit",
    "eligible": "Eligible",
    "start": "Start",
    "end": "End",
    "timelimit": "Timelimit",
    "nnodes": "NNodes",
    "ncpus": "NCPUS",
    "alloccpus": "AllocCPUS",
    "reqcpus": "ReqCPUS",
}


def _workload(
    rows: list[dict[str, Any]], steps: int, path: str, nodes: int | None, strict: bool
) -> Workload:
    import pandas as pd

    skipped = {
        "never started": 0,
        "running when recorded": 0,
        "non-positive size": 0,
        "larger than machine": 0,
    }
    kept = []
    for row in rows:
        if row["submit"] is None or row["start"] is None:
            skipped["never started"] += 1
        elif row["end"] is None:
            skipped["running when recorded"] += 1
        elif row["nodes"] <= 0:
            skipped["non-positive size"] += 1
        else:
            kept.append(row)
    warnings = []
    machine = nodes
    if machine is None:
        machine = max((r["nodes"] for r in kept), default=1)
        warnings.append(
            f"{NO_MACHINE_SIZE}: {machine} nodes, its largest job (give --nodes or a platform)"
        )
    else:
        check_machine_nodes(machine)
    too_large = [r for r in kept if r["nodes"] > machine]
    if too_large and strict:
        r = too_large[0]
        raise InputError(
            f"job {r['job_id']} ran on {r['nodes']} nodes, more than the machine's {machine} "
            "(drop --strict to skip such jobs)",
            path=path,
            line=r["line"],
            field="NNodes",
        )
    skipped["larger than machine"] = len(too_large)
    kept = [r for r in kept if r["nodes"] <= machine]
    if steps:
        lines = "line" if steps == 1 else "lines"
        warnings.append(f"{steps} {lines} of job steps read past (a job is its allocation line)")
    for r in kept:
        r["arrival"] = max(r["eligible"] or r["submit"], r["submit"])
    kept.sort(key=lambda r: (r["arrival"], r["job_id"]))
    origin = kept[0]["arrival"] if kept else 0.0
    users: dict[str, int] = {}
    run = np.array([r["end"] - r["start"] for r in kept], dtype=np.float64)
    limit = np.array([np.nan if r["limit"] is None else r["limit"] for r in kept], dtype=np.float64)
    known = ~np.isnan(limit) & (limit > 0)
    if (~known).any():
        warnings.append(NO_REQUESTED_TIME_WARNING.format(n=int((~known).sum())))
    jobs = pd.DataFrame(
        {
            "job_id": np.array([r["job_id"] for r in kept], dtype=np.int64),
            "submit": np.array([r["arrival"] - origin for r in kept], dtype=np.float64),
            "run_time": run,
            "requested_time": np.where(known, limit, run),
            "nodes": np.array([r["nodes"] for r in kept], dtype=np.int64),
            "user": np.array([_user(users, r["user_name"]) for r in kept], dtype=np.int64),
            "procs": np.array([max(r["procs"], 1) for r in kept], dtype=np.int64),
            "recorded_nodes": np.array([r["nodes"] for r in kept], dtype=np.int64),
            "requested_known": known,
            "status": np.array([_STATUS.get(r["state"], -1) for r in kept], dtype=np.int64),
            "state": [r["state"] for r in kept],
            "user_name": [r["user_name"] for r in kept],
            "group_name": [r["group_name"] for r in kept],
            "account": [r["account"] for r in kept],
            "qos": [r["qos"] for r in kept],
            "partition_name": [r["partition_name"] or None for r in kept],
            "job_name": [r["job_name"] for r in kept],
            "line": np.array([r["line"] for r in kept], dtype=np.int64),
            "recorded_wait": np.array([r["start"] - r["arrival"] for r in kept], dtype=float),
        }
    )
    if any(r["requested_procs"] for r in kept):
        # (not recorded: as allocated)
        asked = [r["requested_procs"] or max(r["procs"], 1) for r in kept]
        jobs["requested_procs"] = np.array(asked, dtype=np.int64)
    return Workload(
        jobs=jobs,
        nodes=machine,
        source=path,
        format="sacct",
        skipped=skipped,
        warnings=warnings,
        header={"UnixStartTime": 0},
        time_origin=origin,
    )
