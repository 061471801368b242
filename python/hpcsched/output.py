"""Run directories, written atomically (DESIGN §8).

Everything goes to a temporary sibling folder first, which is renamed into place when complete:
an interrupted run never leaves a half-written result that looks whole. That staging folder is
named ``.<run>.<pid>.<random>.tmp`` and locked while it is written; the next write of the same
run directory removes the staging folders of writers that are provably dead (see
:mod:`hpcsched._io`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from typing import IO, Any, Protocol

import pandas as pd
import pyarrow.parquet as pq

from hpcsched._io import hold_staging, remove_stale_staging, staging_prefix
from hpcsched.exceptions import InputError, OptionError
from hpcsched.logs import LOG_FILES, arrow_table, dictionary_columns

RUN_MARKER = "summary.json"


class RunContent(Protocol):
    """What a run directory holds: a :class:`hpcsched.run.Result` is one (named here by what
    it offers, so that this module, below :mod:`hpcsched.run`, needs nothing from it)."""

    @property
    def jobs(self) -> pd.DataFrame: ...

    @property
    def info(self) -> dict[str, Any]: ...

    def log(self, name: str) -> pd.DataFrame: ...


def write_run(
    result: RunContent,
    out: str | os.PathLike[str],
    *,
    csv: bool = False,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """Writes ``jobs.parquet``, ``summary.json`` (and ``jobs.csv``) into ``out``; ``extra``
    maps further file names to JSON-able content (a sweep's ``config.json``)."""
    with RunStaging(out) as staging:
        return staging.commit(result, csv=csv, extra=extra)


class RunStaging:
    """A run directory being written: a locked staging folder beside the target, renamed into
    place by :meth:`commit`, removed if the ``with`` block fails. A run streams its logs into
    :attr:`folder` while it goes (see :mod:`hpcsched.logs`)."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.target = check_writable(out, kind="run")
        parent, base = os.path.split(self.target)
        try:
            os.makedirs(parent, exist_ok=True)
            remove_stale_staging(parent, re.escape(base))
            self.folder = tempfile.mkdtemp(prefix=staging_prefix(base), suffix=".tmp", dir=parent)
        except OSError as exc:
            raise OptionError(
                f"cannot write {self.target}: {exc.strerror or exc}", option="--out"
            ) from None
        self._lock = hold_staging(self.folder)  # tells a later writer that this one is alive
        self._done = False
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.folder, 0o777 & ~umask)  # mkdtemp makes it private; a run dir is not

    def __enter__(self) -> RunStaging:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Removes the staging folder unless committed; releases the lock."""
        if not self._done:
            shutil.rmtree(self.folder, ignore_errors=True)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def commit(
        self, result: RunContent, *, csv: bool = False, extra: Mapping[str, Any] | None = None
    ) -> str:
        """Writes what ``result`` holds in memory (its logs unless already streamed here) and
        the summary, then renames the folder into place; returns the run directory's path."""
        staging, target = self.folder, self.target
        try:
            write_parquet(result.jobs, os.path.join(staging, "jobs.parquet"))
            if csv:
                result.jobs.to_csv(os.path.join(staging, "jobs.csv"), index=False)
            for name in LOG_FILES:
                path = os.path.join(staging, name)
                if os.path.exists(path):
                    continue  # streamed here while the run went
                frame = result.log(name)
                if len(frame):
                    write_parquet(frame, path)
            for name, content in (extra or {}).items():
                with open(os.path.join(staging, name), "w", encoding="utf-8") as f:
                    json.dump(_jsonable(content), f, indent=2, allow_nan=False)
                    f.write("\n")
            # summary.json last: its presence marks a complete run directory
            with open(os.path.join(staging, RUN_MARKER), "w", encoding="utf-8") as f:
                json.dump(_jsonable(result.info), f, indent=2, allow_nan=False)
                f.write("\n")
            _swap_into_place(staging, target)
        except OSError as exc:  # a full disk, a quota: not a bug
            raise OptionError(
                f"cannot write {target}: {exc.strerror or exc}", option="--out"
            ) from None
        self._done = True
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
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(f"not a complete hpcsched run directory ({exc})", path=folder) from None

    def optional(name: str) -> pd.DataFrame:
        path = os.path.join(folder, name)
        return pd.read_parquet(path) if os.path.exists(path) else pd.DataFrame()

    return jobs, info, optional("decisions.parquet"), optional("timeline.parquet")


def write_parquet(
    frame: pd.DataFrame, path: str | IO[bytes], *, metadata: Mapping[str, str] | None = None
) -> None:
    """Snappy-compressed Parquet, dictionary-encoding only the categorical columns (dictionary
    encoding of float columns triples the write time for no gain); ``metadata`` is added to
    the file's key-value metadata."""
    table = arrow_table(frame)
    if metadata:
        table = table.replace_schema_metadata(
            {
                **(table.schema.metadata or {}),
                **{k.encode(): v.encode() for k, v in metadata.items()},
            }
        )
    categorical = dictionary_columns(frame)
    pq.write_table(table, path, compression="snappy", use_dictionary=categorical or False)


def check_writable(
    path: str | os.PathLike[str],
    *,
    kind: str = "run",
    option: str | None = "--out",
    replace: bool = True,
) -> str:
    """Fails at once, with an ``OptionError`` naming the path, when ``path`` cannot be written,
    so that a mistake shows before a long run instead of after it; returns the absolute path.

    ``kind`` is ``"run"`` (a run directory: absent, an empty folder or an existing run
    directory, which a new run replaces unless ``replace`` is false: the command line asks for
    ``--force``), ``"folder"`` (a folder to write into) or ``"file"``.
    Missing folders are fine (writing creates them) if the nearest existing one is a folder
    this process may write in.
    """
    target = os.path.abspath(os.fspath(path))
    if os.path.lexists(target):
        if kind == "run" and not _replaceable(target):
            raise OptionError(
                f"{target} exists and is not an hpcsched run directory; choose another "
                f"{option or 'folder'}",
                option=option,
            )
        if kind == "run" and not replace and os.path.isfile(os.path.join(target, RUN_MARKER)):
            raise OptionError(
                f"{target} holds a run already; give --force to replace it, or choose another "
                f"{option or 'folder'}",
                option=option,
            )
        if kind == "folder" and not os.path.isdir(target):
            raise OptionError(f"{target} exists and is not a folder", option=option)
        if kind == "file" and os.path.isdir(target):
            raise OptionError(f"{target} is a folder, not a file name", option=option)
    # a folder is written into; a run directory or a file is (re)placed by a rename in its parent
    existing = target if kind == "folder" else os.path.dirname(target)
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise OptionError(f"cannot write {target}: {existing} is not a folder", option=option)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OptionError(
            f"cannot write {target}: {existing} is not writable (permissions or a read-only "
            "file system)",
            option=option,
        )
    return target


def _replaceable(path: str) -> bool:
    """An existing run directory (or an empty folder) may be replaced by a new run."""
    return os.path.isdir(path) and (
        not os.listdir(path) or os.path.isfile(os.path.join(path, RUN_MARKER))
    )


def _swap_into_place(staging: str, target: str) -> None:
    old = None
    if os.path.exists(target):
        # a staging name too (``-old``): if this process dies before removing it, the next
        # writer of the target does
        old = staging.removesuffix(".tmp") + "-old.tmp"
        os.rename(target, old)
    try:
        os.rename(staging, target)
    except BaseException:
        if old is not None:  # put the previous run back rather than leave nothing
            with contextlib.suppress(OSError):
                os.rename(old, target)
        raise
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
