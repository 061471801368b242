"""Workloads: readers for SWF and Batsim JSON traces and Slurm accounting records (sacct),
generators, downtime calendars."""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from hpcsched.exceptions import InputError, OptionError, unknown_name

if TYPE_CHECKING:
    from hpcsched.workload import generate
    from hpcsched.workload.calendar import (
        DEFAULT_ANNOUNCE_LEAD,
        Downtime,
        DowntimeCalendar,
        read_calendar,
    )
    from hpcsched.workload.model import Workload

FORMATS = ("swf", "json", "sacct")

#: Names loaded on first use (the readers and the job table bring numpy and pandas).
_LAZY = {
    "generate": "hpcsched.workload.generate",
    "DEFAULT_ANNOUNCE_LEAD": "hpcsched.workload.calendar",
    "Downtime": "hpcsched.workload.calendar",
    "DowntimeCalendar": "hpcsched.workload.calendar",
    "read_calendar": "hpcsched.workload.calendar",
    "Workload": "hpcsched.workload.model",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hpcsched.workload' has no attribute {name!r}")
    imported = importlib.import_module(module)
    value = imported if module.endswith(f".{name}") else getattr(imported, name)
    globals()[name] = value
    return value


def detect_format(path: str | os.PathLike[str]) -> str:
    """``swf``, ``json`` or ``sacct`` (``.sacct``, ``.psv``: ``sacct --parsable2`` output) from
    the file name (``.gz`` allowed)."""
    name = os.fspath(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith(".swf"):
        return "swf"
    if name.endswith(".json"):
        return "json"
    if name.endswith((".sacct", ".psv")):
        return "sacct"
    raise InputError(
        "cannot tell the format from the name (expected .swf, .json or .sacct, optionally "
        ".gz); give --format swf|json|sacct",
        path=os.fspath(path),
    )


def load_workload(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    nodes: int | None = None,
    procs_per_node: int | str = 1,
    lenient: bool = False,
    strict: bool = False,
) -> Workload:
    """Reads a trace (SWF or Batsim/SPARS JSON, plain or gzip) ready for replay; its
    ``load_seconds`` says how long that took."""
    import time

    started = time.perf_counter()
    workload = _read(path, format, nodes, procs_per_node, lenient, strict)
    workload.load_seconds = time.perf_counter() - started
    return workload


def _read(
    path: str | os.PathLike[str],
    format: str | None,
    nodes: int | None,
    procs_per_node: int | str,
    lenient: bool,
    strict: bool,
) -> Workload:
    from hpcsched.workload.batsim import read_batsim_file
    from hpcsched.workload.model import check_machine_nodes
    from hpcsched.workload.swf import read_swf

    if os.path.isdir(path):
        raise InputError(
            "is a folder; give a trace file (.swf or .json, optionally .gz) inside it",
            path=os.fspath(path),
        )
    if nodes is not None:
        check_machine_nodes(nodes)
    fmt = format or detect_format(path)
    if fmt == "swf":
        return read_swf(
            path, nodes=nodes, procs_per_node=procs_per_node, lenient=lenient, strict=strict
        )
    if fmt == "json" and _sacct_json(path):
        fmt = "sacct"  # sacct --json, not a Batsim workload
    if fmt == "json":
        if procs_per_node not in (1, "1"):
            raise OptionError(
                "JSON workloads give sizes in nodes already", option="--procs-per-node"
            )
        return read_batsim_file(path, nodes=nodes, strict=strict)
    if fmt == "sacct":
        from hpcsched.workload.sacct import read_sacct

        if procs_per_node not in (1, "1"):
            raise OptionError(
                "sacct records give sizes in nodes already", option="--procs-per-node"
            )
        return read_sacct(path, nodes=nodes, strict=strict)
    raise OptionError(unknown_name("format", fmt, FORMATS), option="--format")


def _sacct_json(path: str | os.PathLike[str]) -> bool:
    from hpcsched._io import read_blocks
    from hpcsched.workload.sacct import is_sacct_json

    try:  # its first bytes only (not the whole file, read again by the reader)
        return is_sacct_json(next(read_blocks(os.fspath(path), 4096), b""))
    except (InputError, OSError):
        return False  # the reader says why


__all__ = [
    "DEFAULT_ANNOUNCE_LEAD",
    "FORMATS",
    "Downtime",
    "DowntimeCalendar",
    "Workload",
    "detect_format",
    "generate",
    "load_workload",
    "read_calendar",
]
