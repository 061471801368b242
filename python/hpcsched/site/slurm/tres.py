"""Slurm's trackable resources (TRES) in priorities and fair-share (issue 41, point 5): a
partition's ``TRESBillingWeights`` (what a job's usage is charged: its billable TRES),
``PriorityWeightTRES`` (a priority term per TRES) and ``PriorityFlags=MAX_TRES`` /
``NO_NORMAL_TRES``, as Slurm 22.05 computes them (docs/semantics.md, "Slurm's scheduler").

- Weights (``slurm_protocol_api.c: _tres_weight_item``): ``TYPE[/NAME]=WEIGHT`` pairs, the type
  in any case (``CPU``, ``Mem``, ``Node``, ``GRES/gpu``, ``GRES/gpu:a100``); a memory weight
  may end in a unit, ``M``, ``G``, ``T`` or ``P``, and is then per that unit of the base MB
  (``Mem=0.25G``: 0.25 per 1024 MB).
- Billable TRES (``assoc_mgr_tres_weighted``): the sum of each TRES the job holds times its
  weight; with ``MAX_TRES`` the largest of its CPUs, memory, nodes and GRES terms plus the
  others. Without weights in its partition, its CPUs.
- TRES priority (``priority_multifactor.c: _get_tres_factors``): per TRES, the job's amount
  over its partition's (its amount alone under ``NO_NORMAL_TRES``), times the weight, summed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from hpcsched import _core
from hpcsched.exceptions import InputError, shown, unknown_name
from hpcsched.site.slurm.text import whole_number

#: The TRES types Slurm has on every cluster, and ``gres`` (configured by GresTypes).
_TYPES = ("cpu", "mem", "node", "billing", "energy", "gres", "license", "fs", "ic", "bb", "pages")
#: The TRES hpcsched knows a job's amount of (the others weigh nothing here: said in notes).
FOLLOWED = ("cpu", "mem", "node", "gres")
#: A memory weight's unit, in MB.
_UNITS = {"M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
#: TRES Slurm's MAX_TRES takes the largest of (those of a node).
_NODE_TRES = ("cpu", "mem", "node", "gres")


def parse_weights(text: str, path: str, line: int | None, key: str) -> dict[str, float]:
    """``CPU=1.0,Mem=0.25G,GRES/gpu=2.0`` as {``cpu``: 1.0, ``mem``: 0.25 / 1024, ``gres/gpu``:
    2.0}; an :class:`InputError` naming the file, the line and ``key`` for a pair that cannot
    be read."""
    out: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.strip().strip('"').split(","))):
        name, sep, value = item.partition("=")
        kind, slash, sub = name.partition("/")
        kind = kind.strip().lower()

        def fail(what: str, item: str = item) -> InputError:
            return InputError(f"{shown(item)}: {what}", path=path, line=line, field=key)

        if not sep or not value.strip():
            raise fail("each weight is TYPE=WEIGHT (CPU=1.0,Mem=0.25G,GRES/gpu=2.0)")
        if kind not in _TYPES:
            raise fail(f"{shown(kind)} is not a TRES type ({', '.join(_TYPES)})")
        if kind in ("gres", "license", "fs", "ic", "bb") and not (slash and sub.strip()):
            raise fail(f"a {kind} weight names its resource ({kind.upper()}/NAME)")
        value = value.strip()
        unit = value[-1].upper() if value[-1].isalpha() else ""
        number = value[:-1] if unit else value
        try:
            weight = float(number)
        except ValueError:
            raise fail("the weight is a number, with a unit for memory (0.25G)") from None
        if not np.isfinite(weight):
            raise fail("the weight is a finite number")
        if unit:
            if kind != "mem" or unit not in _UNITS:
                raise fail("only a memory weight may end in a unit, one of M, G, T, P")
            weight /= _UNITS[unit]
        out[f"{kind}/{sub.strip()}" if slash else kind] = weight
    return out


@dataclass(frozen=True)
class JobTres:
    """The TRES each job holds (or asks), by column: CPUs, memory (MB), nodes and each generic
    resource in all (``gres/gpu``, ``gres/gpu:a100``)."""

    cpu: np.ndarray
    mem: np.ndarray
    node: np.ndarray
    gres: dict[str, np.ndarray]

    def amount(self, tres: str) -> np.ndarray | None:
        """Each job's amount of ``tres`` (``gres/gpu`` also counts the typed ``gres/gpu:a100``
        kinds, as Slurm's untyped count does); None for a TRES hpcsched does not know."""
        if tres in ("cpu", "mem", "node"):
            column: np.ndarray = getattr(self, tres)
            return column
        if tres.startswith("gres/"):
            name = tres.removeprefix("gres/")
            kinds = [k for k in self.gres if k == name or k.split(":")[0] == name]
            if ":" in name:
                kinds = [name] if name in self.gres else []
            total = np.zeros(len(self.cpu))
            for kind in kinds:
                total = total + self.gres[kind]
            return total
        return None


def billable(tres: JobTres, weights: dict[str, float], max_tres: bool) -> np.ndarray:
    """Each job's billable TRES under ``weights`` (module docstring)."""
    node_terms: list[np.ndarray] = []
    total = np.zeros(len(tres.cpu))
    for name, weight in weights.items():
        amount = tres.amount(name)
        if amount is None:
            continue
        term = amount * weight
        if max_tres and name.split("/")[0] in _NODE_TRES:
            node_terms.append(term)
        else:
            total = total + term
    if node_terms:
        total = total + np.max(np.vstack(node_terms), axis=0)
    return total


def tres_priority(
    tres: JobTres, weights: dict[str, float], partition_totals: dict[str, float], normal: bool
) -> np.ndarray:
    """Each job's TRES priority term in a partition of ``partition_totals`` (module
    docstring)."""
    out = np.zeros(len(tres.cpu))
    for name, weight in weights.items():
        amount = tres.amount(name)
        if amount is None:
            continue
        if normal:
            whole = partition_totals.get(name, 0.0)
            if whole <= 0:
                continue
            amount = amount / whole
        out = out + weight * amount
    return out


def partition_totals(
    groups: list[tuple[int, int, int, dict[str, int]]], members: list[np.ndarray]
) -> list[dict[str, float]]:
    """Each partition's TRES (``members``: its node indices; ``groups``: per node group in node
    order, its nodes, CPUs, memory and GRES per node): CPUs, memory, nodes and each GRES in all,
    typed kinds also counted under their untyped name."""
    cpus, memory, gres = [], [], []
    for nodes, cores, mb, kinds in groups:
        cpus += [cores] * nodes
        memory += [mb] * nodes
        gres += [kinds] * nodes
    out = []
    for member in members:
        totals: dict[str, float] = {
            "cpu": float(sum(cpus[i] for i in member)),
            "mem": float(sum(memory[i] for i in member)),
            "node": float(len(member)),
        }
        for i in member:
            for kind, count in gres[i].items():
                for name in {kind, kind.split(":")[0]}:
                    totals[f"gres/{name}"] = totals.get(f"gres/{name}", 0.0) + count
        out.append(totals)
    return out


def tres_columns(
    tres: JobTres,
    tres_weights: dict[str, float],
    billing_weights: list[dict[str, float] | None],
    first: np.ndarray,
    totals: list[dict[str, float]],
    max_tres: bool,
    normal: bool,
) -> dict[str, np.ndarray]:
    """The engine's ``job_billing`` (by each job's first partition's weights; none when no
    partition has any) and ``job_tres_priority`` (job by partition; none without
    ``PriorityWeightTRES``)."""
    out: dict[str, np.ndarray] = {}
    if any(w for w in billing_weights):
        billing = tres.cpu.astype(np.float64).copy()
        for p, weights in enumerate(billing_weights):
            if weights:
                mine = first == p
                billing[mine] = billable(tres, weights, max_tres)[mine]
        out["job_billing"] = billing
    if tres_weights:
        terms = [tres_priority(tres, tres_weights, t, normal) for t in totals]
        out["job_tres_priority"] = np.column_stack(terms).ravel().astype(np.float64)
    return out


# --- QOS limits ------------------------------------------------------------------------------

#: TRES types of limits without and with a name (``gres/gpu``, ``license/matlab``, ``fs/disk``).
_TRES_TYPES = ("cpu", "mem", "energy", "node", "billing", "vmem", "pages")
_TRES_NAMED = ("gres", "license", "bb", "fs", "ic")


def parse_tres_limits(text: str) -> tuple[dict[str, int], tuple[str, ...]]:
    """The limits of a TRES string (``node=4,cpu=64,mem=100G,gres/gpu=8``) on the TRES hpcsched
    follows (``node``, ``cpu``, ``mem`` in MB, ``gres/NAME``, ``gres/NAME:TYPE``), and the other
    TRES it names (``license/matlab``, ``billing``, ...: checked, then not simulated); a
    ValueError naming the fault. A count may end in a unit as sacctmgr reads it
    (``slurmdb_format_tres_str``): K, M, G, T or P, powers of 1024 of the TRES' base unit, MB
    for memory (so ``mem=1K`` and ``mem=1M`` are 1 MB, ``mem=2G`` 2048), one for the others."""
    counts: dict[str, str] = {}
    for item in text.split(",") if text.strip() else []:
        key, eq, value = (s.strip() for s in item.partition("="))
        key = key.lower()
        kind, slash, name = key.partition("/")
        if not eq or not key:
            raise ValueError(f"{shown(item.strip())} is not TRES=count in {shown(text)}")
        if kind not in (_TRES_NAMED if slash else _TRES_TYPES) or (slash and not name):
            choices = [*_TRES_TYPES, *(f"{t}/NAME" for t in _TRES_NAMED)]
            raise ValueError(unknown_name("TRES", key, choices))
        if kind == "gres" and (any(not part for part in name.split(":")) or name.count(":") > 1):
            raise ValueError(f"{key}: a generic resource is gres/NAME or gres/NAME:TYPE")
        if key in counts:
            raise ValueError(f"{key} is given twice in {shown(text)}")
        pattern = r"[0-9]+" if key in ("node", "cpu") else r"[0-9]+[KMGTP]?"
        if not re.fullmatch(pattern, value, re.IGNORECASE):
            raise ValueError(f"{key}={shown(value)}: not a count")
        counts[key] = value
    followed = {k: _tres_count(k, v) for k, v in counts.items() if _followed(k)}
    return followed, tuple(k for k in counts if not _followed(k))


def _followed(tres: str) -> bool:
    """A TRES whose limits hpcsched simulates."""
    return tres in ("node", "cpu", "mem") or tres.startswith("gres/")


#: The power of 1024 of each unit a TRES count may end in.
_TRES_UNITS = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5}


def _tres_count(tres: str, text: str) -> int:
    """``text`` (digits, maybe a unit) as a count of ``tres``, as sacctmgr converts it."""
    unit = text[-1].upper() if text[-1].isalpha() else ""
    number = int(text[:-1] if unit else text)
    if unit:
        base = 2 if tres == "mem" else 0  # (MB: K and M leave a count as it is)
        number *= 1024 ** max(_TRES_UNITS[unit] - base, 0)
    # (nodes and CPUs: the engine's 32-bit counts; memory and generic resources 64-bit)
    most = _core.MAX_COUNT if tres in ("node", "cpu") else _MAX_AMOUNT
    try:
        return whole_number(str(number), most)
    except ValueError as exc:
        raise ValueError(f"{tres} {exc}") from None


#: The largest limit on memory (MB) or a generic resource: 2^53, exact in a float.
_MAX_AMOUNT = 2**53
