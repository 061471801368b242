"""A site from Slurm's own configuration file: ``slurm.conf`` as slurmctld reads it.

What is read (docs/formats.md, "slurm.conf"): ``NodeName`` lines (hostlist expressions, their
resources as :mod:`hpcsched.site.slurm.nodes` reads them: CPUs or Boards, Sockets,
CoresPerSocket, ThreadsPerCore, specialized cores, RealMemory less MemSpecLimit, Gres, Weight;
Feature, State), ``PartitionName`` lines (Nodes, MaxTime, MaxNodes, MinNodes, PriorityTier,
PriorityJobFactor, Default, State, the memory defaults and OverSubscribe), ``NodeSet`` lines
(named node sets partitions may use), ``NodeName=DEFAULT`` and ``PartitionName=DEFAULT`` lines
(defaults for the lines after them), ``Include`` (:mod:`hpcsched.site.slurm.conf_lines`),
``SelectType`` and ``SelectTypeParameters`` (how jobs share nodes:
:mod:`hpcsched.site.slurm.sharing`), every ``Priority*`` setting and ``SchedulerParameters``.
Keys are case-insensitive, ``#`` starts a comment, values may be quoted. Every other key Slurm
knows is kept as written and said once as not simulated; a key it does not know is kept too and
said once with the nearest real key (:mod:`hpcsched.site.slurm.keys`). A line that cannot be
read is an :class:`InputError` naming the file, the line and the key; so is a number past the
engine's range, a node described twice, a file whose hostlists describe more nodes than the
engine takes (counted before they are expanded), and what slurmctld corrects with an error.

:meth:`SlurmConf.platform` is the site as hpcsched models it: the nodes in the file's order,
node groups of consecutive nodes alike, the partitions over them with their limits, tiers and
states; ``EnforcePartLimits`` decides whether a job over a partition's limits is refused at
submission (``ALL``, ``ANY``, ``YES``) or left pending (``NO``, Slurm's default). With
``select/linear`` (Slurm's default) every job gets whole nodes; with ``select/cons_tres`` or
``cons_res`` the platform is one of nodes shared by CPUs, memory and generic resources, the one
a platform file of the same groups and partitions describes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from hpcsched import _core
from hpcsched.exceptions import InputError, shown
from hpcsched.site.machine import NodeGroup
from hpcsched.site.partitions import Partition, Site, merged
from hpcsched.site.platform import Platform
from hpcsched.site.slurm.conf_lines import Line, Where, read_lines
from hpcsched.site.slurm.keys import CANONICAL, KeyNotes
from hpcsched.site.slurm.nodes import KEY_NAMES, Nodes, integer, read_shape
from hpcsched.site.slurm.settings import SlurmSettings
from hpcsched.site.slurm.sharing import (
    MemoryRules,
    partition_rules,
    read_sharing,
    shared_groups,
    top_rules,
)
from hpcsched.site.slurm.text import (
    hostlist_names,
    hostlist_size,
    slurm_duration,
    split_hostlists,
)

#: A partition's states (``State=``), as the engine's (docs/semantics.md, "The advisor on
#: partitions": queued jobs of a drained partition still run; an inactive one starts none).
PARTITION_STATES = {"UP": "up", "DOWN": "down", "DRAIN": "drain", "INACTIVE": "down"}
#: ``EnforcePartLimits`` values that refuse a job over a partition's limits at submission.
ENFORCING = ("ALL", "ANY", "YES")
#: The other kinds of line: said as not simulated by their first key.
_OTHER_LINES = ("downnodes", "frontendname", "slurmctldhost")
#: Slurm's 16-bit ``INFINITE`` (``PriorityTier=UNLIMITED`` is read as it).
INFINITE16 = 0xFFFF


@dataclass(frozen=True)
class SlurmPartition:
    """One ``PartitionName`` line, its defaults applied; ``nodes`` expanded (``ALL`` and node
    sets resolved) in the file's node order."""

    name: str
    nodes: tuple[str, ...]
    max_time: float | None
    max_nodes: int | None
    min_nodes: int
    tier: int
    default: bool
    state: str
    oversubscribe: str
    where: Where
    #: ``PriorityJobFactor`` (1 by default): the multifactor priority's partition factor
    job_factor: int = 1
    #: ``TRESBillingWeights`` as written ("": its jobs are billed their CPUs)
    billing_weights: str = ""
    #: its memory defaults and cap (the top level's where it gives none) and OverSubscribe
    rules: MemoryRules = field(default_factory=MemoryRules)


@dataclass(frozen=True)
class SlurmConf:
    """What a slurm.conf says of the site and of its scheduling."""

    path: str
    cluster: str | None
    nodes: tuple[Nodes, ...]
    partitions: tuple[SlurmPartition, ...]
    #: every ``Priority*`` setting, by its name as Slurm's documentation writes it
    priority: dict[str, str]
    #: ``SchedulerParameters``, name -> value ("" for a flag)
    scheduler: dict[str, str]
    #: every other known setting, by its name as written
    settings: dict[str, str]
    #: keys Slurm does not know, each where it first appears
    unknown: dict[str, Where] = field(default_factory=dict)
    #: the files its ``Include`` lines read, in the order first read
    included: tuple[str, ...] = ()
    #: where each top-level setting is (its last line)
    lines: dict[str, Where] = field(default_factory=dict)
    #: what its keys say: the unknown ones, those read and not simulated (``KeyNotes``)
    key_notes: tuple[str, ...] = ()
    #: how jobs share nodes (``SelectType``, ``SelectTypeParameters``: ``whole`` or a
    #: ``cr_*`` of :mod:`hpcsched.site.slurm.sharing`), and what reading it noticed
    sharing: str = "whole"
    sharing_notes: tuple[str, ...] = ()

    def node_names(self) -> list[str]:
        return [n for line in self.nodes for n in line.names]

    def platform(self) -> Platform:
        """The site as hpcsched models it (module docstring)."""
        if not self.partitions:  # (Slurm would start, and run no job: none has a partition)
            raise InputError(
                "no PartitionName line: jobs would have no partition to run in (add "
                "'PartitionName=all Nodes=ALL Default=YES')",
                path=self.path,
            )
        names = self.node_names()
        number = {n: k for k, n in enumerate(names)}
        shared = self.sharing != "whole"
        if shared:
            types_at = self.lines.get("GresTypes")
            groups, line_cpus, resource_notes = shared_groups(
                self.nodes,
                self.sharing,
                self.settings.get("GresTypes"),
                f"line {types_at.line}" if types_at else "not set",
            )
        else:
            groups = _groups(self.nodes)
            line_cpus = [line.cpus for line in self.nodes]
            resource_notes = _whole_nodes_notes(self.nodes)
        cpus = [c for line, c in zip(self.nodes, line_cpus, strict=True) for _ in line.names]
        partitions = []
        for p in self.partitions:
            indices = sorted(number[n] for n in p.nodes)
            rules = p.rules if shared else MemoryRules()
            partitions.append(
                Partition(
                    name=p.name,
                    ranges=merged([(i, i + 1) for i in indices]),
                    # (a partition over nodes of several sizes sizes its jobs in its smallest)
                    cores=min(cpus[i] for i in indices),
                    max_time=p.max_time,
                    max_nodes=p.max_nodes,
                    min_nodes=p.min_nodes,
                    tier=p.tier,
                    default=p.default,
                    state=p.state,
                    def_mem_per_cpu=rules.def_mem_per_cpu,
                    def_mem_per_node=rules.def_mem_per_node,
                    max_mem_per_node=rules.max_mem_per_node,
                    exclusive=rules.oversubscribe == "EXCLUSIVE",
                )
            )
        enforce = self.settings.get("EnforcePartLimits", "NO").upper()
        site = Site(
            partitions=tuple(partitions),
            over_limits="reject" if enforce in ENFORCING else "hold",
        )
        notes = [*self.key_notes, *self.sharing_notes, *resource_notes]
        if shared:
            notes += _oversubscribe_notes(self.partitions)
        notes += [
            f"{p.where.path}, line {p.where.line}: partition {p.name} spans nodes of "
            f"{', '.join(map(str, sizes))} CPUs; its jobs are sized in nodes of {sizes[0]}"
            for p in self.partitions
            if len(sizes := sorted({cpus[number[n]] for n in p.nodes})) > 1
        ]
        slurm = SlurmSettings.from_conf(
            self.path,
            self.priority,
            self.scheduler,
            self.settings,
            {p.name: p.job_factor for p in self.partitions},
            lines={key: where.line for key, where in self.lines.items()},
            billing={p.name: (p.billing_weights, p.where.line) for p in self.partitions},
        )
        return Platform(
            name=self.cluster or Path(self.path).stem,
            nodes=len(names),
            source=self.path,
            groups=tuple(groups),
            site=site,
            notes=tuple(notes) + slurm.notes,
            slurm=slurm,
            sharing=self.sharing,
        )


def _oversubscribe_notes(partitions: tuple[SlurmPartition, ...]) -> list[str]:
    """OverSubscribe=YES or FORCE (jobs sharing CPUs, with gang scheduling), read as NO: said
    once, at the first partition that gives it, naming every one."""
    shared = [p for p in partitions if p.rules.oversubscribe in ("YES", "FORCE")]
    if not shared:
        return []
    where = shared[0].where
    return [
        f"{where.path}, line {where.line}: OverSubscribe=YES or FORCE read and not simulated "
        f"(partition {', '.join(p.name for p in shared)}): read as NO, no CPU is shared by "
        "two jobs"
    ]


def _whole_nodes_notes(nodes: tuple[Nodes, ...]) -> list[str]:
    """What the nodes of a site of whole nodes (``select/linear``) say of resources inside them
    (memory, GRES), read and not simulated: every job gets whole nodes. Said once, at the
    first line that gives any."""
    given = [(line, key) for line in nodes for key, value in (
        ("RealMemory", line.real_memory), ("Gres", line.gres)) if value]  # fmt: skip
    if not given:
        return []
    keys = ", ".join(dict.fromkeys(key for _, key in given))
    where = given[0][0].where
    return [
        f"{where.path}, line {where.line}: the nodes' {keys} read and not simulated: jobs get "
        "whole nodes (SelectType=select/linear, Slurm's default: say select/cons_tres for "
        "nodes shared by CPUs, memory and GPUs)"
    ]


def read_slurm_conf(path: str | os.PathLike[str]) -> SlurmConf:
    """Reads ``path`` and the files it includes (module docstring)."""
    top = os.fspath(path)
    lines, included = read_lines(top)
    return replace(_Reader(top).read(lines), included=tuple(included))


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path
        self.node_defaults: dict[str, str] = {}
        self.partition_defaults: dict[str, str] = {}
        self.nodes: list[Nodes] = []
        self.node_owner: dict[str, Where] = {}
        self.nodesets: dict[str, tuple[list[str], str | None, Where]] = {}
        self.partition_lines: list[tuple[dict[str, str], Where]] = []
        self.settings: dict[str, str] = {}
        self.lines: dict[str, Where] = {}
        self.unknown: dict[str, Where] = {}
        self.keys = KeyNotes()
        self.top_rules = MemoryRules()
        #: names the hostlists of partitions and node sets may still give (repeats counted)
        self.names_left = _core.MAX_NODES

    def read(self, lines: list[Line]) -> SlurmConf:
        _count_nodes(lines)
        for pairs, where in lines:
            first = pairs[0][0].lower()
            if first in ("nodename", "partitionname", "nodeset"):
                self.keys.line(first, pairs, where.path, where.line)
            if first == "nodename":
                self._node_line(pairs, where)
            elif first == "partitionname":
                self._partition_line(pairs, where)
            elif first == "nodeset":
                self._nodeset_line(pairs, where)
            else:
                if first in _OTHER_LINES:  # (their keys are their own, none simulated)
                    pairs = pairs[:1]
                for key, value in pairs:
                    self.keys.top(key, where.path, where.line)
                    if key.lower() not in CANONICAL:
                        self.unknown.setdefault(key, where)
                    self.settings[_canonical(key)] = value
                    self.lines[_canonical(key)] = where
        sharing, sharing_notes = read_sharing(self.path, self.settings, self.lines)
        self.top_rules = top_rules(self.settings, self.lines, self.path)
        partitions = self._partitions()
        priority = {k: v for k, v in self.settings.items() if k.startswith("Priority")}
        scheduler = _parameters(self.settings.get("SchedulerParameters", ""))
        settings = {
            k: v
            for k, v in self.settings.items()
            if not k.startswith("Priority") and k != "SchedulerParameters"
        }
        if not self.nodes:
            raise InputError("no NodeName line: the file describes no node", path=self.path)
        return SlurmConf(
            path=self.path,
            cluster=self.settings.get("ClusterName"),
            nodes=tuple(self.nodes),
            partitions=partitions,
            priority=priority,
            scheduler=scheduler,
            settings=settings,
            unknown=self.unknown,
            lines=self.lines,
            key_notes=tuple(self.keys.notes(shared=sharing != "whole")),
            sharing=sharing,
            sharing_notes=tuple(sharing_notes),
        )

    def _node_line(self, pairs: list[tuple[str, str]], where: Where) -> None:
        values = {k.lower(): v for k, v in pairs}
        name = values["nodename"]
        if name.upper() == "DEFAULT":
            self.node_defaults.update({k: v for k, v in values.items() if k != "nodename"})
            return
        merged_values = {**self.node_defaults, **values}
        names = _hostlist(name, where, "NodeName")
        for n in names:
            first = self.node_owner.get(n)
            if first is not None:
                raise where.error(
                    f"node {n} is named twice on this line"
                    if first is where
                    else f"node {n} is already described at line {first.line} of {first.path}",
                    "NodeName",
                )
            self.node_owner[n] = where
        shape = read_shape(merged_values, where)
        self.nodes.append(
            Nodes(
                names=tuple(names),
                cpus=shape.cpus,
                real_memory=shape.real_memory,
                gres=merged_values.get("gres", ""),
                features=merged_values.get("feature", merged_values.get("features", "")),
                state=merged_values.get("state", "UNKNOWN").upper(),
                where=where,
                shape=shape,
            )
        )

    def _nodeset_line(self, pairs: list[tuple[str, str]], where: Where) -> None:
        values = {k.lower(): v for k, v in pairs}
        name = values["nodeset"]
        if "nodes" not in values and "feature" not in values:
            raise where.error(f"node set {name} names neither Nodes nor Feature", "NodeSet")
        listed = self._named(values["nodes"], where, "Nodes") if "nodes" in values else []
        self.nodesets[name] = (listed, values.get("feature"), where)

    def _partition_line(self, pairs: list[tuple[str, str]], where: Where) -> None:
        values = {k.lower(): v for k, v in pairs}
        if values["partitionname"].upper() == "DEFAULT":
            self.partition_defaults.update(
                {k: v for k, v in values.items() if k != "partitionname"}
            )
            return
        self.partition_lines.append(({**self.partition_defaults, **values}, where))

    def _partitions(self) -> tuple[SlurmPartition, ...]:
        out: list[SlurmPartition] = []
        seen: dict[str, Where] = {}
        order = {n: k for k, n in enumerate(n for line in self.nodes for n in line.names)}
        for values, where in self.partition_lines:
            name = values["partitionname"]
            if name in seen:
                raise where.error(
                    f"partition {name} is already described at line {seen[name].line} of "
                    f"{seen[name].path}",
                    "PartitionName",
                )
            seen[name] = where
            nodes = self._partition_nodes(values.get("nodes", ""), where, order)
            if not nodes:
                raise where.error(f"partition {name} has no nodes", "Nodes")
            state = values.get("state", "UP").upper()
            if state not in PARTITION_STATES:
                raise where.error(
                    f"State must be one of {', '.join(PARTITION_STATES)}, not {shown(state)}",
                    "State",
                )
            default = values.get("default", "NO").upper()
            if default not in ("YES", "NO"):
                raise where.error(f"Default must be YES or NO, not {shown(default)}", "Default")
            _duration(values, "defaulttime", where)  # (checked: not simulated)
            tier = integer(values, "prioritytier", where, 1, unlimited=INFINITE16)
            factor = integer(values, "priorityjobfactor", where, 1, unlimited=INFINITE16)
            if "priority" in values:  # (Slurm's older name: it sets both, as slurmctld reads it)
                tier = factor = integer(values, "priority", where, 1, unlimited=INFINITE16)
            rules = partition_rules(values, where, self.top_rules)
            out.append(
                SlurmPartition(
                    name=name,
                    nodes=tuple(sorted(nodes, key=order.__getitem__)),
                    max_time=_duration(values, "maxtime", where),
                    max_nodes=integer(values, "maxnodes", where, None),
                    min_nodes=max(1, integer(values, "minnodes", where, 1) or 1),
                    tier=tier or 0,
                    default=default == "YES",
                    state=PARTITION_STATES[state],
                    oversubscribe=rules.oversubscribe,
                    where=where,
                    job_factor=factor or 0,
                    rules=rules,
                    billing_weights=values.get("tresbillingweights", ""),
                )
            )
        defaults = [p.name for p in out if p.default]
        if len(defaults) > 1:
            where = next(p.where for p in out if p.name == defaults[1])
            raise where.error(
                f"two default partitions ({defaults[0]} and {defaults[1]})", "Default"
            )
        return tuple(out)

    def _partition_nodes(self, text: str, where: Where, order: dict[str, int]) -> set[str]:
        """A partition's ``Nodes``: ALL, node sets and hostlists, comma-separated; a name in
        no ``NodeName`` line refused at the first hostlist that has one."""
        if text.upper() == "ALL":
            return set(order)
        nodes: set[str] = set()
        for part in _parts(text, where):
            if part in self.nodesets:
                listed, feature, _ = self.nodesets[part]
                nodes.update(listed)
                if feature is not None:
                    nodes.update(
                        n
                        for line in self.nodes
                        if feature in line.features.split(",")
                        for n in line.names
                    )
                continue
            names = self._named(part, where, "Nodes")
            missing = [n for n in names if n not in order]
            if missing:
                raise where.error(
                    f"node {missing[0]} is in no NodeName line"
                    + (f" (and {len(missing) - 1} more of {shown(part)})" if missing[1:] else ""),
                    "Nodes",
                )
            nodes.update(names)
        return nodes

    def _named(self, text: str, where: Where, key: str) -> list[str]:
        """The names of a partition's or node set's hostlist, within what all of them may
        name in a file (``_core.MAX_NODES``, repeats counted, before expanding it)."""
        try:
            size = hostlist_size(text)
        except ValueError as exc:
            raise where.error(str(exc), key) from None
        self.names_left -= size
        if self.names_left < 0:
            raise where.error(
                f"the hostlists of partitions and node sets name more than {_core.MAX_NODES} "
                "nodes in all by this line (repeats counted): past the engine's largest machine",
                key,
            )
        return _hostlist(text, where, key)


# --- values ---------------------------------------------------------------------------------


def _count_nodes(lines: list[Line]) -> None:
    """Refuses a file whose ``NodeName`` lines describe more nodes than the engine takes, from
    their hostlists' sizes, before any is expanded (200 lines of ``a{k}n[1-99999]``, 6 KB,
    would be 20 million names)."""
    total = 0
    for pairs, where in lines:
        key, value = pairs[0]
        if key.lower() != "nodename" or value.upper() == "DEFAULT":
            continue
        try:
            total += hostlist_size(value)
        except ValueError as exc:
            raise where.error(str(exc), "NodeName") from None
        if total > _core.MAX_NODES:
            raise where.error(
                f"the NodeName lines describe {total} nodes by this one: more than the "
                f"engine's {_core.MAX_NODES}",
                "NodeName",
            )


def _canonical(key: str) -> str:
    """A key as Slurm's documentation writes it (keys are case-insensitive)."""
    return CANONICAL.get(key.lower(), key)


def _parameters(text: str) -> dict[str, str]:
    """``SchedulerParameters``: comma-separated ``name=value`` or flags."""
    out = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, _, value = item.partition("=")
        out[name] = value
    return out


def _parts(text: str, where: Where) -> list[str]:
    """Comma-separated hostlists and node sets (commas inside brackets kept)."""
    try:
        return [p for p in (s.strip() for s in split_hostlists(text)) if p]
    except ValueError as exc:
        raise where.error(str(exc), "Nodes") from None


def _hostlist(text: str, where: Where, key: str) -> list[str]:
    """The names of a hostlist, repeats kept (a node named twice is the caller's to refuse)."""
    try:
        names = hostlist_names(text)
    except ValueError as exc:
        raise where.error(str(exc), key) from None
    if not names:
        raise where.error("names no node", key)
    return names


def _duration(values: dict[str, str], key: str, where: Where) -> float | None:
    text = values.get(key)
    if text is None:
        return None
    try:
        return slurm_duration(text)
    except ValueError as exc:
        reason = (
            str(exc)
            if "past the engine" in str(exc)
            else (
                "must be Slurm time (minutes, HH:MM:SS, D-HH:MM:SS or UNLIMITED), "
                f"not {shown(text)}"
            )
        )
        raise where.error(reason, KEY_NAMES.get(key, key)) from None


def _groups(lines: tuple[Nodes, ...]) -> list[NodeGroup]:
    """The node groups of a site of whole nodes: runs of consecutive nodes alike (CPUs,
    memory, Gres, features), named after their CPUs and Gres (``cpus32``, ``cpus32-gpu:4``),
    numbered when names repeat (:func:`~hpcsched.site.slurm.sharing.shared_groups` where jobs
    share nodes)."""
    runs: list[tuple[tuple[int, int | None, str, str], int]] = []
    for line in lines:
        kind = (line.cpus, line.real_memory, line.gres, line.features)
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1] + len(line.names))
        else:
            runs.append((kind, len(line.names)))
    groups, used = [], set()
    for (cpus, _, gres, _), count in runs:
        base = f"cpus{cpus}" + (f"-{gres}" if gres else "")
        name, k = base, 1
        while name in used:
            k += 1
            name = f"{base}-{k}"
        used.add(name)
        groups.append(NodeGroup(name=name, nodes=count, power=None, cores=cpus))
    return groups
