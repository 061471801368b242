"""What a job asked of the resources inside nodes, from sacct's ``ReqTRES``, ``ReqMem``,
``ReqCPUS``, ``NCPUS`` and ``NodeList`` (docs/formats.md, "Slurm accounting records"): the
request columns a platform whose nodes jobs share reads (:mod:`hpcsched.run.shared`).

Read from a real Slurm 22.05.8 (tests/fixtures/sacct_tres): ``ReqMem`` and ``ReqTRES``'s
``mem`` are the job's memory in all (``--mem-per-cpu=200 -n3`` records ``600M``, ``-N2
--mem=500`` records ``1000M``; a job that asked none records its nodes' whole memory), so the
memory per CPU is that over the CPUs asked; a memory in all that the CPUs asked do not divide
cannot have been asked per CPU, and is per node, over the job's nodes (``-n6 --mem=1000``:
1000 MB on its node, not 167 MB a CPU, which would charge 1002); the old ``4000Mc``/``16Gn``
forms (before 21.08) say per CPU or per node themselves. ``ReqTRES``'s ``node`` is the nodes
asked (``-N``) when above 1, and its ``gres/NAME[:TYPE]=N`` the job's generic resources in all,
spread evenly over those nodes. A job given more CPUs than it asked (``NCPUS`` over
``ReqCPUS``) had whole nodes (``--exclusive``, or its partition's OverSubscribe=EXCLUSIVE)."""

from __future__ import annotations

import re

import numpy as np

from hpcsched.exceptions import InputError, shown

#: A memory size as sacct writes it: a number, a unit (K, M, G, T; M when none) and, before
#: 21.08, ``c`` (per CPU) or ``n`` (per node).
_MEMORY = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]+)?)(?P<unit>[KMGT]?)(?P<per>[cn]?)")
_UNIT_MB = {"K": 1 / 1024, "": 1.0, "M": 1.0, "G": 1024.0, "T": 1024.0**2}


def memory_mb(text: str, path: str, field: str) -> tuple[float, str]:
    """``600M`` -> (600.0, ""), ``4000Mc`` -> (4000.0, "c"); ("", "") -> NaN."""
    if not text:
        return float("nan"), ""
    match = _MEMORY.fullmatch(text.strip())
    if match is None:
        raise InputError(
            f"{shown(text)} is not a memory size (600M, 4G, 4000Mc)", path=path, field=field
        )
    return float(match["number"]) * _UNIT_MB[match["unit"]], match["per"]


def parse_tres(text: str, path: str) -> dict[str, float]:
    """``billing=2,cpu=2,mem=600M,node=1,gres/gpu=2`` as a dict (memory in MB)."""
    out: dict[str, float] = {}
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise InputError(
                f"{shown(part)} is not a TRES (name=count)", path=path, field="ReqTRES"
            )
        if key == "mem":
            out[key] = memory_mb(value, path, "ReqTRES")[0]
            continue
        try:
            out[key] = float(value)
        except ValueError:
            raise InputError(
                f"{shown(part)}: the count of a TRES is a number", path=path, field="ReqTRES"
            ) from None
    return out


def request_columns(
    tres: tuple[list[str], np.ndarray],
    req_mem: tuple[list[str], np.ndarray],
    rows: np.ndarray,
    asked: np.ndarray,
    given: np.ndarray,
    path: str,
) -> dict[str, np.ndarray]:
    """The request columns of records ``rows`` (``tres``, ``req_mem``: each text column's
    distinct values and every record's code into them; ``asked``: ReqCPUS, 0 unknown;
    ``given``: NCPUS): ``cpus``, ``req_nodes``, ``mem_per_cpu``, ``mem_per_node``, ``gres``,
    ``exclusive`` (module docstring)."""
    (tres_values, tres_codes), (mem_values, mem_codes) = tres, req_mem
    parsed = [parse_tres(v, path) for v in tres_values]
    tres_nodes = np.array([p.get("node", 0.0) for p in parsed])[tres_codes[rows]]
    tres_mem = np.array([p.get("mem", np.nan) for p in parsed])[tres_codes[rows]]
    mems = [memory_mb(v, path, "ReqMem") for v in mem_values]
    mem = np.array([m[0] for m in mems])[mem_codes[rows]]
    per = np.array([m[1] for m in mems], dtype=object)[mem_codes[rows]]
    cpus = np.where(asked > 0, asked, given)
    total = np.where(per == "", np.where(np.isnan(mem), tres_mem, mem), np.nan)
    nodes = np.maximum(tres_nodes, 1)
    # (per CPU, the CPUs divide the memory in all: where they do not, it was asked per node)
    by_node = (np.fmod(total, np.maximum(cpus, 1)) != 0) & (np.fmod(total, nodes) == 0)
    per_cpu = np.where(
        per == "c", mem, np.where(by_node, np.nan, np.ceil(total / np.maximum(cpus, 1)))
    )
    per_node = np.where(per == "n", mem, np.where(by_node, total / nodes, np.nan))
    gres = np.full(len(rows), "", dtype=object)
    kinds = [_gres_in_all(p) for p in parsed]
    if any(kinds):
        codes = tres_codes[rows]
        for k, (code, n) in enumerate(zip(codes, nodes, strict=True)):
            gres[k] = _spread(kinds[code], n)
    return {
        "cpus": cpus.astype(np.int64),
        "req_nodes": np.where(tres_nodes > 1, tres_nodes, 0).astype(np.int64),
        "mem_per_cpu": per_cpu,
        "mem_per_node": per_node,
        "gres": gres,
        "exclusive": (asked > 0) & (given > asked),
    }


def _gres_in_all(tres: dict[str, float]) -> tuple[tuple[str, float], ...]:
    """The job's generic resources in all: typed kinds where sacct names them (it lists the
    untyped total beside them), else the untyped ones."""
    kinds = {k.removeprefix("gres/"): v for k, v in tres.items() if k.startswith("gres/")}
    typed = {k.split(":")[0] for k in kinds if ":" in k}
    return tuple((k, v) for k, v in sorted(kinds.items()) if ":" in k or k not in typed)


def _spread(gres: tuple[tuple[str, float], ...], nodes: float) -> str:
    """A job's generic resources in all, per node as ``--gres`` writes them (``gpu:a100:2``)."""
    return ",".join(f"{kind}:{int(np.ceil(count / nodes))}" for kind, count in gres if count > 0)
