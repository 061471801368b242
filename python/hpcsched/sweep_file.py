"""Sweep files: a grid of workloads x platforms x policies x parameters, from TOML, read,
expanded and checked before anything runs (:func:`read_sweep`); :mod:`hpcsched.sweep` runs
the grid.

A sweep file::

    [sweep]
    out = "sweeps/alpha"              # relative to this file; default: the file's name
    platforms = ["AOBA-64", "Taurus-64"]   # presets, platform TOML files or slurm.conf files
    processes = 2                     # local pool size (default: one per core)
    # slurm_accounts = "ci.dump"      # the site's associations and QOS, for --policy slurm
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
of its full configuration (:meth:`RunConfig.key`).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from hpcsched._io import read_toml
from hpcsched.exceptions import HpcschedError, InputError, OptionError, shown, unknown_name
from hpcsched.experiment import RunConfig, WorkloadSpec
from hpcsched.parallel import check_processes
from hpcsched.policies import PolicySpec, PowerSpec, SearchSpec
from hpcsched.rewards import parse_reward
from hpcsched.run import (
    DECISION_LOGS,
    check_announce_lead,
    check_decision_log,
    check_overrun,
    check_power_model,
    open_platform,
)
from hpcsched.site.platform import Platform
from hpcsched.workload import read_calendar

SWEEP_KEYS = (
    "name",
    "out",
    "platforms",
    "processes",
    "downtime",
    "announce_lead",
    "overrun",
    "decision_log",
    "slurm_accounts",
)
SEARCH_KEYS = tuple(f.name for f in fields(SearchSpec))
POWER_KEYS = tuple(f.name for f in fields(PowerSpec))
WORKLOAD_KEYS = ("path", "generate", "slice", "format", "procs_per_node", "name")


@dataclass
class Sweep:
    """An expanded sweep: every run of the grid, in order, and where results go."""

    source: str
    out: str
    runs: list[RunConfig]
    processes: int | None = None
    name: str | None = None


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
            unknown_name("key", extra[0], SWEEP_KEYS),
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
        else (resolve(p) if str(p).endswith((".toml", ".conf")) or os.sep in str(p) else str(p))
        for p in platforms
    ]
    _distinct(platforms, source, "sweep.platforms")
    loaded: dict[str | None, tuple[str, Platform | None]] = {}
    for i, platform in enumerate(platforms):
        where = f"sweep.platforms[{i}]" if platform is not None else "sweep.platforms"
        value = None if platform is None else _checked(source, where, open_platform, platform)
        loaded[platform] = (where, value)
    downtime = settings.get("downtime")
    decision_log = settings.get("decision_log", "compact")
    options = {
        "decision_log": decision_log,
        "downtime": None if downtime is None else resolve(str(downtime)),
        "announce_lead": settings.get("announce_lead"),
        "overrun": settings.get("overrun", "continue"),
        "slurm_accounts": _slurm_accounts(settings, platforms, resolve, source),
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
    processes = _checked(source, "sweep", check_processes, settings.get("processes"))
    return Sweep(
        source=source,
        out=resolve(str(out)),
        runs=runs,
        processes=processes,
        name=settings.get("name"),
    )


def run_label(config: RunConfig) -> str:
    """``SNF-ICON alpha=1000 on DAS2-fs2 (AOBA-64)``: the policy, its swept parameters, the
    workload and the platform."""
    params = " ".join(f"{k}={v}" for k, v in config.parameters.items())
    policy = f"{config.policy.label} {params}".strip()
    platform = f" ({os.path.basename(str(config.platform))})" if config.platform else ""
    return f"{policy} on {config.workload_label}{platform}"


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


def _slurm_accounts(
    settings: Mapping[str, Any],
    platforms: list[str | None],
    resolve: Callable[[str], str],
    source: str,
) -> str | None:
    """``slurm_accounts``: a file (relative to the sweep file) read once to check it; it needs
    a platform for every run, as ``--slurm-accounts`` needs ``--slurm-conf`` or ``--platform``."""
    accounts = settings.get("slurm_accounts")
    if accounts is None:
        return None
    where = "sweep.slurm_accounts"
    if not isinstance(accounts, str):
        raise InputError(f"a file name in quotes, not {shown(accounts)}", path=source, field=where)
    if None in platforms:
        raise InputError(
            "the site's accounts need a site: give platforms (slurm.conf files, platform files "
            "or presets)",
            path=source,
            field=where,
        )
    from hpcsched.site.slurm.accounts import read_slurm_accounts

    path = resolve(accounts)
    _checked(source, where, read_slurm_accounts, path)
    return path


def _check_settings(options: Mapping[str, Any], source: str) -> None:
    """The [sweep] settings every run shares, checked before any run."""
    _checked(source, "sweep", check_announce_lead, options["announce_lead"])
    _checked(source, "sweep", check_overrun, options["overrun"])
    if options["decision_log"] not in DECISION_LOGS:
        raise InputError(
            unknown_name("decision log", options["decision_log"], DECISION_LOGS),
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
        if path is not None and not os.path.exists(resolve(path)):
            # named as written and as read: relative paths start at the sweep file's folder
            read_as = (
                ""
                if os.path.isabs(path)
                else (f" (read as {resolve(path)}: paths are relative to the sweep file's folder)")
            )
            raise InputError(
                f"{path!r} does not exist{read_as}", path=source, field=f"{where}.path"
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
