"""Run directories, written atomically (DESIGN §8).

Everything goes to a temporary sibling folder first, which is renamed into place when complete:
an interrupted run never leaves a half-written result that looks whole.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from hpcsched.exceptions import InputError, OptionError

if TYPE_CHECKING:
    from hpcsched.run import Result

RUN_MARKER = "summary.json"


def write_run(
    result: Result,
    out: str | os.PathLike[str],
    *,
    csv: bool = False,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """Writes ``jobs.parquet``, ``summary.json`` (and ``jobs.csv``) into ``out``; ``extra``
    maps further file names to JSON-able content (a sweep's ``config.json``)."""
    target = os.path.abspath(os.fspath(out))
    if os.path.exists(target) and not _replaceable(target):
        raise OptionError(
            f"{target} exists and is not an hpcsched run directory; choose another --out",
            option="--out",
        )
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # mkdtemp makes it private; a run dir is not
        write_parquet(result.jobs, os.path.join(staging, "jobs.parquet"))
        if csv:
            result.jobs.to_csv(os.path.join(staging, "jobs.csv"), index=False)
        if len(result.decisions):
            write_parquet(result.decisions, os.path.join(staging, "decisions.parquet"))
        if len(result.timeline):
            write_parquet(result.timeline, os.path.join(staging, "timeline.parquet"))
        for name, content in (extra or {}).items():
            with open(os.path.join(staging, name), "w", encoding="utf-8") as f:
                json.dump(_jsonable(content), f, indent=2, allow_nan=False)
                f.write("\n")
        # summary.json last: its presence marks a complete run directory
        with open(os.path.join(staging, RUN_MARKER), "w", encoding="utf-8") as f:
            json.dump(_jsonable(result.info), f, indent=2, allow_nan=False)
            f.write("\n")
        _swap_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def read_run_files(
    folder: str | os.PathLike[str],
) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """The job table, summary, decisions and timeline of a run directory (empty frames for
    the optional files)."""
    folder = os.fspath(folder)
    try:
        with open(os.path.join(folder, RUN_MARKER), encoding="utf-8") as f:
            info = json.load(f)
        jobs = pd.read_parquet(os.path.join(folder, "jobs.parquet"))
    except (OSError, ValueError) as exc:
        raise InputError(f"not a complete hpcsched run directory ({exc})", path=folder) from None

    def optional(name: str) -> pd.DataFrame:
        path = os.path.join(folder, name)
        return pd.read_parquet(path) if os.path.exists(path) else pd.DataFrame()

    return jobs, info, optional("decisions.parquet"), optional("timeline.parquet")


def write_parquet(frame: pd.DataFrame, path: str | IO[bytes]) -> None:
    """Snappy-compressed Parquet, dictionary-encoding only the categorical columns (dictionary
    encoding of float columns triples the write time for no gain)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if any(isinstance(dtype, pd.ArrowDtype) for dtype in frame.dtypes):
        # pandas cannot read back its own metadata for Arrow list columns: leave it out, the
        # Arrow schema says everything.
        table = table.replace_schema_metadata(None)
    categorical = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    pq.write_table(table, path, compression="snappy", use_dictionary=categorical or False)


def _replaceable(path: str) -> bool:
    """An existing run directory (or an empty folder) may be replaced by a new run."""
    return os.path.isdir(path) and (
        not os.listdir(path) or os.path.isfile(os.path.join(path, RUN_MARKER))
    )


def _swap_into_place(staging: str, target: str) -> None:
    old = None
    if os.path.exists(target):
        old = target + f".old-{os.getpid()}"
        os.rename(target, old)
    os.rename(staging, target)
    if old is not None:
        with contextlib.suppress(OSError):
            shutil.rmtree(old)


def _jsonable(value: Any) -> Any:
    """JSON-safe copy: NaN and infinities become null, numpy scalars plain numbers."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
