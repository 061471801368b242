"""Parameter sweeps: running the grid of a sweep file (:mod:`hpcsched.sweep_file` reads and
checks it; its names are importable from here too), resumably.

Each run of the grid is written to ``OUT/runs/<key>/`` (its key: :meth:`RunConfig.key`); a run
whose directory is complete is not run again, so an interrupted sweep resumes where it
stopped. ``OUT/results.parquet`` collects one row per run, in grid order.

A sweep holds ``OUT/sweep.lock`` (``flock``) for its whole life: a second sweep on the same
folder stops with a message instead of running everything twice. ``OUT/sweep.json`` says
whether the sweep that wrote the folder is ``running``, ended ``complete`` or ``incomplete``, or
was ``interrupted`` (:func:`sweep_status`); ``results.parquet`` carries the same state in its
metadata.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import socket
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from hpcsched._io import atomic_write_bytes, pid_is_alive, remove_stale_staging
from hpcsched.exceptions import HpcschedError, OptionError
from hpcsched.experiment import METRIC_COLUMNS, TIMING_COLUMNS, RunConfig, summary_row
from hpcsched.output import RUN_MARKER, check_writable, write_parquet
from hpcsched.parallel import run_configs
from hpcsched.run import Result
from hpcsched.sweep_file import (
    POWER_KEYS,
    SEARCH_KEYS,
    SWEEP_KEYS,
    WORKLOAD_KEYS,
    Sweep,
    expand_sweep,
    read_sweep,
    run_label,
)

try:
    import fcntl
except ImportError:  # not POSIX: sweeps run unlocked
    fcntl = None  # type: ignore[assignment]

RESULTS = "results.parquet"
#: Held (flock) by the sweep writing the folder; holds its pid and host.
LOCK = "sweep.lock"
#: The state of the folder's last sweep; its presence marks a sweep folder.
STATE = "sweep.json"
#: Key of the state in ``results.parquet``'s metadata.
METADATA_KEY = "hpcsched.sweep"
#: A run directory's name: a run key (see :meth:`RunConfig.key`).
_KEY_PATTERN = "[0-9a-f]{16}"

#: Called after each run with (runs done, runs in the grid, the run's label, failures so far).
SweepProgress = Callable[[int, int, str, int], None]


@dataclass
class SweepOutcome:
    """What a sweep did: the results table (completed runs, grid order), how many runs were
    executed now and how many were found complete from before, and the failures (label,
    message, whether the user's inputs caused it)."""

    table: pd.DataFrame
    ran: int
    reused: int
    failures: list[tuple[str, str, bool]] = field(default_factory=list)
    results_path: str | None = None
    #: how the previous sweep on this folder ended (see :class:`SweepStatus`), None if none
    previous: str | None = None


@dataclass
class SweepStatus:
    """The state of a sweep folder, from its ``sweep.json``: ``state`` is ``running`` (a sweep
    is writing it now), ``interrupted`` (killed or stopped before its end: ``results.parquet``
    then lacks runs), ``complete`` (every run of the grid is in ``results.parquet``) or
    ``incomplete`` (it ended with failed runs). ``runs`` is the grid's size, ``completed`` and
    ``failed`` were counted when the state was written."""

    state: str
    runs: int
    completed: int
    failed: int
    pid: int | None = None
    host: str | None = None
    started: str | None = None
    updated: str | None = None

    @property
    def complete(self) -> bool:
        return self.state == "complete"


def run_sweep(
    sweep: Sweep,
    *,
    processes: int | None = None,
    ray: str | None = None,
    progress: SweepProgress | None = None,
    on_result: Callable[[int, Result], None] | None = None,
) -> SweepOutcome:
    """Runs what is not complete yet and writes ``results.parquet``. ``on_result`` is called
    in the driver after each new run is written (tests use it to interrupt a sweep).

    The folder is locked for the sweep's life (``OptionError`` when another sweep holds it)
    and checked writable before anything runs."""
    out = check_writable(sweep.out, kind="folder", option=None)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise OptionError(f"cannot write the sweep folder {out}: {exc.strerror or exc}") from None
    with _locked(out):
        return _run_locked(sweep, out, processes, ray, progress, on_result)


def _run_locked(
    sweep: Sweep,
    out: str,
    processes: int | None,
    ray: str | None,
    progress: SweepProgress | None,
    on_result: Callable[[int, Result], None] | None,
) -> SweepOutcome:
    previous = _read_state(out)
    runs_dir = os.path.join(out, "runs")
    os.makedirs(runs_dir, exist_ok=True)
    if previous is not None:
        # a folder of ours, and no other sweep runs in it: staging its killed writers left
        remove_stale_staging(runs_dir, _KEY_PATTERN)
    keys = [config.key() for config in sweep.runs]
    rows: dict[int, dict[str, Any]] = {}
    for index, key in enumerate(keys):
        info = _completed(os.path.join(runs_dir, key), key)
        if info is not None:
            rows[index] = _row(sweep.runs[index], key, info)
    reused = len(rows)
    todo = [i for i in range(len(sweep.runs)) if i not in rows]
    failures: list[tuple[str, str, bool]] = []
    total = len(sweep.runs)
    started = _now()
    results_path = os.path.join(out, RESULTS)

    def record(state: str) -> pd.DataFrame:
        """Writes the results table and the folder's state; returns the table."""
        document = {
            "state": state,
            "runs": total,
            "completed": len(rows),
            "failed": len(failures),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": started,
            "updated": _now(),
        }
        table = results_table([rows[i] for i in sorted(rows)])
        _write_atomically(table, results_path, document)
        atomic_write_bytes(
            os.path.join(out, STATE), (json.dumps(document, indent=2) + "\n").encode()
        )
        return table

    # from here on, results.parquet says "running" until the sweep ends: a killed sweep never
    # leaves a table that looks complete
    record("running")
    if progress is not None:
        progress(reused, total, "", 0)

    def done(position: int, outcome: Result | BaseException) -> None:
        index = todo[position]
        config, key = sweep.runs[index], keys[index]
        label = run_label(config)
        if isinstance(outcome, BaseException):
            failures.append((label, str(outcome), isinstance(outcome, HpcschedError)))
        else:
            outcome.write(
                os.path.join(runs_dir, key),
                extra={"config.json": {"key": key, **config.to_dict()}},
            )
            rows[index] = _row(config, key, outcome.info)
            if on_result is not None:
                on_result(index, outcome)
        if progress is not None:
            progress(len(rows) + len(failures), total, label, len(failures))

    state = "interrupted"
    try:
        run_configs(
            [sweep.runs[i] for i in todo], done, processes=processes or sweep.processes, ray=ray
        )
        state = "complete" if len(rows) == total else "incomplete"
    finally:
        table = record(state)
    return SweepOutcome(
        table=table,
        ran=len(rows) - reused,
        reused=reused,
        failures=failures,
        results_path=results_path,
        previous=None if previous is None else _settled(previous),
    )


def sweep_status(out: str | os.PathLike[str]) -> SweepStatus | None:
    """The state of the sweep folder ``out``; None when no sweep has run there. A sweep that
    says ``running`` but whose process is gone (on this machine) was ``interrupted``."""
    document = _read_state(os.fspath(out))
    if document is None:
        return None

    def number(key: str) -> int:
        value = document.get(key)
        return value if isinstance(value, int) else 0

    pid = document.get("pid")
    host = document.get("host")
    return SweepStatus(
        state=_settled(document, alive=True),
        runs=number("runs"),
        completed=number("completed"),
        failed=number("failed"),
        pid=pid if isinstance(pid, int) else None,
        host=host if isinstance(host, str) else None,
        started=document.get("started"),
        updated=document.get("updated"),
    )


def _settled(document: Mapping[str, Any], *, alive: bool = False) -> str:
    """The state a ``sweep.json`` records; ``running`` becomes ``interrupted`` when its
    process is known dead (always, with ``alive=False``: the caller holds the lock)."""
    state = str(document.get("state", "unknown"))
    if state != "running":
        return state
    if not alive:
        return "interrupted"
    pid, host = document.get("pid"), document.get("host")
    if host == socket.gethostname() and isinstance(pid, int) and not pid_is_alive(pid):
        return "interrupted"
    return state


def _read_state(out: str) -> dict[str, Any] | None:
    try:
        with open(os.path.join(out, STATE), encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


@contextlib.contextmanager
def _locked(out: str) -> Iterator[None]:
    """Holds ``OUT/sweep.lock`` (``flock``, released when the process ends however it ends);
    ``OptionError`` naming the folder and the holder when another sweep has it. On a file
    system without locks (e.g. Lustre mounted with ``noflock``) the sweep runs unlocked."""
    path = os.path.join(out, LOCK)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise OptionError(f"cannot write the sweep folder {out}: {exc.strerror or exc}") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise OptionError(
                    f"{out} is in use by another sweep{_holder(fd)}; wait for it to end, or "
                    "give this sweep another out folder"
                ) from None
            except OSError:
                pass  # no locks on this file system
            else:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    """`` (pid N)`` or `` (pid N on HOST)``: who holds the lock, as it wrote itself down."""
    try:
        pid, host = os.pread(fd, 512, 0).decode("utf-8", "replace").split()
    except (OSError, ValueError):
        return ""
    return f" (pid {pid})" if host == socket.gethostname() else f" (pid {pid} on {host})"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def results_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per run; parameter columns that mix numbers and text become text."""
    table = pd.DataFrame(rows)
    for column in table.columns:
        if table[column].dtype == object:
            values = table[column].dropna()
            kinds = {type(v) for v in values}
            if kinds and not kinds <= {int, float}:
                table[column] = table[column].map(lambda v: None if v is None else str(v))
    return table


def label_columns(table: pd.DataFrame) -> tuple[str, ...]:
    """The columns that tell a sweep's runs apart: workload, platform when set, policy, then
    the policies' parameters."""
    fixed = {"key", "workload", "platform", "policy", "policy_name", "run", "run_dir"}
    parameters = [c for c in table.columns if c not in fixed and c not in METRIC_COLUMNS]
    platform = ("platform",) if table["platform"].notna().any() else ()
    return ("workload", *platform, "policy", *parameters)


def comparable(table: pd.DataFrame) -> pd.DataFrame:
    """The table without the columns that measure time (the only ones that differ between two
    runs of the same sweep)."""
    return table.drop(columns=[c for c in TIMING_COLUMNS if c in table.columns])


def _row(config: RunConfig, key: str, info: Mapping[str, Any]) -> dict[str, Any]:
    platform = config.platform
    return {
        "key": key,
        "workload": config.workload_label,
        "platform": None if platform is None else os.path.basename(platform).removesuffix(".toml"),
        "policy": config.policy.label,
        "policy_name": config.policy.name,
        "run": run_label(config),
        **config.parameters,
        **summary_row(dict(info)),
        "run_dir": os.path.join("runs", key),
    }


def _completed(folder: str, key: str) -> dict[str, Any] | None:
    """The summary of a complete run directory made for this key, else None."""
    try:
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        with open(os.path.join(folder, RUN_MARKER), encoding="utf-8") as f:
            info = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    return info if config.get("key") == key else None


def _write_atomically(table: pd.DataFrame, path: str, state: Mapping[str, Any]) -> None:
    buffer = io.BytesIO()
    write_parquet(table, buffer, metadata={METADATA_KEY: json.dumps(state)})
    atomic_write_bytes(path, buffer.getvalue())


__all__ = [
    "LOCK",
    "METADATA_KEY",
    "POWER_KEYS",
    "RESULTS",
    "SEARCH_KEYS",
    "STATE",
    "SWEEP_KEYS",
    "WORKLOAD_KEYS",
    "Sweep",
    "SweepOutcome",
    "SweepProgress",
    "SweepStatus",
    "comparable",
    "expand_sweep",
    "label_columns",
    "read_sweep",
    "results_table",
    "run_label",
    "run_sweep",
    "sweep_status",
]
