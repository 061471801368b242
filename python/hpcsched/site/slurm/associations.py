"""The files a site's associations and QOS come in, read into rows: a ``sacctmgr dump`` file,
``sacctmgr show assoc -P`` and ``show qos -P`` output, and hpcsched's small TOML format
(docs/formats.md, "Slurm associations and QOS"). Each row carries where it was read; the
checks across rows (parents, cycles, an association twice) and the public values are
:mod:`hpcsched.site.slurm.accounts`'s, which documents what is read and what is ignored.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from hpcsched import _core
from hpcsched.exceptions import InputError, close_names, did_you_mean, shown, unknown_name
from hpcsched.site.slurm.text import whole_number

# --- what every format reads into -------------------------------------------------------------


@dataclass(frozen=True)
class At:
    """Where in a file (for messages): the line when known."""

    path: str
    line: int | None

    def error(self, message: str, field: str | None = None) -> InputError:
        return InputError(message, path=self.path, line=self.line, field=field)


@dataclass(frozen=True)
class Row:
    """An account's or a user's association as a file gives it; ``parent`` None: not given."""

    account: str
    user: str | None
    parent: str | None
    shares: int | None
    default_qos: str | None
    at: At
    fields: Fields
    #: where a field is when not on the row's line (TOML), by its role
    places: dict[str, At] = dataclasses.field(default_factory=dict)

    def error(self, role: str, message: str) -> InputError:
        """An error of this row's field ``role`` (parent, account, user, default_qos)."""
        return self.places.get(role, self.at).error(message, getattr(self.fields, role))


@dataclass(frozen=True)
class Fields:
    """What a format calls a row's fields (for messages)."""

    parent: str
    account: str
    user: str
    default_qos: str


@dataclass
class Tree:
    """A file's content: None where it has no associations, or no QOS definitions."""

    accounts: list[Row] | None
    qos: list[Limits] | None


@dataclass(frozen=True)
class Limits:
    """A QOS as a file spells it: each limit by its :class:`~hpcsched.site.slurm.accounts.Qos`
    field (``max_tres_per_user``, ``grp_tres`` and ``max_tres_per_job`` for TRES strings),
    with the file's name for it, its text and where it is."""

    name: str
    at: At
    values: dict[str, tuple[str, str, At]]
    name_field: str = "Name"


def sniff(name: str, text: str) -> str:
    """``dump``, ``table`` or ``toml``, by the name (``.toml``) or the first line that says."""
    if name.removesuffix(".gz").endswith(".toml"):
        return "toml"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _DUMP_LINE.match(line):
            return "dump"
        if "|" in line:
            return "table"
        if line.startswith("[") or re.match(r"[\w.\"'-]+\s*=", line):
            return "toml"
        hint = ""
        if re.match(r"(Cluster|Account|Name)\s+\w", line):
            hint = " (sacctmgr's aligned columns: run it with -P)"
        raise InputError(
            f"neither a sacctmgr dump, 'sacctmgr show ... -P' output nor TOML{hint}",
            path=name,
            line=number,
        )
    raise InputError("empty: no associations", path=name)


# --- values ---------------------------------------------------------------------------------

#: ``Fairshare=parent`` as a dump writes it (SLURMDB_FS_USE_PARENT).
_FS_USE_PARENT = 0x7FFFFFFF
T = TypeVar("T")
_DIGITS = re.compile(r"[0-9]+")


def parse_shares(text: str) -> int | None:
    """Shares: a whole number >= 0, or ``parent`` (None); a ValueError otherwise."""
    text = text.strip()
    if text.lower() == "parent":
        return None
    if not _DIGITS.fullmatch(text):  # (ASCII: ``str.isdigit`` takes ``²``)
        raise ValueError(f"shares must be a whole number >= 0 or parent, not {shown(text)}")
    digits = text.lstrip("0") or "0"
    shares = int(digits) if len(digits) <= len(str(_FS_USE_PARENT)) else _FS_USE_PARENT + 1
    if shares > _FS_USE_PARENT:
        raise ValueError(f"shares must be at most {_FS_USE_PARENT - 1}, not {shown(text)}")
    return None if shares == _FS_USE_PARENT else shares


def parse_count(text: str) -> int | None:
    """A limit: a whole number >= 0, or empty (no limit); a ValueError otherwise."""
    text = text.strip()
    if not text:
        return None
    if not _DIGITS.fullmatch(text):  # (ASCII: ``str.isdigit`` takes ``²``)
        raise ValueError(f"must be a whole number >= 0, not {shown(text)}")
    return _count(text)


def _count(text: str, what: str = "") -> int:
    """A limit or a priority within the engine's 32-bit counts (``_core.MAX_COUNT``)."""
    try:
        return whole_number(text, _core.MAX_COUNT)
    except ValueError as exc:
        raise ValueError(f"{what} {exc}" if what else str(exc)) from None


def checked(at: At, field: str, read: Callable[[str], T], text: str) -> T:
    """``read(text)``, its ValueError an InputError at ``at`` of ``field``."""
    try:
        return read(text)
    except ValueError as exc:
        raise at.error(str(exc), field) from None


# --- sacctmgr dump ----------------------------------------------------------------------------

#: A line of a dump: ``Cluster - 'ci':...`` (sacctmgr reads the object up to ``-``).
_DUMP_LINE = re.compile(r"(cluster|machine|parent|account|project|user)\s*-\s", re.IGNORECASE)
_DUMP_FIELDS = Fields("Parent", "Account", "User", "DefaultQOS")
#: The options of sacctmgr's file format (as ``sacctmgr dump`` writes them and ``load`` reads
#: them); only Fairshare, DefaultQOS and Partition are read, the others ignored.
_DUMP_OPTION_NAMES = """
    AdminLevel Classification Comment Coordinator DefaultAccount DefaultQOS DefaultWCKey
    Description Fairshare GrpCPUMins GrpCPURunMins GrpCPUs GrpJobs GrpJobsAccrue GrpMemory
    GrpNodes GrpSubmitJobs GrpTRES GrpTRESMins GrpTRESRunMins GrpWall MaxCPUMinsPerJob
    MaxCPUsPerJob MaxJobs MaxJobsAccrue MaxNodesPerJob MaxSubmitJobs MaxTRESMinsPerJob
    MaxTRESPerJob MaxTRESPerNode MaxTRESRunMins MaxWallDurationPerJob Organization Partition
    Priority QOS WCKeys
"""
_DUMP_OPTIONS = {k.lower(): k for k in _DUMP_OPTION_NAMES.split()}


def read_dump(path: str, text: str, cluster: str | None) -> Tree:
    """The associations of a ``sacctmgr dump`` file (module docstring)."""
    rows: list[Row] = []
    parent: str | None = None
    accounts: set[str] = set()
    for line, number in _dump_lines(text):
        at = At(path, number)
        head = _DUMP_LINE.match(line)
        if head is None:
            raise at.error(f"{shown(line)} is not 'Cluster|Parent|Account|User - NAME:...'")
        kind = head[1].lower()
        name, options = _dump_options(line[head.end() :], at, head[1])
        if kind in ("cluster", "machine"):
            if rows:
                raise at.error("a second Cluster line: a dump is of one cluster", head[1])
            if cluster is not None and name != cluster:
                raise at.error(f"the dump is of cluster {name}, not {cluster}", head[1])
            parent = "root"
            accounts.add("root")
            rows.append(_dump_row(name, "root", None, None, options, at))
        elif not rows:
            raise at.error("the dump does not start with its Cluster line", head[1])
        elif kind == "parent":
            if name not in accounts:
                raise at.error(f"parent {name} is not an account defined above", "Parent")
            parent = name
        elif kind in ("account", "project"):
            accounts.add(name)
            rows.append(_dump_row(name, name, None, parent, options, at))
        else:
            rows.append(_dump_row(name, str(parent), name, None, options, at))
    if not rows:
        raise InputError("no Cluster line: not a sacctmgr dump", path=path)
    # (the Cluster line is root's association: account root, parent none)
    return Tree(rows, None)


def _dump_row(
    name: str, account: str, user: str | None, parent: str | None, options: dict[str, str], at: At
) -> Row:
    if "partition" in options:
        raise at.error(_per_partition(user or name, account, options["partition"]), "Partition")
    shares: int | None = 1  # (sacctmgr's default when a line gives none)
    if "fairshare" in options:
        shares = checked(at, "Fairshare", parse_shares, options["fairshare"])
    return Row(
        account=account,
        user=user,
        parent=parent,
        shares=shares,
        default_qos=options.get("defaultqos"),
        at=at,
        fields=_DUMP_FIELDS,
    )


def _per_partition(user: str, account: str, partition: str) -> str:
    return (
        f"a per-partition association (user {user}, account {account}, partition {partition}): "
        "hpcsched models one association per user and account; leave it out"
    )


def _dump_lines(text: str) -> list[tuple[str, int]]:
    """The lines of a dump as sacctmgr's loader reads them, each with its first line's
    number: an unescaped ``#`` starts a comment, an odd number of final backslashes continues
    the line, then ``\\x`` is ``x``."""
    out: list[tuple[str, int]] = []
    pending, first = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            first = number
        line = _uncommented(raw).rstrip()
        backslashes = len(line) - len(line.rstrip("\\"))
        if backslashes % 2:
            pending += line[:-1]
            continue
        line, pending = re.sub(r"\\(.)", r"\1", pending + line).strip(), ""
        if line:
            out.append((line, first))
    if pending.strip():
        out.append((re.sub(r"\\(.)", r"\1", pending).strip(), first))
    return out


def _uncommented(line: str) -> str:
    """``line`` up to its first ``#`` that an even number of backslashes precedes."""
    backslashes = 0
    for k, ch in enumerate(line):
        if ch == "#" and backslashes % 2 == 0:
            return line[:k]
        backslashes = backslashes + 1 if ch == "\\" else 0
    return line


def _dump_options(text: str, at: At, kind: str) -> tuple[str, dict[str, str]]:
    """The name and the options (lower-case name -> value, unquoted) of a line after
    ``Kind -``: ``:``-separated, ``:`` inside quotes kept, blank values left out (as sacctmgr
    does)."""
    parts, current, quote = [], "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ":":
            parts.append(current)
            current = ""
            continue
        current += ch
    if quote:
        raise at.error(f"a {quote} is not closed", kind)
    parts.append(current)
    name = _unquoted(parts[0])
    if not name or "=" in parts[0]:
        raise at.error(f"{kind} names no {kind.lower()} ({shown(parts[0].strip())})", kind)
    options: dict[str, str] = {}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        key = key.strip().rstrip("+-")  # (QOS+=high adds to the parent's)
        if not part.strip():
            continue
        if not eq or not key:
            raise at.error(f"{shown(part.strip())} is not Option=value", kind)
        if key.lower() not in _DUMP_OPTIONS:
            close = did_you_mean(close_names(key, _DUMP_OPTIONS.values()))
            raise at.error(f"unknown option {shown(key)}; {close or 'not a sacctmgr option'}", key)
        if key.lower() in options:
            raise at.error(f"{key} is given twice", key)
        if _unquoted(value):
            options[key.lower()] = _unquoted(value)
    return name, options


def _unquoted(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


# --- sacctmgr show assoc -P, show qos -P ------------------------------------------------------

#: The columns read of ``show assoc`` by their header (case, spaces and ``_`` aside), each to
#: its role; the others are ignored.
_ASSOC_COLUMNS = {
    "cluster": "cluster",
    "account": "account",
    "user": "user",
    "partition": "partition",
    "share": "share",
    "fairshare": "share",
    "parentname": "parent",
    "parname": "parent",
    "defqos": "default_qos",
    "defaultqos": "default_qos",
}
_ASSOC_REQUIRED = {"account": "Account", "user": "User", "share": "Share"}
#: The columns read of ``show qos``, each to its :class:`Limits` key (``format=`` names too).
_QOS_COLUMNS = {
    "name": "name",
    "priority": "priority",
    "maxjobspu": "max_jobs_per_user",
    "maxjobsperuser": "max_jobs_per_user",
    "maxsubmitpu": "max_submit_jobs_per_user",
    "maxsubmitjobsperuser": "max_submit_jobs_per_user",
    "maxtrespu": "max_tres_per_user",
    "maxtresperuser": "max_tres_per_user",
    "grptres": "grp_tres",
    "maxtres": "max_tres_per_job",
    "maxtrespj": "max_tres_per_job",
    "maxtresperjob": "max_tres_per_job",
    "grpjobs": "grp_jobs",
    "maxnodespu": "max_nodes_per_user",
    "maxnodesperuser": "max_nodes_per_user",
    "maxcpuspu": "max_cpus_per_user",
    "maxcpusperuser": "max_cpus_per_user",
    "grpnodes": "grp_nodes",
    "grpcpus": "grp_cpus",
}


@dataclass(frozen=True)
class _Table:
    """A table's header: its kind (``assoc``, ``qos``) and the columns read, each by its role
    as (index, name in the header)."""

    kind: str
    columns: dict[str, tuple[int, str]]
    width: int
    trailing: bool  # (-p, not -P: every line ends with "|")
    at: At

    def name(self, role: str, default: str) -> str:
        return self.columns[role][1] if role in self.columns else default


def read_tables(path: str, text: str, cluster: str | None) -> Tree:
    """``sacctmgr show assoc -P`` and ``show qos -P`` tables, each after its header line."""
    table: _Table | None = None
    assoc: list[tuple[dict[str, str], At, _Table]] = []
    qos: list[Limits] = []
    kinds = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        at = At(path, number)
        cells = raw.split("|")
        header = _header(cells, at)
        if header is not None:
            table = header
            kinds.add(header.kind)
            continue
        if table is None:
            raise at.error("no header line above (sacctmgr's -n leaves it out: run without)")
        if table.trailing:
            if cells[-1]:
                raise at.error("does not end with '|' as its header does (-p)")
            cells = cells[:-1]
        if len(cells) != table.width:
            raise at.error(
                f"{len(cells)} fields, its header (line {table.at.line}) has {table.width}"
            )
        values = {role: cells[index] for role, (index, _) in table.columns.items()}
        if table.kind == "assoc":
            assoc.append((values, at, table))
            continue
        name = values.pop("name").strip()
        if not name:
            raise at.error("no QOS name", table.name("name", "Name"))
        given = {k: (table.columns[k][1], v, at) for k, v in values.items()}
        qos.append(Limits(name, at, given, table.name("name", "Name")))
    return Tree(
        _assoc_rows(path, assoc, cluster) if "assoc" in kinds else None,
        qos if "qos" in kinds else None,
    )


def _header(cells: list[str], at: At) -> _Table | None:
    """The table a header line starts (None: not a header)."""
    keys = [re.sub(r"[\s_]", "", c).lower() for c in cells]
    if {"account", "user"} <= set(keys):
        kind, known, required = "assoc", _ASSOC_COLUMNS, _ASSOC_REQUIRED
    elif "name" in keys and len(set(keys) & _QOS_COLUMNS.keys()) > 1:
        kind, known, required = "qos", _QOS_COLUMNS, {"name": "Name"}
    else:
        return None
    trailing = len(cells) > 1 and not cells[-1]
    columns: dict[str, tuple[int, str]] = {}
    for index, (key, cell) in enumerate(zip(keys[: len(keys) - trailing], cells, strict=False)):
        role = known.get(key)
        if role is None:
            continue
        if role in columns:
            raise at.error(f"columns {columns[role][1]} and {cell} say the same", cell)
        columns[role] = (index, cell.strip())
    for role, name in required.items():
        if role not in columns:
            raise at.error(f"no {name} column (required)", name)
    return _Table(kind, columns, len(cells) - trailing, trailing, at)


def _assoc_rows(
    path: str, found: list[tuple[dict[str, str], At, _Table]], cluster: str | None
) -> list[Row]:
    """The rows of one cluster; each account's parent from ``ParentName``, else from the
    ``tree`` option's indentation."""
    clusters: dict[str, tuple[At, str]] = {}
    for values, at, table in found:
        if "cluster" in values:
            clusters.setdefault(values["cluster"].strip(), (at, table.name("cluster", "")))
    if cluster is None and len(clusters) > 1:
        at, field = list(clusters.values())[1]
        raise at.error(
            f"associations of {len(clusters)} clusters ({', '.join(clusters)}): name the one "
            "to read",
            field,
        )
    if cluster is not None and clusters and cluster not in clusters:
        raise InputError(
            f"no associations of cluster {cluster} (only of {', '.join(clusters)})",
            path=path,
            field="Cluster",
        )
    if cluster is not None:
        found = [f for f in found if f[0].get("cluster", cluster).strip() == cluster]
    tree = {id(t) for v, _, t in found if v["account"] != v["account"].lstrip(" ")}
    rows: list[Row] = []
    above: list[tuple[int, str]] = []  # (depth, account): the accounts a deeper one may be under
    for values, at, table in found:
        account = values["account"].strip()
        user = values["user"].strip() or None
        fields = Fields(
            table.name("parent", "ParentName"),
            table.name("account", "Account"),
            table.name("user", "User"),
            table.name("default_qos", "Def QOS"),
        )
        if not account:
            raise at.error("no account", fields.account)
        if values.get("partition", "").strip():
            raise at.error(
                _per_partition(user or "-", account, values["partition"].strip()),
                table.name("partition", "Partition"),
            )
        parent = None
        if user is None and "parent" in table.columns:
            parent = values["parent"].strip() or None
        elif user is None and id(table) in tree:  # parent: the account just above, one less deep
            depth = len(values["account"]) - len(values["account"].lstrip(" "))
            while above and above[-1][0] >= depth:  # (each account popped once: any depth)
                above.pop()
            parent = above[-1][1] if above and above[-1][0] == depth - 1 else None
            if depth and parent is None:
                raise at.error(f"account {account} is indented under no account", fields.account)
            above.append((depth, account))
        elif user is None and account != "root":
            raise at.error(
                f"the associations do not say account {account}'s parent: add parentname to "
                "format= (or list them with tree)",
                fields.parent,
            )
        rows.append(
            Row(
                account=account,
                user=user,
                parent=parent,
                shares=checked(at, table.name("share", "Share"), parse_shares, values["share"]),
                default_qos=values.get("default_qos", "").strip() or None,
                at=at,
                fields=fields,
            )
        )
    return rows


# --- TOML -------------------------------------------------------------------------------------

_TOML_ACCOUNT_KEYS = ("parent", "shares", "default_qos", "users")
_TOML_USER_KEYS = ("shares", "default_qos")
_TOML_QOS_KEYS = (
    "priority",
    "max_jobs_per_user",
    "max_submit_jobs_per_user",
    "max_tres_per_user",
    "grp_tres",
    "max_tres_per_job",
    "grp_jobs",
    "max_nodes_per_user",
    "max_cpus_per_user",
    "grp_nodes",
    "grp_cpus",
)
_TOML_TRES_KEYS = ("max_tres_per_user", "grp_tres", "max_tres_per_job")
_TOML_HEADER = re.compile(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?")
_TOML_KEY = re.compile(r"\s*(\"[^\"]*\"|'[^']*'|[\w-]+)\s*[=.]")


def read_toml(path: str, text: str) -> Tree:
    """``[accounts.NAME]`` and ``[qos.NAME]`` tables (module docstring of ``accounts``)."""
    try:
        data = tomllib.loads(text)
    except ValueError as exc:  # (a TOMLDecodeError, or an integer of 5,000 digits)
        line = re.search(r"at line ([0-9]+)", str(exc))
        raise InputError(
            f"invalid TOML: {_toml_fault(exc)}", path=path, line=int(line[1]) if line else None
        ) from None
    index = _toml_lines(text.splitlines())

    def at(*keys: str) -> At:
        return At(path, _toml_line(index, keys))

    def table(value: object, *keys: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise at(*keys).error("must be a table", ".".join(keys))
        return value

    def only(value: dict[str, Any], allowed: tuple[str, ...], *keys: str) -> None:
        for key in value:
            if key not in allowed:
                field = ".".join((*keys, key))
                raise at(*keys, key).error(unknown_name("key", key, allowed), field)

    def name(value: object, *keys: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise at(*keys).error(f"must be a name, not {shown(value)}", ".".join(keys))
        return value

    def shares(value: object, *keys: str) -> int | None:
        return checked(at(*keys), ".".join(keys), parse_shares, str(value))

    only(data, ("accounts", "qos"))
    rows: list[Row] | None = None
    if "accounts" in data:
        rows = []
        for account, spec in table(data["accounts"], "accounts").items():
            keys = ("accounts", account)
            only(table(spec, *keys), _TOML_ACCOUNT_KEYS, *keys)
            dotted = ".".join(keys)
            if account == "root" and "parent" in spec:
                raise at(*keys, "parent").error("root has no parent", f"{dotted}.parent")
            parent = (
                None if account == "root" else name(spec.get("parent", "root"), *keys, "parent")
            )
            qos = spec.get("default_qos")
            rows.append(
                Row(
                    account=account,
                    user=None,
                    parent=parent,
                    shares=shares(spec.get("shares", 1), *keys, "shares"),
                    default_qos=None if qos is None else name(qos, *keys, "default_qos"),
                    at=at(*keys),
                    fields=Fields(f"{dotted}.parent", dotted, "", f"{dotted}.default_qos"),
                    places={k: at(*keys, k) for k in ("parent", "default_qos") if k in spec},
                )
            )
            for user, given in table(spec.get("users", {}), *keys, "users").items():
                ukeys = (*keys, "users", user)
                if isinstance(given, dict):
                    only(given, _TOML_USER_KEYS, *ukeys)
                    value, qos = given.get("shares", 1), given.get("default_qos")
                    skeys: tuple[str, ...] = (*ukeys, "shares")
                else:
                    value, qos, skeys = given, None, ukeys
                dotted_user = ".".join(ukeys)
                rows.append(
                    Row(
                        account=account,
                        user=user,
                        parent=None,
                        shares=shares(value, *skeys),
                        default_qos=None if qos is None else name(qos, *ukeys, "default_qos"),
                        at=at(*ukeys),
                        fields=Fields("", dotted, dotted_user, f"{dotted_user}.default_qos"),
                        places={"default_qos": at(*ukeys, "default_qos")},
                    )
                )
    limits: list[Limits] | None = None
    if "qos" in data:
        limits = []
        for qos_name, spec in table(data["qos"], "qos").items():
            keys = ("qos", qos_name)
            only(table(spec, *keys), _TOML_QOS_KEYS, *keys)
            values = {}
            for key, value in spec.items():
                field = ".".join((*keys, key))
                if key in _TOML_TRES_KEYS and not isinstance(value, str):
                    raise at(*keys, key).error('must be a TRES string ("node=4,cpu=64")', field)
                values[key] = (field, str(value), at(*keys, key))
            limits.append(Limits(qos_name, at(*keys), values, ".".join(keys)))
    return Tree(rows, limits)


def _toml_lines(lines: list[str]) -> dict[tuple[str, ...], int]:
    """The line of each table header and of each key written in a table (the first one), by
    its key path: where a TOML value is, for messages (tomllib keeps no positions)."""
    index: dict[tuple[str, ...], int] = {}
    current: tuple[str, ...] = ()
    for number, raw in enumerate(lines, start=1):
        header = _TOML_HEADER.fullmatch(raw)
        if header:
            current = tuple(p.strip().strip("\"'") for p in header[1].split("."))
            index.setdefault(current, number)
        elif key := _TOML_KEY.match(raw):
            index.setdefault((*current, key[1].strip("\"'")), number)
    return index


def _toml_line(index: dict[tuple[str, ...], int], keys: tuple[str, ...]) -> int | None:
    """The line of ``keys``, else of the nearest enclosing key or table written (a key inside
    an inline table is on the line of the table's key)."""
    return next((index[keys[:n]] for n in range(len(keys), 0, -1) if keys[:n] in index), None)


def _toml_fault(exc: ValueError) -> str:
    """What tomllib says, but for an integer past Python's digits: it says to change them."""
    if isinstance(exc, tomllib.TOMLDecodeError):
        return str(exc)
    return "a number of thousands of digits"
