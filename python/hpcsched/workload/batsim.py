"""Reader for Batsim / SPARS JSON workloads (DESIGN §3.2).

Format::

    {"nb_res": N,
     "jobs": [{"job_id"|"id": ..., "res": ..., "subtime": ..., "reqtime"|"walltime": ...,
               "runtime": ..., "user_id"|"user": ..., ...}, ...],
     ...}

A job's ``partition`` (a name, or several separated by commas; optional) becomes the
``partition_name`` column, which a platform with partitions reads
(:mod:`hpcsched.site.assignment`). Other keys (``profile``, ``profiles``, ...) are ignored. The
rules are those of the SWF reader:

- Replay order is (submit, position in the file), stable. It is *not* sorted by job id: the
  SNF-ICON workloads list jobs in submission order with ties kept in file order.
- Time 0 is the first kept submission; ``Workload.time_origin`` holds the subtracted value, so
  ``submit + time_origin`` gives back the file's ``subtime``.
- ``runtime`` missing, ``null`` or negative: skipped, reason ``"unknown run time"``.
- ``res`` ≤ 0: skipped, ``"non-positive size"``.
- ``res`` larger than the machine (``nb_res``, or the ``nodes`` override): skipped,
  ``"larger than machine"``; with ``strict=True`` an ``InputError`` instead. A job is counted once,
  under the first of these reasons that applies (in the order listed); ``strict`` only concerns
  jobs not already skipped for an earlier reason.
- ``reqtime`` (or ``walltime``) missing, ``null`` or ≤ 0: the estimate is the run time, the
  column ``requested_known`` is False, and the workload carries the warning
  ``"N jobs have no requested time; their estimate is their run time"``.
- Machine size: the ``nodes`` argument when given, else ``nb_res``; when the file has no
  ``nb_res``, the largest kept job (with a warning), as the SWF reader does without a header.

Job ids: an integer (or an integral float) is kept as is. A string id such as Batsim's
``"w0!12"`` (workload ``w0``, job 12) keeps its numeric part: the text after the last ``!`` when
that is an integer, else the whole string when it is an integer, else the last run of digits in
the string; a string without digits gets its 0-based position in the ``jobs`` list. Ids are not
required to be unique; duplicates among kept jobs add a warning.

Users: ``user_id`` (or ``user``): integers kept; integer strings converted; other strings are
numbered in order of first appearance, starting above the largest numeric user id; missing or
``null`` is -1 (unknown).

Errors (``InputError``): invalid JSON (``line`` = the JSON error's line), a top level that is not
an object, ``jobs`` missing or not a list, a job that is not an object, a missing or non-numeric
``job_id``/``res``/``subtime``, a non-numeric ``runtime``/``reqtime``, a non-integer ``res``,
non-finite numbers; ``field`` names the place, e.g. ``jobs[12].res``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hpcsched import _core
from hpcsched._io import not_utf8, read_bytes
from hpcsched.exceptions import InputError, shown
from hpcsched.workload.model import (
    JOB_COLUMNS,
    NO_REQUESTED_TIME_WARNING,
    Workload,
    check_machine_nodes,
)

_INT64_MAX = np.iinfo(np.int64).max
_DIGITS = re.compile(r"\d+")


def read_batsim_file(
    path: str | os.PathLike[str], nodes: int | None = None, strict: bool = False
) -> Workload:
    """Read a Batsim JSON workload file, plain or gzip-compressed."""
    name = os.fspath(path)
    return parse_batsim(
        bytes(read_bytes(name, check_head=_json_head(name))), name, nodes=nodes, strict=strict
    )


def _json_head(path: str) -> Callable[[bytes], None]:
    """Fails at once on a file that does not open like a JSON object (binary data, a gzip
    bomb of NUL bytes), before the rest of it is read."""

    def check(head: bytes) -> None:
        text = head.lstrip(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
        if text and text[:1] != b"{":
            raise InputError(
                f"not a JSON workload: it starts with {shown(text[:16])}, not '{{'", path=path
            )

    return check


def parse_batsim(
    data: bytes, path: str = "<input>", nodes: int | None = None, strict: bool = False
) -> Workload:
    """Parse the (already decompressed) bytes of a Batsim JSON workload."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0  # (utf-8-sig counts after it)
        raise not_utf8(data, bom + exc.start, path) from None
    return read_batsim(text, path, nodes=nodes, strict=strict)


def read_batsim(
    text_or_obj: str | bytes | dict[str, Any],
    path: str = "<input>",
    nodes: int | None = None,
    strict: bool = False,
) -> Workload:
    """Build a ``Workload`` from Batsim JSON text or from the already-decoded JSON object.

    ``nodes`` overrides the machine size (``nb_res``); ``strict`` turns "larger than machine"
    skips into an ``InputError``. See the module docstring for every rule.
    """
    if isinstance(text_or_obj, bytes):
        return parse_batsim(text_or_obj, path, nodes=nodes, strict=strict)
    if isinstance(text_or_obj, str):
        try:
            obj = json.loads(text_or_obj)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None
        except RecursionError:
            raise InputError("invalid JSON: nested too deeply", path=path) from None
        except ValueError as exc:  # an integer of more than 4300 digits, ...
            raise InputError(f"invalid JSON: {str(exc)[:80]}", path=path) from None
    else:
        obj = text_or_obj
    if not isinstance(obj, dict):
        raise InputError("the top level must be a JSON object with 'jobs'", path=path)
    jobs = obj.get("jobs")
    if not isinstance(jobs, list):
        reason = "no 'jobs' list" if jobs is None else "'jobs' must be a list"
        raise InputError(reason, path=path, field="jobs")
    for i, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise InputError("a job must be a JSON object", path=path, field=f"jobs[{i}]")

    if nodes is not None:
        check_machine_nodes(nodes)
    nb_res = _nb_res(obj, path)

    job_id = _job_ids(jobs, path)
    res, _ = _numbers(jobs, ("res",), path, required=True)
    submit, _ = _numbers(jobs, ("subtime",), path, required=True)
    run_time, run_known = _numbers(jobs, ("runtime",), path, required=False)
    requested, req_present = _numbers(jobs, ("reqtime", "walltime"), path, required=False)
    user = _users(jobs, path)
    for values, present, names in (
        (submit, None, ("subtime",)),
        (run_time, run_known, ("runtime",)),
        (requested, req_present, ("reqtime", "walltime")),
    ):
        _check_time_range(values, present, jobs, names, path)

    fractional = np.flatnonzero(res != np.floor(res))
    if fractional.size:
        i = int(fractional[0])
        raise InputError(
            f"size must be a whole number of nodes, not {shown(res[i])}",
            path=path,
            field=f"jobs[{i}].res",
        )

    skipped: dict[str, int] = {}
    warnings: list[str] = []
    unknown_run = ~(run_known & (run_time >= 0))
    bad_size = ~unknown_run & (res <= 0)
    candidate = ~unknown_run & ~bad_size

    if nodes is not None:
        machine = nodes
    elif nb_res is not None:
        machine = nb_res
    else:
        if not candidate.any():
            raise InputError(
                "no 'nb_res' and no job to infer the machine size from", path=path, field="nb_res"
            )
        largest = float(res[candidate].max())
        if largest > _core.MAX_NODES:
            raise InputError(
                f"no 'nb_res', and the largest job ({largest:g} nodes) is past the engine's "
                f"range (1 to {_core.MAX_NODES}); give --nodes",
                path=path,
                field="nb_res",
            )
        machine = int(largest)
        warnings.append(f"no 'nb_res': the machine size is the largest job ({machine} nodes)")

    too_big = candidate & (res > machine)
    if strict and too_big.any():
        i = int(np.flatnonzero(too_big)[0])
        raise InputError(
            f"job {job_id[i]} needs {int(res[i])} nodes, the machine has {machine}",
            path=path,
            field=f"jobs[{i}].res",
        )
    for reason, mask in (
        ("unknown run time", unknown_run),
        ("non-positive size", bad_size),
        ("larger than machine", too_big),
    ):
        count = int(mask.sum())
        if count:
            skipped[reason] = count

    keep = np.flatnonzero(candidate & ~too_big)
    order = keep[np.argsort(submit[keep], kind="stable")]
    time_origin = float(submit[order[0]]) if order.size else 0.0
    req_known = req_present[order] & (requested[order] > 0)
    run = run_time[order]
    import pandas as pd  # after the file is read: a bad file fails before this import

    frame = pd.DataFrame(
        {
            "job_id": job_id[order],
            "submit": submit[order] - time_origin,
            "run_time": run,
            "requested_time": np.where(req_known, requested[order], run),
            "nodes": res[order].astype(np.int64),
            "user": user[order],
            "requested_known": req_known,
        }
    ).astype(JOB_COLUMNS)
    partitions = _partitions(jobs, path)
    if partitions is not None:
        frame["partition_name"] = partitions[order]

    n_unknown = int((~req_known).sum())
    if n_unknown:
        warnings.append(NO_REQUESTED_TIME_WARNING.format(n=n_unknown))
    n_dup = int(frame["job_id"].duplicated(keep=False).sum())
    if n_dup:
        warnings.append(f"{n_dup} kept jobs share their job id with another job")

    header: dict[str, object] = {"nb_res": nb_res}
    for key, value in obj.items():
        if key not in ("jobs", "profiles", "nb_res") and isinstance(value, (str, int, float)):
            header[key] = value

    return Workload(
        jobs=frame,
        nodes=int(machine),
        source=path,
        format="batsim",
        skipped=skipped,
        warnings=warnings,
        header=header,
        time_origin=time_origin,
        procs_per_node=1,
    )


def _nb_res(obj: dict[str, Any], path: str) -> int | None:
    value = obj.get("nb_res")
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value != int(value)
        or not 0 < value <= _core.MAX_NODES
    ):
        raise InputError(
            f"the machine size must be an integer from 1 to {_core.MAX_NODES}, not {shown(value)}",
            path=path,
            field="nb_res",
        )
    return int(value)


def _get(job: dict[str, Any], names: Sequence[str]) -> Any:
    for name in names:
        value = job.get(name)
        if value is not None:
            return value
    return None


def _numbers(
    jobs: list[dict[str, Any]], names: Sequence[str], path: str, *, required: bool
) -> tuple[np.ndarray, np.ndarray]:
    """One numeric field of every job as float64, and a mask of the jobs that give it."""
    if len(names) == 1:
        name = names[0]
        values = [job.get(name) for job in jobs]
    else:
        values = [_get(job, names) for job in jobs]
    if {type(v) for v in values} <= {int, float}:
        try:
            out = np.array(values, dtype=np.float64)
        except OverflowError:  # an integer beyond float range: find it below
            pass
        else:
            bad = np.flatnonzero(~np.isfinite(out))
            if bad.size:
                i = int(bad[0])
                field = f"jobs[{i}].{_which(jobs[i], names)}"
                raise InputError(f"not a finite number: {shown(values[i])}", path=path, field=field)
            return out, np.ones(len(values), dtype=bool)

    out = np.full(len(values), np.nan)
    present = np.zeros(len(values), dtype=bool)
    for i, value in enumerate(values):
        if value is None:
            if required:
                alias = " (or " + ", ".join(f"'{n}'" for n in names[1:]) + ")" if names[1:] else ""
                raise InputError(
                    f"job has no '{names[0]}'{alias}", path=path, field=f"jobs[{i}].{names[0]}"
                )
            continue
        field = f"jobs[{i}].{_which(jobs[i], names)}"
        if type(value) not in (int, float):
            raise InputError(f"not a number: {shown(value)}", path=path, field=field)
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise InputError(f"not a finite number: {shown(value)}", path=path, field=field)
        out[i] = number
        present[i] = True
    return out, present


def _check_time_range(
    values: np.ndarray,
    present: np.ndarray | None,
    jobs: list[dict[str, Any]],
    names: Sequence[str],
    path: str,
) -> None:
    """Times past the engine's range (``_core.MAX_TIME``) are input errors: a submit time of
    1e308 would make a 100 s job end when it starts."""
    outside = np.abs(values) > _core.MAX_TIME
    if present is not None:
        outside &= present
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise InputError(
            f"{values[i]:g} s is out of range (times must be within +-{_core.MAX_TIME:g} s)",
            path=path,
            field=f"jobs[{i}].{_which(jobs[i], names)}",
        )


def _which(job: dict[str, Any], names: Sequence[str]) -> str:
    for name in names:
        if job.get(name) is not None:
            return name
    return names[0]


def _id_from_string(text: str, index: int) -> int:
    for candidate in (text.rsplit("!", 1)[-1], text):
        stripped = candidate.strip()
        if re.fullmatch(r"[+-]?\d+", stripped):
            value = int(stripped)
            if -_INT64_MAX <= value <= _INT64_MAX:
                return value
    runs = _DIGITS.findall(text)
    if runs and int(runs[-1]) <= _INT64_MAX:
        return int(runs[-1])
    return index


def _job_ids(jobs: list[dict[str, Any]], path: str) -> np.ndarray:
    out = np.empty(len(jobs), dtype=np.int64)
    for i, job in enumerate(jobs):
        value = _get(job, ("job_id", "id"))
        field = f"jobs[{i}].{_which(job, ('job_id', 'id'))}"
        if value is None:
            raise InputError("job has no 'job_id' (or 'id')", path=path, field=field)
        if type(value) is int:
            if abs(value) > _INT64_MAX:
                raise InputError(f"job id out of range: {value}", path=path, field=field)
            out[i] = value
        elif type(value) is float:
            if not (math.isfinite(value) and value == int(value) and abs(value) <= _INT64_MAX):
                raise InputError(
                    f"job id must be an integer, not {shown(value)}", path=path, field=field
                )
            out[i] = int(value)
        elif type(value) is str:
            out[i] = _id_from_string(value, i)
        else:
            raise InputError(
                f"job id must be a number or a string, not {shown(value)}", path=path, field=field
            )
    return out


def _users(jobs: list[dict[str, Any]], path: str) -> np.ndarray:
    values = [_get(job, ("user_id", "user")) for job in jobs]
    if {type(v) for v in values} <= {int}:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:
            pass
    out = np.full(len(values), -1, dtype=np.int64)
    names: dict[str, int] = {}
    pending: list[tuple[int, str]] = []
    for i, value in enumerate(values):
        if value is None:
            continue
        if type(value) is float and math.isfinite(value) and value == int(value):
            value = int(value)
        if type(value) is str and re.fullmatch(r"[+-]?\d{1,18}", value.strip()):
            value = int(value)
        if type(value) is int and abs(value) <= _INT64_MAX:
            out[i] = value
        elif type(value) is str:
            pending.append((i, value))
        else:
            raise InputError(
                f"user must be an integer or a string, not {shown(value)}",
                path=path,
                field=f"jobs[{i}].{_which(jobs[i], ('user_id', 'user'))}",
            )
    if pending:
        base = int(out.max()) + 1 if len(out) else 0
        base = max(base, 0)
        for i, value in pending:
            out[i] = names.setdefault(value, base + len(names))
    return out


__all__ = ["NO_REQUESTED_TIME_WARNING", "parse_batsim", "read_batsim", "read_batsim_file"]


def _partitions(jobs: list[dict[str, Any]], path: str) -> np.ndarray | None:
    """Each job's ``partition`` text ("" when it names none); None when no job names one."""
    if not any(job.get("partition") is not None for job in jobs):
        return None
    names = []
    for i, job in enumerate(jobs):
        value = job.get("partition")
        if value is not None and not isinstance(value, str):
            raise InputError(
                f"partition must be a name in quotes, not {shown(value)}",
                path=path,
                field=f"jobs[{i}].partition",
            )
        names.append(value or "")
    return np.array(names, dtype=object)
