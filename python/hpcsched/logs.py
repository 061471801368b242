"""A run's logs (decisions, the power manager's log, the node-state timeline) as frames, and
written to Parquet while the run goes.

A year-long run under a power manager logs millions of rows, and ``--decision-log full`` tens
of millions of candidates: held whole, they cost gigabytes. When a run has a directory, the
engine's logs are taken out in batches and appended to their Parquet files as row groups, so a
run holds at most one batch of them; the files are the same as if written at the end.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from hpcsched import _core

#: Modes of a power manager's log, by code.
POWER_MODES = tuple(_core.power_mode_names())

#: Rows the engine may hold in its logs before they are written out (about 10-60 MB).
BATCH_ROWS = 250_000

DECISIONS = "decisions.parquet"
POWER_DECISIONS = "power_decisions.parquet"
TIMELINE = "timeline.parquet"
#: The logs' files in a run directory.
LOG_FILES = (DECISIONS, POWER_DECISIONS, TIMELINE)


def power_log(columns: dict[str, Any]) -> pd.DataFrame:
    """The power manager's log; modes and screen rejections become categories (a long run has
    hundreds of thousands of rows), spare candidates list columns (one list per call)."""
    columns["mode"] = pd.Categorical.from_codes(
        columns["mode"].astype(np.int8), categories=pd.Index(list(POWER_MODES))
    )
    codes, inverse = np.unique(columns["rejection"], return_inverse=True)
    texts = [_core.rejection_text(int(code)) for code in codes]
    columns["rejection"] = pd.Categorical.from_codes(
        inverse.astype(np.int32), pd.Index(texts, dtype=object)
    )
    return with_candidates(columns, after="candidates")


def with_candidates(columns: dict[str, Any], after: str | None = None) -> pd.DataFrame:
    """A decision log's columns as a frame; with ``--decision-log full`` the engine adds
    ``candidate_offsets`` and flat ``candidate_*`` columns, which become list columns (one list
    per decision) placed after ``after`` (else last)."""
    offsets = columns.pop("candidate_offsets", None)
    flat = [name for name in columns if name.startswith("candidate_")]
    lists = {}
    if offsets is not None:
        arrow_offsets = pa.array(offsets.astype(np.int32))
        for name in flat:
            values = pa.array(columns.pop(name))
            lists[name] = pd.Series(
                pa.ListArray.from_arrays(arrow_offsets, values),
                dtype=pd.ArrowDtype(pa.list_(values.type)),
            )
    frame = pd.DataFrame(columns, copy=False)
    names = list(frame.columns)
    position = names.index(after) + 1 if after is not None and after in names else len(names)
    for offset, (name, series) in enumerate(lists.items()):
        frame.insert(position + offset, name, series)
    return frame


def arrow_table(frame: pd.DataFrame) -> pa.Table:
    """``frame`` as an Arrow table for Parquet (without pandas' metadata for list columns,
    which pandas cannot read back: the Arrow schema says everything)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if any(isinstance(dtype, pd.ArrowDtype) for dtype in frame.dtypes):
        table = table.replace_schema_metadata(None)
    return table


def dictionary_columns(frame: pd.DataFrame) -> list[str]:
    """Columns worth dictionary encoding: the categorical ones (dictionary encoding of float
    columns triples the write time for no gain)."""
    return [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]


def log_names(search: bool) -> tuple[str, str]:
    """Files of the look-ahead's log and of the power manager's: the look-ahead's is
    ``decisions``; the power manager's too when there is no look-ahead, else
    ``power_decisions``."""
    return DECISIONS, POWER_DECISIONS if search else DECISIONS


def take_logs(
    sim: Any, *, search: bool, power: bool, final: bool = True
) -> dict[str, pd.DataFrame]:
    """The engine's logs taken out of ``sim`` as frames, by file name (``search``: the policy
    keeps a decision log; ``power``: a power manager keeps one; ``final``: everything, at the
    end of the run; mid-run the timeline's last row stays in the engine)."""
    search_name, power_name = log_names(search)
    logs = {}
    if power:
        logs[power_name] = power_log(sim.power_decisions())
    if search:
        logs[search_name] = with_candidates(dict(sim.decisions()))
    logs[TIMELINE] = pd.DataFrame(dict(sim.timeline(all=final)))
    return logs


class LogFiles:
    """Appends a run's logs to Parquet files in ``folder`` as the run goes.

    ``search`` and ``power`` as for :func:`take_logs`. A file is created with its first
    non-empty batch: a log that stays empty leaves no file.
    """

    def __init__(
        self,
        folder: str,
        *,
        search: bool,
        power: bool,
        keep: dict[str, list[str]] | None = None,
    ) -> None:
        self.folder = folder
        self.search = search
        self.power = power
        #: Columns to keep in memory too, by file (what the summary needs: a few scalars a row)
        self.keep = keep or {}
        self._kept: dict[str, list[pd.DataFrame]] = {name: [] for name in self.keep}
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._schemas: dict[str, pa.Schema] = {}
        #: Seconds spent writing (not simulating)
        self.seconds = 0.0

    def flush(self, sim: Any, *, final: bool = False) -> None:
        """Takes what the engine's logs hold and appends it (``final``: everything, at the
        end of the run; mid-run the timeline's last row stays in the engine)."""
        started = time.perf_counter()
        logs = take_logs(sim, search=self.search, power=self.power, final=final)
        for name, frame in logs.items():
            self._append(name, frame)
        self.seconds += time.perf_counter() - started

    def kept(self, name: str) -> pd.DataFrame:
        """The columns of ``name`` asked for in ``keep``, every row written so far."""
        parts = self._kept[name]
        if not parts:
            return pd.DataFrame({column: [] for column in self.keep[name]})
        return pd.concat(parts, ignore_index=True)

    def paths(self) -> dict[str, str]:
        """The files written so far, by name."""
        return {name: os.path.join(self.folder, name) for name in self._schemas}

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()

    def _append(self, name: str, frame: pd.DataFrame) -> None:
        if not len(frame):
            return
        if name in self.keep:
            self._kept[name].append(frame[self.keep[name]].copy())
        table = arrow_table(frame)
        writer = self._writers.get(name)
        if writer is None:
            self._schemas[name] = table.schema
            writer = pq.ParquetWriter(
                os.path.join(self.folder, name),
                table.schema,
                compression="snappy",
                use_dictionary=dictionary_columns(frame) or False,
            )
            self._writers[name] = writer
        else:
            # a later batch's categories (screen rejections) may differ: same types, its own
            # dictionary in its row group
            table = table.cast(self._schemas[name])
        writer.write_table(table)
