"""Platforms: a node count and, optionally, the power model of its nodes (DESIGN §3.5), and
the partitions over them (a site, DESIGN §3.6: :mod:`hpcsched.site.partitions`).

A platform is a TOML file::

    name = "AOBA-64"
    nodes = 64

    [power]        # watts drawn by one node in each state
    computing = 2100.0
    idle = 600.0
    sleeping = 60.0
    switching_on = 600.0
    switching_off = 600.0

    [transitions]  # seconds: mean latency of each transition and its standard deviation
    switch_on = 1200.0
    switch_on_std = 60.0
    switch_off = 600.0
    switch_off_std = 60.0

``[power]`` and ``[transitions]`` go together and may both be left out (no energy reported).
The presets AOBA-64, AOBA-1152, Taurus-64 and Taurus-1152 ship with the package as such files,
and so do the sites of three bundled traces (CEA-Curie, CTC-SP2, SDSC-BLUE).
All nodes start idle and awake at time 0.

A heterogeneous platform lists its node groups instead, each with its count and power model
(nodes are numbered group after group; a job runs within one group)::

    name = "mixed"

    [[groups]]
    name = "AOBA-A"
    nodes = 48
    [groups.power]
    computing = 2100.0
    ...
    [groups.transitions]
    switch_on = 1200.0
    ...

    [[groups]]
    name = "Taurus"
    nodes = 16
    ...

A group may give its ``cores`` (processors per node, 1 when left out) and may leave out its
power model, when every group does. ``[[partitions]]``, ``[[routes]]`` and ``over_limits``
describe the site (:mod:`hpcsched.site.partitions`).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from hpcsched import _core
from hpcsched._io import not_utf8, read_bytes
from hpcsched.exceptions import (
    InputError,
    OptionError,
    close_names,
    did_you_mean,
    shown,
    unknown_name,
)
from hpcsched.site.machine import NodeGroup, PowerModel
from hpcsched.site.partitions import Site, parse_site

if TYPE_CHECKING:
    from hpcsched.site.slurm.settings import SlurmSettings

POWER_KEYS = ("computing", "idle", "sleeping", "switching_on", "switching_off")
TRANSITION_KEYS = ("switch_on", "switch_on_std", "switch_off", "switch_off_std")
SITE_KEYS = ("partitions", "routes", "over_limits")
PLATFORM_KEYS = ("name", "nodes", "power", "transitions", "groups", "sharing", *SITE_KEYS)
GROUP_KEYS = (
    "name",
    "nodes",
    "cores",
    "threads_per_core",
    "memory",
    "gres",
    "weight",
    "power",
    "transitions",
)
#: a generic resource's kind: a name, or name:type (``gpu``, ``gpu:a100``)
_GRES_KIND = re.compile(r"[A-Za-z][A-Za-z0-9_]*(:[A-Za-z0-9_.-]+)?")


@dataclass(frozen=True)
class Platform:
    """A machine: ``nodes`` nodes with one ``power`` model, or node ``groups`` of their own
    (then ``power`` is the first group's), and its partitions (``site``, None for one pool)."""

    name: str
    nodes: int
    power: PowerModel | None = None
    source: str = "<memory>"
    groups: tuple[NodeGroup, ...] = ()
    site: Site | None = None
    #: what reading it noticed and left as it is (a run repeats them among its warnings)
    notes: tuple[str, ...] = ()
    #: the scheduling settings of the slurm.conf it was read from (``--policy slurm``)
    slurm: SlurmSettings | None = None
    #: how jobs share nodes: ``whole`` (each job has its nodes to itself), or Slurm's
    #: cons_tres with ``cr_cpu``, ``cr_core``, ``cr_cpu_memory``, ``cr_core_memory``
    sharing: str = "whole"

    @property
    def shared(self) -> bool:
        """Jobs share nodes by CPUs (and memory, generic resources)."""
        return self.sharing != "whole"

    @property
    def heterogeneous(self) -> bool:
        return len(self.groups) > 1

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name,
            "nodes": self.nodes,
            "source": self.source,
            "power": self.power.to_dict() if self.power else None,
        }
        if self.groups:
            out["groups"] = [g.to_dict() for g in self.groups]
        if self.site is not None:
            out["site"] = self.site.to_dict()
        if self.shared:
            out["sharing"] = self.sharing
        return out


def preset_names() -> list[str]:
    """Names of the platforms shipped with hpcsched."""
    folder = resources.files("hpcsched.site") / "platforms"
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def load_platform(name_or_path: str | os.PathLike[str]) -> Platform:
    """A preset by name (case-insensitive) or a platform TOML file."""
    text = os.fspath(name_or_path)
    for preset in preset_names():
        if preset.lower() == text.lower():
            resource = resources.files("hpcsched.site") / "platforms" / f"{preset}.toml"
            return parse_platform(resource.read_text(encoding="utf-8"), f"<preset {preset}>")
    if not os.path.exists(text):
        close = did_you_mean(close_names(text, preset_names()))
        raise OptionError(
            f"{shown(text)} is neither a preset ({', '.join(preset_names())}) nor a file"
            + (f"; {close}" if close else ""),
            option="--platform",
        )
    data = read_bytes(text)
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(data, exc.start, text) from None
    return parse_platform(content, text)


def parse_platform(text: str, path: str = "<input>") -> Platform:
    """A platform from the text of its TOML file."""
    try:
        document = tomllib.loads(text)
    except ValueError as exc:  # (a TOMLDecodeError, or an integer of 5,000 digits)
        raise InputError(f"invalid TOML: {_toml_fault(exc)}", path=path) from None
    unknown = sorted(set(document) - set(PLATFORM_KEYS))
    if unknown:
        raise InputError(
            unknown_name("key", unknown[0], PLATFORM_KEYS), path=path, field=unknown[0]
        )
    sharing = _sharing(document, path)
    if "groups" in document:
        return _parse_groups(document, path, sharing)
    if sharing != "whole":
        raise InputError(
            f"sharing = {shown(sharing)} needs the nodes' cores and memory: describe them in "
            "[[groups]] tables",
            path=path,
            field="sharing",
        )
    if "nodes" not in document:
        raise InputError("missing key nodes (the machine size)", path=path, field="nodes")
    nodes = document.get("nodes")
    if isinstance(nodes, bool) or not isinstance(nodes, int) or not 0 < nodes <= _core.MAX_NODES:
        raise InputError(
            f"nodes must be an integer from 1 to {_core.MAX_NODES}, not {shown(nodes)}",
            path=path,
            field="nodes",
        )
    name = _name(document, path, "name", os.path.basename(path).removesuffix(".toml"))
    power = None
    if document.get("power") is not None or document.get("transitions") is not None:
        power = _power_model(document, path, "")
    site = parse_site(document, (NodeGroup(name, nodes, power),), path)
    return Platform(name, nodes, power, path, site=site)


def _power_model(document: dict[str, Any], path: str, prefix: str) -> PowerModel:
    """The ``[power]`` and ``[transitions]`` tables of ``document`` (fields named with
    ``prefix``, e.g. ``groups[1].``)."""
    values: dict[str, float] = {}
    for table, keys in (("power", POWER_KEYS), ("transitions", TRANSITION_KEYS)):
        section = document.get(table)
        if not isinstance(section, dict):
            raise InputError(
                f"[{prefix}{table}] is missing (power and transitions go together)",
                path=path,
                field=f"{prefix}{table}",
            )
        extra = sorted(set(section) - set(keys))
        if extra:
            raise InputError(
                unknown_name("key", extra[0], keys), path=path, field=f"{prefix}{table}.{extra[0]}"
            )
        for key in keys:
            if key not in section:
                raise InputError(
                    f"missing key {key} (the [{table}] table needs {', '.join(keys)})",
                    path=path,
                    field=f"{table}.{key}",
                )
            value = section[key]
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (value >= 0 and value != float("inf"))
            ):
                raise InputError(
                    f"must be a number >= 0, not {shown(value)}",
                    path=path,
                    field=f"{prefix}{table}.{key}",
                )
            values[key] = float(value)
    return PowerModel(**values)


def _sharing(document: dict[str, Any], path: str) -> str:
    """``sharing``: how jobs share nodes (Slurm's ``SelectTypeParameters`` in lower case, or
    ``whole``)."""
    value = document.get("sharing", "whole")
    names = _core.SHARING_NAMES
    if not isinstance(value, str) or value.lower() not in names:
        raise InputError(unknown_name("sharing", value, names), path=path, field="sharing")
    return value.lower()


def _integer(
    table: dict[str, Any], key: str, default: int, low: int, high: int, path: str, field: str
) -> int:
    """``table[key]`` (``default`` when left out) as an integer from ``low`` to ``high``."""
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(
            f"{key} must be an integer from {low} to {high}, not {shown(value)}",
            path=path,
            field=field,
        )
    return value


def _node_resources(
    table: dict[str, Any], cores: int, sharing: str, path: str, prefix: str
) -> dict[str, Any]:
    """A group's CPUs per core, memory (MB), generic resources and weight."""
    tpc = _integer(
        table, "threads_per_core", 1, 1, _core.MAX_PER_NODE, path, f"{prefix}threads_per_core"
    )
    if cores % tpc:
        raise InputError(
            f"{cores} cores are not whole cores of {tpc} threads",
            path=path,
            field=f"{prefix}threads_per_core",
        )
    memory = _integer(table, "memory", 0, 0, _core.MAX_MEMORY, path, f"{prefix}memory")
    if sharing.endswith("_memory") and memory == 0:
        raise InputError(
            f"sharing = {shown(sharing)} makes memory a resource: give the group's memory "
            "(MB a job may use)",
            path=path,
            field=f"{prefix}memory",
        )
    raw = table.get("gres", {})
    if not isinstance(raw, dict):
        raise InputError(
            f"gres must be a table of counts (gres = {{gpu = 4}}), not {shown(raw)}",
            path=path,
            field=f"{prefix}gres",
        )
    gres = []
    for kind in raw:
        if not _GRES_KIND.fullmatch(kind):
            raise InputError(
                f"{shown(kind)} is not a generic resource's name or name:type (gpu, gpu:a100)",
                path=path,
                field=f"{prefix}gres",
            )
        value = _integer(raw, kind, 0, 0, _core.MAX_PER_NODE, path, f"{prefix}gres.{kind}")
        gres.append((kind, value))
    weight = _integer(table, "weight", 1, 0, _core.MAX_COUNT, path, f"{prefix}weight")
    return {"threads_per_core": tpc, "memory": memory, "gres": tuple(gres), "weight": weight}


def _parse_groups(document: dict[str, Any], path: str, sharing: str = "whole") -> Platform:
    """A platform of node groups (``[[groups]]`` tables)."""
    for key in ("nodes", "power", "transitions"):
        if key in document:
            raise InputError(
                f"{key} belongs inside each [[groups]] table of a platform with groups",
                path=path,
                field=key,
            )
    raw = document["groups"]
    if not isinstance(raw, list) or not raw or not all(isinstance(g, dict) for g in raw):
        raise InputError("groups must be [[groups]] tables", path=path, field="groups")
    groups = []
    names: list[str] = []
    with_power = [k for k, g in enumerate(raw) if "power" in g or "transitions" in g]
    for k, table in enumerate(raw):
        prefix = f"groups[{k}]."
        extra = sorted(set(table) - set(GROUP_KEYS))
        if extra:
            raise InputError(
                unknown_name("key", extra[0], GROUP_KEYS), path=path, field=f"{prefix}{extra[0]}"
            )
        count = table.get("nodes")
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
            raise InputError(
                f"nodes must be a positive integer, not {shown(count)}",
                path=path,
                field=f"{prefix}nodes",
            )
        name = _name(table, path, f"{prefix}name")
        if name in names:
            raise InputError(
                f"{shown(name)} names groups[{names.index(name)}] too: each group needs a name "
                "of its own (results name groups by it)",
                path=path,
                field=f"{prefix}name",
            )
        names.append(name)
        cores = table.get("cores", 1)
        if (
            isinstance(cores, bool)
            or not isinstance(cores, int)
            or not 0 < cores <= _core.MAX_COUNT
        ):
            raise InputError(
                f"cores must be an integer from 1 to {_core.MAX_COUNT} (processors per node), "
                f"not {shown(cores)}",
                path=path,
                field=f"{prefix}cores",
            )
        power = None
        if with_power:
            if k not in with_power:  # the energy of a run would leave these nodes out
                raise InputError(
                    f"[{prefix}power] is missing: power models go on every group or on none "
                    f"(groups[{with_power[0]}] has one)",
                    path=path,
                    field=f"{prefix}power",
                )
            power = _power_model(table, path, prefix)
        if sharing != "whole" and cores > _core.MAX_PER_NODE:
            raise InputError(
                f"cores must be at most {_core.MAX_PER_NODE} where jobs share nodes, not {cores}",
                path=path,
                field=f"{prefix}cores",
            )
        resources = _node_resources(table, cores, sharing, path, prefix)
        groups.append(NodeGroup(name, count, power, cores, **resources))
    total = sum(g.nodes for g in groups)
    if total > _core.MAX_NODES:
        raise InputError(
            f"{total} nodes in all; the engine takes at most {_core.MAX_NODES}",
            path=path,
            field="groups",
        )
    name = _name(document, path, "name", os.path.basename(path).removesuffix(".toml"))
    site = parse_site(document, groups, path)
    return Platform(name, total, groups[0].power, path, tuple(groups), site, sharing=sharing)


def _name(table: dict[str, Any], path: str, field: str, default: str | None = None) -> str:
    """The ``name`` of a platform (``default`` when left out) or a group (required): a text,
    not empty (``name = 5`` is a mistake, not the name "5")."""
    value = table.get("name", default)
    if value is None:
        raise InputError("missing key name (each group has one)", path=path, field=field)
    if not isinstance(value, str) or not value.strip():
        raise InputError(
            f"name must be a non-empty text in quotes, not {shown(value)}", path=path, field=field
        )
    return value


def _toml_fault(exc: ValueError) -> str:
    """What tomllib says, but for an integer past Python's digits: it says to change them."""
    if isinstance(exc, tomllib.TOMLDecodeError):
        return str(exc)
    return "a number of thousands of digits"
