"""``sacct --json`` (Slurm 22.05's ``openapi/v0.0.38`` shape; tests/workload/fixtures/README.md)
read into sacct's records (``sacct_jobs.SacctRecords``), column by column.

One record per job (its steps inside it), times as Unix seconds in ``time`` (``submission``,
``eligible``, ``start``, ``end``: 0 or null when not set), the limit in minutes (``time.limit``,
null when unlimited), ``allocation_nodes``, the allocated CPUs in ``tres.allocated``, those asked
for in ``required.CPUs``, ``state.current`` (a word, or newer releases' list of words); a
number may be newer releases' ``{"set": ..., "infinite": ..., "number": ...}``. Every field
read is checked where it is read: its type (an object, a list, a string, a finite number), a
count or id a whole number within its range (ids 0 to 2^63 - 1, node counts 0 to
``_core.MAX_NODES``, CPU counts 0 to 2^32 - 1), times within ``_core.MAX_TIME``; an error
names the field's path (``jobs[3].allocation_nodes``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hpcsched import _core
from hpcsched.exceptions import InputError, shown
from hpcsched.workload.sacct_jobs import (
    MAX_CPUS,
    MAX_JOB_ID,
    RECORDED_TEXT,
    SacctRecords,
    TextColumn,
)
from hpcsched.workload.sacct_tres import parse_tres

#: The most memory a request may name (MB): 2^32 - 1, as Slurm 22.05's JSON writes it.
MAX_MEMORY_MB = 2**32 - 1

#: The JSON's fields read as text -> the job table's columns.
_TEXT = {
    "user": "user_name",
    "group": "group_name",
    "account": "account",
    "qos": "qos",
    "partition": "partition_name",
    "state": "state",
    "name": "job_name",
}
#: Where each column is in a record, for messages.
_FIELD_NAMES = {
    "submit": "time.submission",
    "eligible": "time.eligible",
    "start": "time.start",
    "end": "time.end",
    "nodes": "allocation_nodes",
}


def _unwrapped(value: Any) -> Any:
    """Newer releases' ``{"set": ..., "infinite": ..., "number": ...}``: its number, None when
    not set or infinite."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite"):
            return None
        return value.get("number")
    return value


def memory_asked(memory: int | None, tres: str, cpus: int) -> str:
    """The memory a job asked for, as sacct's old ``ReqMem`` wrote it (``700Mc`` per CPU,
    ``1500Mn`` per node), from ``required.memory`` and the request's TRES (``ReqTRES``'s
    text); "" when they do not tell (the reader then divides the TRES' memory in all,
    ``sacct_tres.py``).

    Slurm 22.05 writes ``required.memory`` as the request's own figure without its per-CPU flag
    (``--mem-per-cpu=700 -n3``: 700; ``--mem=1500 -n3``: 1500; none: 0), and the TRES' ``mem``
    as the memory in all (2100 and 1500): which of the CPUs or the nodes multiply the first to
    the second says how it was asked, unless both do (a CPU a node, where the two are one).
    (Read on the cons_tres test cluster: tests/fixtures/sacct_tres/README.md.)"""
    counts = parse_tres(tres, "sacct --json")
    total = counts.get("mem")
    if not memory or total is None:
        return ""
    per_cpu = memory * cpus == total
    per_node = memory * max(counts.get("node", 1.0), 1.0) == total
    if per_cpu == per_node:
        return ""
    return f"{memory}M{'c' if per_cpu else 'n'}"


def json_records(document: Any, path: str) -> SacctRecords:
    """The records of a ``sacct --json`` document (module docstring)."""
    records = document.get("jobs") if isinstance(document, dict) else None
    if not isinstance(records, list):
        raise InputError("not sacct --json output: no 'jobs' list", path=path, field="jobs")
    numbers: dict[str, list[float]] = {name: [] for name in _NUMBERS}
    text = {name: TextColumn() for name in RECORDED_TEXT}
    codes: dict[str, list[int]] = {name: [] for name in RECORDED_TEXT}
    for k, record in enumerate(records):
        _Record(record, path, f"jobs[{k}]").read(numbers, text, codes)
    for name, column in text.items():
        column.codes = np.array(codes[name], dtype=np.int32)
    return SacctRecords(
        job_id=np.array(numbers["job_id"], dtype=np.int64),
        submit=np.array(numbers["submit"], dtype=np.float64),
        eligible=np.array(numbers["eligible"], dtype=np.float64),
        start=np.array(numbers["start"], dtype=np.float64),
        end=np.array(numbers["end"], dtype=np.float64),
        limit=np.array(numbers["limit"], dtype=np.float64),
        nodes=np.array(numbers["nodes"], dtype=np.int64),
        procs=np.array(numbers["procs"], dtype=np.int64),
        requested_procs=np.array(numbers["requested_procs"], dtype=np.int64),
        line=np.arange(1, len(records) + 1, dtype=np.int64),
        text=text,
        path=path,
        field_names=_FIELD_NAMES,
        json=True,
    )


_NUMBERS = (
    "job_id",
    "submit",
    "eligible",
    "start",
    "end",
    "limit",
    "nodes",
    "procs",
    "requested_procs",
)


class _Record:
    """One job record of the document, read field by field; ``where`` is its path."""

    def __init__(self, record: Any, path: str, where: str) -> None:
        if not isinstance(record, dict):
            raise InputError("a job record is not an object", path=path, field=where)
        self.record = record
        self.path = path
        self.where = where

    def read(
        self,
        numbers: dict[str, list[Any]],
        text: dict[str, TextColumn],
        codes: dict[str, list[int]],
    ) -> None:
        r = self.record
        job_id = self.whole(r.get("job_id"), "job_id", MAX_JOB_ID)
        if job_id is None:
            raise self.error("job_id", "missing")
        times = r.get("time")
        if not isinstance(times, dict):
            raise self.error("time", "no 'time' object")
        limit = self.number(times.get("limit"), "time.limit", low=0.0)
        if limit is not None and 60.0 * limit > _core.MAX_TIME:
            raise self.error("time.limit", f"{limit:g} minutes is beyond {_core.MAX_TIME:g} s")
        asked = self.object(r, "required") or {}
        requested = self.whole(asked.get("CPUs"), "required.CPUs", MAX_CPUS) or 0
        values = {
            "job_id": job_id,
            "submit": self.time(times, "submission"),
            "eligible": self.time(times, "eligible"),
            "start": self.time(times, "start"),
            "end": self.time(times, "end"),
            "limit": np.nan if limit is None else 60.0 * limit,
            "nodes": self.whole(r.get("allocation_nodes"), "allocation_nodes", _core.MAX_NODES),
            "procs": self.allocated_cpus() or requested,
            "requested_procs": requested,
        }
        for name, value in values.items():
            numbers[name].append(0 if value is None else value)
        for key, out in _TEXT.items():
            word = self.text(key)
            if out == "state":
                word = word.split(" ")[0].upper()
            codes[out].append(text[out].code(word))
        tres = self.requested_tres()
        codes["req_tres"].append(text["req_tres"].code(tres))
        memory = self.whole(asked.get("memory"), "required.memory", MAX_MEMORY_MB)
        codes["req_mem"].append(text["req_mem"].code(memory_asked(memory, tres, requested)))
        codes["node_list"].append(text["node_list"].code(self.text("nodes")))

    def requested_tres(self) -> str:
        """``tres.requested`` as sacct's text writes ``ReqTRES`` (``cpu=2,mem=600M,node=1,
        gres/gpu=2``), for the one reader of both."""
        tres = self.object(self.record, "tres") or {}
        items = tres.get("requested") or []
        if not isinstance(items, list):
            raise self.error("tres.requested", f"expected a list, not {shown(items)}")
        parts = []
        for k, item in enumerate(items):
            if not isinstance(item, dict):
                raise self.error(f"tres.requested[{k}]", f"expected an object, not {shown(item)}")
            kind, name, count = item.get("type"), item.get("name"), item.get("count")
            if not isinstance(kind, str) or isinstance(count, bool) or not isinstance(count, int):
                raise self.error(f"tres.requested[{k}]", "expected a type and a whole count")
            key = f"{kind}/{name}" if name else kind
            parts.append(f"{key}={count}M" if kind == "mem" else f"{key}={count}")
        return ",".join(parts)

    def error(self, field: str, reason: str) -> InputError:
        return InputError(reason, path=self.path, field=f"{self.where}.{field}")

    def object(self, parent: dict[str, Any], key: str, field: str = "") -> dict[str, Any] | None:
        """``parent[key]``: an object, or None when absent or null."""
        value = parent.get(key)
        if value is None or isinstance(value, dict):
            return value
        raise self.error(field or key, f"expected an object, not {shown(value)}")

    def number(self, value: Any, field: str, low: float | None = None) -> float | None:
        """A finite number, None when not set (null, or newer releases' unset or infinite)."""
        value = _unwrapped(value)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(field, f"expected a number, not {shown(value)}")
        if not math.isfinite(value):
            raise self.error(field, f"expected a finite number, not {shown(value)}")
        if low is not None and value < low:
            raise self.error(field, f"expected a number from {low:g}, not {shown(value)}")
        return float(value)

    def whole(self, value: Any, field: str, top: int) -> int | None:
        """A whole number from 0 to ``top`` (an id, a count), None when not set."""
        value = _unwrapped(value)
        if isinstance(value, int) and not isinstance(value, bool):
            number: int | float = value  # exact, however large
        else:
            got = self.number(value, field)
            if got is None:
                return None
            if not got.is_integer():
                raise self.error(field, f"expected a whole number, not {shown(value)}")
            number = got
        if not 0 <= number <= top:
            raise self.error(field, f"expected a whole number from 0 to {top}, not {shown(value)}")
        return int(number)

    def time(self, times: dict[str, Any], key: str) -> float:
        """A Unix time; NaN when not set (0 or null)."""
        value = self.number(times.get(key), f"time.{key}")
        if not value:
            return np.nan
        if abs(value) > _core.MAX_TIME:
            raise self.error(
                f"time.{key}",
                f"{value:g} is beyond the engine's range of times (+-{_core.MAX_TIME:g} s from "
                "1970)",
            )
        return value

    def allocated_cpus(self) -> int:
        """The CPUs of ``tres.allocated`` (0 when not recorded)."""
        tres = self.object(self.record, "tres") or {}
        allocated = tres.get("allocated")
        if allocated is None:
            return 0
        if not isinstance(allocated, list):
            raise self.error("tres.allocated", f"expected a list, not {shown(allocated)}")
        cpus = 0
        for k, item in enumerate(allocated):
            where = f"tres.allocated[{k}]"
            if not isinstance(item, dict):
                raise self.error(where, f"expected an object, not {shown(item)}")
            if item.get("type") == "cpu":
                cpus += self.whole(item.get("count"), f"{where}.count", MAX_CPUS) or 0
        if cpus > MAX_CPUS:
            raise self.error("tres.allocated", f"{cpus} CPUs, more than {MAX_CPUS}")
        return cpus

    def text(self, key: str) -> str:
        """A text field ("" when not recorded); ``state`` is ``{"current": ...}`` with a word
        or a list of words."""
        value = self.record.get(key)
        field = key
        if key == "state" and isinstance(value, dict):
            value, field = value.get("current"), "state.current"
            if isinstance(value, list):
                if not all(isinstance(v, str) for v in value):
                    raise self.error(field, f"expected words, not {shown(value)}")
                value = value[0] if value else ""
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.error(field, f"expected a string, not {shown(value)}")
        return value.strip()
