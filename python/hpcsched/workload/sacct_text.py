"""The columns of ``sacct --parsable2`` text, read batch by batch (``pyarrow``'s CSV reader) and
converted with array operations: ids, times and counts become numbers, text columns codes
into their distinct values. The first wrong value (by line, then by field in a line: id,
limit, times, counts) is the error, naming file, line and field. The rules: ``sacct.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from hpcsched import _core
from hpcsched.exceptions import InputError, shown
from hpcsched.site.slurm.text import BeyondTimes, slurm_duration
from hpcsched.workload.sacct_jobs import (
    MAX_CPUS,
    MAX_JOB_ID,
    RECORDED_TEXT,
    SacctRecords,
    TextColumn,
)

#: Header names (lower case) read as numbers -> the field names messages use.
FIELD_NAMES = {
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
#: Header names read as text -> the job table's columns.
TEXT_FIELDS = {
    "user": "user_name",
    "group": "group_name",
    "account": "account",
    "qos": "qos",
    "partition": "partition_name",
    "state": "state",
    "jobname": "job_name",
    "reqtres": "req_tres",
    "reqmem": "req_mem",
    "nodelist": "node_list",
}
#: sacct's words for a time that is not set.
_NO_TIME = ["", "unknown", "none", "n/a"]
#: Job ids: a step's line (``123.batch``, ``5_0.extern``, ``7+1.0``), a number, a pending
#: array's record (``123_[1-1000%10]``), an array task or a heterogeneous job's component.
_STEP = r"^[0-9]+(?:_[0-9]+|\+[0-9]+)?\."
_NUMBER = r"^[0-9]+$"
_PENDING_ARRAY = r"^(?P<job>[0-9]+)_\[.*\]$"
_COMPONENT = r"^(?P<job>[0-9]+)[_+](?P<task>[0-9]+)$"
#: With only JobID, task (or component) t of job j is j * 10^8 + t: Slurm numbers an
#: array's tasks below its MaxArraySize (at most 4,000,001).
TASK_SCALE = 10**8
_MAX_ARRAY_JOB = (MAX_JOB_ID - TASK_SCALE + 1) // TASK_SCALE
#: ``YYYY-MM-DDTHH:MM:SS``: where its digits and its separators are.
_TIME_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
_TIME_MARKS = {4: ord("-"), 7: ord("-"), 10: ord("T"), 13: ord(":"), 16: ord(":")}
_TIME_WIDTH = 19
_EPOCH = "1970-01-01T00:00:00"
_DAYS_IN_MONTH = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
#: Records the columns have room for at first.
_FIRST_ROOM = 1 << 16
#: Bytes of text per batch (a batch holds whole lines).
BLOCK = 1 << 20


class Read(NamedTuple):
    """One column of a batch read: its values, which are refused, and the (field, message)
    of a refused row."""

    values: np.ndarray
    refused: np.ndarray
    message: Callable[[int], tuple[str, str]] | None = None


class TextColumns:
    """Reads the records' columns (the header's ``column`` positions of the fields read;
    ``key``, the id's header name) from lines ``lines`` (1-based, in file order)."""

    def __init__(self, path: str, column: dict[str, int], key: str) -> None:
        self.path = path
        self.column = column
        self.key = key
        self.lines = np.zeros(0, np.int64)  # of the segment being read
        self.done = 0  # its lines read
        self.kept = 0  # records kept (steps are not)
        self.steps = 0
        # the columns, filled a batch at a time in arrays grown by doubling: large ones,
        # allocated whole (pieces joined at the end, or kept beside each batch's temporaries,
        # would leave the memory they free cut up and held)
        self.stored: dict[str, np.ndarray] = {n: np.empty(0, t) for n, t in _STORED.items()}
        self.text = {name: TextColumn() for name in RECORDED_TEXT}

    def read(
        self,
        data: Any,
        begin: int,
        end: int,
        fields: int,
        longest: int,
        lines: np.ndarray,
    ) -> None:
        """Reads the records in ``data[begin:end]``: lines of ``fields`` fields (their
        numbers ``lines``) and blank lines, none longer than ``longest`` bytes."""
        import pyarrow as pa
        from pyarrow import csv

        self.lines, self.done = lines, 0
        self._reserve(self.kept + len(lines))
        names = [f"f{k}" for k in range(fields)]
        used = [names[k] for k in sorted(set(self.column.values()))]
        # a copy the CSV reader owns: its threads may hold it past this call, while the
        # caller refills ``data`` in place
        text = pa.allocate_buffer(end - begin)
        np.frombuffer(text, np.uint8)[:] = np.frombuffer(data, np.uint8)[begin:end]
        reader = csv.open_csv(
            pa.BufferReader(text),
            read_options=csv.ReadOptions(column_names=names, block_size=max(BLOCK, longest + 2)),
            parse_options=csv.ParseOptions(
                delimiter="|",
                quote_char=False,
                double_quote=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=True,
                invalid_row_handler=_skip_blank,
            ),
            convert_options=csv.ConvertOptions(
                column_types=dict.fromkeys(used, pa.string()),
                include_columns=used,
                check_utf8=False,
                strings_can_be_null=False,
            ),
        )
        with reader:
            for batch in reader:
                self._batch({name: batch.column(f"f{k}") for name, k in self.column.items()})
        del reader, text
        pa.default_memory_pool().release_unused()  # the batches' memory, kept for reuse
        if self.done != len(self.lines):  # the layout and the CSV reader disagree: a bug
            raise AssertionError(f"read {self.done} records of {len(self.lines)} lines")

    def _reserve(self, n: int) -> None:
        """Room for ``n`` records in every column."""
        size = len(self.stored["job_id"])
        if n <= size:
            return
        size = max(n, 2 * size, _FIRST_ROOM)
        for name, values in self.stored.items():
            bigger = np.empty(size, values.dtype)
            bigger[: self.kept] = values[: self.kept]
            self.stored[name] = bigger

    def _batch(self, columns: dict[str, Any]) -> None:
        import pyarrow as pa

        n = len(columns[self.key])
        lines = self.lines[self.done : self.done + n]
        self.done += n
        ids = _trimmed(columns[self.key])
        step = _matches(ids, _STEP)
        if step.any():
            self.steps += int(step.sum())
            chosen = pa.array(~step)
            columns = {name: values.filter(chosen) for name, values in columns.items()}
            ids, lines = ids.filter(chosen), lines[~step]
        read = self._convert(ids, columns)
        self._raise_first_refused(read, lines)
        kept = slice(self.kept, self.kept + len(lines))
        self.kept += len(lines)
        self.stored["line"][kept] = lines
        for name, column in zip(_NUMERIC, read, strict=True):
            self.stored[name][kept] = column.values
        for out in RECORDED_TEXT:
            header_name = _TEXT_HEADER[out]
            if header_name in columns:
                codes = _text_codes(self.text[out], columns[header_name], state=out == "state")
            else:  # not recorded: empty
                codes = np.full(len(lines), self.text[out].code(""), dtype=np.int32)
            self.stored[out][kept] = codes

    def _raise_first_refused(self, read: list[Read], lines: np.ndarray) -> None:
        first = [(int(np.argmax(c.refused)), k) for k, c in enumerate(read) if c.refused.any()]
        if first:
            row, k = min(first)  # the first line, and its first field
            message = read[k].message
            assert message is not None
            field, reason = message(row)
            raise InputError(reason, path=self.path, line=int(lines[row]), field=field)

    def _convert(self, ids: Any, columns: dict[str, Any]) -> list[Read]:
        """The numeric columns (``_NUMERIC``), in the order a line's fields are checked."""
        n = len(ids)
        job_id, pending = _job_ids(ids, FIELD_NAMES[self.key], composite=self.key == "jobid")
        if "jobid" in columns and self.key != "jobid":
            pending = pending | _matches(_trimmed(columns["jobid"]), _PENDING_ARRAY)
        cpus = "ncpus" if "ncpus" in columns else "alloccpus"
        return [
            job_id,
            Read(pending, np.zeros(n, bool)),
            self._distinct("timelimit", columns, n, _limit, np.float64),
            *(self._times(name, columns, n) for name in ("submit", "eligible", "start", "end")),
            self._distinct("nnodes", columns, n, _count(_core.MAX_NODES), np.int64),
            self._distinct(cpus, columns, n, _count(MAX_CPUS), np.int64),
            self._distinct("reqcpus", columns, n, _count(MAX_CPUS), np.int64),
        ]

    def _times(self, name: str, columns: dict[str, Any], n: int) -> Read:
        if name not in columns:
            return Read(np.full(n, np.nan), np.zeros(n, bool))
        text = _trimmed(columns[name])
        seconds, refused, well_formed = unix_times(text)

        def message(row: int) -> tuple[str, str]:
            value = text[row].as_py()
            if not well_formed[row]:
                return FIELD_NAMES[name], f"expected a time YYYY-MM-DDTHH:MM:SS, not {shown(value)}"
            return FIELD_NAMES[name], (
                f"{value} is beyond the engine's range of times (+-{_core.MAX_TIME:g} s from 1970)"
            )

        return Read(seconds, refused, message)

    def _distinct(
        self,
        name: str,
        columns: dict[str, Any],
        n: int,
        check: Callable[[str], tuple[float, str | None]],
        dtype: type,
    ) -> Read:
        """A column of few distinct values (limits, counts): each value checked once."""
        if name not in columns:
            return Read(np.full(n, np.nan if dtype is np.float64 else 0, dtype), np.zeros(n, bool))
        values, codes = _distinct_values(columns[name])
        numbers: np.ndarray = np.zeros(len(values), dtype=dtype)
        reasons: list[str | None] = []
        for k, value in enumerate(values):
            number, reason = check(value.strip())
            reasons.append(reason)
            numbers[k] = 0 if reason is not None else number
        refused = np.array([r is not None for r in reasons], dtype=bool)

        def message(row: int) -> tuple[str, str]:
            return FIELD_NAMES[name], str(reasons[codes[row]])

        return Read(numbers[codes], refused[codes], message)

    def records(self) -> SacctRecords:
        """The records read (steps left out)."""
        column = {name: values[: self.kept] for name, values in self.stored.items()}
        for name, text in self.text.items():
            text.codes = column[name]
        start = column["start"]
        start[column["pending"]] = np.nan  # a pending array's record never started
        return SacctRecords(
            job_id=column["job_id"],
            submit=column["submit"],
            eligible=column["eligible"],
            start=start,
            end=column["end"],
            limit=column["limit"],
            nodes=column["nodes"],
            procs=column["procs"],
            requested_procs=column["requested_procs"],
            line=column["line"],
            text=self.text,
            path=self.path,
            field_names={
                "submit": "Submit",
                "eligible": "Eligible",
                "start": "Start",
                "end": "End",
                "nodes": "NNodes",
            },
            steps=self.steps,
        )


#: The numeric columns a batch gives, in the order ``TextColumns._convert`` returns them.
_NUMERIC: dict[str, type] = {
    "job_id": np.int64,
    "pending": np.bool_,
    "limit": np.float64,
    "submit": np.float64,
    "eligible": np.float64,
    "start": np.float64,
    "end": np.float64,
    "nodes": np.int64,
    "procs": np.int64,
    "requested_procs": np.int64,
}
#: Every column kept: the numeric ones, the line numbers, the text columns' codes.
_STORED: dict[str, type] = {
    **_NUMERIC,
    "line": np.int64,
    **dict.fromkeys(RECORDED_TEXT, np.int32),
}
_TEXT_HEADER = {out: header_name for header_name, out in TEXT_FIELDS.items()}


def _job_ids(ids: Any, field: str, composite: bool) -> tuple[Read, np.ndarray]:
    """The ids (``sacct.py``'s rules) and which records are a pending array's. With
    ``composite`` (only JobID), an array task or a component is ``job * 10^8 + task``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(ids)
    values = np.zeros(n, np.int64)
    number = _matches(ids, _NUMBER)
    pending = _matches(ids, _PENDING_ARRAY)
    task = _matches(ids, _COMPONENT) if composite else np.zeros(n, bool)
    out_of_range = np.zeros(n, bool)
    if number.any():
        values[number], fits = _digits(ids.filter(pa.array(number)))
        out_of_range[number] = ~fits
    if pending.any():
        job = pc.extract_regex(ids.filter(pa.array(pending)), _PENDING_ARRAY).field("job")
        values[pending], fits = _digits(job)
        out_of_range[pending] = ~fits
    if task.any():
        parts = pc.extract_regex(ids.filter(pa.array(task)), _COMPONENT)
        job, fits = _digits(parts.field("job"))
        number_of_task, task_fits = _digits(parts.field("task"))
        fits &= (job <= _MAX_ARRAY_JOB) & task_fits & (number_of_task < TASK_SCALE)
        values[task] = np.where(fits, job, 0) * TASK_SCALE + np.where(fits, number_of_task, 0)
        out_of_range[task] = ~fits
    unread = ~(number | pending | task)

    def message(row: int) -> tuple[str, str]:
        value = shown(ids[row].as_py())
        if unread[row]:
            return field, f"expected a job id, not {value}"
        if task[row]:
            return field, (
                f"expected an array task or a component below {TASK_SCALE} of a job up to "
                f"{_MAX_ARRAY_JOB} (or give JobIDRaw), not {value}"
            )
        return field, f"expected a job id from 0 to {MAX_JOB_ID}, not {value}"

    return Read(values, unread | out_of_range, message), pending


def _digits(strings: Any) -> tuple[np.ndarray, np.ndarray]:
    """Strings of ASCII digits as int64 (0 where too large), and which fit."""
    import pyarrow as pa
    import pyarrow.compute as pc

    length = np.asarray(pc.binary_length(strings).to_numpy(zero_copy_only=False))
    longest = len(str(MAX_JOB_ID))
    above = np.asarray(pc.greater(strings, str(MAX_JOB_ID)).to_numpy(zero_copy_only=False))
    fits = (length < longest) | ((length == longest) & ~above)
    safe = pc.if_else(pa.array(fits), strings, "0")
    return np.asarray(pc.cast(safe, pa.int64()).to_numpy(zero_copy_only=False)), fits


def unix_times(text: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sacct's times (``YYYY-MM-DDTHH:MM:SS``, exactly) as Unix seconds, NaN when not set;
    which are refused; which are well formed (a refused one is then out of range)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    unset = np.asarray(
        pc.is_in(pc.utf8_lower(text), value_set=pa.array(_NO_TIME)).to_numpy(zero_copy_only=False)
    )
    sized = np.asarray(pc.binary_length(text).to_numpy(zero_copy_only=False)) == _TIME_WIDTH
    filled = pc.if_else(pa.array(sized), text, _EPOCH)
    seconds, valid = _civil_seconds(_fixed_width(filled, _TIME_WIDTH))
    valid &= sized
    refused = ~unset & ~(valid & (np.abs(seconds) <= _core.MAX_TIME))
    out = seconds.astype(np.float64)
    out[unset | refused] = np.nan
    return out, refused, valid


def _fixed_width(strings: Any, width: int) -> np.ndarray:
    """The bytes of strings all ``width`` bytes long, one row each (no copy)."""
    n = len(strings)
    if n == 0:
        return np.zeros((0, width), np.uint8)
    offsets = np.frombuffer(strings.buffers()[1], np.int32)[strings.offset :][: n + 1]
    data = np.frombuffer(strings.buffers()[2], np.uint8)
    return data[offsets[0] : offsets[-1]].reshape(n, width)


def _civil_seconds(chars: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unix seconds of ``YYYY-MM-DDTHH:MM:SS`` rows of bytes (UTC, as ``calendar.timegm``),
    and which rows are such a time (a real date; seconds to 61, as ``time.strptime``)."""
    d = chars.astype(np.int64) - ord("0")
    digits = d[:, _TIME_DIGITS]
    valid = ((digits >= 0) & (digits <= 9)).all(axis=1)
    for position, mark in _TIME_MARKS.items():
        valid &= chars[:, position] == mark

    def number(first: int, width: int) -> np.ndarray:
        value = np.zeros(len(d), np.int64)
        for k in range(width):
            value = value * 10 + d[:, first + k]
        return value

    year, month, day = number(0, 4), number(5, 2), number(8, 2)
    hour, minute, second = number(11, 2), number(14, 2), number(17, 2)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    last_day = _DAYS_IN_MONTH[np.clip(month, 1, 12) - 1] + ((month == 2) & leap)
    valid &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= last_day)
    valid &= (hour <= 23) & (minute <= 59) & (second <= 61)
    days = _days_from_civil(year, month, day)
    return days * 86400 + hour * 3600 + minute * 60 + second, valid


def _days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (H. Hinnant's algorithm)."""
    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    year_of_era = y - era * 400
    day_of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    days: np.ndarray = era * 146097 + day_of_era - 719468
    return days


def _limit(text: str) -> tuple[float, str | None]:
    """A Timelimit in seconds (NaN: none), or why it is refused."""
    if text in ("", "Partition_Limit"):
        return np.nan, None
    refused = f"expected a Slurm time limit, not {shown(text)}"
    if not text.isascii():
        return 0.0, refused
    try:
        seconds = slurm_duration(text)
    except BeyondTimes:
        seconds = np.inf
    except ValueError:
        return 0.0, refused
    if seconds is None:
        return np.nan, None  # UNLIMITED
    if seconds > _core.MAX_TIME:
        return 0.0, f"expected a Slurm time limit up to {_core.MAX_TIME:g} s, not {shown(text)}"
    return seconds, None


def _count(top: int) -> Callable[[str], tuple[float, str | None]]:
    """Whole numbers (ASCII digits) from 0 to ``top``."""

    def check(text: str) -> tuple[float, str | None]:
        if not (text.isascii() and text.isdigit()):
            return 0, f"expected a whole number, not {shown(text)}"
        if len(text.lstrip("0")) > len(str(top)) or int(text) > top:
            return 0, f"expected a whole number from 0 to {top}, not {shown(text)}"
        return int(text), None

    return check


def _skip_blank(row: Any) -> str:
    """The CSV reader's answer to a line of another number of fields: only blank lines reach
    it (the layout refused the others first)."""
    return "skip" if not row.text.strip() else "error"


def _matches(strings: Any, pattern: str) -> np.ndarray:
    import pyarrow.compute as pc

    found = pc.match_substring_regex(strings, pattern).to_numpy(zero_copy_only=False)
    return np.asarray(found, dtype=bool)


def _trimmed(strings: Any) -> Any:
    import pyarrow.compute as pc

    return pc.utf8_trim_whitespace(strings)


def _distinct_values(strings: Any) -> tuple[list[str], np.ndarray]:
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(strings)
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return encoded.dictionary.to_pylist(), codes


def _text_codes(column: TextColumn, strings: Any, state: bool) -> np.ndarray:
    """The codes in ``column`` of a batch's strings (stripped; a state's first word)."""
    values, codes = _distinct_values(strings)
    words = [v.strip() for v in values]
    if state:
        words = [w.split(" ")[0].upper() for w in words]  # "CANCELLED by 0": the word
    mapping = np.array([column.code(w) for w in words] or [0], dtype=np.int32)
    coded: np.ndarray = mapping[codes]
    return coded
