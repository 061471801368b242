"""The Slurm adapter: ``squeue --json``, ``sinfo --json`` and ``scontrol`` (Slurm 22.05+).

Reading handles the quirks of Slurm's JSON (``../shared/notes/slurm-local-cluster.md``):
filters are ignored by ``--json`` (we filter here), a nice of 0 is ``null`` and negative nice
values wrap around as unsigned 32-bit integers, an INFINITE time limit is ``null`` (limits are
minutes), a pending job array is one record whose ``array_task_string`` lists its pending
tasks, and a running job's nodes are a hostlist (``c[1-2]``). Reservations and partitions
come from ``scontrol show reservation -o`` and ``scontrol show partition -o``, whose text
:mod:`hpcsched.advise.scontrol` reads (sinfo's JSON has no partition limits, tiers or
states). Writing uses ``scontrol update JobId=... Priority=...`` (root or SlurmUser);
returning a job to Slurm's own priority is ``scontrol hold`` then ``scontrol release`` (an
admin-set priority is otherwise pinned).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

from hpcsched.advise.adapter import (
    CHANGED,
    DENIED,
    FAILED,
    HELD,
    HELD_NOW,
    LIFTED,
    LOST,
    NOT_HELD,
    NOT_PENDING,
    NOT_TRIED,
    RELEASED,
    STUCK,
    VANISHED,
    WRITTEN,
    ControllerError,
    Write,
    cut_off,
)
from hpcsched.advise.scontrol import parse_partitions as parse_partitions
from hpcsched.advise.scontrol import parse_reservations as parse_reservations
from hpcsched.advise.state import HOLD_REASONS, RUNNING_STATES, ClusterState, Job, Node
from hpcsched.exceptions import InputError
from hpcsched.site.slurm.text import expand_hostlist as expand_hostlist
from hpcsched.site.slurm.text import slurm_json_number

T = TypeVar("T")


# --- reading ---------------------------------------------------------------------------------

#: Slurm's base job states and the flags newer releases list next to them
#: (``"job_state": ["PENDING", "REQUEUED"]``); 22.05 prints one word, a flag's name when a
#: flag is set (``COMPLETING``, ``CONFIGURING``...).
BASE_STATES = frozenset(
    {
        "PENDING",
        "RUNNING",
        "SUSPENDED",
        "COMPLETED",
        "CANCELLED",
        "FAILED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "OUT_OF_MEMORY",
    }
)
STATE_FLAGS = frozenset(
    {
        "COMPLETING",
        "CONFIGURING",
        "RESIZING",
        "REQUEUED",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "SPECIAL_EXIT",
        "STOPPED",
        "REVOKED",
        "RESV_DEL_HOLD",
        "SIGNALING",
        "STAGE_OUT",
        "LAUNCH_FAILED",
        "UPDATE_DB",
        "POWER_UP_NODE",
        "RECONFIG_FAIL",
    }
)


class _Unreadable(Exception):
    """A field of a record has a shape this reader does not know."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason


def parse_squeue(document: Mapping[str, Any], source: str = "squeue --json") -> list[Job]:
    """The jobs of an ``squeue --json`` document. A field of a shape Slurm is not known to
    print is an :class:`InputError` naming it, never a job quietly left out."""
    records = document.get("jobs")
    if not isinstance(records, list):
        raise InputError("not squeue --json output: no 'jobs' list", path=source, field="jobs")
    jobs = []
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise InputError("a job record is not an object", path=source, field=f"jobs[{index}]")
        try:
            jobs.append(_job(record))
        except _Unreadable as exc:
            raise InputError(exc.reason, path=source, field=f"jobs[{index}].{exc.key}") from None
    return jobs


def _job(r: Mapping[str, Any]) -> Job:
    state = job_state(r.get("job_state"))
    limit = _field_number(r, "time_limit")
    array_id = int(_field_number(r, "array_job_id") or 0)
    task = _field_number(r, "array_task_id")
    tasks_text = _text(r, "array_task_string")
    array = None
    tasks = 1
    if array_id and (task is None or tasks_text):
        # the record of an array's pending tasks: one record, several tasks
        try:
            tasks = count_array_tasks(tasks_text) if tasks_text else 1
        except ValueError as exc:
            raise _Unreadable("array_task_string", str(exc)) from None
        array = f"{array_id}_[{tasks_text}]"
    elif array_id:
        array = f"{array_id}_{task:.0f}"
    job_id = _field_number(r, "job_id")
    if job_id is None:
        raise _Unreadable("job_id", "missing")
    start = _field_number(r, "start_time")
    partition = r.get("partition")
    if isinstance(partition, list) and all(isinstance(p, str) for p in partition):
        partitions = tuple(p for p in partition if p)
    else:
        partitions = tuple(p for p in _text(r, "partition").split(",") if p)
    node_names: tuple[str, ...] = ()
    if state in RUNNING_STATES:
        try:
            node_names = tuple(expand_hostlist(_text(r, "nodes")))
        except ValueError as exc:
            raise _Unreadable("nodes", str(exc)) from None
    return Job(
        job_id=int(job_id),
        name=_text(r, "name"),
        user=_text(r, "user_name") or _text(r, "user_id"),
        partitions=partitions,
        state=state,
        reason=_text(r, "state_reason"),
        nodes=max(int(_field_number(r, "node_count") or 1), 1),
        time_limit=None if limit is None else 60.0 * limit,
        submit=float(_field_number(r, "submit_time") or 0.0),
        start=float(start) if state != "PENDING" and start else None,
        priority=int(_field_number(r, "priority") or 0),
        nice=_field(r, "nice", decode_nice),
        tasks=tasks,
        array=array,
        node_names=node_names,
        account=_text(r, "account"),
        qos=_text(r, "qos"),
        cpus=int(_field_number(r, "cpus") or 0),
    )


def job_state(value: Any) -> str:
    """A job's state from Slurm's ``job_state``: one word (22.05) or a list of a base state
    and flags (newer releases). ``COMPLETING`` wins, as in the one-word form; otherwise the
    base state."""
    if isinstance(value, str):
        words = [value.upper()]
    elif isinstance(value, list) and value and all(isinstance(w, str) for w in value):
        words = [w.upper() for w in value]
    else:
        raise _Unreadable(
            "job_state", f"expected a state name or a list of them, not {_show(value)}"
        )
    unknown = [w for w in words if w not in BASE_STATES | STATE_FLAGS]
    if unknown:
        raise _Unreadable("job_state", f"unknown job state {unknown[0]!r}")
    if len(words) == 1 or "COMPLETING" in words:
        return "COMPLETING" if "COMPLETING" in words else words[0]
    base = [w for w in words if w in BASE_STATES]
    if len(base) != 1:
        raise _Unreadable("job_state", f"expected one base state in {_show(value)}")
    return base[0]


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _text(r: Mapping[str, Any], key: str) -> str:
    value = r.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise _Unreadable(key, f"expected text, not {_show(value)}")


def _field(r: Mapping[str, Any], key: str, read: Any) -> Any:
    try:
        return read(r.get(key))
    except (TypeError, ValueError):
        raise _Unreadable(key, f"expected a number, not {_show(r.get(key))}") from None


def _field_number(r: Mapping[str, Any], key: str) -> float | None:
    number: float | None = _field(r, key, _number)
    return number


def _number(value: Any) -> float | None:
    """A JSON number (``site.slurm.text.slurm_json_number``): a TypeError for anything else."""
    return slurm_json_number(value)


def decode_nice(value: Any) -> int:
    """Slurm's nice: ``null`` is 0; negative values arrive wrapped to unsigned 32-bit."""
    number = _number(value)
    if number is None:
        return 0
    nice = int(number)
    return nice - 2**32 if nice >= 2**31 else nice


def count_array_tasks(spec: str) -> int:
    """Tasks in an array expression such as ``0-3``, ``1,3,5-7``, ``0-9:2`` or ``0-15%4``."""
    spec = spec.split("%", 1)[0]
    total = 0
    for part in filter(None, spec.split(",")):
        match = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part.strip())
        if match is None:
            raise ValueError(f"array tasks {spec!r}")
        low = int(match.group(1))
        high = int(match.group(2) or low)
        step = int(match.group(3) or 1)
        total += len(range(low, high + 1, step))
    return max(total, 1)


def parse_sinfo(document: Mapping[str, Any], source: str = "sinfo --json") -> list[Node]:
    """The nodes of an ``sinfo --json`` document (each node once, with all its partitions)."""
    records = document.get("nodes")
    if not isinstance(records, list):
        raise InputError("not sinfo --json output: no 'nodes' list", path=source, field="nodes")
    nodes: dict[str, Node] = {}
    for index, r in enumerate(records):
        if not isinstance(r, Mapping):
            raise InputError("a node record is not an object", path=source, field=f"nodes[{index}]")
        try:
            name = _text(r, "name")
            if not name:
                raise _Unreadable("name", "missing")
            words = _words(r, "state") + _words(r, "state_flags")
            states = tuple(dict.fromkeys(w.lower() for w in words if w))
            partitions = tuple(_words(r, "partitions"))
        except _Unreadable as exc:
            raise InputError(exc.reason, path=source, field=f"nodes[{index}].{exc.key}") from None
        if name in nodes:  # listed once per partition by some releases
            old = nodes[name]
            partitions = tuple(dict.fromkeys(old.partitions + partitions))
        nodes[name] = Node(name, states, partitions)
    return list(nodes.values())


def _words(r: Mapping[str, Any], key: str) -> list[str]:
    """A word or a list of words (``"state": "idle"`` or ``["IDLE", "DRAIN"]``)."""
    value = r.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return list(value)
    raise _Unreadable(key, f"expected a word or a list of words, not {_show(value)}")


def version_of(document: Mapping[str, Any]) -> str:
    release = (document.get("meta") or {}).get("Slurm", {}).get("release")
    return f"Slurm {release}" if release else "Slurm"


# --- the live cluster ------------------------------------------------------------------------


class SlurmCluster:
    """A live Slurm cluster, through its commands (``SLURM_CONF`` picks the cluster).

    Every action on a job is one command per job, eight at a time, each preceded by
    ``squeue -h -j ID`` to check the job still is what the action needs (pending, not held;
    for a release, at the priority the advisor wrote): a job held, started or re-prioritised
    by someone between the advisor's read and its action is skipped, not overridden."""

    name = "slurm"

    def __init__(self, *, timeout: float = 20.0, parallel_writes: int = 8) -> None:
        self.timeout = timeout
        self.parallel_writes = parallel_writes

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "TZ": "UTC"}  # scontrol prints times in its TZ, unlabelled
        try:
            done = subprocess.run(
                list(args),
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
                env=env,
            )
        except FileNotFoundError:
            raise ControllerError(
                f"{args[0]} not found: is this a Slurm login node (Slurm's client commands on "
                "PATH)?"
            ) from None
        except subprocess.TimeoutExpired:
            raise ControllerError(
                f"the Slurm controller did not answer `{' '.join(args[:2])}` within "
                f"{self.timeout:.0f} s"
            ) from None
        if check and done.returncode != 0:
            raise self._error(args, done)
        return done

    def _error(self, args: Sequence[str], done: subprocess.CompletedProcess[str]) -> Exception:
        message = (done.stderr or done.stdout).strip().splitlines()
        detail = message[-1] if message else f"exit code {done.returncode}"
        return ControllerError(f"`{' '.join(args[:3])}` failed: {detail}")

    def check(self) -> None:
        done = self._run("scontrol", "ping", check=False)
        if "UP" not in done.stdout:
            lines = [ln.strip() for ln in (done.stdout + done.stderr).splitlines()]
            detail = next((ln for ln in lines if ln and not ln.startswith("*")), "no answer")
            raise ControllerError(
                f"the Slurm controller does not answer ({detail}; SLURM_CONF="
                f"{os.environ.get('SLURM_CONF', 'default')}); nothing was changed"
            )

    def read(self) -> ClusterState:
        self.check()  # instant when the controller is down; squeue would wait ~10 s
        before = time.time()
        squeue = _json(self._run("squeue", "--json").stdout, "squeue --json")
        sinfo = _json(self._run("sinfo", "--json").stdout, "sinfo --json")
        reservations = self._run("scontrol", "show", "reservation", "-o").stdout
        partitions = self._run("scontrol", "show", "partition", "-o").stdout
        pinned = self._pinned()
        now = (before + time.time()) / 2
        jobs = parse_squeue(squeue)
        if pinned is not None:
            jobs = [replace(j, pinned=pinned.get(j.job_id)) if j.pending else j for j in jobs]
        return ClusterState(
            now=now,
            jobs=jobs,
            nodes=parse_sinfo(sinfo),
            reservations=parse_reservations(reservations),
            partitions=parse_partitions(partitions),
            source="slurm",
            manager=version_of(squeue),
        )

    def config_path(self) -> str:
        """The slurm.conf the controller runs with (``scontrol show config``'s
        ``SLURM_CONF``)."""
        done = self._run("scontrol", "show", "config")
        path = config_path(done.stdout)
        if path is None:
            raise ControllerError(
                "`scontrol show config` names no SLURM_CONF: give --slurm-conf FILE"
            )
        return path

    def _pinned(self) -> dict[int, bool] | None:
        """Which pending jobs have a priority set by hand, from ``sprio``; None when sprio
        cannot tell (not ``priority/multifactor``, or no sprio)."""
        try:
            done = self._run("sprio", "-h", "-o", SPRIO_FORMAT, check=False)
        except ControllerError:
            return None
        return parse_sprio(done.stdout) if done.returncode == 0 else None

    # --- actions, one job at a time ---

    def set_priorities(self, priorities: Sequence[tuple[int, int, int]]) -> list[Write]:
        outcomes = self._each(priorities, self._write_one)
        return [Write(*p, o) for p, o in zip(priorities, outcomes, strict=True)]

    def hold(self, job_ids: Sequence[int]) -> dict[int, str]:
        return dict(zip(job_ids, self._each(job_ids, self._hold_one), strict=True))

    def unhold(self, job_ids: Sequence[int]) -> dict[int, str]:
        return dict(zip(job_ids, self._each(job_ids, self._unhold_one), strict=True))

    def release(self, jobs: Sequence[tuple[int, int | None]]) -> dict[int, str]:
        # an admin-set priority is pinned; hold + release hands the job back to Slurm
        return {j: o for (j, _), o in zip(jobs, self._each(jobs, self._release_one), strict=True)}

    def _each(self, items: Sequence[T], action: Callable[[T], str]) -> list[str]:
        """``action`` on every item, eight at a time; once the controller stops answering
        (or refuses), the items not yet started are not tried."""
        stop = threading.Event()

        def one(item: T) -> str:
            if stop.is_set():
                return NOT_TRIED
            outcome = action(item)
            if cut_off(outcome):
                stop.set()
            return outcome

        if not items:
            return []
        with ThreadPoolExecutor(self.parallel_writes) as pool:
            return list(pool.map(one, items))

    def _write_one(self, item: tuple[int, int, int]) -> str:
        job, _, new = item
        status = self._waiting(job)
        if isinstance(status, str):
            return status
        return self._command("scontrol", "update", f"JobId={job}", f"Priority={new}") or WRITTEN

    def _hold_one(self, job: int) -> str:
        status = self._waiting(job)
        if isinstance(status, str):
            return status
        return self._command("scontrol", "hold", str(job)) or HELD

    def _unhold_one(self, job: int) -> str:
        status = self._status(job)
        if isinstance(status, str):
            return status
        state, reason, _ = status
        if state != "PENDING":
            return NOT_PENDING
        if reason != "JobHeldAdmin":
            return NOT_HELD
        return self._command("scontrol", "release", str(job)) or LIFTED

    def _release_one(self, item: tuple[int, int | None]) -> str:
        job, expected = item
        status = self._waiting(job)
        if isinstance(status, str):
            return status
        if expected is not None and status[2] != expected:
            return CHANGED
        failed = self._command("scontrol", "hold", str(job))
        if failed:
            return failed
        failed = self._command("scontrol", "release", str(job))
        return STUCK + failed if failed else RELEASED

    def _waiting(self, job: int) -> tuple[str, str, int] | str:
        """The job's (state, reason, priority) if it is pending and not held, else the
        outcome that skips it."""
        status = self._status(job)
        if isinstance(status, str):
            return status
        state, reason, priority = status
        if state != "PENDING":
            return NOT_PENDING
        if priority == 0 or reason in HOLD_REASONS:
            return HELD_NOW
        return status

    def _status(self, job: int) -> tuple[str, str, int] | str:
        """The job's state, reason and priority now (``squeue -h -j``: no JSON needed, and
        ``--json`` would list every job), or the outcome when it cannot be read."""
        try:
            done = self._run("squeue", "-h", "-j", str(job), "-o", "%A|%T|%r|%Q", check=False)
        except ControllerError as exc:
            return LOST + str(exc)
        if done.returncode != 0:
            return _outcome(done)
        for line in done.stdout.splitlines():
            fields = line.strip().split("|")
            if len(fields) == 4 and fields[0] == str(job):
                priority = int(fields[3]) if fields[3].isdigit() else 0
                return fields[1].upper(), fields[2], priority
        return VANISHED

    def _command(self, *args: str) -> str:
        """Runs a command that changes a job: "" when it did, else the outcome."""
        try:
            done = self._run(*args, check=False)
        except ControllerError as exc:
            return LOST + str(exc)
        return "" if done.returncode == 0 else _outcome(done)


def config_path(text: str) -> str | None:
    """The ``SLURM_CONF = path`` line of ``scontrol show config``'s output."""
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "SLURM_CONF" and value.strip():
            return value.strip()
    return None


#: What ``sprio`` prints per job and partition: id, priority, then the weighted factors
#: (site, age, association, fair-share, job size, partition, QOS), the nice adjustment and
#: the weighted TRES.
SPRIO_FORMAT = "%i|%Y|%S|%A|%B|%F|%J|%P|%Q|%N|%T"
#: A priority Slurm computed is the sum of its printed (rounded) factors, give or take this.
_ROUNDING = 10


def parse_sprio(text: str) -> dict[int, bool]:
    """Pinned or not, per job listed by ``sprio -h -o SPRIO_FORMAT``. Slurm never recomputes
    a priority set by hand (``scontrol update Priority=``) and sprio lists such a job with
    every factor 0: a job is pinned when, in every partition, its priority is not the sum of
    its factors."""
    pinned: dict[int, bool] = {}
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) != 11:
            continue
        try:
            job = int(fields[0].split("_")[0])
            priority = float(fields[1])
            factors = sum(float(f) for f in fields[2:9]) - float(fields[9])
            factors += sum(float(t.split("=", 1)[1]) for t in fields[10].split(",") if "=" in t)
        except ValueError:
            continue
        row = abs(priority - factors) > _ROUNDING
        pinned[job] = pinned.get(job, True) and row
    return pinned


#: Messages of a controller that does not answer.
_UNREACHABLE = (
    "unable to contact slurm controller",
    "socket timed out",
    "connection refused",
    "zero bytes were transmitted",
    "slurm_load_",
    "communication connection failure",
)
_VANISHED = ("invalid job id",)
_NOT_PENDING = (
    "no longer pending",
    "job is not pending",
    "already completing or completed",
    "has already finished",
)
_HELD = ("held state",)
_DENIED = ("access/permission denied", "permission denied", "not authorized")


def _outcome(done: subprocess.CompletedProcess[str]) -> str:
    """What a failed command on one job means. Order matters: ``slurm_load_jobs error:
    Invalid job id`` is a vanished job, not a lost controller."""
    text = " ".join(f"{done.stderr} {done.stdout}".split()) or f"exit code {done.returncode}"
    low = text.lower()
    if any(m in low for m in _VANISHED):
        return VANISHED
    if any(m in low for m in _NOT_PENDING):
        return NOT_PENDING
    if any(m in low for m in _HELD):
        return HELD_NOW
    if any(m in low for m in _DENIED):
        return DENIED + text
    if any(m in low for m in _UNREACHABLE):
        return LOST + text
    return FAILED + text


def _json(text: str, source: str) -> dict[str, Any]:
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ControllerError(f"{source} did not print JSON ({exc})") from None
    if not isinstance(document, dict):
        raise ControllerError(f"{source} did not print a JSON object")
    errors = document.get("errors") or []
    if errors:
        # Slurm reports a controller it cannot reach here, with exit code 0
        first = errors[0] if isinstance(errors[0], dict) else {"description": str(errors[0])}
        detail = first.get("description") or first.get("error") or "error"
        raise ControllerError(f"{source} failed: {detail} ({first.get('source', 'slurm')})")
    return document


# --- saved snapshots -------------------------------------------------------------------------


class SlurmSnapshot:
    """Saved ``squeue --json`` and ``sinfo --json`` output (and optionally ``scontrol show
    reservation`` and ``scontrol show partition``, either form): the advisor plans them but
    writes nothing. Without ``partitions`` the state's partitions are empty (not known).
    ``now`` defaults to the latest time the files mention (a submission or a start)."""

    name = "slurm-snapshot"

    def __init__(
        self,
        squeue: str | os.PathLike[str],
        sinfo: str | os.PathLike[str],
        reservations: str | os.PathLike[str] | None = None,
        now: float | None = None,
        *,
        partitions: str | os.PathLike[str] | None = None,
    ) -> None:
        self.paths = (os.fspath(squeue), os.fspath(sinfo))
        self.reservations = None if reservations is None else os.fspath(reservations)
        self.partitions = None if partitions is None else os.fspath(partitions)
        self.now = now

    def check(self) -> None:
        return None

    def read(self) -> ClusterState:
        squeue_path, sinfo_path = self.paths
        squeue = _load(squeue_path)
        jobs = parse_squeue(squeue, squeue_path)
        nodes = parse_sinfo(_load(sinfo_path), sinfo_path)
        reservations = []
        if self.reservations is not None:
            reservations = parse_reservations(_read(self.reservations), self.reservations)
        partitions = []
        if self.partitions is not None:
            partitions = parse_partitions(_read(self.partitions), self.partitions)
        now = self.now
        if now is None:
            times = [j.submit for j in jobs] + [j.start for j in jobs if j.start]
            now = max(times, default=time.time())
        return ClusterState(
            now=now,
            jobs=jobs,
            nodes=nodes,
            reservations=reservations,
            partitions=partitions,
            source=f"{squeue_path} + {sinfo_path}",
            manager=version_of(squeue),
        )

    def set_priorities(self, priorities: Sequence[tuple[int, int, int]]) -> list[Write]:
        raise InputError("a saved snapshot cannot be changed: --apply needs --slurm")

    def release(self, jobs: Sequence[tuple[int, int | None]]) -> dict[int, str]:
        raise InputError("a saved snapshot cannot be changed: --release needs --slurm")

    def hold(self, job_ids: Sequence[int]) -> dict[int, str]:
        raise InputError("a saved snapshot cannot be changed")

    def unhold(self, job_ids: Sequence[int]) -> dict[int, str]:
        raise InputError("a saved snapshot cannot be changed")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=path) from None


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    except RecursionError:
        raise InputError("not JSON: nested too deep to read", path=path) from None
    except ValueError as exc:
        raise InputError(f"not JSON: {exc}", path=path) from None
    if not isinstance(document, dict):
        raise InputError("not a JSON object", path=path)
    return document
