"""Parameter sweeps: a grid of workloads x platforms x policies x parameters, from TOML.

A sweep file::

    [sweep]
    out = "sweeps/alpha"              # relative to this file; default: the file's name
    platforms = ["AOBA-64", "Taurus-64"]
    processes = 2                     # local pool size (default: one per core)
    # downtime = "maintenance.txt"; announce_lead = 172800; overrun = "continue"
    # decision_log = "full"           # every candidate of each decision (default "compact")

    [[workloads]]
    path = "traces/DAS2-fs2-0-3000.json.gz"

    [[workloads]]
    generate = "markovian"            # or "mmk"; its parameters beside it
    seed = [43, 44]

    [[policies]]
    name = "snf-icon"
    alpha = [1000, 5000, 20000]       # a list is an axis of the grid
    screen_window = [3600, 7200]

    [[policies]]
    name = "wfp3"
    window = 256

Every list-valued parameter of a workload or policy block is an axis; the grid is the product
of the workloads, the platforms and each policy block's own product. Each run is named by a hash
of its full configuration (:meth:`RunConfig.key`) and written to ``OUT/runs/<key>/``; a run
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
import itertools
import json
import os
import socket
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import pandas as pd

from hpcsched._io import (
    atomic_write_bytes,
    pid_is_alive,
    read_toml,
    remove_stale_staging,
)
from hpcsched.exceptions import HpcschedError, InputError, OptionError, shown
from hpcsched.experiment import (
    METRIC_COLUMNS,
    TIMING_COLUMNS,
    RunConfig,
    WorkloadSpec,
    summary_row,
)
from hpcsched.output import RUN_MARKER, check_writable, write_parquet
from hpcsched.parallel import run_configs
from hpcsched.platform import Platform, load_platform
from hpcsched.policies import PolicySpec, PowerSpec, SearchSpec, parse_reward
from hpcsched.run import (
    DECISION_LOGS,
    Result,
    check_announce_lead,
    check_decision_log,
    check_overrun,
    check_power_model,
)
from hpcsched.workload import read_calendar

try:
    import fcntl
except ImportError:  # not POSIX: sweeps run unlocked
    fcntl = None  # type: ignore[assignment]

SWEEP_KEYS = (
    "name",
    "out",
    "platforms",
    "processes",
    "downtime",
    "announce_lead",
    "overrun",
    "decision_log",
)
SEARCH_KEYS = tuple(f.name for f in fields(SearchSpec))
POWER_KEYS = tuple(f.name for f in fields(PowerSpec))
WORKLOAD_KEYS = ("path", "generate", "slice", "format", "procs_per_node", "name")
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
class Sweep:
    """An expanded sweep: every run of the grid, in order, and where results go."""

    source: str
    out: str
    runs: list[RunConfig]
    processes: int | None = None
    name: str | None = None


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


def read_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Reads and expands a sweep file; every run is validated before anything runs."""
    source = os.fspath(path)
    return expand_sweep(read_toml(source), source)


def expand_sweep(document: Mapping[str, Any], source: str = "<sweep>") -> Sweep:
    """The runs a parsed sweep document describes (paths relative to ``source``'s folder)."""
    base = os.path.dirname(os.path.abspath(source)) if source != "<sweep>" else os.getcwd()
    unknown = sorted(set(document) - {"sweep", "workloads", "policies"})
    if unknown:
        raise InputError(
            f"unknown table {unknown[0]!r} (expected [sweep], [[workloads]], [[policies]])",
            path=source,
            field=unknown[0],
        )
    settings = _table(document.get("sweep", {}), "sweep", source)
    extra = sorted(set(settings) - set(SWEEP_KEYS))
    if extra:
        raise InputError(
            f"unknown key {extra[0]!r} (keys: {', '.join(SWEEP_KEYS)})",
            path=source,
            field=f"sweep.{extra[0]}",
        )
    workloads = _blocks(document, "workloads", source)
    policies = _blocks(document, "policies", source)

    def resolve(p: str) -> str:
        return p if os.path.isabs(p) else os.path.normpath(os.path.join(base, p))

    platforms = settings.get("platforms", [None])
    if isinstance(platforms, str):
        platforms = [platforms]
    if not isinstance(platforms, list) or not platforms:
        raise InputError("a list of platform names or files", path=source, field="sweep.platforms")
    platforms = [
        None
        if p is None
        else (resolve(p) if str(p).endswith(".toml") or os.sep in str(p) else str(p))
        for p in platforms
    ]
    _distinct(platforms, source, "sweep.platforms")
    loaded: dict[str | None, tuple[str, Platform | None]] = {}
    for i, platform in enumerate(platforms):
        where = f"sweep.platforms[{i}]" if platform is not None else "sweep.platforms"
        value = None if platform is None else _checked(source, where, load_platform, platform)
        loaded[platform] = (where, value)
    downtime = settings.get("downtime")
    decision_log = settings.get("decision_log", "compact")
    options = {
        "decision_log": decision_log,
        "downtime": None if downtime is None else resolve(str(downtime)),
        "announce_lead": settings.get("announce_lead"),
        "overrun": settings.get("overrun", "continue"),
    }
    _check_settings(options, source)
    workload_specs = [
        (spec, f"workloads[{i}]")
        for i, block in enumerate(workloads)
        for spec in _expand_workload(block, resolve, source, f"workloads[{i}]")
    ]
    policy_specs = [
        (policy, parameters, f"policies[{i}]")
        for i, block in enumerate(policies)
        for policy, parameters in _expand_policy(block, source, f"policies[{i}]")
    ]
    if "decision_log" in settings:
        _checked(source, "sweep", check_decision_log, decision_log, [p for p, _, _ in policy_specs])
    # The whole grid is checked before the first run: each generated workload is drawn once
    # per machine size (its parameters are checked by drawing it), each run's policy against
    # its platform, and no run may appear twice.
    generated: list[tuple[WorkloadSpec, int | None]] = []  # params may hold lists: no set
    runs: list[RunConfig] = []
    seen: dict[str, str] = {}
    for (workload, wwhere), platform, (policy, parameters, pwhere) in itertools.product(
        workload_specs, platforms, policy_specs
    ):
        where, machine = loaded[platform]
        nodes = None if machine is None else machine.nodes
        if workload.generator is not None and (workload, nodes) not in generated:
            _checked(source, wwhere, workload.load, nodes)
            generated.append((workload, nodes))
        try:
            check_power_model(policy, machine)
        except OptionError as exc:
            raise InputError(f"{pwhere}: {exc.reason}", path=source, field=where) from None
        config = RunConfig(
            workload=workload, policy=policy, platform=platform, parameters=parameters, **options
        )
        key = _checked(source, "workloads", config.key)  # every input file exists, readable
        label = f"{run_label(config)} ({wwhere}, {pwhere})"
        if key in seen:
            raise InputError(
                f"the grid holds the same run twice: {seen[key]} and {label}",
                path=source,
                field=pwhere,
            )
        seen[key] = label
        runs.append(config)
    out = settings.get("out") or os.path.basename(source).removesuffix(".toml") or "sweep"
    processes = settings.get("processes")
    if processes is not None and (not isinstance(processes, int) or processes < 1):
        raise InputError(
            f"must be a positive integer, not {processes!r}", path=source, field="sweep.processes"
        )
    return Sweep(
        source=source,
        out=resolve(str(out)),
        runs=runs,
        processes=processes,
        name=settings.get("name"),
    )


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
    except (OSError, ValueError):
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


def run_label(config: RunConfig) -> str:
    """``SNF-ICON alpha=1000 on DAS2-fs2 (AOBA-64)``: the policy, its swept parameters, the
    workload and the platform."""
    params = " ".join(f"{k}={v}" for k, v in config.parameters.items())
    policy = f"{config.policy.label} {params}".strip()
    platform = f" ({os.path.basename(str(config.platform))})" if config.platform else ""
    return f"{policy} on {config.workload_label}{platform}"


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
    except (OSError, ValueError):
        return None
    return info if config.get("key") == key else None


def _write_atomically(table: pd.DataFrame, path: str, state: Mapping[str, Any]) -> None:
    buffer = io.BytesIO()
    write_parquet(table, buffer, metadata={METADATA_KEY: json.dumps(state)})
    atomic_write_bytes(path, buffer.getvalue())


def _table(value: Any, name: str, source: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"[{name}] must be a table", path=source, field=name)
    return value


def _blocks(document: Mapping[str, Any], name: str, source: str) -> list[dict[str, Any]]:
    blocks = document.get(name)
    if not isinstance(blocks, list) or not blocks or not all(isinstance(b, dict) for b in blocks):
        raise InputError(f"give at least one [[{name}]] table", path=source, field=name)
    return blocks


def _checked(source: str, where: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)``, re-raising a user error with the sweep file and field named."""
    try:
        return call(*args, **kwargs)
    except InputError as exc:
        if exc.path and exc.path != source:
            raise
        raise InputError(exc.reason, path=source, field=where) from None
    except OptionError as exc:
        # an option named like --screen-window is the key screen_window of this block
        key = (exc.option or "").lstrip("-").replace("-", "_")
        field = f"{where}.{key}" if key and key not in ("policy", "workload", "platform") else where
        raise InputError(exc.reason, path=source, field=field) from None
    except HpcschedError as exc:
        raise InputError(str(exc), path=source, field=where) from None


def _is_axis(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, list) for v in value)


def _axes(
    block: Mapping[str, Any], source: str, where: str, keep_lists: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """The product of a block's list-valued entries (lists named in ``keep_lists`` are values
    unless they are lists of lists). An empty list (no run) and a value listed twice (the
    same run twice) are errors naming the field."""
    names, choices = [], []
    for key, value in block.items():
        names.append(key)
        is_axis = isinstance(value, list) and (
            key not in keep_lists or (value and all(isinstance(v, list) for v in value))
        )
        if is_axis:
            if not value:
                raise InputError(
                    "an empty list gives no run: give at least one value",
                    path=source,
                    field=f"{where}.{key}",
                )
            _distinct(value, source, f"{where}.{key}")
        choices.append(value if is_axis else [value])
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*choices)]


def _distinct(values: list[Any], source: str, field: str) -> None:
    """An axis lists each value once (equal values would be the same runs twice)."""
    for i, value in enumerate(values):
        if any(_same(value, other) for other in values[:i]):
            raise InputError(
                f"{shown(value)} is listed twice (each value is a run of the grid)",
                path=source,
                field=field,
            )


def _same(a: Any, b: Any) -> bool:
    # 1 and 1.0 are one value, True and 1 are not
    return bool(a == b) and isinstance(a, bool) == isinstance(b, bool)


def _check_settings(options: Mapping[str, Any], source: str) -> None:
    """The [sweep] settings every run shares, checked before any run."""
    _checked(source, "sweep", check_announce_lead, options["announce_lead"])
    _checked(source, "sweep", check_overrun, options["overrun"])
    if options["decision_log"] not in DECISION_LOGS:
        raise InputError(
            f"must be one of {', '.join(DECISION_LOGS)}, not {shown(options['decision_log'])}",
            path=source,
            field="sweep.decision_log",
        )
    if options["downtime"] is not None:
        _checked(source, "sweep.downtime", read_calendar, options["downtime"])


def _expand_workload(
    block: Mapping[str, Any], resolve: Callable[[str], str], source: str, where: str
) -> list[WorkloadSpec]:
    specs = []
    for values in _axes(block, source, where, keep_lists=("slice",)):
        generator = values.pop("generate", None)
        path = values.pop("path", None)
        piece = values.pop("slice", None)
        if path is not None and not isinstance(path, str):
            raise InputError(
                f"path must be a file name in quotes, not {path!r}",
                path=source,
                field=f"{where}.path",
            )
        options = {k: values.pop(k) for k in ("format", "procs_per_node", "name") if k in values}
        if generator is None and values:
            key = sorted(values)[0]
            raise InputError(
                f"unknown key {key!r} (keys: {', '.join(WORKLOAD_KEYS)}, or a generator's "
                "parameters with generate = ...)",
                path=source,
                field=f"{where}.{key}",
            )
        start, stop = 0, None
        if piece is not None:
            if (
                not isinstance(piece, list)
                or len(piece) != 2
                or not all(isinstance(v, int) for v in piece)
            ):
                raise InputError(
                    f"slice must be [first, end] job indices, not {piece!r}",
                    path=source,
                    field=f"{where}.slice",
                )
            start, stop = piece
            if "name" in options and _is_axis(block.get("slice")):
                options["name"] = f"{options['name']}[{start}:{stop}]"  # tell the slices apart
        spec = _checked(
            source,
            where,
            WorkloadSpec,
            path=None if path is None else resolve(str(path)),
            generator=generator,
            params=tuple(sorted(values.items())),
            start=start,
            stop=stop,
            **options,
        )
        specs.append(spec)
    return specs


def _expand_policy(
    block: Mapping[str, Any], source: str, where: str
) -> list[tuple[PolicySpec, dict[str, Any]]]:
    if "name" not in block:
        raise InputError("every [[policies]] table needs a name", path=source, field=where)
    pairs = []
    for values in _axes(block, source, where):
        name = values.pop("name")
        spec = _checked(source, where, _policy, name, dict(values))
        pairs.append((spec, values))
    return pairs


def _policy(name: Any, values: dict[str, Any]) -> PolicySpec:
    window = values.pop("window", None)
    backfill = values.pop("backfill", None)
    max_wait = values.pop("max_wait", None)
    base = PolicySpec(str(name), window, backfill)
    search = {k: values.pop(k) for k in SEARCH_KEYS if k in values}
    manager = values.pop("power", None)
    power = {k: values.pop(k) for k in POWER_KEYS if k in values}
    if manager is not None and str(manager).lower() != "none":
        power["manager"] = manager
    if values:
        key = sorted(values)[0]
        raise InputError(
            f"{key!r} is not a parameter of any policy (window, backfill, "
            f"{', '.join(SEARCH_KEYS)}, or a power parameter such as alpha)",
            field=key,
        )
    if search and not base.is_search:
        raise InputError(f"{base.name} takes no look-ahead parameter {sorted(search)[0]!r}")
    managed = base.is_power or "manager" in power
    if power and not managed:
        raise InputError(
            f"{base.name} takes no power parameter {sorted(power)[0]!r} without a power "
            'manager (power = "icon", ...)'
        )
    if "reward" in search:
        if base.name != "mars":
            raise InputError(f'{base.name} has its reward built in; use name = "mars"')
        search["reward"] = parse_reward(search["reward"])
    return PolicySpec(
        base.name,
        window,
        backfill,
        search=SearchSpec(**search) if base.is_search else None,
        power=PowerSpec(**power) if managed else None,
        max_wait=max_wait,
    )
