"""What a user wants to know about a workload before replaying it.

``describe(workload)`` returns a plain dict (JSON-serialisable: Python ints, floats, str, None):

- ``jobs``: jobs kept; ``skipped`` (reason -> count) and ``skipped_total``; ``warnings``.
- ``machine_nodes``.
- ``first_submit`` / ``last_submit`` (seconds on the replay clock, so ``first_submit`` is 0 for a
  freshly read trace), ``span_seconds`` and ``span_days`` between them; ``time_origin``;
  ``first_submit_date`` / ``last_submit_date``: ISO 8601 wall-clock dates when the trace gives
  ``UnixStartTime`` (in the header's ``TimeZoneString`` when it names a known time zone, else UTC),
  else None.
- ``offered_load`` = Σ(nodes · run_time) / (machine_nodes · (last_submit - first_submit)): the
  utilisation the machine would need to keep up with the work submitted during the submission
  span. Above 1 the trace overloads the machine (queues grow); it ignores the work still running
  after the last submission, so short traces overstate it a little. None when the span is 0.
- ``size_classes``: for each of S, M, L, XL (:mod:`hpcsched.classes`), ``jobs``, ``share`` of the
  jobs and ``work_share`` of Σ(nodes · run_time).
- ``requested_known_jobs``: jobs whose requested time was given (column ``requested_known``; all of
  them when the column is absent); ``overrun_share``: among those, the share whose run time
  exceeds the requested time (None when there are none).
- ``run_time_mean`` / ``run_time_median`` over all kept jobs; ``requested_time_mean`` /
  ``requested_time_median`` over the jobs whose requested time was known (an estimate copied from
  the run time says nothing about users' requests). None when there are no such jobs.
- ``users``: distinct known users (user ids >= 0).

What the site recorded (SWF traces; see docs/formats.md):

- ``recorded``: None when the jobs have no ``recorded_wait`` column or no known wait; else
  ``jobs`` (jobs with a known wait), ``unknown`` (kept jobs without one), ``wait`` = {``mean``,
  ``median``, ``p95``} in seconds over the known waits, ``wait_by_class`` = the same with
  ``jobs`` for each size class (None values for an empty class), and ``utilization``: the
  recorded schedule's, busy node-seconds / (machine_nodes · last end), each job with a known
  wait running from submit + recorded wait for its run time, computed by the engine's one
  definition (``_core.overall_utilization``, no downtime; None when nothing ends after 0). It may
  exceed 1: the site's machine may have had more nodes busy than the model's ``machine_nodes``
  (another ``--nodes`` or ``--procs-per-node``, or a record that oversubscribes).
- ``status``: {name: jobs}, most frequent first, with the SWF names of field 11 (``completed``,
  ``failed``, ``cancelled``, ``partial execution``, ``last partial completed``, ``last partial
  failed``, ``unknown``; another code as ``code N``); None without a ``status`` column.
- ``queues`` / ``partitions``: a list of {``number``, ``name`` (from the header; None when it
  names none), ``jobs``, ``recorded_wait_mean`` (s, over its jobs' known recorded waits; None
  when none is known)} for each number in the ``queue`` / ``partition`` column, by number (-1:
  unknown); None without the column. Where waits concentrate is where a model of one pool
  disagrees with the site most (BENCHMARKS.md, "The simulator against the recorded
  schedules").
- ``removed_by_archive``: jobs the archive's cleaning filters removed (``Workload``'s field).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

from hpcsched import _core
from hpcsched.classes import SIZE_CLASSES, size_class
from hpcsched.workload.model import Workload
from hpcsched.workload.record import recorded_schedule

_DAY = 86400.0

#: SWF field 11, by code.
STATUS_NAMES = {
    1: "completed",
    0: "failed",
    5: "cancelled",
    2: "partial execution",
    3: "last partial completed",
    4: "last partial failed",
    -1: "unknown",
}


def describe(workload: Workload) -> dict[str, Any]:
    """Summary statistics of ``workload``; see the module docstring for every entry."""
    jobs = workload.jobs
    n = len(jobs)
    machine = int(workload.nodes)
    submit = jobs["submit"].to_numpy(np.float64)
    run = jobs["run_time"].to_numpy(np.float64)
    requested = jobs["requested_time"].to_numpy(np.float64)
    nodes = jobs["nodes"].to_numpy(np.int64)
    if "requested_known" in jobs:
        known = jobs["requested_known"].to_numpy(bool)
    else:
        known = np.ones(n, dtype=bool)

    first = float(submit.min()) if n else None
    last = float(submit.max()) if n else None
    span = last - first if first is not None and last is not None else None
    work = nodes * run
    total_work = float(work.sum())
    offered = total_work / (machine * span) if span else None

    classes = size_class(nodes, machine) if machine > 0 else np.array([], dtype=str)
    size_classes = {}
    for name in SIZE_CLASSES:
        mask = classes == name
        count = int(mask.sum())
        size_classes[name] = {
            "jobs": count,
            "share": count / n if n else None,
            "work_share": float(work[mask].sum()) / total_work if total_work > 0 else None,
        }

    n_known = int(known.sum())
    users = jobs["user"].to_numpy(np.int64)
    return {
        "source": workload.source,
        "format": workload.format,
        "jobs": n,
        "skipped": dict(workload.skipped),
        "skipped_total": int(sum(workload.skipped.values())),
        "warnings": list(workload.warnings),
        "machine_nodes": machine,
        "time_origin": float(workload.time_origin),
        "first_submit": first,
        "last_submit": last,
        "span_seconds": span,
        "span_days": span / _DAY if span is not None else None,
        "first_submit_date": _date(workload, first),
        "last_submit_date": _date(workload, last),
        "offered_load": offered,
        "size_classes": size_classes,
        "requested_known_jobs": n_known,
        "overrun_share": float((run[known] > requested[known]).mean()) if n_known else None,
        "run_time_mean": float(run.mean()) if n else None,
        "run_time_median": float(np.median(run)) if n else None,
        "requested_time_mean": float(requested[known].mean()) if n_known else None,
        "requested_time_median": float(np.median(requested[known])) if n_known else None,
        "users": int(np.unique(users[users >= 0]).size),
        "recorded": _recorded(workload, classes),
        "status": _status(jobs),
        "queues": _numbered(jobs, "queue", workload.queue_names),
        "partitions": _numbered(jobs, "partition", workload.partition_names),
        "removed_by_archive": workload.removed_by_archive,
    }


def _waits(wait: np.ndarray) -> dict[str, float | None]:
    if not len(wait):
        return {"mean": None, "median": None, "p95": None}
    return {
        "mean": float(wait.mean()),
        "median": float(np.median(wait)),
        "p95": float(np.quantile(wait, 0.95)),
    }


def _recorded(workload: Workload, classes: np.ndarray) -> dict[str, Any] | None:
    """The recorded schedule's waits and utilization (None without a known wait)."""
    jobs = workload.jobs
    if "recorded_wait" not in jobs:
        return None
    wait = jobs["recorded_wait"].to_numpy(np.float64)
    known = ~np.isnan(wait)
    if not known.any():
        return None
    by_class = {}
    for name in SIZE_CLASSES:
        in_class = wait[known & (classes == name)]
        by_class[name] = {"jobs": len(in_class), **_waits(in_class)}
    start, end = recorded_schedule(jobs)
    none = np.array([], dtype=np.float64)
    overall = _core.overall_utilization(
        start,
        end,
        jobs["nodes"].to_numpy(np.float64),
        int(workload.nodes),
        none,
        none,
        np.array([], dtype=bool),
        np.array([], dtype=np.int64),
        (0.0, float(np.nanmax(end))),
    )
    return {
        "jobs": int(known.sum()),
        "unknown": int((~known).sum()),
        "wait": _waits(wait[known]),
        "wait_by_class": by_class,
        "utilization": None if overall is None else float(overall),
    }


def _status(jobs: Any) -> dict[str, int] | None:
    if "status" not in jobs:
        return None
    codes, counts = np.unique(jobs["status"].to_numpy(np.int64), return_counts=True)
    order = sorted(zip(codes.tolist(), counts.tolist(), strict=True), key=lambda c: -c[1])
    return {STATUS_NAMES.get(code, f"code {code}"): count for code, count in order}


def _numbered(jobs: Any, column: str, names: dict[int, str]) -> list[dict[str, Any]] | None:
    """Jobs per queue (or partition) number, with the header's name for it and the mean of
    the known recorded waits of its jobs (None when none is known)."""
    if column not in jobs:
        return None
    numbers, inverse, counts = np.unique(
        jobs[column].to_numpy(np.int64), return_inverse=True, return_counts=True
    )
    means: list[float | None] = [None] * len(numbers)
    if "recorded_wait" in jobs:
        wait = jobs["recorded_wait"].to_numpy(np.float64)
        known = ~np.isnan(wait)
        sums = np.bincount(inverse[known], weights=wait[known], minlength=len(numbers))
        seen = np.bincount(inverse[known], minlength=len(numbers))
        means = [float(t / c) if c else None for t, c in zip(sums, seen, strict=True)]
    return [
        {"number": number, "name": names.get(number), "jobs": count, "recorded_wait_mean": mean}
        for number, count, mean in zip(numbers.tolist(), counts.tolist(), means, strict=True)
    ]


def _zone(workload: Workload) -> dt.tzinfo:
    name = workload.header.get("TimeZoneString")
    if isinstance(name, str) and name.strip():
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(name.strip())
        except (ImportError, ValueError, OSError, KeyError):
            pass
    return dt.UTC


def _date(workload: Workload, seconds: float | None) -> str | None:
    start = workload.unix_start_time
    if start is None or seconds is None:
        return None
    moment = dt.datetime.fromtimestamp(start + seconds, tz=_zone(workload))
    return moment.isoformat(timespec="seconds")


__all__ = ["describe"]
