"""A site from Slurm's own configuration file: ``slurm.conf`` as slurmctld reads it.

What is read (docs/formats.md, "slurm.conf"): ``NodeName`` lines (hostlist expressions, CPUs or
Sockets x CoresPerSocket x ThreadsPerCore, RealMemory, Gres, Feature, State), ``PartitionName``
lines (Nodes, MaxTime, MaxNodes, MinNodes, PriorityTier, Default, State, OverSubscribe),
``NodeSet`` lines (named node sets partitions may use), ``NodeName=DEFAULT`` and
``PartitionName=DEFAULT`` lines (defaults for the lines after them), ``Include`` (``%c`` is the
cluster's name; a relative path is taken from the top file's folder; a wildcard includes
every file it matches, in name order), every ``Priority*``
setting and ``SchedulerParameters``. Keys are case-insensitive, ``#`` starts a comment, values
may be quoted. Every other key Slurm knows is kept as written; a key it does not know is kept
too and reported once (first file and line). A line that cannot be read is an
:class:`InputError` naming the file, the line and the key.

:meth:`SlurmConf.platform` is the site as hpcsched models it: the nodes in the file's order,
node groups of consecutive nodes alike (CPUs, memory, Gres, features), the partitions over them
with their limits, tiers and states; ``EnforcePartLimits`` decides whether a job over a
partition's limits is refused at submission (``ALL``, ``ANY``, ``YES``) or left pending
(``NO``, Slurm's default).
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path

from hpcsched.exceptions import InputError, shown
from hpcsched.platform import NodeGroup, Platform
from hpcsched.site import Partition, Site, merged
from hpcsched.slurm_settings import SlurmSettings
from hpcsched.slurm_text import UNLIMITED, expand_hostlist, slurm_duration

#: The top-level keys of slurm.conf in Slurm 22.05 (slurm.conf(5), "PARAMETERS").
_KEY_NAMES_TEXT = """
    AccountingStorageBackupHost AccountingStorageEnforce AccountingStorageExternalHost
    AccountingStorageHost AccountingStorageParameters AccountingStoragePass AccountingStoragePort
    AccountingStorageTRES AccountingStorageType AccountingStorageUser AccountingStoreFlags
    AcctGatherEnergyType AcctGatherFilesystemType AcctGatherInterconnectType AcctGatherNodeFreq
    AcctGatherProfileType AllowSpecResourcesUsage AuthAltParameters AuthAltTypes AuthInfo AuthType
    BackupAddr BackupController BatchStartTimeout BcastExclude BcastParameters BurstBufferType
    CheckGhalQuiesce CliFilterPlugins ClusterName CommunicationParameters CompleteWait ControlAddr
    ControlMachine CoreSpecPlugin CpuFreqDef CpuFreqGovernors CredType DebugFlags DefCpuPerGPU
    DefMemPerCPU DefMemPerGPU DefMemPerNode DependencyParameters DisableRootJobs EioTimeout
    EnforcePartLimits Epilog EpilogMsgTime EpilogSlurmctld ExtSensorsFreq ExtSensorsType
    FairShareDampeningFactor FederationParameters FirstJobId GetEnvTimeout GpuFreqDef GresTypes
    GroupUpdateForce GroupUpdateTime HealthCheckInterval HealthCheckNodeState HealthCheckProgram
    InactiveLimit InteractiveStepOptions JobAcctGatherFrequency JobAcctGatherParams
    JobAcctGatherType JobCompHost JobCompLoc JobCompParams JobCompPass JobCompPort JobCompType
    JobCompUser JobContainerType JobFileAppend JobRequeue JobSubmitPlugins KeepAliveTime
    KillOnBadExit KillWait LaunchParameters LaunchType Licenses LogTimeFormat MCSParameters
    MCSPlugin MailDomain MailProg MaxArraySize MaxDBDMsgs MaxJobCount MaxJobId MaxMemPerCPU
    MaxMemPerNode MaxNodeCount MaxStepCount MaxTasksPerNode MessageTimeout MinJobAge MpiDefault
    MpiParams NodeFeaturesPlugins OverTimeLimit PluginDir PlugStackConfig PowerParameters
    PowerPlugin PreemptExemptTime PreemptMode PreemptType PrEpParameters PrEpPlugins
    PriorityCalcPeriod PriorityDecayHalfLife PriorityFavorSmall PriorityFlags PriorityMaxAge
    PriorityParameters PrioritySiteFactorParameters PrioritySiteFactorPlugin PriorityType
    PriorityUsageResetPeriod PriorityWeightAge PriorityWeightAssoc PriorityWeightFairshare
    PriorityWeightJobSize PriorityWeightPartition PriorityWeightQOS PriorityWeightTRES
    PrivateData ProctrackType Prolog PrologEpilogTimeout PrologFlags PrologSlurmctld
    PropagatePrioProcess PropagateResourceLimits PropagateResourceLimitsExcept RebootProgram
    ReconfigFlags RequeueExit RequeueExitHold ResumeFailProgram ResumeProgram ResumeRate
    ResumeTimeout ResvEpilog ResvOverRun ResvProlog ReturnToService RoutePlugin
    SchedulerParameters SchedulerTimeSlice SchedulerType ScronParameters SelectType
    SelectTypeParameters SlurmSchedLogFile SlurmSchedLogLevel SlurmUser SlurmctldAddr
    SlurmctldDebug SlurmctldHost SlurmctldLogFile SlurmctldParameters SlurmctldPidFile
    SlurmctldPlugstack SlurmctldPort SlurmctldPrimaryOffProg SlurmctldPrimaryOnProg
    SlurmctldSyslogDebug SlurmctldTimeout SlurmdDebug SlurmdLogFile SlurmdParameters
    SlurmdPidFile SlurmdPort SlurmdSpoolDir SlurmdSyslogDebug SlurmdTimeout SlurmdUser
    SrunEpilog SrunPortRange SrunProlog StateSaveLocation SuspendExcNodes SuspendExcParts
    SuspendProgram SuspendRate SuspendTime SuspendTimeout SwitchParameters SwitchType TCPTimeout
    TaskEpilog TaskPlugin TaskPluginParam TaskProlog TmpFS TopologyParam TopologyPlugin
    TrackWCKey TreeWidth UnkillableStepProgram UnkillableStepTimeout UsePAM VSizeFactor WaitTime
    X11Parameters DownNodes FrontendName
"""
#: Each known key by its lower-case form, as Slurm's documentation writes it.
CANONICAL = {k.lower(): k for k in _KEY_NAMES_TEXT.split()}
#: A partition's states (``State=``), as the engine's (docs/semantics.md, "The advisor on
#: partitions": queued jobs of a drained partition still run; an inactive one starts none).
PARTITION_STATES = {"UP": "up", "DOWN": "down", "DRAIN": "drain", "INACTIVE": "down"}
#: ``EnforcePartLimits`` values that refuse a job over a partition's limits at submission.
ENFORCING = ("ALL", "ANY", "YES")
_INCLUDE = re.compile(r"^include\s+(\S.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class Where:
    """A line of a file (for messages)."""

    path: str
    line: int

    def error(self, message: str, field: str | None = None) -> InputError:
        """An input error at this line (of ``field``, when given)."""
        return InputError(message, path=self.path, line=self.line, field=field)


@dataclass(frozen=True)
class Nodes:
    """One ``NodeName`` line, its defaults applied."""

    names: tuple[str, ...]
    cpus: int
    real_memory: int | None
    gres: str
    features: str
    state: str
    where: Where


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
    #: the files its ``Include`` lines read, in the order read
    included: tuple[str, ...] = ()

    def node_names(self) -> list[str]:
        return [n for line in self.nodes for n in line.names]

    def platform(self) -> Platform:
        """The site as hpcsched models it (module docstring)."""
        names = self.node_names()
        number = {n: k for k, n in enumerate(names)}
        groups = _groups(self.nodes)
        cpus = [line.cpus for line in self.nodes for _ in line.names]
        partitions = []
        for p in self.partitions:
            indices = sorted(number[n] for n in p.nodes)
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
                )
            )
        enforce = self.settings.get("EnforcePartLimits", "NO").upper()
        site = Site(
            partitions=tuple(partitions),
            over_limits="reject" if enforce in ENFORCING else "hold",
        )
        notes = [
            f"{where.path}, line {where.line}: {key} is not a Slurm 22.05 setting (kept, unused)"
            for key, where in self.unknown.items()
        ]
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
        )
        return Platform(
            name=self.cluster or Path(self.path).stem,
            nodes=len(names),
            source=self.path,
            groups=tuple(groups),
            site=site,
            notes=tuple(notes) + slurm.notes,
            slurm=slurm,
        )


def read_slurm_conf(path: str | os.PathLike[str]) -> SlurmConf:
    """Reads ``path`` and the files it includes (module docstring)."""
    top = os.fspath(path)
    included: list[str] = []
    lines = list(_lines(top, Path(top).parent, cluster=None, seen=(), read=included))
    return replace(_Reader(top).read(lines), included=tuple(included))


# --- the text -------------------------------------------------------------------------------


def _lines(
    path: str, folder: Path, cluster: str | None, seen: tuple[str, ...], read: list[str]
) -> list[tuple[list[tuple[str, str]], Where]]:
    """Each setting line of ``path`` (includes inlined) as its (key, value) pairs; each file
    included is added to ``read``."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    out: list[tuple[list[tuple[str, str]], Where]] = []
    pending, number, first = "", 0, 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            first = number  # (a line continued is named by its first line)
        line = pending + raw.split("#", 1)[0]
        if line.rstrip().endswith("\\"):  # continued on the next line
            pending = line.rstrip()[:-1] + " "
            continue
        pending = ""
        line = line.strip()
        if not line:
            continue
        where = Where(path, first)
        include = _INCLUDE.match(line)
        if include:
            name = include.group(1).strip().strip('"')
            if "%c" in name:
                if cluster is None:
                    raise InputError(
                        "Include names %c before ClusterName is set", path=path, line=first
                    )
                name = name.replace("%c", cluster)
            pattern = name if os.path.isabs(name) else str(folder / name)
            # (a wildcard includes every file it matches, in name order)
            targets = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
            if not targets or not all(os.path.exists(t) for t in targets):
                raise InputError(
                    f"Include {shown(name)}: no such file ({pattern})", path=path, line=first
                )
            chain = (*seen, os.path.abspath(path))
            for target in targets:
                if os.path.abspath(target) in chain:
                    raise InputError(
                        f"Include {shown(name)}: an include loop (it includes this file)",
                        path=path,
                        line=first,
                    )
                read.append(target)
                out += _lines(target, folder, cluster, chain, read)
            continue
        pairs = _pairs(line, where)
        for key, value in pairs:
            if key.lower() == "clustername":
                cluster = value
        out.append((pairs, where))
    if pending:
        raise InputError("the last line ends with a backslash", path=path, line=number)
    return out


def _pairs(line: str, where: Where) -> list[tuple[str, str]]:
    """``Key=Value`` pairs of a line (values may be quoted)."""
    try:
        tokens = shlex.split(line, comments=False, posix=True)
    except ValueError as exc:
        raise where.error(f"cannot be split ({exc})") from None
    pairs = []
    for token in tokens:
        key, eq, value = token.partition("=")
        if not eq or not key:
            raise where.error(f"{shown(token)} is not Key=Value")
        pairs.append((key, value))
    return pairs


# --- the settings ---------------------------------------------------------------------------


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
        self.unknown: dict[str, Where] = {}

    def read(self, lines: list[tuple[list[tuple[str, str]], Where]]) -> SlurmConf:
        for pairs, where in lines:
            first = pairs[0][0].lower()
            if first == "nodename":
                self._node_line(pairs, where)
            elif first == "partitionname":
                self._partition_line(pairs, where)
            elif first == "nodeset":
                self._nodeset_line(pairs, where)
            else:
                for key, value in pairs:
                    if key.lower() not in CANONICAL:
                        self.unknown.setdefault(key, where)
                    self.settings[_canonical(key)] = value
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
            if n in self.node_owner:
                first = self.node_owner[n]
                raise where.error(
                    f"node {n} is already described at line {first.line} of {first.path}",
                    "NodeName",
                )
            self.node_owner[n] = where
        self.nodes.append(
            Nodes(
                names=tuple(names),
                cpus=_cpus(merged_values, where),
                real_memory=_integer(merged_values, "realmemory", where, None),
                gres=merged_values.get("gres", ""),
                features=merged_values.get("feature", merged_values.get("features", "")),
                state=merged_values.get("state", "UNKNOWN").upper(),
                where=where,
            )
        )

    def _nodeset_line(self, pairs: list[tuple[str, str]], where: Where) -> None:
        values = {k.lower(): v for k, v in pairs}
        name = values["nodeset"]
        if "nodes" not in values and "feature" not in values:
            raise where.error(f"node set {name} names neither Nodes nor Feature", "NodeSet")
        listed = _hostlist(values["nodes"], where, "Nodes") if "nodes" in values else []
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
            out.append(
                SlurmPartition(
                    name=name,
                    nodes=tuple(sorted(nodes, key=order.__getitem__)),
                    max_time=_duration(values, "maxtime", where),
                    max_nodes=_integer(values, "maxnodes", where, None),
                    min_nodes=max(1, _integer(values, "minnodes", where, 1) or 1),
                    tier=_integer(values, "prioritytier", where, 1) or 0,
                    default=default == "YES",
                    state=PARTITION_STATES[state],
                    oversubscribe=values.get("oversubscribe", values.get("shared", "NO")).upper(),
                    where=where,
                    job_factor=_integer(values, "priorityjobfactor", where, 1) or 0,
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
        """A partition's ``Nodes``: ALL, node sets and hostlists, comma-separated."""
        if text.upper() == "ALL":
            return set(order)
        nodes: set[str] = set()
        for part in _split_hostlists(text):
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
            else:
                nodes.update(_hostlist(part, where, "Nodes"))
        missing = sorted(nodes - order.keys())
        if missing:
            raise where.error(
                f"node {missing[0]} is in no NodeName line"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
                "Nodes",
            )
        return nodes


# --- values ---------------------------------------------------------------------------------


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


def _split_hostlists(text: str) -> list[str]:
    """Comma-separated hostlists, commas inside brackets kept: ``a[1-2,4],b`` -> 2 parts."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"[": 1, "]": -1}.get(ch, 0)
        current += ch
    parts.append(current)
    return [p for p in (s.strip() for s in parts) if p]


def _hostlist(text: str, where: Where, key: str) -> list[str]:
    try:
        names = expand_hostlist(text)
    except ValueError as exc:
        raise where.error(str(exc), key) from None
    if not names:
        raise where.error("names no node", key)
    return names


def _integer(values: dict[str, str], key: str, where: Where, default: int | None) -> int | None:
    """A count >= 0, or None for Slurm's UNLIMITED / INFINITE."""
    text = values.get(key)
    if text is None:
        return default
    if text.upper() in UNLIMITED:
        return None
    if not text.isdigit():
        raise where.error(
            f"must be a whole number, not {shown(text)}",
            _KEY_NAMES.get(key, key),
        )
    return int(text)


def _duration(values: dict[str, str], key: str, where: Where) -> float | None:
    text = values.get(key)
    if text is None:
        return None
    try:
        return slurm_duration(text)
    except ValueError:
        raise where.error(
            f"must be Slurm time (minutes, HH:MM:SS, D-HH:MM:SS or UNLIMITED), not {shown(text)}",
            _KEY_NAMES.get(key, key),
        ) from None


def _cpus(values: dict[str, str], where: Where) -> int:
    """``CPUs`` (``Procs``), else Boards x SocketsPerBoard (or Sockets) x CoresPerSocket x
    ThreadsPerCore, each 1 by default, as slurmctld counts them."""
    for key in ("cpus", "procs"):
        if key in values:
            count = _integer(values, key, where, 1) or 0
            if count < 1:
                raise where.error("must be at least 1", "CPUs")
            return count
    product = 1
    for key in ("boards", "socketsperboard", "corespersocket", "threadspercore"):
        product *= _integer(values, key, where, 1) or 1
    if "socketsperboard" not in values and "sockets" in values:
        product *= _integer(values, "sockets", where, 1) or 1
    return product


_KEY_NAMES = {
    "maxtime": "MaxTime",
    "maxnodes": "MaxNodes",
    "minnodes": "MinNodes",
    "prioritytier": "PriorityTier",
    "priorityjobfactor": "PriorityJobFactor",
    "realmemory": "RealMemory",
    "cpus": "CPUs",
    "procs": "Procs",
    "boards": "Boards",
    "socketsperboard": "SocketsPerBoard",
    "sockets": "Sockets",
    "corespersocket": "CoresPerSocket",
    "threadspercore": "ThreadsPerCore",
}


def _groups(lines: tuple[Nodes, ...]) -> list[NodeGroup]:
    """Node groups: runs of consecutive nodes alike (CPUs, memory, Gres, features), named
    after their CPUs and Gres (``cpus32``, ``cpus32-gpu:4``), numbered when names repeat."""
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
