"""A site's associations and QOS, as slurmdbd holds them: what Slurm's fair-share and QOS limits
need and slurm.conf does not say (docs/formats.md, "Slurm associations and QOS").

:func:`read_slurm_accounts` reads, recognising the format by the content:

- a ``sacctmgr dump CLUSTER file=F`` file: ``Cluster -``, ``Parent -``, ``Account -`` and
  ``User -`` lines, ``:``-separated options, a ``Parent`` line making later lines its children
  (sacctmgr's own loader rules: ``#`` comments, ``\\`` continuations). A dump holds no QOS
  definitions. ``Fairshare=parent`` is written there as its raw value 2147483647.
- ``sacctmgr show assoc ... -P`` (or ``-p``) output, optionally followed in the same file by
  ``sacctmgr show qos -P`` output: each table starts with its header line; columns are matched
  by name, in any order and case. Required: ``Account``, ``User``, ``Share`` (``FairShare``),
  and each account's parent: a ``ParentName`` (``Par Name``) column or the ``tree`` option's
  indentation. Read when present: ``Cluster`` (several clusters need ``cluster=``),
  ``Partition`` (a per-partition association is an error: one association per user and
  account is modelled), ``Def QOS``. The QOS table needs ``Name``; it reads ``Priority``,
  ``MaxJobsPU``, ``MaxSubmitPU``, ``MaxTRESPU``, ``GrpTRES``, ``MaxTRES`` (per job; also
  ``MaxTRESPerJob``), ``GrpJobs`` (and the older ``MaxNodesPU``, ``MaxCPUsPU``, ``GrpNodes``,
  ``GrpCPUs``). Every other column is ignored.
- a small TOML file (``.toml``, or content that is TOML): ``[accounts.NAME]`` tables (``parent``,
  default root; ``shares``; ``default_qos``; ``users = { user = shares }``, or per user
  ``{ shares = ..., default_qos = ... }``) and ``[qos.NAME]`` tables (``priority``,
  ``max_jobs_per_user``, ``max_submit_jobs_per_user``, ``max_tres_per_user``, ``grp_tres``,
  ``max_tres_per_job``, ``grp_jobs``, or ``max_nodes_per_user``, ``max_cpus_per_user``,
  ``grp_nodes``, ``grp_cpus``).

Shares are whole numbers >= 0, or ``parent`` (None: the association counts as its parent's).
A user association without a default QOS takes the nearest account's above it (as Slurm). TRES
strings (``node=4,cpu=64,mem=100G,gres/gpu=8``) keep ``node``, ``cpu``, ``mem`` (MB; a count
may end in a unit, K to P, as sacctmgr reads it) and ``gres/NAME[:TYPE]``; every other TRES
(``license/...``, ``billing``, ``energy``, ``fs/...``, ...) is checked, kept by name in
:attr:`Qos.ignored_tres` and named in the run's notes, not simulated. Limits Slurm has beyond
the :class:`Qos` fields (per-account, per-node, wall time, TRES-minutes, association limits)
are ignored. When QOS definitions are read (a QOS
table, ``[qos]`` tables, or ``qos=FILE``), every default QOS must be one of them.

Anything malformed is an :class:`InputError` naming the file, the line (the TOML line is found
from the text, best effort) and the field: an unknown parent, a cycle of parents, an
association given twice, negative shares, a bad TRES string, a dump option sacctmgr does not
know, a TOML key not listed above.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from hpcsched._io import read_text
from hpcsched.exceptions import InputError, shown, unknown_name
from hpcsched.site.slurm.associations import (
    At,
    Fields,
    Limits,
    Row,
    Tree,
    checked,
    parse_count,
    read_dump,
    read_tables,
    read_toml,
    sniff,
)
from hpcsched.site.slurm.tres import parse_tres_limits


@dataclass(frozen=True)
class Account:
    """An account of the association tree (its association on the cluster)."""

    name: str
    parent: str | None  # None only for "root"
    shares: int | None  # Fairshare=N; None means Fairshare=parent


@dataclass(frozen=True)
class UserAssociation:
    """A user in an account, with its own shares."""

    user: str
    account: str
    shares: int | None  # None means Fairshare=parent
    default_qos: str | None


@dataclass(frozen=True)
class Qos:
    """A quality of service: its priority and the limits hpcsched models (None: no limit)."""

    name: str
    priority: int = 0
    max_jobs_per_user: int | None = None
    max_submit_jobs_per_user: int | None = None
    max_nodes_per_user: int | None = None  # MaxTRESPerUser node=
    max_cpus_per_user: int | None = None  # MaxTRESPerUser cpu=
    grp_nodes: int | None = None  # GrpTRES node=
    grp_cpus: int | None = None  # GrpTRES cpu=
    grp_jobs: int | None = None
    #: MaxTRESPerUser and GrpTRES on memory (MB) and generic resources (``gres/gpu``,
    #: ``gres/gpu:a100``), as (TRES, count) pairs in the file's order.
    max_other_tres_per_user: tuple[tuple[str, int], ...] = ()
    grp_other_tres: tuple[tuple[str, int], ...] = ()
    #: MaxTRESPerJob (sacctmgr's ``MaxTRES``) on nodes, CPUs, memory and generic resources.
    max_tres_per_job: tuple[tuple[str, int], ...] = ()
    #: The limits on TRES hpcsched does not simulate (``GrpTRES license/matlab``), each once.
    ignored_tres: tuple[str, ...] = ()

    def tres_limits(self) -> list[tuple[str, str, int]]:
        """Every TRES limit as (scope, TRES, count): scope ``per_user``, ``group`` or
        ``per_job``; TRES ``node``, ``cpu``, ``mem``, ``gres/...``."""
        out: list[tuple[str, str, int]] = []
        for scope, tres, value in (
            ("per_user", "node", self.max_nodes_per_user),
            ("per_user", "cpu", self.max_cpus_per_user),
            ("group", "node", self.grp_nodes),
            ("group", "cpu", self.grp_cpus),
        ):
            if value is not None:
                out.append((scope, tres, value))
        out += [("per_user", t, v) for t, v in self.max_other_tres_per_user]
        out += [("group", t, v) for t, v in self.grp_other_tres]
        out += [("per_job", t, v) for t, v in self.max_tres_per_job]
        return out


#: Slurm's default QOS, there unless a file defines its own.
NORMAL = Qos("normal")


@dataclass(frozen=True)
class SlurmAccounts:
    """The association tree and the QOS of one cluster."""

    accounts: tuple[Account, ...]  # root first, parents before children
    users: tuple[UserAssociation, ...]  # in the accounts' order, then the file's
    qos: tuple[Qos, ...]  # always contains "normal" (priority 0) unless the file defines it

    @classmethod
    def default_for(cls, users_accounts: Iterable[tuple[str, str]]) -> SlurmAccounts:
        """The tree a site gets from plain ``sacctmgr add account A`` and ``add user U
        account=A`` (Fairshare 1 each: sacctmgr's default) for each (user, account) pair, in
        the order first seen: every account a child of root, QOS ``normal`` only. For a
        workload whose site's associations are not known."""
        accounts: dict[str, Account] = {"root": Account("root", None, 1)}
        users: dict[tuple[str, str], UserAssociation] = {}
        for user, account in users_accounts:
            if not user or not account:
                raise ValueError(f"a user and an account, not {shown((user, account))}")
            accounts.setdefault(account, Account(account, "root", 1))
            users.setdefault((user, account), UserAssociation(user, account, 1, None))
        return cls(tuple(accounts.values()), tuple(users.values()), (NORMAL,))


def read_slurm_accounts(
    path: str | os.PathLike[str],
    *,
    qos: str | os.PathLike[str] | None = None,
    cluster: str | None = None,
) -> SlurmAccounts:
    """The associations of ``path`` (a dump, ``sacctmgr show assoc -P`` output with or without
    ``show qos -P`` output after it, or TOML: module docstring) with the QOS defined there and
    in the file ``qos`` (``sacctmgr show qos -P`` output or TOML). ``cluster`` chooses one of
    the clusters of ``show assoc`` output that lists several (a dump's must be it)."""
    tree = _read(path, cluster)
    if tree.accounts is None:
        raise InputError("no associations (only QOS definitions)", path=os.fspath(path))
    limits = tree.qos
    if qos is not None:
        limits = [*(limits or []), *_qos_limits(qos)]
    return _build(tree.accounts, None if limits is None else _definitions(limits))


def read_slurm_qos(path: str | os.PathLike[str]) -> tuple[Qos, ...]:
    """The QOS definitions of ``path`` (``sacctmgr show qos -P`` output, alone or after
    ``show assoc -P`` output; or a TOML file's ``[qos]`` tables), as the file gives them."""
    return tuple(q for q, _ in _definitions(_qos_limits(path)))


def _read(path: str | os.PathLike[str], cluster: str | None) -> Tree:
    name = os.fspath(path)
    text = read_text(name)
    kind = sniff(name, text)
    if kind == "dump":
        return read_dump(name, text, cluster)
    if kind == "table":
        return read_tables(name, text, cluster)
    return read_toml(name, text)


def _qos_limits(path: str | os.PathLike[str]) -> list[Limits]:
    tree = _read(path, None)
    if tree.qos is None:
        raise InputError(
            "no QOS definitions (a 'sacctmgr show qos -P' table or [qos] tables; a dump has none)",
            path=os.fspath(path),
        )
    return tree.qos


def _definitions(limits: list[Limits]) -> list[tuple[Qos, At]]:
    """Each QOS, checked, with where it is defined; a QOS defined twice is an error."""
    out: list[tuple[Qos, At]] = []
    seen: dict[str, At] = {}
    for qos in limits:
        if qos.name in seen:
            first = seen[qos.name]
            where = first.path if first.path != qos.at.path else f"line {first.line}"
            raise qos.at.error(f"QOS {qos.name} is already defined ({where})", qos.name_field)
        seen[qos.name] = qos.at
        out.append((_qos(qos), qos.at))
    return out


#: The QOS fields a TRES string's node and CPU limits go to (the others: ``_OTHER_TRES``).
_TRES_LIMITS = {
    "max_tres_per_user": ("max_nodes_per_user", "max_cpus_per_user"),
    "grp_tres": ("grp_nodes", "grp_cpus"),
}
_OTHER_TRES = {
    "max_tres_per_user": "max_other_tres_per_user",
    "grp_tres": "grp_other_tres",
    "max_tres_per_job": "max_tres_per_job",
}
#: sacctmgr's names of the TRES limits, for the notes.
_TRES_FIELD_NAMES = {
    "max_tres_per_user": "MaxTRESPerUser",
    "grp_tres": "GrpTRES",
    "max_tres_per_job": "MaxTRESPerJob",
}


def _qos(limits: Limits) -> Qos:
    """A QOS from its limits as written; a limit given twice (``MaxTRESPU`` node= and the
    older ``MaxNodesPU``) must agree."""
    out: dict[str, int | None] = {}
    other: dict[str, tuple[tuple[str, int], ...]] = {}
    ignored: list[str] = []
    for key, (field, text, at) in limits.values.items():
        if key in _OTHER_TRES:
            counts, unfollowed = checked(at, field, parse_tres_limits, text)
            ignored += [f"{_TRES_FIELD_NAMES[key]} {t}" for t in unfollowed]
            given = {}
            if key in _TRES_LIMITS:  # (per user and group: nodes and CPUs have their fields)
                node_field, cpu_field = _TRES_LIMITS[key]
                given = {node_field: counts.pop("node", None), cpu_field: counts.pop("cpu", None)}
            other[_OTHER_TRES[key]] = tuple(counts.items())
        else:
            given = {key: checked(at, field, parse_count, text)}
        for target, value in given.items():
            if value is not None and out.get(target) not in (None, value):
                raise at.error(
                    f"QOS {limits.name}: {field} gives {value}, another column or key "
                    f"{out[target]}",
                    field,
                )
            if value is not None or target not in out:
                out[target] = value
    priority = out.pop("priority", None) or 0
    return Qos(limits.name, priority, **out, **other, ignored_tres=tuple(ignored))  # type: ignore[arg-type]


def _build(rows: list[Row], definitions: list[tuple[Qos, At]] | None) -> SlurmAccounts:
    """The checked tree: root first, every parent known, no cycle, nothing twice, each user's
    default QOS inherited from its accounts when not its own."""
    accounts: dict[str, Row] = {}
    for row in (r for r in rows if r.user is None):
        if row.account in accounts:
            raise row.error(
                "account",
                f"account {row.account} is already defined{_line_of(accounts[row.account].at)}",
            )
        if row.account == "root" and row.parent is not None:
            raise row.error("parent", f"root has no parent (not {row.parent})")
        if row.account != "root" and row.parent is None:
            raise row.error("parent", f"account {row.account} names no parent")
        accounts[row.account] = row
    if "root" not in accounts:  # (a TOML file's root is implicit: Fairshare 1)
        root = Row("root", None, None, 1, None, At("", None), Fields("", "", "", ""))
        accounts = {"root": root, **accounts}
    children: dict[str, list[str]] = {name: [] for name in accounts}
    for row in accounts.values():
        if row.parent is not None:
            if row.parent not in accounts:
                raise row.error(
                    "parent", f"parent {row.parent} of account {row.account} is no account"
                )
            children[row.parent].append(row.account)
    order: list[str] = []
    stack = ["root"]
    while stack:
        order.append(name := stack.pop())
        stack.extend(reversed(children[name]))
    reached = set(order)
    unreached = [r for name, r in accounts.items() if name not in reached]
    on_cycle = _on_cycles(accounts, [r.account for r in unreached])
    for row in (r for r in unreached if r.account in on_cycle):
        cycle = [row.account]
        while (parent := str(accounts[cycle[-1]].parent)) != row.account:
            cycle.append(parent)
        raise row.error(
            "parent",
            f"account {row.account} is in a cycle of parents: {' -> '.join([*cycle, parent])}",
        )
    defined = None if definitions is None else {NORMAL.name, *(q.name for q, _ in definitions)}
    users: dict[tuple[str | None, str], Row] = {}
    for row in rows:
        if defined is not None and row.default_qos is not None and row.default_qos not in defined:
            raise row.error(
                "default_qos", unknown_name("default QOS", row.default_qos, sorted(defined))
            )
        if row.user is None:
            continue
        if row.account not in accounts:
            raise row.error("account", f"account {row.account} of user {row.user} is no account")
        first = users.setdefault((row.user, row.account), row)
        if first is not row:
            raise row.error(
                "user",
                f"user {row.user} in account {row.account} is already defined{_line_of(first.at)}",
            )
    rank = {name: k for k, name in enumerate(order)}
    # Slurm's inheritance: the nearest account's default QOS that has one (parents first)
    inherited: dict[str | None, str | None] = {None: None}
    for name in order:
        own = accounts[name].default_qos
        inherited[name] = own if own is not None else inherited[accounts[name].parent]
    associations = []
    for row in sorted(users.values(), key=lambda r: rank[r.account]):
        qos = row.default_qos if row.default_qos is not None else inherited[row.account]
        associations.append(UserAssociation(str(row.user), row.account, row.shares, qos))
    qos_list = [q for q, _ in definitions or []]
    if NORMAL.name not in {q.name for q in qos_list}:
        qos_list.insert(0, NORMAL)
    return SlurmAccounts(
        accounts=tuple(Account(n, accounts[n].parent, accounts[n].shares) for n in order),
        users=tuple(associations),
        qos=tuple(qos_list),
    )


def _on_cycles(accounts: dict[str, Row], names: list[str]) -> set[str]:
    """The accounts of ``names`` that lie on a cycle of parents, each chain of parents walked
    once (every parent is known and outside the tree: each chain ends in a cycle)."""
    walk_of: dict[str, int] = {}
    on_cycle: set[str] = set()
    for walk, name in enumerate(names):
        path = []
        while name not in walk_of:
            walk_of[name] = walk
            path.append(name)
            name = str(accounts[name].parent)
        if walk_of[name] == walk:  # (this walk closed the cycle)
            on_cycle.update(path[path.index(name) :])
    return on_cycle


def _line_of(at: At) -> str:
    return f" (line {at.line})" if at.line is not None else ""
