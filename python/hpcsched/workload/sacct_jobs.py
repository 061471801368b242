"""From sacct's records, read column by column (``sacct.py`` for ``--parsable2`` text,
``sacct_json.py`` for ``--json``), to the job table: which records are jobs to replay, the
checks that need a whole record (End before Start, times beyond the engine's range) and the
warnings (start before submission, duplicate ids). The rules: ``sacct.py``'s docstring."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hpcsched import _core
from hpcsched.exceptions import InputError
from hpcsched.workload.model import NO_REQUESTED_TIME_WARNING, Workload, check_machine_nodes

if TYPE_CHECKING:
    import pandas as pd

#: The warning when the machine's size is not given (a platform with partitions gives it later).
NO_MACHINE_SIZE = "sacct records no machine size"
#: The most CPUs a count may give: Slurm's own type for them, and the engine's, is 32 bits.
MAX_CPUS = (1 << 32) - 1
#: The largest job id (the job table's ids are 64-bit).
MAX_JOB_ID = (1 << 63) - 1
#: The text columns of the job table, as every reader gives them.
TEXT_COLUMNS = ("state", "user_name", "group_name", "account", "qos", "partition_name", "job_name")
#: The text every reader keeps: those columns, and what a job asked of the resources inside
#: nodes and where it ran (``sacct_tres``).
RECORDED_TEXT = (*TEXT_COLUMNS, "req_tres", "req_mem", "node_list")
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


class TextColumn:
    """A text column kept as codes into its distinct values (a million records name a few
    hundred users): one Python string per value, not per record."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._code: dict[str, int] = {}
        self.codes = np.zeros(0, np.int32)

    def code(self, value: str) -> int:
        code = self._code.get(value)
        if code is None:
            code = self._code[value] = len(self.values)
            self.values.append(value)
        return code


@dataclass
class SacctRecords:
    """sacct's job records (steps left out), one array entry per record in file order.

    Times are Unix seconds, NaN when not set; ``limit`` is seconds, NaN when none. A record
    with no ``start`` never started (a pending array's record has none, whatever it says).
    ``line`` is the record's line (text) or its position in ``jobs`` from 1 (JSON);
    ``field_names`` names each column where the file writes it, for messages."""

    job_id: np.ndarray
    submit: np.ndarray
    eligible: np.ndarray
    start: np.ndarray
    end: np.ndarray
    limit: np.ndarray
    nodes: np.ndarray
    procs: np.ndarray
    requested_procs: np.ndarray
    line: np.ndarray
    text: dict[str, TextColumn]
    path: str
    field_names: dict[str, str]
    json: bool = False
    steps: int = 0

    def error(self, row: int, column: str, reason: str) -> InputError:
        """An ``InputError`` naming where record ``row``'s ``column`` is written."""
        name = self.field_names[column]
        if self.json:
            return InputError(reason, path=self.path, field=f"jobs[{self.line[row] - 1}].{name}")
        return InputError(reason, path=self.path, line=int(self.line[row]), field=name)

    def take(self, name: str, rows: np.ndarray) -> np.ndarray:
        """Column ``name`` at ``rows``, letting the column go: the job table is built a column
        at a time beside what is left of the records, not beside all of them."""
        values: np.ndarray = getattr(self, name)[rows]
        setattr(self, name, values[:0])
        return values

    def place(self, row: int) -> str:
        """Where record ``row`` is, for a warning."""
        if self.json:
            return f"jobs[{self.line[row] - 1}]"
        return f"line {self.line[row]}"


def build_workload(records: SacctRecords, nodes: int | None, strict: bool) -> Workload:
    """The workload of sacct's records (``sacct.py``'s docstring)."""
    r = records
    has_times = np.isfinite(r.submit) & np.isfinite(r.start)
    ended = has_times & np.isfinite(r.end)
    _check_ends(r, ended)
    sized = ended & (r.nodes > 0)
    skipped = {
        "never started": int((~has_times).sum()),
        "running when recorded": int((has_times & ~ended).sum()),
        "non-positive size": int((ended & ~sized).sum()),
        "larger than machine": 0,
    }
    warnings = []
    machine = nodes
    if machine is None:
        machine = int(r.nodes[sized].max()) if sized.any() else 1
        warnings.append(
            f"{NO_MACHINE_SIZE}: {machine} nodes, its largest job (give --nodes or a platform)"
        )
    else:
        check_machine_nodes(machine)
    too_large = sized & (r.nodes > machine)
    if too_large.any() and strict:
        row = int(np.flatnonzero(too_large)[0])
        raise r.error(
            row,
            "nodes",
            f"job {r.job_id[row]} ran on {r.nodes[row]} nodes, more than the machine's {machine} "
            "(drop --strict to skip such jobs)",
        )
    skipped["larger than machine"] = int(too_large.sum())
    kept = np.flatnonzero(sized & ~too_large)
    if r.steps:
        lines = "line" if r.steps == 1 else "lines"
        warnings.append(f"{r.steps} {lines} of job steps read past (a job is its allocation line)")
    # A job arrives when it became eligible, never before its submission.
    arrival = np.fmax(r.eligible[kept], r.submit[kept])
    wait = r.start[kept] - arrival
    _check_spans(r, kept, arrival, wait)
    early = wait < 0
    if early.any():
        warnings.append(_early_start_warning(r, kept[early]))
        wait[early] = np.nan
    warnings.extend(_duplicate_ids(r, kept))
    order = np.lexsort((r.job_id[kept], arrival))  # stable: ties keep file order
    kept, arrival, wait = kept[order], arrival[order], wait[order]
    origin = float(arrival[0]) if len(kept) else 0.0
    arrival -= origin
    jobs = _job_table(r, kept, arrival, wait)  # (the records are spent)
    known = jobs["requested_known"].to_numpy()
    if (~known).any():
        warnings.append(NO_REQUESTED_TIME_WARNING.format(n=int((~known).sum())))
    return Workload(
        jobs=jobs,
        nodes=machine,
        source=r.path,
        format="sacct",
        skipped=skipped,
        warnings=warnings,
        header={"UnixStartTime": 0},
        time_origin=origin,
    )


def _check_ends(r: SacctRecords, ended: np.ndarray) -> None:
    """A job that ends before it starts has no run time to replay: an error (a record in
    local time across a daylight-saving change does it; capture with TZ=UTC)."""
    backwards = ended & (r.end < r.start)
    if backwards.any():
        row = int(np.flatnonzero(backwards)[0])
        raise r.error(
            row,
            "end",
            f"the job ends {r.start[row] - r.end[row]:g} s before it starts (a record in local "
            "time across a daylight-saving change? capture with TZ=UTC)",
        )


def _check_spans(r: SacctRecords, kept: np.ndarray, arrival: np.ndarray, wait: np.ndarray) -> None:
    """Arrivals, waits and run times within the engine's range of times (``_core.MAX_TIME``):
    records centuries apart cannot be replayed."""
    if not len(kept):
        return
    from_eligible = r.eligible[kept] > r.submit[kept]
    checks = (
        (arrival - arrival.min(), "arrives {:g} s after the first job", None),
        (wait, "waits {:g} s", "start"),
        (r.end[kept] - r.start[kept], "runs {:g} s", "end"),
    )
    for values, what, column in checks:
        outside = np.abs(values) > _core.MAX_TIME
        if outside.any():
            k = int(np.flatnonzero(outside)[0])
            where = column or ("eligible" if from_eligible[k] else "submit")
            raise r.error(
                int(kept[k]),
                where,
                f"the job {what.format(values[k])}: beyond the engine's range of times "
                f"({_core.MAX_TIME:g} s)",
            )


def _early_start_warning(r: SacctRecords, rows: np.ndarray) -> str:
    n = len(rows)
    jobs = "1 job starts" if n == 1 else f"{n} jobs start"
    whose = "its recorded start is" if n == 1 else "their recorded starts are"
    return (
        f"{jobs} before submission or eligibility (a record in local time across a "
        f"daylight-saving change?): {whose} left unknown (the first: job {r.job_id[rows[0]]}, "
        f"{r.place(int(rows[0]))})"
    )


def _duplicate_ids(r: SacctRecords, kept: np.ndarray) -> list[str]:
    """A warning when kept jobs share an id (``sacct --duplicates`` lists a requeued job once
    per run): they replay as distinct jobs."""
    ids = r.job_id[kept]
    order = np.argsort(ids, kind="stable")
    ranked = ids[order]
    same = ranked[1:] == ranked[:-1]
    if not same.any():
        return []
    shared = np.zeros(len(ids), dtype=bool)
    shared[order[1:][same]] = shared[order[:-1][same]] = True
    first = ids[np.argmax(shared)]  # the first in file order that shares its id
    rows = kept[ids == first][:2]
    return [
        f"{int(shared.sum())} kept jobs share their job id with another job (e.g. job {first}: "
        f"{r.place(int(rows[0]))} and {r.place(int(rows[1]))}); they are replayed as distinct jobs"
    ]


def _job_table(
    r: SacctRecords, rows: np.ndarray, submit: np.ndarray, wait: np.ndarray
) -> pd.DataFrame:
    """The job table of records ``rows`` (in replay order), taking the records' columns."""
    import pandas as pd

    run = r.end[rows] - r.take("start", rows)
    r.end = r.end[:0]
    limit = r.take("limit", rows)
    known = ~np.isnan(limit) & (limit > 0)
    requested = np.where(known, limit, run)
    del limit
    nodes = r.take("nodes", rows)
    procs = np.maximum(r.take("procs", rows), 1)
    asked = r.take("requested_procs", rows)
    states = r.text["state"]
    status_of = np.array([_STATUS.get(v, -1) for v in states.values], dtype=np.int64)
    columns = {
        "job_id": r.take("job_id", rows),
        "submit": submit,
        "run_time": run,
        "requested_time": requested,
        "nodes": nodes,
        "user": _user_numbers(r.text["user_name"], rows),
        "procs": procs,
        "recorded_nodes": nodes.copy(),
        "requested_known": known,
        "status": status_of[states.codes[rows]],
    }
    for name in TEXT_COLUMNS:
        columns[name] = _texts(r.text[name], rows)
    columns["partition_name"] = _none_when_empty(columns["partition_name"])
    columns["line"] = r.take("line", rows)
    columns["recorded_wait"] = wait
    if asked.any():
        columns["requested_procs"] = np.where(asked > 0, asked, procs)  # (not recorded: given)
    if any(r.text[name].values != [""] for name in ("req_tres", "req_mem")):
        from hpcsched.workload.sacct_tres import request_columns

        tres, mem = r.text["req_tres"], r.text["req_mem"]
        columns.update(
            request_columns(
                (tres.values, tres.codes), (mem.values, mem.codes), rows, asked, procs, r.path
            )
        )
    node_list = _texts(r.text["node_list"], rows)
    if (node_list != "").any():
        columns["node_list"] = node_list  # where the site ran it
    # each array is the table's own: not copied once more into blocks
    return pd.DataFrame(columns, copy=False)


def _texts(column: TextColumn, rows: np.ndarray) -> np.ndarray:
    """The column's strings at ``rows``, each distinct string one object (the codes go)."""
    values = np.empty(len(column.values), dtype=object)
    values[:] = column.values
    texts: np.ndarray = values[column.codes[rows]]
    column.codes = column.codes[:0]
    return texts


def _none_when_empty(values: np.ndarray) -> np.ndarray:
    out = values.copy()
    out[out == ""] = None
    return out


def _user_numbers(users: TextColumn, rows: np.ndarray) -> np.ndarray:
    """Users numbered in order of first appearance (at ``rows``, in replay order); -1 when not
    recorded."""
    codes = users.codes[rows]
    present, first = np.unique(codes, return_index=True)
    if "" in users.values:  # no user: no number
        recorded = present != users.values.index("")
        present, first = present[recorded], first[recorded]
    number = np.full(len(users.values), -1, dtype=np.int64)
    number[present[np.argsort(first)]] = np.arange(len(present))
    numbers: np.ndarray = number[codes]
    return numbers
