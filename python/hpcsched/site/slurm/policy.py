"""What ``--policy slurm`` gives the engine beyond the jobs: Slurm's settings (a slurm.conf's,
or Slurm's defaults), the association tree and the QOS (``--slurm-accounts``, or one account
per workload account with every user under it), and each job's association, user, QOS, nice
value and CPUs (docs/semantics.md, "Slurm's scheduler").

A job's user is the workload's ``user_name`` column (sacct), else its ``user`` number (SWF field
12, ``user<N>``; unknown: ``unknown``); its account the ``account`` column (sacct), else its
``group`` (SWF field 13, ``group<N>``), else ``default``; its QOS the ``qos`` column, else the
association's default QOS, else ``normal``; its nice value the ``nice`` column, else 0. Its CPUs
are whole nodes' (the engine allocates whole nodes, and Slurm charges usage and counts job size
by the CPUs allocated): its nodes times the CPUs of the smallest node of the platform.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hpcsched.exceptions import InputError, shown
from hpcsched.site.platform import Platform
from hpcsched.site.slurm.accounts import Qos, SlurmAccounts
from hpcsched.site.slurm.settings import SlurmSettings
from hpcsched.workload import Workload

#: The name of a user (or account) a workload does not give.
UNKNOWN_USER = "unknown"
DEFAULT_ACCOUNT = "default"


@dataclass(frozen=True)
class SlurmInputs:
    """The engine's ``NativeRun.slurm`` record, and what building it noticed."""

    native: dict[str, Any]
    notes: tuple[str, ...]


def _coded(
    workload: Workload, column: str, number: str, prefix: str, missing: str
) -> tuple[np.ndarray, list[str]]:
    """Each job's code and the names coded (in the order first seen): the text ``column``,
    else ``prefix`` + the ``number`` column (negative: ``missing``), else ``missing``."""
    jobs = workload.jobs
    if column in jobs:
        codes, uniques = pd.factorize(jobs[column])
        return codes, [str(v) or missing for v in uniques]
    if number in jobs:
        codes, uniques = pd.factorize(jobs[number])
        return codes, [f"{prefix}{v}" if v >= 0 else missing for v in uniques]
    return np.zeros(len(jobs), dtype=np.int64), [missing]


def slurm_inputs(
    workload: Workload,
    platform: Platform | None,
    machine_nodes: int,
    accounts: SlurmAccounts | None,
    site_partitions: list[str] | None,
    origin: float = 0.0,
) -> SlurmInputs:
    """The engine's Slurm inputs for ``workload`` (replay order) on ``platform`` (None: a
    machine of ``machine_nodes`` one-CPU nodes), with ``accounts`` (None: the workload's own),
    the site's partitions by index (None: one pool); ``origin`` is the wall-clock time (Unix
    seconds) of the replay clock's 0, on which Slurm rounds (0 when the trace does not say)."""
    settings = (platform.slurm if platform is not None else None) or SlurmSettings.defaults()
    notes: list[str] = []
    user_codes, user_names = _coded(workload, "user_name", "user", "user", UNKNOWN_USER)
    account_codes, account_names = _coded(workload, "account", "group", "group", DEFAULT_ACCOUNT)
    # the jobs' (user, account) pairs, each once, in the order first seen
    pair_codes, pair_keys = pd.factorize(
        user_codes.astype(np.int64) * len(account_names) + account_codes
    )
    pair_list = [
        (user_names[k // len(account_names)], account_names[k % len(account_names)])
        for k in pair_keys.tolist()
    ]
    tree = accounts or SlurmAccounts.default_for(pair_list)
    # associations: root, the accounts, then the users, each parent before its children
    index: dict[str, int] = {}
    parents: list[int] = []
    shares: list[int] = []
    is_user: list[bool] = []
    for account in tree.accounts:
        index[account.name] = len(parents)
        parents.append(-1 if account.parent is None else index[account.parent])
        if account.shares is None and account.parent is not None:
            raise InputError(
                f"account {shown(account.name)} has Fairshare=parent: not simulated for accounts "
                "(users may have it)",
                field="Fairshare",
            )
        shares.append(1 if account.shares is None else account.shares)
        is_user.append(False)
    user_index: dict[tuple[str, str], int] = {}
    default_qos: dict[tuple[str, str], str | None] = {}
    for u in tree.users:
        user_index[(u.user, u.account)] = len(parents)
        default_qos[(u.user, u.account)] = u.default_qos
        parents.append(index[u.account])
        shares.append(-1 if u.shares is None else u.shares)
        is_user.append(True)
    added: list[str] = []
    pair_association = np.empty(len(pair_list), dtype=np.int64)
    for k, pair in enumerate(pair_list):
        a = user_index.get(pair)
        if a is None:
            user, account = pair
            if account not in index:
                index[account] = len(parents)
                parents.append(0)
                shares.append(1)
                is_user.append(False)
            a = user_index[pair] = len(parents)
            default_qos[pair] = None
            parents.append(index[account])
            shares.append(1)
            is_user.append(True)
            added.append(f"{user} in {account}")
        pair_association[k] = a
    job_association = pair_association[pair_codes]
    if added and accounts is not None:
        notes.append(
            f"{len(added)} user associations the workload uses are not in the accounts given "
            f"(added with Fairshare=1, e.g. {', '.join(added[:3])})"
        )
    qos_list = list(tree.qos)
    qos_index = {q.name: k for k, q in enumerate(qos_list)}
    jobs = workload.jobs
    pair_qos = [default_qos.get(pair) or "normal" for pair in pair_list]
    by_pair = np.asarray(pair_qos, dtype=object)[pair_codes]
    chosen = by_pair
    if "qos" in jobs:
        named = jobs["qos"].astype(str).to_numpy(dtype=object)
        chosen = np.where(named != "", named, by_pair)
    qos_codes, qos_names = pd.factorize(chosen)
    name_to_index = np.empty(len(qos_names), dtype=np.int64)
    for k, name in enumerate(qos_names):
        if name not in qos_index:
            qos_index[name] = len(qos_list)
            qos_list.append(Qos(name))
            notes.append(f"QOS {shown(name)} is not among the QOS given: no priority, no limits")
        name_to_index[k] = qos_index[name]
    job_qos = name_to_index[qos_codes]
    if not settings.enforce_limits and any(_limits(q) for q in qos_list):
        notes.append(
            "QOS limits are not enforced: the slurm.conf's AccountingStorageEnforce lacks limits"
        )
    ignored = [f"{t} (QOS {q.name})" for q in qos_list for t in q.ignored_tres]
    if ignored and settings.enforce_limits:
        notes.append(f"QOS limits on TRES not simulated (ignored): {', '.join(ignored)}")
    # the TRES the limits count beyond nodes and CPUs, in the order first named
    tres = list(
        dict.fromkeys(
            t
            for q in qos_list
            for _, t, _ in q.tres_limits()
            if t not in ("node", "cpu") and settings.enforce_limits
        )
    )
    job_tres = whole_node_tres(tres, platform, jobs["nodes"].to_numpy(np.int64))
    if tres:
        none = [t for t in tres if not whole_node_tres([t], platform, np.ones(1, np.int64)).any()]
        if none:
            notes.append(
                f"QOS limits on {', '.join(none)} count nothing: the platform's nodes have none "
                "(select/linear keeps no memory or GRES of a node)"
            )
    cores = min((g.cores for g in platform.groups), default=1) if platform is not None else 1
    cluster_cpus = (
        sum(g.nodes * g.cores for g in platform.groups)
        if platform and platform.groups
        else machine_nodes
    )
    nodes = jobs["nodes"].to_numpy(np.int64)
    factors = settings.partition_factors
    partition_factors = (
        [factors.get(name, 1) for name in site_partitions] if site_partitions else [1]
    )
    native = {
        "priority": dict(settings.priority),
        "scheduler": dict(settings.scheduler),
        "assoc_parent": parents,
        "assoc_shares": shares,
        "assoc_user": is_user,
        "qos": [_native_qos(q, settings.enforce_limits, tres) for q in qos_list],
        "tres": tres,
        "job_tres": job_tres,
        "job_association": job_association,
        "job_user": user_codes.astype(np.int64),
        "job_qos": job_qos,
        "job_nice": jobs["nice"].to_numpy(np.int64)
        if "nice" in jobs
        else np.zeros(len(jobs), np.int64),
        "job_cpus": nodes * cores,
        "job_requested_cpus": _requested_cpus(jobs, nodes * cores),
        "cluster_cpus": int(cluster_cpus),
        "cluster_nodes": int(machine_nodes),
        "partition_factors": partition_factors,
        "origin": float(origin),
    }
    return SlurmInputs(native, tuple(notes))


def _requested_cpus(jobs: pd.DataFrame, cpus: np.ndarray) -> np.ndarray:
    """The CPUs each job asked for when recorded (sacct's ``ReqCPUS``), at least one per node
    and at most those it is given; none (an empty array) when not recorded."""
    if "requested_procs" not in jobs:
        return np.zeros(0, np.int64)
    asked = jobs["requested_procs"].to_numpy(np.int64)
    clipped: np.ndarray = np.clip(asked, jobs["nodes"].to_numpy(np.int64), cpus)
    return clipped


def _limits(q: Qos) -> bool:
    return bool(q.tres_limits()) or any(
        v is not None for v in (q.max_jobs_per_user, q.grp_jobs, q.max_submit_jobs_per_user)
    )


def _native_qos(q: Qos, enforce: bool, tres: list[str]) -> dict[str, Any]:
    limit = (lambda v: v) if enforce else (lambda v: None)
    place = {"node": 0, "cpu": 1} | {t: 2 + k for k, t in enumerate(tres)}
    return {
        "priority": q.priority,
        "max_jobs_per_user": limit(q.max_jobs_per_user),
        "grp_jobs": limit(q.grp_jobs),
        "max_submit_jobs_per_user": limit(q.max_submit_jobs_per_user),
        "tres_limits": [(scope, place[t], most) for scope, t, most in q.tres_limits()]
        if enforce
        else [],
    }


def whole_node_tres(tres: list[str], platform: Platform | None, nodes: np.ndarray) -> np.ndarray:
    """Each job's amount of each of ``tres`` (``mem``, ``gres/NAME[:TYPE]``) on whole nodes,
    row-major: its nodes times what a node has, the least of the platform's node groups (a
    whole node's memory; every generic resource of the name, typed or not, for ``gres/NAME``);
    none on a platform that says nothing."""
    per_node = []
    for name in tres:
        amounts = (
            [_node_amount(name, g.memory, dict(g.gres)) for g in platform.groups]
            if (platform is not None and platform.groups)
            else [0]
        )
        per_node.append(min(amounts))
    out: np.ndarray = (nodes.astype(np.int64)[:, None] * np.asarray(per_node, np.int64)).ravel()
    return out


def _node_amount(tres: str, memory: int, gres: dict[str, int]) -> int:
    """A node's amount of ``tres``: its memory (MB), or its units of a generic resource
    (``gres/gpu`` counts every ``gpu`` kind, typed or not; ``gres/gpu:a100`` that kind)."""
    if tres == "mem":
        return memory
    name = tres.removeprefix("gres/")
    if ":" in name:
        return gres.get(name, 0)
    return sum(count for kind, count in gres.items() if kind.split(":")[0] == name)
