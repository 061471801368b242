"""What one ``NodeName`` line says of its nodes' resources, read as slurmctld 22.05 reads it
(``src/common/read_config.c:_parse_nodename``, ``src/common/node_conf.c:_init_node_record``,
``src/common/gres.c:_get_gres_cnt``; docs/semantics.md, "A site from slurm.conf"):

- **Sockets.** ``Sockets`` is the node's sockets in all (Boards are not multiplied in: the code
  reads it so, though slurm.conf(5) says Sockets is per board when Boards is given), else Boards
  x SocketsPerBoard, else CPUs / (CoresPerSocket x ThreadsPerCore) where that is a whole
  number, else Boards. Each count is 1 by default.
- **CPUs.** ``CPUs`` (``Procs``), else Sockets x CoresPerSocket x ThreadsPerCore. Given, it must
  be the sockets, the cores (Sockets x CoresPerSocket) or the threads.
- **Threads per core as allocated.** 1 where the CPUs are at most the cores (each CPU is a
  core: ``CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2`` allocates cores), else
  ThreadsPerCore.
- **Specialized cores.** ``CoreSpecCount``, or the cores holding the CPUs ``CpuSpecList`` names;
  the CPUs jobs may use are the CPUs less these cores' threads.
- **Memory.** ``RealMemory`` (1 MB when not given), less ``MemSpecLimit``.
- **Gres.** ``name[:type][:no_consume][:count][(S:sockets)]``, comma-separated; the count may
  end in K, M, G, T or P (times 1024 each: ``kb``, ``mb``... are powers of 1000), 1 when left
  out; the same kind twice adds up.
- **Weight.** 1 by default, ``INFINITE`` (and 4294967295) the highest usable, 4294967294.

What slurmctld logs as an error and corrects (CPUs that match no count, CoreSpecCount of
every core, MemSpecLimit of all the memory, a CpuSpecList it cannot read, both CoreSpecCount
and CpuSpecList, both Sockets and SocketsPerBoard, fewer Sockets than Boards) and what it
stops on is an :class:`InputError` naming the file, the line and the key, as a size of 0 is;
so is a Gres it cannot read and one slurm.conf(5) forbids (a name untyped and typed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hpcsched import _core
from hpcsched.exceptions import shown
from hpcsched.site.slurm.conf_lines import Where
from hpcsched.site.slurm.text import UNLIMITED, whole_number

#: ``RealMemory``'s largest value (MB), Slurm's 64-bit field.
MAX_MEMORY_READ = 2**64 - 2
#: Slurm's 32-bit ``INFINITE``; a node ``Weight`` of it is read one less (the highest usable).
INFINITE32 = 0xFFFF_FFFF
#: Multipliers of a Gres count's suffix (``src/common/slurm_protocol_defs.c:suffix_mult``).
_SUFFIXES = {
    "": 1,
    **{p: 1024**k for k, p in enumerate("kmgtp", start=1)},
    **{f"{p}ib": 1024**k for k, p in enumerate("kmgtp", start=1)},
    **{f"{p}b": 1000**k for k, p in enumerate("kmgtp", start=1)},
}
_GRES_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_GRES_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_GRES_COUNT = re.compile(r"([0-9]{1,20})([A-Za-z]*)")
_SOCKETS = re.compile(r"\([^()]*\)$")
_CPU_RANGE = re.compile(r"([0-9]{1,9})(?:-([0-9]{1,9})(?::([0-9]{1,9}))?)?")


@dataclass(frozen=True)
class NodeShape:
    """A node's resources as slurmctld counts them: ``cpus`` (Slurm's CPUs), the ``sockets``
    and ``cores`` of the node in all, ``threads`` (ThreadsPerCore), ``spec_cores`` (cores kept
    for the system), ``real_memory`` (None: not given, Slurm's 1 MB), ``mem_spec``
    (MemSpecLimit), ``gres`` by kind (``gpu``, ``gpu:a100``; ``no_consume`` kinds apart) and
    ``weight``."""

    cpus: int
    sockets: int = 1
    cores: int = 1
    threads: int = 1
    spec_cores: int = 0
    real_memory: int | None = None
    mem_spec: int = 0
    gres: tuple[tuple[str, int], ...] = ()
    no_consume: tuple[str, ...] = ()
    weight: int = 1

    @property
    def threads_per_core(self) -> int:
        """CPUs per core as Slurm allocates them (``node_conf.c:_init_node_record``'s tpc)."""
        return 1 if self.cores >= self.cpus else self.threads

    @property
    def usable_cpus(self) -> int:
        """The CPUs jobs may use: the specialized cores' CPUs left out (``cpus_efctv``)."""
        return self.cpus - self.spec_cores * self.threads_per_core

    @property
    def memory(self) -> int:
        """The memory (MB) jobs may use: RealMemory (1 when not given) less MemSpecLimit."""
        return (1 if self.real_memory is None else self.real_memory) - self.mem_spec


@dataclass(frozen=True)
class Nodes:
    """One ``NodeName`` line, its defaults applied: its nodes' names, CPUs (Slurm's count),
    RealMemory (None: not given), Gres and features as written, state, and resources."""

    names: tuple[str, ...]
    cpus: int
    real_memory: int | None
    gres: str
    features: str
    state: str
    where: Where
    shape: NodeShape | None = None

    @property
    def resources(self) -> NodeShape:
        return self.shape if self.shape is not None else NodeShape(cpus=self.cpus)


def read_shape(values: dict[str, str], where: Where) -> NodeShape:
    """A ``NodeName`` line's resources (its keys lower case, defaults merged)."""
    boards = _size(values, "boards", where)
    cores = _size(values, "corespersocket", where)
    threads = _size(values, "threadspercore", where)
    cpus_key = next((k for k in ("cpus", "procs") if k in values), None)
    given = _size(values, cpus_key, where) if cpus_key else None
    if "sockets" in values and "socketsperboard" in values:
        raise where.error(
            "Sockets and SocketsPerBoard exclude each other (slurmctld logs an error and uses "
            "SocketsPerBoard): give one",
            "Sockets",
        )
    if "sockets" in values:
        sockets = _size(values, "sockets", where)
    elif "socketsperboard" in values:
        sockets = boards * _size(values, "socketsperboard", where)
    elif given is not None and given >= cores * threads and given % (cores * threads) == 0:
        sockets = given // (cores * threads)
    else:
        sockets = boards
    factors = (
        ["sockets"]
        if "sockets" in values
        else ["boards", "socketsperboard"]
        if "socketsperboard" in values or given is None
        else ["boards"]
    )
    _check_product(
        values, where, [*factors, "corespersocket", "threadspercore"], sockets * cores * threads
    )
    if sockets < boards:
        raise where.error(
            f"Sockets {sockets} are fewer than Boards {boards} (slurmctld logs an error and "
            "resets Boards to 1; Sockets counts the node's sockets in all, SocketsPerBoard "
            "those of a board)",
            "Sockets",
        )
    counts = (sockets, sockets * cores, sockets * cores * threads)
    if given is not None and given not in counts:
        raise where.error(
            f"{given} CPUs are neither the sockets ({counts[0]}), the cores ({counts[1]}) nor "
            f"the threads ({counts[2]}) of Sockets x CoresPerSocket x ThreadsPerCore "
            f"(slurmctld logs an error and resets CPUs to {counts[2]})",
            KEY_NAMES[cpus_key or "cpus"],
        )
    cpus = counts[2] if given is None else given
    shape = NodeShape(cpus=cpus, sockets=sockets, cores=sockets * cores, threads=threads)
    spec = _spec_cores(values, shape, where)
    real = integer(values, "realmemory", where, None, MAX_MEMORY_READ, minimum=1)
    mem_spec = integer(values, "memspeclimit", where, 0, MAX_MEMORY_READ) or 0
    if mem_spec and mem_spec >= (1 if real is None else real):
        raise where.error(
            f"MemSpecLimit {mem_spec} MB is all of the node's RealMemory "
            f"({1 if real is None else real} MB{' by default' if real is None else ''}): "
            "slurmctld logs an error and resets it to 0",
            "MemSpecLimit",
        )
    weight = integer(values, "weight", where, 1, INFINITE32, unlimited=INFINITE32)
    gres, no_consume = node_gres(values.get("gres", ""), where)
    return NodeShape(
        cpus=cpus,
        sockets=sockets,
        cores=sockets * cores,
        threads=threads,
        spec_cores=spec,
        real_memory=real,
        mem_spec=mem_spec,
        gres=gres,
        no_consume=no_consume,
        weight=min(weight if weight is not None else INFINITE32, INFINITE32 - 1),
    )


def _check_product(values: dict[str, str], where: Where, factors: list[str], product: int) -> None:
    """A node's threads, multiplied, at most the engine's 32-bit count."""
    if product > _core.MAX_COUNT:
        given = [KEY_NAMES[k] for k in factors if k in values]
        raise where.error(
            f"{' x '.join(given)} is {product} CPUs a node: at most {_core.MAX_COUNT}", given[-1]
        )


def _spec_cores(values: dict[str, str], shape: NodeShape, where: Where) -> int:
    """Cores kept for the system: ``CoreSpecCount``, or the cores of ``CpuSpecList``'s CPUs
    (``node_conf.c:_convert_cpu_spec_list``: CPU i is on core i / threads per core)."""
    count = integer(values, "corespeccount", where, 0) or 0
    listed = values.get("cpuspeclist")
    if count and listed is not None:
        raise where.error(
            "CoreSpecCount and CpuSpecList exclude each other (slurmctld logs an error and "
            "resets CoreSpecCount to 0): give one",
            "CoreSpecCount",
        )
    if count >= shape.cores:
        raise where.error(
            f"CoreSpecCount {count} keeps every one of the node's {shape.cores} cores from jobs "
            "(slurmctld logs an error and resets it to 1)",
            "CoreSpecCount",
        )
    if listed is None:
        return count
    cpus = _cpu_list(listed, shape.cpus, where)
    return len({cpu // shape.threads_per_core for cpu in cpus})


def _cpu_list(text: str, cpus: int, where: Where) -> set[int]:
    """The CPU ids of a ``CpuSpecList`` (``0-3,8``, ``1-17:4``), each below ``cpus``."""
    found: set[int] = set()
    for item in text.split(","):
        match = _CPU_RANGE.fullmatch(item.strip())
        if match is None:
            raise where.error(
                f"{shown(item)} is not a CPU id or range (0-3, 8, 1-17:4): slurmctld logs an "
                "error and ignores the list",
                "CpuSpecList",
            )
        first = int(match[1])
        last = int(match[2] or first)
        step = int(match[3] or 1)
        if last < first or step < 1 or last >= cpus:
            raise where.error(
                f"{shown(item)} is not within the CPUs 0-{cpus - 1} of the node: slurmctld "
                "logs an error and ignores the list",
                "CpuSpecList",
            )
        found.update(range(first, last + 1, step))
    return found


def node_gres(text: str, where: Where) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
    """A node's ``Gres``: the units of each kind (``gpu``, ``gpu:a100``), in the order first
    given, and the names marked ``no_consume``."""
    counts: dict[str, int] = {}
    typed: dict[str, bool] = {}  # each name: given with a type or not
    tokens: dict[str, int] = {}  # each name: how many times given
    alone: dict[str, str] = {}  # the names given without a type or count, and how
    no_consume: list[str] = []
    for token in filter(None, text.split(",")):
        parts = _SOCKETS.sub("", token).split(":")
        name, count = parts[0], 1
        if len(parts) > 1 and parts[-1][:1].isascii() and parts[-1][:1].isdigit():
            count = _gres_count(parts.pop(), token, where)
        flags = [p for p in parts[1:] if p.lower() == "no_consume"]
        types = [p for p in parts[1:] if p.lower() != "no_consume"]
        if (
            not _GRES_NAME.fullmatch(name)
            or len(types) > 1
            or len(flags) > 1
            or not all(_GRES_TYPE.fullmatch(t) for t in types)
        ):
            raise where.error(
                f"{shown(token)} is not a generic resource of Slurm 22.05's form "
                "name[:type][:no_consume][:count] (gpu:2, gpu:a100:4, gpu:4(S:0-1))",
                "Gres",
            )
        if typed.setdefault(name, bool(types)) != bool(types):
            raise where.error(
                f"{name} is given both with and without a type: slurm.conf(5) forbids it",
                "Gres",
            )
        tokens[name] = tokens.get(name, 0) + 1
        if ":" not in _SOCKETS.sub("", token):
            alone.setdefault(name, token)
        if name in alone and tokens[name] > 1:
            raise where.error(
                f"{name} is given alone ({shown(alone[name])}) and again: Slurm then counts one "
                f"{name} in all; give its count once",
                "Gres",
            )
        if flags:
            no_consume.append(name)
        kind = f"{name}:{types[0]}" if types else name
        counts[kind] = counts.get(kind, 0) + count
    return tuple(counts.items()), tuple(dict.fromkeys(no_consume))


def _gres_count(text: str, token: str, where: Where) -> int:
    match = _GRES_COUNT.fullmatch(text)
    unit = _SUFFIXES.get(match[2].lower()) if match else None
    if match is None or unit is None:
        raise where.error(
            f"{shown(token)}: the count {shown(text)} is not a number with an optional K, M, "
            "G, T or P",
            "Gres",
        )
    count: int = int(match[1]) * unit
    if count > 2**64 - 1:
        raise where.error(f"{shown(token)}: a count past Slurm's 64 bits", "Gres")
    return count


def integer(
    values: dict[str, str],
    key: str,
    where: Where,
    default: int | None,
    maximum: int = _core.MAX_COUNT,
    *,
    unlimited: int | None = None,
    minimum: int = 0,
) -> int | None:
    """A count from ``minimum`` to ``maximum`` (the engine's 32-bit counts by default); Slurm's
    UNLIMITED / INFINITE is ``unlimited`` (None: no limit)."""
    text = values.get(key)
    if text is None:
        return default
    if text.strip().upper() in UNLIMITED:
        return unlimited
    try:
        return whole_number(text, maximum, minimum)
    except ValueError as exc:
        raise where.error(str(exc), KEY_NAMES.get(key, key)) from None


def _size(values: dict[str, str], key: str, where: Where) -> int:
    """A node's count of CPUs, boards, sockets, cores or threads (1 when not given): 0 is
    refused (slurmctld logs an error and reads 1; it would not be one CPU)."""
    if key not in values:
        return 1
    text = values[key].strip()
    count = None if text.strip("0") == "" else integer(values, key, where, 1, minimum=1)
    if count is None:
        raise where.error(f"must be at least 1, not {shown(text)}", KEY_NAMES[key])
    return count


#: The keys as slurm.conf(5) writes them, by their lower case.
KEY_NAMES = {
    "maxtime": "MaxTime",
    "defaulttime": "DefaultTime",
    "maxnodes": "MaxNodes",
    "minnodes": "MinNodes",
    "prioritytier": "PriorityTier",
    "priorityjobfactor": "PriorityJobFactor",
    "priority": "Priority",
    "realmemory": "RealMemory",
    "memspeclimit": "MemSpecLimit",
    "corespeccount": "CoreSpecCount",
    "cpuspeclist": "CpuSpecList",
    "weight": "Weight",
    "cpus": "CPUs",
    "procs": "Procs",
    "boards": "Boards",
    "socketsperboard": "SocketsPerBoard",
    "sockets": "Sockets",
    "corespersocket": "CoresPerSocket",
    "threadspercore": "ThreadsPerCore",
    "defmempercpu": "DefMemPerCPU",
    "defmempernode": "DefMemPerNode",
    "maxmempernode": "MaxMemPerNode",
    "maxmempercpu": "MaxMemPerCPU",
    "maxcpuspernode": "MaxCPUsPerNode",
}
