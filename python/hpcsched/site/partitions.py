"""Sites: partitions over a platform's nodes and the routing of queues to them (DESIGN §3.6).

A platform file may add, after its nodes or ``[[groups]]``::

    over_limits = "reject"   # or "hold": what a job outside its partition's limits gets

    [[partitions]]
    name = "batch"
    nodes = "thin"           # a group, a list of groups, "0-99,200-299" (Slurm's inclusive
                             # ranges) or a count (the first N nodes)
    max_time = "1-00:00:00"  # seconds, or Slurm time text; "UNLIMITED" (the default)
    max_nodes = 128          # "UNLIMITED" (the default)
    min_nodes = 1
    priority_tier = 1        # Slurm's PriorityTier: higher tiers are considered first
    default = true           # the partition of jobs that name none (else the first)
    state = "up"             # up, down or drain
    aliases = ["parallel"]   # other names a trace uses for it

    [[routes]]               # jobs naming no partition, by queue, size and requested time
    partition = "batch"
    queue = "prod"           # any queue when left out
    min_nodes = 10
    max_nodes = 24
    max_time = "3:00:00"

Nodes are numbered group after group; partitions may overlap. A partition's nodes must all
have the same ``cores`` (a job's node count in it is ``ceil(procs / cores)``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hpcsched import _core
from hpcsched.exceptions import InputError, shown, unknown_name
from hpcsched.site.machine import NodeGroup
from hpcsched.site.slurm.text import slurm_duration

OVER_LIMITS = ("reject", "hold")
STATES = ("up", "down", "drain")
PARTITION_KEYS = (
    "name",
    "nodes",
    "max_time",
    "max_nodes",
    "min_nodes",
    "priority_tier",
    "default",
    "state",
    "aliases",
    "def_mem_per_cpu",
    "def_mem_per_node",
    "max_mem_per_node",
    "oversubscribe",
)
#: Slurm's OverSubscribe values hpcsched follows: ``no`` (jobs share nodes by resources) and
#: ``exclusive`` (each job has whole nodes)
OVERSUBSCRIBE = ("no", "exclusive")
ROUTE_KEYS = ("partition", "queue", "min_nodes", "max_nodes", "max_time")
#: Slurm's words for "no limit" (``MaxTime=UNLIMITED``, ``MaxNodes=INFINITE``).
UNLIMITED = ("unlimited", "infinite")

_NODE_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")  # (ASCII digits: ``\d`` takes ``٣``)

Ranges = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Partition:
    """A named set of nodes (half-open index ranges, sorted and merged) and its limits."""

    name: str
    ranges: Ranges
    cores: int  # cores (processors) per node of its nodes
    max_time: float | None = None  # s
    max_nodes: int | None = None
    min_nodes: int = 1
    tier: int = 1  # Slurm's PriorityTier: higher first
    default: bool = False
    state: str = "up"
    aliases: tuple[str, ...] = ()
    #: where jobs share nodes: the memory (MB) of a job that asks none, per CPU or per node
    #: (Slurm's DefMemPerCPU, DefMemPerNode), the most a job may ask per node
    #: (MaxMemPerNode; a job over it waits for ever) and whether every job takes whole nodes
    #: (OverSubscribe=EXCLUSIVE)
    def_mem_per_cpu: int | None = None
    def_mem_per_node: int | None = None
    max_mem_per_node: int | None = None
    exclusive: bool = False

    @property
    def nodes(self) -> int:
        return sum(end - start for start, end in self.ranges)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "ranges": [list(r) for r in self.ranges],
            "cores": self.cores,
            "max_time": self.max_time,
            "max_nodes": self.max_nodes,
            "min_nodes": self.min_nodes,
            "tier": self.tier,
            "default": self.default,
            "state": self.state,
            "aliases": list(self.aliases),
            **self._resource_rules(),
        }

    def _resource_rules(self) -> dict[str, object]:
        """The memory defaults and caps and OverSubscribe, those given only (the files
        written before them stay as they were)."""
        out: dict[str, object] = {}
        for key in ("def_mem_per_cpu", "def_mem_per_node", "max_mem_per_node"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.exclusive:
            out["oversubscribe"] = "exclusive"
        return out


@dataclass(frozen=True)
class Route:
    """Jobs naming no partition go to ``partition`` when their queue is ``queue`` (any queue
    when None), their node count in that partition within ``min_nodes``..``max_nodes`` and
    their requested time at most ``max_time``. The first matching route wins."""

    partition: str
    queue: str | None = None
    min_nodes: int | None = None
    max_nodes: int | None = None
    max_time: float | None = None


@dataclass(frozen=True)
class Site:
    """The partitions of a machine, the routing of queues to them, and what a job outside its
    partition's limits gets (``"reject"``: refused at submission and counted, as Slurm's
    ``EnforcePartLimits``; ``"hold"``: left pending and reported)."""

    partitions: tuple[Partition, ...]
    routes: tuple[Route, ...] = ()
    over_limits: str = "reject"

    @property
    def default(self) -> Partition:
        """The partition of jobs that name none: the one marked default, else the first."""
        return next((p for p in self.partitions if p.default), self.partitions[0])

    def index(self, name: str) -> int:
        """The index of the partition called ``name`` (or having it as an alias)."""
        for k, partition in enumerate(self.partitions):
            if name == partition.name or name in partition.aliases:
                return k
        raise KeyError(name)

    def to_native(self) -> dict[str, object]:
        """What the engine reads."""
        return {
            "partitions": [
                {
                    "name": p.name,
                    "ranges": [list(r) for r in p.ranges],
                    "max_time": p.max_time,
                    "max_nodes": p.max_nodes,
                    "min_nodes": p.min_nodes,
                    "tier": p.tier,
                    "state": p.state,
                }
                for p in self.partitions
            ],
            "over_limits": self.over_limits,
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "partitions": [p.to_dict() for p in self.partitions],
            "routes": [vars(r).copy() for r in self.routes],
            "over_limits": self.over_limits,
        }


def parse_site(document: dict[str, Any], groups: Sequence[NodeGroup], path: str) -> Site | None:
    """The site of a platform file's ``document`` over its node ``groups`` (one group for a
    one-pool platform); None without ``[[partitions]]``."""
    if "partitions" not in document:
        for key in ("routes", "over_limits"):
            if key in document:
                raise InputError(f"{key} needs [[partitions]] to refer to", path=path, field=key)
        return None
    raw = _tables(document, "partitions", path)
    if not raw:
        raise InputError(
            "partitions must list at least one partition", path=path, field="partitions"
        )
    partitions: list[Partition] = []
    taken: dict[str, str] = {}  # every name and alias -> the field that gave it
    for k, table in enumerate(raw):
        partition = _partition(table, groups, path, f"partitions[{k}]")
        for field, name in [("name", partition.name)] + [("aliases", a) for a in partition.aliases]:
            if name in taken:
                raise InputError(
                    f"{shown(name)} is already a name of {taken[name]}: each name and alias "
                    "must name one partition (jobs are matched by it)",
                    path=path,
                    field=f"partitions[{k}].{field}",
                )
            taken[name] = f"partitions[{len(partitions)}]"
        partitions.append(partition)
    defaults = [k for k, p in enumerate(partitions) if p.default]
    if len(defaults) > 1:
        raise InputError(
            f"partitions[{defaults[0]}] and partitions[{defaults[1]}] are both marked default; "
            "mark one (or none: the first is the default)",
            path=path,
            field=f"partitions[{defaults[1]}].default",
        )
    site = Site(tuple(partitions))  # the partitions the routes name
    routes = tuple(
        _route(table, site, path, f"routes[{k}]")
        for k, table in enumerate(_tables(document, "routes", path))
    )
    over_limits = document.get("over_limits", "reject")
    if over_limits not in OVER_LIMITS:
        raise InputError(
            unknown_name("over_limits value", over_limits, OVER_LIMITS),
            path=path,
            field="over_limits",
        )
    return Site(tuple(partitions), routes, over_limits)


def _tables(document: dict[str, Any], key: str, path: str) -> list[dict[str, Any]]:
    raw = document.get(key, [])
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise InputError(f"{key} must be [[{key}]] tables", path=path, field=key)
    return raw


def _check_keys(table: dict[str, Any], keys: Sequence[str], path: str, prefix: str) -> None:
    extra = sorted(set(table) - set(keys))
    if extra:
        raise InputError(
            unknown_name("key", extra[0], keys), path=path, field=f"{prefix}.{extra[0]}"
        )


def _partition(
    table: dict[str, Any], groups: Sequence[NodeGroup], path: str, prefix: str
) -> Partition:
    _check_keys(table, PARTITION_KEYS, path, prefix)
    name = table.get("name")
    if not isinstance(name, str) or not name.strip() or "," in name:
        raise InputError(
            f"name must be a non-empty text in quotes without commas (a trace's "
            f"'test,batch' lists two partitions), not {shown(name)}",
            path=path,
            field=f"{prefix}.name",
        )
    if "nodes" not in table:
        raise InputError(
            "missing key nodes (a group, a list of groups, node ranges or a count)",
            path=path,
            field=f"{prefix}.nodes",
        )
    ranges = node_ranges(table["nodes"], groups, path, f"{prefix}.nodes")
    cores = _cores(name, ranges, groups, path, f"{prefix}.nodes")
    max_nodes = _count(table, "max_nodes", None, path, prefix)
    min_nodes = _count(table, "min_nodes", 1, path, prefix) or 1  # "UNLIMITED": no minimum
    if max_nodes is not None and min_nodes > max_nodes:
        raise InputError(
            f"min_nodes {min_nodes} is more than max_nodes {max_nodes}",
            path=path,
            field=f"{prefix}.min_nodes",
        )
    tier = table.get("priority_tier", 1)
    if isinstance(tier, bool) or not isinstance(tier, int) or not 0 <= tier <= _core.MAX_COUNT:
        raise InputError(
            f"priority_tier must be an integer >= 0 (up to {_core.MAX_COUNT}), not {shown(tier)}",
            path=path,
            field=f"{prefix}.priority_tier",
        )
    default = table.get("default", False)
    if not isinstance(default, bool):
        raise InputError(
            f"default must be true or false, not {shown(default)}",
            path=path,
            field=f"{prefix}.default",
        )
    state = table.get("state", "up")
    if not isinstance(state, str) or state.lower() not in STATES:
        raise InputError(unknown_name("state", state, STATES), path=path, field=f"{prefix}.state")
    aliases = table.get("aliases", [])
    if not isinstance(aliases, list) or not all(
        isinstance(a, str) and a.strip() and "," not in a for a in aliases
    ):
        raise InputError(
            f"aliases must be a list of non-empty texts without commas, not {shown(aliases)}",
            path=path,
            field=f"{prefix}.aliases",
        )
    memory = {
        key: _megabytes(table, key, path, prefix)
        for key in ("def_mem_per_cpu", "def_mem_per_node", "max_mem_per_node")
    }
    if memory["def_mem_per_cpu"] is not None and memory["def_mem_per_node"] is not None:
        raise InputError(
            "def_mem_per_cpu and def_mem_per_node exclude each other (Slurm takes one)",
            path=path,
            field=f"{prefix}.def_mem_per_node",
        )
    oversubscribe = table.get("oversubscribe", "no")
    if not isinstance(oversubscribe, str) or oversubscribe.lower() not in OVERSUBSCRIBE:
        raise InputError(
            unknown_name("oversubscribe value", oversubscribe, OVERSUBSCRIBE)
            + " (YES and FORCE share cores between jobs, which hpcsched does not simulate)",
            path=path,
            field=f"{prefix}.oversubscribe",
        )
    return Partition(
        **memory,
        exclusive=oversubscribe.lower() == "exclusive",
        name=name,
        ranges=ranges,
        cores=cores,
        max_time=slurm_time(table.get("max_time"), path, f"{prefix}.max_time"),
        max_nodes=max_nodes,
        min_nodes=min_nodes,
        tier=tier,
        default=default,
        state=state.lower(),
        aliases=tuple(dict.fromkeys(aliases)),
    )


def _route(table: dict[str, Any], site: Site, path: str, prefix: str) -> Route:
    _check_keys(table, ROUTE_KEYS, path, prefix)
    target = table.get("partition")
    names = [n for p in site.partitions for n in (p.name, *p.aliases)]
    if not isinstance(target, str) or target not in names:
        raise InputError(
            unknown_name("partition", target, names), path=path, field=f"{prefix}.partition"
        )
    queue = table.get("queue")
    if queue is not None and (not isinstance(queue, str) or not queue.strip()):
        raise InputError(
            f"queue must be a queue's name in quotes, not {shown(queue)}",
            path=path,
            field=f"{prefix}.queue",
        )
    min_nodes = _count(table, "min_nodes", None, path, prefix)
    max_nodes = _count(table, "max_nodes", None, path, prefix)
    if min_nodes is not None and max_nodes is not None and min_nodes > max_nodes:
        raise InputError(
            f"min_nodes {min_nodes} is more than max_nodes {max_nodes}: the route takes no job",
            path=path,
            field=f"{prefix}.min_nodes",
        )
    return Route(
        partition=site.partitions[site.index(target)].name,
        queue=queue,
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        max_time=slurm_time(table.get("max_time"), path, f"{prefix}.max_time"),
    )


def _megabytes(table: dict[str, Any], key: str, path: str, prefix: str) -> int | None:
    """A memory size in MB (None when left out)."""
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _core.MAX_MEMORY:
        raise InputError(
            f"{key} must be a number of MB from 1 to {_core.MAX_MEMORY}, not {shown(value)}",
            path=path,
            field=f"{prefix}.{key}",
        )
    return value


def _count(
    table: dict[str, Any], key: str, default: int | None, path: str, prefix: str
) -> int | None:
    """A node count from 1 to the engine's 32-bit counts, or None for Slurm's UNLIMITED."""
    value = table.get(key, default)
    if value is None or (isinstance(value, str) and value.lower() in UNLIMITED):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _core.MAX_COUNT:
        raise InputError(
            f'{key} must be an integer >= 1 (up to {_core.MAX_COUNT}) or "UNLIMITED", not '
            f"{shown(value)}",
            path=path,
            field=f"{prefix}.{key}",
        )
    return value


def slurm_time(value: object, path: str, field: str) -> float | None:
    """Seconds from a number of seconds (> 0, at most the engine's ``_core.MAX_TIME``) or
    Slurm's time text ("30" minutes, "1:00:00", "2-00:00:00"); None for no value or
    "UNLIMITED"."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            seconds = slurm_duration(value)
        except ValueError as exc:
            if "past the engine" in str(exc):
                raise InputError(str(exc), path=path, field=field) from None
            seconds = 0.0
        if seconds is None or seconds > 0:
            return seconds
    elif not isinstance(value, bool) and isinstance(value, int | float) and 0 < value < math.inf:
        if value > _core.MAX_TIME:
            raise InputError(
                f"{value:g} s is past the engine's times (at most {_core.MAX_TIME:g} s)",
                path=path,
                field=field,
            )
        return float(value)
    raise InputError(
        'must be seconds > 0 or Slurm time text ("30" minutes, "1:00:00", "2-00:00:00", '
        f'"UNLIMITED"), not {shown(value)}',
        path=path,
        field=field,
    )


def node_ranges(value: object, groups: Sequence[NodeGroup], path: str, field: str) -> Ranges:
    """Half-open node-index ranges, sorted and merged, from a partition's ``nodes``: a group
    name, a list of group names, Slurm's inclusive ranges ("0-99,200-299") or a count (the
    first N nodes)."""
    machine = sum(g.nodes for g in groups)
    starts, first = {}, 0
    for group in groups:
        starts[group.name] = (first, first + group.nodes)
        first += group.nodes
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        if 0 < value <= machine:
            return ((0, value),)
        raise InputError(
            f"a count of nodes must be from 1 to the machine's {machine}, not {value}",
            path=path,
            field=field,
        )
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        for name in value:
            if name not in starts:
                raise InputError(unknown_name("node group", name, starts), path=path, field=field)
        return merged([starts[name] for name in value])
    elif isinstance(value, str) and value in starts:
        return (starts[value],)
    elif isinstance(value, str) and value.strip():
        return merged(_slurm_ranges(value, machine, list(starts), path, field))
    raise InputError(
        f'nodes must be a group\'s name, a list of them, node ranges such as "0-99,200-299" '
        f"or a count, not {shown(value)}",
        path=path,
        field=field,
    )


def _slurm_ranges(
    text: str, machine: int, group_names: list[str], path: str, field: str
) -> list[tuple[int, int]]:
    ranges = []
    for piece in text.split(","):
        match = _NODE_RANGE.fullmatch(piece.strip())
        if match is None:
            raise InputError(
                unknown_name("node group", text, group_names)
                + ', nor node ranges such as "0-99,200-299"',
                path=path,
                field=field,
            )
        # (an index of 5,000 digits is past any machine, and past int()'s digits)
        start, last = (
            int(n) if len(n) <= 12 else machine for n in (match[1], match[2] or match[1])
        )
        if last < start or last >= machine:
            raise InputError(
                f"node range {shown(piece.strip())} is not within the machine's nodes "
                f"0-{machine - 1}",
                path=path,
                field=field,
            )
        ranges.append((start, last + 1))
    return ranges


def merged(ranges: Sequence[tuple[int, int]]) -> Ranges:
    """``ranges`` sorted, with overlapping or touching ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def _cores(name: str, ranges: Ranges, groups: Sequence[NodeGroup], path: str, field: str) -> int:
    """The cores per node of a partition's nodes: one value, or an error (a job's node count
    in the partition would depend on which nodes it got)."""
    spanned: dict[str, int] = {}
    first = 0
    for group in groups:
        if any(start < first + group.nodes and end > first for start, end in ranges):
            spanned[group.name] = group.cores
        first += group.nodes
    if len(set(spanned.values())) > 1:
        listed = ", ".join(f"{g} {c}" for g, c in spanned.items())
        raise InputError(
            f"partition {shown(name)} spans node groups with different cores per node "
            f"({listed}): a job's node count in it would depend on which nodes it got; "
            "make one partition per kind of node",
            path=path,
            field=field,
        )
    return next(iter(spanned.values()))
