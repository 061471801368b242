"""Reader for Slurm's accounting records: ``sacct --parsable2`` text or ``sacct --json``
(docs/formats.md, "Slurm accounting records").

The fields, by the header line sacct prints (any order, names in any case; ``--format`` must
ask for them): ``JobIDRaw`` (or ``JobID``), ``Submit``, ``Start``, ``End``, ``Timelimit`` and
``NNodes`` are needed; ``Eligible``, ``NCPUS`` (or ``AllocCPUS``), ``ReqCPUS``, ``User``, ``Group``,
``Account``, ``Partition``, ``QOS``, ``State`` and ``JobName`` are read when present. Times are
sacct's ``YYYY-MM-DDTHH:MM:SS`` (exactly so, ASCII digits), read as UTC: capture with ``TZ=UTC``
(only differences of times matter to a replay, so another zone shifts nothing but across a
daylight-saving change). Lines end at ``\\n`` (or ``\\r\\n``).

- One job per allocation line; the lines of job steps (``123.batch``, ``123.extern``,
  ``123.0``) are read past (counted in a warning). A job array's tasks are jobs of their own,
  by their ``JobIDRaw``, which must be a number (ASCII digits, at most 2^63 - 1). With only
  ``JobID``, an array task ``123_4`` is job 123 * 10^8 + 4 (12300000004) and a heterogeneous
  job's component ``123+1`` is 12300000001. A pending array's record (``123_[1-1000]``) is a
  job that never started. Jobs sharing an id are named in a warning; they replay as distinct
  jobs.
- A job arrives when it became eligible (``Eligible``, when known and not before its
  submission): holds, dependencies and ``--begin`` are not the scheduler's doing. Its
  recorded wait is ``Start`` minus that; its run time ``End - Start``. A job that starts before
  it arrives keeps its arrival and its recorded start is unknown (NaN ``recorded_wait``, as an
  SWF wait of -1), counted in a warning; a job that ends before it starts is an error.
- Skipped and counted: jobs that never started (``Start`` is ``Unknown`` or ``None``: pending,
  or cancelled while pending), jobs still running when recorded (``End`` unknown), jobs of no
  nodes, jobs larger than the machine (an error with ``strict``).
- ``Timelimit`` ``UNLIMITED`` or ``Partition_Limit``: the estimate is the run time
  (``requested_known`` False, and a warning), as for an SWF trace without requested times.
- Ranges: ``NNodes`` 0 to ``_core.MAX_NODES``, CPU counts 0 to 2^32 - 1 (Slurm's own type),
  times, limits, waits and run times within ``_core.MAX_TIME`` seconds.
- Columns besides the job table's: ``procs`` (``NCPUS``, when recorded), ``requested_procs``
  (``ReqCPUS``, when recorded: a whole-node job asks for fewer CPUs than it is given, and
  Slurm's first priority counts those), ``recorded_nodes``
  (``NNodes``: on a platform with partitions a job takes at least those), ``requested_known``,
  ``status`` (SWF's codes: 1 completed, 0 failed, timed out or lost, 5 cancelled, -1 other),
  ``state`` (sacct's word), ``user_name``, ``group_name``, ``account``, ``qos``,
  ``partition_name`` (the partitions it could run in, as recorded), ``job_name``, ``line``,
  and ``recorded_wait``. Users are numbered in order of first appearance.

- With ``ReqMem``, ``ReqTRES`` and ``NodeList`` (JSON: ``tres.requested``, ``nodes``): what each
  job asked of the resources inside nodes and where it ran (``sacct_tres``): ``cpus``,
  ``req_nodes``, ``mem_per_cpu``, ``mem_per_node``, ``gres``, ``exclusive``, ``node_list``.

``sacct --json`` (``sacct_json.py``) gives the same jobs; the ``line`` column is then the
record's position in ``jobs`` (from 1).

Errors (``InputError``, file and line, or the JSON field): no header line, a needed field missing
from it (named), a line with another number of fields, a time, duration, count or id that is
not one or is out of range; JSON that is not sacct's. The text is read column by column
(``pyarrow``'s CSV reader, then arrays): no Python object per record.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from hpcsched._io import check_utf8, loads_json, read_blocks
from hpcsched.exceptions import InputError
from hpcsched.workload.model import Workload
from hpcsched.workload.sacct_jobs import NO_MACHINE_SIZE, SacctRecords, build_workload
from hpcsched.workload.sacct_json import json_records
from hpcsched.workload.sacct_text import FIELD_NAMES, TEXT_FIELDS, TextColumns

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
#: Bytes of text read, checked and parsed at a time (whole lines).
SEGMENT = 1 << 23
#: Bytes the layout looks at a time (its temporaries are a few times that).
_BLOCK = 1 << 21
_UTF8_BOM = b"\xef\xbb\xbf"
_JSON_OPENING = re.compile(rb"\s*\{")


def read_sacct(
    path: str | os.PathLike[str], nodes: int | None = None, strict: bool = False
) -> Workload:
    """Reads a ``sacct --parsable2`` file, or ``sacct --json`` output, plain or
    gzip-compressed (module docstring)."""
    name = os.fspath(path)
    return build_workload(_read_records(name), nodes, strict)


def _read_records(name: str) -> SacctRecords:
    """The file's records. Text is read a segment at a time (only the columns stay); JSON
    is a document, read whole."""
    blocks = read_blocks(name, SEGMENT)
    first = [next(blocks, b"").removeprefix(_UTF8_BOM)]
    if _JSON_OPENING.match(first[0]):
        data = b"".join([*first, *blocks])
        check_utf8(data, name)
        return json_records(loads_json(data.decode("utf-8"), name), name)
    return text_records(_chain_taking(first, blocks), name)


def _chain_taking(first: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    """``first``'s blocks (taken out of it: none is held once read), then ``rest``."""
    while first:
        yield first.pop(0)
    yield from rest


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
    """The workload of ``sacct --json`` output, already decoded (``sacct_json.py``)."""
    return build_workload(json_records(document, path), nodes, strict)


def parse_sacct(
    text: str, path: str = "<input>", nodes: int | None = None, strict: bool = False
) -> Workload:
    """The workload of ``sacct --parsable2`` text (module docstring)."""
    data = text.removeprefix("\ufeff").encode("utf-8", "surrogateescape")
    return build_workload(text_records(iter([data]), path), nodes, strict)


def text_records(blocks: Iterable[bytes], path: str) -> SacctRecords:
    """The records of ``sacct --parsable2`` text given a block at a time."""
    reader = _TextReader(path)
    for segment in _whole_lines(blocks):
        reader.segment(segment)
    return reader.records()


def _whole_lines(blocks: Iterable[bytes]) -> Iterator[memoryview]:
    """The text cut after a newline, so that no line (nor character) spans two segments.
    The segments are views of one buffer, refilled in place: released before the next."""
    buffer = bytearray()
    for block in blocks:
        buffer += block
        del block
        cut = buffer.rfind(b"\n") + 1
        if cut:  # else a line longer than a block: read on
            segment = memoryview(buffer)[:cut]
            yield segment
            segment.release()  # (reached when the next is asked for: the reader is done)
            del buffer[:cut]
    if buffer:
        yield memoryview(buffer)


class _TextReader:
    """Reads the text's segments in order: the header (the first line that is not blank),
    then each segment's records into the columns (``sacct_text.TextColumns``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lines_before = 0  # lines in the segments read
        self.fields = 0  # the header's, once read
        self.columns: TextColumns | None = None

    def segment(self, data: memoryview) -> None:
        check_utf8(data, self.path, first_line=self.lines_before + 1)
        layout = _Layout(np.frombuffer(data, dtype=np.uint8), self.path, self.lines_before)
        after = 0  # the first line of records in this segment
        if self.columns is None:
            header = layout.first_not_blank()
            if header is None:
                self.lines_before += layout.lines
                return
            self.columns = self._header(layout, header)
            after = header + 1
        rows, stop, broken = layout.records(after, self.fields)
        begin, end, longest = layout.start_of(after), layout.start_of(stop), layout.longest
        lines = rows + 1 + self.lines_before
        self.lines_before += layout.lines
        del layout, rows  # their arrays, a few per line, before the columns are read
        if begin < end:
            self.columns.read(data, begin, end, self.fields, longest, lines)
        if broken is not None:  # after the records before it: an error there comes first
            raise InputError(broken[1], path=self.path, line=broken[0])

    def _header(self, layout: _Layout, row: int) -> TextColumns:
        line = self.lines_before + row + 1
        if not layout.bars[row]:
            raise InputError(_NO_HEADER, path=self.path, line=line)
        layout.check_returns(row)
        header = [h.strip().lower() for h in layout.text(row).split("|")]
        column = {h: k for k, h in enumerate(header) if h in FIELD_NAMES or h in TEXT_FIELDS}
        key = "jobidraw" if "jobidraw" in column else "jobid"
        missing = [f for f in (key, *NEEDED) if f not in column]
        if missing:
            raise InputError(
                f"the header has no {missing[0]} field (give sacct --format with JobIDRaw, "
                "Submit, Start, End, Timelimit, NNodes)",
                path=self.path,
                line=line,
                field=missing[0],
            )
        self.fields = len(header)
        return TextColumns(self.path, column, key)

    def records(self) -> SacctRecords:
        if self.columns is None:
            raise InputError(_NO_HEADER, path=self.path)
        return self.columns.records()


_NO_HEADER = "no header line: expected sacct --parsable2 output (JobIDRaw|Submit|Start|...)"


class _Layout:
    """Where each line of a segment starts and ends (at ``\\n``) and how many ``|`` it
    holds, found by array operations over the bytes, a block at a time; its lines follow
    ``lines_before`` others (for messages)."""

    def __init__(self, buffer: np.ndarray, path: str, lines_before: int) -> None:
        self.buffer = buffer
        self.path = path
        self.lines_before = lines_before
        ends, bars, returns = [], [], []
        carried = 0
        for offset in range(0, len(buffer), _BLOCK):
            chunk = buffer[offset : offset + _BLOCK]
            newlines = np.flatnonzero(chunk == ord("\n"))
            counted = np.cumsum(chunk == ord("|"), dtype=np.int32)
            ends.append(newlines + offset)
            bars.append(counted[newlines] + carried)
            returns.append(np.flatnonzero(chunk == ord("\r")) + offset)
            carried += int(counted[-1])
        end = np.concatenate([*ends, np.zeros(0, np.int64)])
        through = np.concatenate([*bars, np.zeros(0, np.int64)])
        if len(buffer) and (not len(end) or end[-1] != len(buffer) - 1):
            end = np.append(end, len(buffer))  # a last line without its newline
            through = np.append(through, carried)
        self.lines = len(end)
        self.end = end
        self.start = np.concatenate([[0], end[:-1] + 1]).astype(np.int64)[: len(end)]
        self.bars = np.diff(through, prepend=0)
        self.longest = int((self.end - self.start).max()) if len(end) else 0
        # a carriage return ends a line only before its newline (or the text's end)
        at = np.concatenate([*returns, np.zeros(0, np.int64)])
        at = at[at + 1 < len(buffer)]
        self.return_rows = np.searchsorted(self.end, at[buffer[at + 1] != ord("\n")])

    def start_of(self, row: int) -> int:
        return int(self.start[row]) if row < self.lines else len(self.buffer)

    def text(self, row: int) -> str:
        return bytes(self.buffer[self.start[row] : self.end[row]]).decode("utf-8")

    def blank(self, row: int) -> bool:
        return not self.bars[row] and not self.text(row).strip()

    def first_not_blank(self) -> int | None:
        return next((r for r in range(self.lines) if not self.blank(r)), None)

    def check_returns(self, row: int) -> None:
        """A carriage return inside line ``row`` is an error (the CSV reader would end the
        line there)."""
        if row in self.return_rows:
            raise InputError(_RETURN, path=self.path, line=self.lines_before + row + 1)

    def records(self, after: int, fields: int) -> tuple[np.ndarray, int, tuple[int, str] | None]:
        """The lines (0-based) of the records from line ``after``, up to the first broken
        line; that line (or the line count); and the broken line's number and what is wrong."""
        rows = np.arange(after, self.lines)
        other = rows[self.bars[rows] != fields - 1]
        # a line of no "|" is blank or broken: each is looked at, up to the first broken
        broken = next((int(r) for r in other if self.bars[r] or not self.blank(int(r))), None)
        reason = (
            "" if broken is None else f"{self.bars[broken] + 1} fields, the header has {fields}"
        )
        returns = (int(r) for r in self.return_rows if r >= after and not self.blank(int(r)))
        inside = next(returns, None)
        if inside is not None and (broken is None or inside <= broken):
            broken, reason = inside, _RETURN
        stop = self.lines if broken is None else broken
        records = rows[: stop - after]
        records = records[self.bars[records] == fields - 1]
        where = None if broken is None else (self.lines_before + broken + 1, reason)
        return records, stop, where


_RETURN = "a carriage return inside the line (sacct ends lines with \\n)"


__all__ = [
    "NEEDED",
    "NO_MACHINE_SIZE",
    "OPTIONAL",
    "is_sacct_json",
    "parse_sacct",
    "parse_sacct_json",
    "read_sacct",
]
