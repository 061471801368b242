"""How the jobs of a slurm.conf's site share its nodes, as Slurm 22.05 decides it
(docs/formats.md, "slurm.conf"; docs/semantics.md, "Resources inside nodes"):

- ``SelectType``: ``select/linear``, Slurm's default, gives every job whole nodes (the
  platform's ``sharing`` is ``whole``), and so does ``select/cray_aries`` (linear beneath,
  unless told otherwise: said in a note); ``select/cons_tres`` and ``select/cons_res`` share
  nodes by CPUs, memory and generic resources.
- ``SelectTypeParameters`` (``src/common/slurm_selecttype_info.c:parse_select_type_param``):
  ``CR_CPU``, ``CR_CPU_Memory``, ``CR_Core``, ``CR_Core_Memory`` are the sharing of the same
  name; ``CR_Socket`` and ``CR_Socket_Memory`` are read as ``cr_core`` and ``cr_core_memory``
  (sockets are not modelled: said in a note); none at all is ``CR_Core_Memory``, the default
  of both plugins (``cons_common.c:select_p_node_init``). Their other flags are said as not
  simulated. An unknown value, two resources, ``CR_ONE_TASK_PER_CORE`` with ``CR_CPU*`` and,
  for cons_tres and cons_res, none of CPU, Core or Socket (slurmctld stops) are refused.
- Partitions (``src/common/read_config.c:_parse_partitionname``, ``job_mgr.c``): a job's
  default memory is its partition's ``DefMemPerNode``, else its ``DefMemPerCPU``, else the
  slurm.conf's own (the top-level ``DefMemPerNode`` or ``DefMemPerCPU``); 0 is no default, but
  a partition's ``DefMemPerCPU=0`` keeps the top-level one out. ``MaxMemPerNode`` likewise
  (read, not simulated yet: a run says so). ``OverSubscribe`` (or ``Shared``): ``NO``,
  ``EXCLUSIVE`` (whole nodes), ``YES``, ``YES:n``, ``FORCE``, ``FORCE:n`` (read as ``NO``, said).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hpcsched import _core
from hpcsched.exceptions import InputError, shown, unknown_name
from hpcsched.site.machine import NodeGroup
from hpcsched.site.slurm.conf_lines import Where
from hpcsched.site.slurm.nodes import KEY_NAMES, Nodes, NodeShape, integer
from hpcsched.site.slurm.text import UNLIMITED

#: ``SelectType`` values, and those sharing nodes by resources.
SELECT_TYPES = ("select/linear", "select/cons_tres", "select/cons_res", "select/cray_aries")
CONSUMABLE = ("select/cons_tres", "select/cons_res")
#: ``SelectTypeParameters``' resources (one at most), with the sharing each is read as.
RESOURCES = {
    "cr_cpu": "cr_cpu",
    "cr_cpu_memory": "cr_cpu_memory",
    "cr_core": "cr_core",
    "cr_core_memory": "cr_core_memory",
    "cr_socket": "cr_core",
    "cr_socket_memory": "cr_core_memory",
    "cr_memory": "",
}
#: ``SelectTypeParameters``' flags (``CR_ALLOCATE_FULL_SOCKET`` is deprecated and sets none).
FLAGS = (
    "other_cons_res",
    "other_cons_tres",
    "cr_allocate_full_socket",
    "cr_one_task_per_core",
    "cr_core_default_dist_block",
    "cr_lln",
    "cr_pack_nodes",
)
#: Every ``SelectTypeParameters`` value as slurm.conf(5) writes it.
_NAMES = (
    "CR_CPU", "CR_CPU_Memory", "CR_Core", "CR_Core_Memory", "CR_Socket", "CR_Socket_Memory",
    "CR_Memory", "OTHER_CONS_RES", "OTHER_CONS_TRES", "CR_ALLOCATE_FULL_SOCKET",
    "CR_ONE_TASK_PER_CORE", "CR_CORE_DEFAULT_DIST_BLOCK", "CR_LLN", "CR_Pack_Nodes",
)  # fmt: skip
#: What cons_tres and cons_res use without ``SelectTypeParameters``.
DEFAULT_SHARING = "cr_core_memory"
#: ``OverSubscribe`` values: a word, and for YES and FORCE a count of jobs after a colon.
_OVERSUBSCRIBE = re.compile(r"(NO|EXCLUSIVE|YES|FORCE)(?::([0-9]{1,9}))?", re.IGNORECASE)


def read_sharing(
    path: str, settings: dict[str, str], lines: dict[str, Where]
) -> tuple[str, list[str]]:
    """The platform's ``sharing`` from the top-level settings (``lines``: where each is), and
    the notes on what is read differently or not simulated."""

    def fault(key: str, message: str) -> InputError:
        where = lines.get(key)
        return where.error(message, key) if where else InputError(message, path=path, field=key)

    def at(key: str) -> str:
        where = lines.get(key)
        return f"{where.path}, line {where.line}" if where else path

    written = settings.get("SelectType", "select/linear")
    select = written.strip().lower()
    if select not in SELECT_TYPES:
        raise fault("SelectType", unknown_name("plugin", written.strip(), SELECT_TYPES))
    text = settings.get("SelectTypeParameters")
    resource, flags = (None, []) if text is None else _parameters(text, fault)
    if select not in CONSUMABLE:
        if select == "select/cray_aries":
            return "whole", [
                f"{at('SelectType')}: select/cray_aries is read as the select/linear it runs on "
                "by default: jobs get whole nodes"
            ]
        return "whole", []
    notes = []
    if resource is None:
        if [f for f in flags if f.lower() != "cr_allocate_full_socket"]:
            raise fault("SelectTypeParameters", _NO_RESOURCE)
        notes.append(
            f"{at('SelectType')}: {written.strip()} without SelectTypeParameters: Slurm 22.05's "
            "default CR_Core_Memory (cores and memory are resources)"
        )
        return DEFAULT_SHARING, notes
    sharing = RESOURCES[resource.lower()]
    if not sharing:
        raise fault("SelectTypeParameters", _NO_RESOURCE)
    if resource.lower().startswith("cr_socket"):
        notes.append(
            f"{at('SelectTypeParameters')}: {resource} is read as {_WRITTEN_ALL[sharing]} (sockets "
            "are not modelled: jobs share a socket's cores here, never a core)"
        )
    unused = [f for f in flags if f.lower() != "cr_allocate_full_socket"]
    if unused:
        notes.append(
            f"{at('SelectTypeParameters')}: SelectTypeParameters read and not simulated "
            f"(ignored): {', '.join(unused)}"
        )
    return sharing, notes


_NO_RESOURCE = (
    "names none of CR_CPU, CR_Core, CR_Socket (with or without _Memory): slurmctld stops on it "
    "with select/cons_tres and select/cons_res"
)


def _parameters(text: str, fault: Callable[[str, str], InputError]) -> tuple[str | None, list[str]]:
    """``SelectTypeParameters``' resource (None: none given) and flags, as written."""
    resources: list[str] = []
    flags: list[str] = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        lower = item.lower()
        if lower in RESOURCES:
            resources.append(item)
        elif lower in FLAGS:
            flags.append(item)
        else:
            raise fault("SelectTypeParameters", unknown_name("value", item, _NAMES))
    if len(resources) > 1:
        raise fault(
            "SelectTypeParameters",
            f"names {' and '.join(resources)}: one resource at most (slurmctld stops on it)",
        )
    lowered = {f.lower() for f in flags}
    if (
        resources
        and resources[0].lower().startswith("cr_cpu")
        and "cr_one_task_per_core" in lowered
    ):
        raise fault(
            "SelectTypeParameters",
            "CR_ONE_TASK_PER_CORE does not go with CR_CPU* (slurmctld stops on it): use CR_Core*",
        )
    return (resources[0] if resources else None), flags


@dataclass(frozen=True)
class MemoryRules:
    """A partition's default memory (MB, per CPU or per node; None: none, a job asking no
    memory gets its nodes' whole memory) and cap per node, and whether it has every job take
    whole nodes (OverSubscribe=EXCLUSIVE)."""

    def_mem_per_cpu: int | None = None
    def_mem_per_node: int | None = None
    max_mem_per_node: int | None = None
    oversubscribe: str = "NO"


def top_rules(settings: dict[str, str], lines: dict[str, Where], path: str) -> MemoryRules:
    """The top-level ``DefMemPerCPU``, ``DefMemPerNode``, ``MaxMemPerNode``, ``MaxMemPerCPU``:
    the defaults of partitions that give none (checked whatever the sharing), each named at
    its own line."""
    values = {k.lower(): v for k, v in settings.items() if k.lower() in _MEMORY_KEYS}

    def where_of(key: str) -> Where:
        return lines.get(KEY_NAMES[key]) or Where(path, 0)

    default, cap = _memory(values, where_of, None)
    return MemoryRules(*default, cap)


def partition_rules(values: dict[str, str], where: Where, top: MemoryRules) -> MemoryRules:
    """A ``PartitionName`` line's memory rules and OverSubscribe (its keys lower case,
    ``PartitionName=DEFAULT`` merged), ``top`` where it gives none."""
    integer(values, "maxcpuspernode", where, None)  # (checked: not simulated)
    default, cap = _memory(values, lambda _: where, top)
    return MemoryRules(*default, cap, _oversubscribe(values, where))


#: The memory keys of a partition or the top level, lower case.
_MEMORY_KEYS = ("defmempercpu", "defmempernode", "maxmempernode", "maxmempercpu")


def _memory(
    values: dict[str, str], where_of: Callable[[str], Where], top: MemoryRules | None
) -> tuple[tuple[int | None, int | None], int | None]:
    """(per CPU, per node) default memory and the cap per node of one line's keys (or the top
    level's: ``top`` None), each key's faults at ``where_of(key)``."""
    for key, other in (("defmempercpu", "defmempernode"), ("maxmempercpu", "maxmempernode")):
        if key in values and other in values:
            raise where_of(key).error(
                f"{KEY_NAMES[key]} and {KEY_NAMES[other]} exclude each other (slurmctld logs "
                f"an error and ignores {KEY_NAMES[key]}): give one",
                KEY_NAMES[key],
            )
    sizes = {key: _megabytes(values, key, where_of(key)) for key in _MEMORY_KEYS}
    default: tuple[int | None, int | None]
    if sizes["defmempernode"]:
        default = (None, sizes["defmempernode"])
    elif "defmempercpu" in values:  # (0 too: Slurm's flag then hides the top-level default)
        default = (sizes["defmempercpu"] or None, None)
    else:
        default = (top.def_mem_per_cpu, top.def_mem_per_node) if top else (None, None)
    cap = sizes["maxmempernode"]
    if not cap and "maxmempercpu" not in values and top is not None:
        cap = top.max_mem_per_node
    return default, cap or None


def _megabytes(values: dict[str, str], key: str, where: Where) -> int | None:
    """A memory size in MB from 0 to the engine's largest (``MaxMem*=UNLIMITED``: none)."""
    text = values.get(key)
    if text is None:
        return None
    if text.strip().upper() in UNLIMITED:
        if key.startswith("max"):
            return None
        raise where.error(f"must be a whole number of MB, not {shown(text)}", KEY_NAMES[key])
    return integer(values, key, where, None, _core.MAX_MEMORY) or 0


def _oversubscribe(values: dict[str, str], where: Where) -> str:
    """``OverSubscribe`` (or ``Shared``) as one word, NO by default: ``YES:1``, ``FORCE:0``
    and other values slurmctld cannot read or resets are refused."""
    key = "oversubscribe" if "oversubscribe" in values else "shared"
    text = values.get(key, "NO").strip()
    match = _OVERSUBSCRIBE.fullmatch(text)
    word = match[1].upper() if match else ""
    least = {"YES": 2, "FORCE": 1}.get(word)
    if (
        match is None
        or (match[2] is not None and least is None)
        or (match[2] is not None and least is not None and int(match[2]) < least)
    ):
        raise where.error(
            f"must be NO, EXCLUSIVE, YES, YES:n (n > 1), FORCE or FORCE:n (n > 0), not "
            f"{shown(text)}",
            "OverSubscribe" if key == "oversubscribe" else "Shared",
        )
    return word


def shared_groups(
    lines: Sequence[Nodes], sharing: str, gres_types: str | None, types_at: str
) -> tuple[list[NodeGroup], list[int], list[str]]:
    """The node groups of a site whose jobs share nodes: runs of consecutive nodes alike (CPUs
    jobs may use, CPUs per core, memory, generic resources, weight, features), named after
    their CPUs and generic resources (``cpus8-gpu:2``), numbered when names repeat; each
    line's CPUs jobs may use; and the notes on what is read differently (``types_at``: where
    ``GresTypes`` is, for them)."""
    memory_counts = sharing.endswith("_memory")
    types = {t.strip() for t in (gres_types or "").split(",") if t.strip()}
    left_out: dict[str, Where] = {}
    no_consume: dict[str, Where] = {}
    no_memory: list[Where] = []
    runs: list[tuple[tuple[NodeGroup, str], NodeGroup]] = []
    cpus_of = []
    for line in lines:
        shape, where = line.resources, line.where
        _check_cpus(shape, where)
        if shape.real_memory is None and memory_counts:
            no_memory.append(where)
        memory = shape.memory if shape.real_memory is not None or memory_counts else 0
        if memory > _core.MAX_MEMORY:
            raise where.error(
                f"{memory} MB a node is past the engine's {_core.MAX_MEMORY} MB", "RealMemory"
            )
        gres = []
        for kind, count in shape.gres:
            name = kind.split(":")[0]
            if name in shape.no_consume:
                no_consume.setdefault(name, where)
            elif name not in types:
                left_out.setdefault(name, where)
            elif count > _core.MAX_PER_NODE:
                raise where.error(
                    f"{count} {kind} a node is past the engine's {_core.MAX_PER_NODE}", "Gres"
                )
            else:
                gres.append((kind, count))
        cpus_of.append(shape.usable_cpus)
        group = NodeGroup(
            name="",
            nodes=len(line.names),
            power=None,
            cores=shape.usable_cpus,
            threads_per_core=shape.threads_per_core,
            memory=memory,
            gres=tuple(gres),
            weight=shape.weight,
        )
        alike = (replace(group, nodes=0), line.features)
        if runs and runs[-1][0] == alike:
            runs[-1] = (alike, replace(group, nodes=runs[-1][1].nodes + group.nodes))
        else:
            runs.append((alike, group))
    groups, used = [], set()
    for _, group in runs:
        listed = ",".join(f"{kind}:{units}" for kind, units in group.gres)
        base = f"cpus{group.cores}" + (f"-{listed}" if listed else "")
        name, k = base, 1
        while name in used:
            k += 1
            name = f"{base}-{k}"
        used.add(name)
        groups.append(replace(group, name=name))
    notes = _resource_notes(sharing, no_memory, left_out, no_consume, gres_types, types_at)
    return groups, cpus_of, notes


def _check_cpus(shape: NodeShape, where: Where) -> None:
    """CPUs slurmctld's cons_tres takes (its cores or its threads) and the engine too."""
    if shape.cpus not in (shape.cores, shape.cores * shape.threads):
        raise where.error(
            f"{shape.cpus} CPUs are the node's sockets, neither its cores ({shape.cores}) nor "
            f"its threads ({shape.cores * shape.threads}): slurmctld stops on it with "
            "select/cons_tres and select/cons_res",
            "CPUs",
        )
    if shape.usable_cpus < 1:
        raise where.error("keeps every core of the node from jobs", "CpuSpecList")
    if shape.usable_cpus > _core.MAX_PER_NODE:
        raise where.error(
            f"{shape.usable_cpus} CPUs a node are past the engine's {_core.MAX_PER_NODE} where "
            "jobs share nodes",
            "CPUs",
        )


def _resource_notes(
    sharing: str,
    no_memory: list[Where],
    left_out: dict[str, Where],
    no_consume: dict[str, Where],
    gres_types: str | None,
    types_at: str,
) -> list[str]:
    notes = []
    if no_memory:
        first = no_memory[0]
        more = f" (and {len(no_memory) - 1} more NodeName lines)" if no_memory[1:] else ""
        notes.append(
            f"{first.path}, line {first.line}: RealMemory not given{more}: Slurm's default of 1 "
            f"MB a node; memory is a resource ({_WRITTEN_ALL[sharing]}), so a job asking for "
            "memory fits no such node (one asking none takes its 1 MB)"
        )
    for name, where in left_out.items():
        types = f"GresTypes={gres_types} ({types_at})" if gres_types is not None else "GresTypes"
        notes.append(
            f"{where.path}, line {where.line}: Gres {name} is not in {types}: Slurm leaves it "
            "out of the nodes, and so does the simulation (a job asking for it fits nowhere)"
        )
    for name, where in no_consume.items():
        notes.append(
            f"{where.path}, line {where.line}: Gres {name} is no_consume: not simulated (left "
            "out of the nodes: a job asking for it fits nowhere)"
        )
    return notes


#: Each sharing as slurm.conf(5) writes it.
_WRITTEN_ALL = {
    "cr_cpu": "CR_CPU",
    "cr_cpu_memory": "CR_CPU_Memory",
    "cr_core": "CR_Core",
    "cr_core_memory": "CR_Core_Memory",
}
