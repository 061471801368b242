"""Platforms: a node count and, optionally, the power model of its nodes (DESIGN §3.5).

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
The presets AOBA-64, AOBA-1152, Taurus-64 and Taurus-1152 ship with the package as such files.
All nodes start idle and awake at time 0.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import asdict, dataclass
from importlib import resources

from hpcsched import _core
from hpcsched.exceptions import InputError, OptionError, shown

POWER_KEYS = ("computing", "idle", "sleeping", "switching_on", "switching_off")
TRANSITION_KEYS = ("switch_on", "switch_on_std", "switch_off", "switch_off_std")


@dataclass(frozen=True)
class PowerModel:
    """Per-node power (W) in each state and transition latencies (s)."""

    computing: float
    idle: float
    sleeping: float
    switching_on: float
    switching_off: float
    switch_on: float
    switch_on_std: float
    switch_off: float
    switch_off_std: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Platform:
    name: str
    nodes: int
    power: PowerModel | None = None
    source: str = "<memory>"

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "nodes": self.nodes,
            "source": self.source,
            "power": self.power.to_dict() if self.power else None,
        }


def preset_names() -> list[str]:
    """Names of the platforms shipped with hpcsched."""
    folder = resources.files("hpcsched") / "platforms"
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def load_platform(name_or_path: str | os.PathLike[str]) -> Platform:
    """A preset by name (case-insensitive) or a platform TOML file."""
    text = os.fspath(name_or_path)
    for preset in preset_names():
        if preset.lower() == text.lower():
            resource = resources.files("hpcsched") / "platforms" / f"{preset}.toml"
            return parse_platform(resource.read_text(encoding="utf-8"), f"<preset {preset}>")
    if not os.path.exists(text):
        raise OptionError(
            f"{shown(text)} is neither a preset ({', '.join(preset_names())}) nor a file",
            option="--platform",
        )
    try:
        with open(text, encoding="utf-8") as f:
            content = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file: {exc}", path=text) from None
    return parse_platform(content, text)


def parse_platform(text: str, path: str = "<input>") -> Platform:
    """A platform from the text of its TOML file."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", path=path) from None
    unknown = sorted(set(document) - {"name", "nodes", "power", "transitions"})
    if unknown:
        raise InputError(f"unknown key {shown(unknown[0])}", path=path, field=unknown[0])
    if "nodes" not in document:
        raise InputError("missing key nodes (the machine size)", path=path, field="nodes")
    nodes = document.get("nodes")
    if isinstance(nodes, bool) or not isinstance(nodes, int) or not 0 < nodes <= _core.MAX_NODES:
        raise InputError(
            f"nodes must be an integer from 1 to {_core.MAX_NODES}, not {shown(nodes)}",
            path=path,
            field="nodes",
        )
    name = str(document.get("name", os.path.basename(path).removesuffix(".toml")))
    power, transitions = document.get("power"), document.get("transitions")
    if power is None and transitions is None:
        return Platform(name, nodes, None, path)
    values: dict[str, float] = {}
    for table, keys in (("power", POWER_KEYS), ("transitions", TRANSITION_KEYS)):
        section = document.get(table)
        if not isinstance(section, dict):
            raise InputError(
                f"[{table}] is missing (power and transitions go together)", path=path, field=table
            )
        extra = sorted(set(section) - set(keys))
        if extra:
            raise InputError(
                f"unknown key {shown(extra[0])}", path=path, field=f"{table}.{extra[0]}"
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
                    f"must be a number >= 0, not {shown(value)}", path=path, field=f"{table}.{key}"
                )
            values[key] = float(value)
    return Platform(name, nodes, PowerModel(**values), path)
