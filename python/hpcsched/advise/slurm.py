"""The Slurm adapter: ``squeue --json``, ``sinfo --json`` and ``scontrol`` (Slurm 22.05+).

Reading handles the quirks of Slurm's JSON (``../shared/notes/slurm-local-cluster.md``):
filters are ignored by ``--json`` (we filter here), a nice of 0 is ``null`` and negative nice
values wrap around as unsigned 32-bit integers, an INFINITE time limit is ``null`` (limits are
minutes), and a pending job array is one record whose ``array_task_string`` lists its pending
tasks. Writing uses ``scontrol update JobId=... Priority=...`` (root or SlurmUser); returning a
job to Slurm's own priority is ``scontrol hold`` then ``scontrol release`` (an admin-set
priority is otherwise pinned).
"""

from __future__ import annotations

import calendar
import json
import os
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hpcsched.advise.adapter import NOT_PENDING, VANISHED, WRITTEN, ControllerError, Write
from hpcsched.advise.state import ClusterState, Job, Node, Reservation
from hpcsched.exceptions import InputError

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
_NOT_PENDING = ("no longer pending", "job is not pending", "already completing or completed")


# --- reading ---------------------------------------------------------------------------------


def parse_squeue(document: Mapping[str, Any], source: str = "squeue --json") -> list[Job]:
    """The jobs of an ``squeue --json`` document."""
    records = document.get("jobs")
    if not isinstance(records, list):
        raise InputError("not squeue --json output: no 'jobs' list", path=source, field="jobs")
    jobs = []
    for index, record in enumerate(records):
        try:
            jobs.append(_job(record))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"job record {index} cannot be read ({exc!r})", path=source, field=f"jobs[{index}]"
            ) from None
    return jobs


def _job(r: Mapping[str, Any]) -> Job:
    state = str(r["job_state"]).upper()
    limit = r.get("time_limit")
    array_id = int(_number(r.get("array_job_id")) or 0)
    task = r.get("array_task_id")
    tasks_text = r.get("array_task_string") or ""
    array = None
    tasks = 1
    if array_id and (task is None or tasks_text):
        # the record of an array's pending tasks: one record, several tasks
        tasks = count_array_tasks(str(tasks_text)) if tasks_text else 1
        array = f"{array_id}_[{tasks_text}]"
    elif array_id:
        array = f"{array_id}_{task}"
    start = _number(r.get("start_time"))
    return Job(
        job_id=int(r["job_id"]),
        name=str(r.get("name") or ""),
        user=str(r.get("user_name") or r.get("user_id") or ""),
        partitions=tuple(p for p in str(r.get("partition") or "").split(",") if p),
        state=state,
        reason=str(r.get("state_reason") or ""),
        nodes=max(int(_number(r.get("node_count")) or 1), 1),
        time_limit=None if _number(limit) is None else 60.0 * float(limit),
        submit=float(_number(r.get("submit_time")) or 0.0),
        start=float(start) if state != "PENDING" and start else None,
        priority=int(_number(r.get("priority")) or 0),
        nice=decode_nice(r.get("nice")),
        tasks=tasks,
        array=array,
    )


def _number(value: Any) -> float | None:
    """A JSON number; Slurm writes unset numbers as null (newer releases as
    ``{"set": false, "infinite": ..., "number": ...}``)."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite"):
            return None
        value = value.get("number")
    if value is None or isinstance(value, bool):
        return None
    return float(value)


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
        try:
            name = str(r["name"])
            state = r.get("state")
            words = [state] if isinstance(state, str) else list(state or [])
            words += list(r.get("state_flags") or [])
            states = tuple(dict.fromkeys(str(w).lower() for w in words if w))
            partitions = tuple(str(p) for p in (r.get("partitions") or []))
        except (KeyError, TypeError) as exc:
            raise InputError(
                f"node record {index} cannot be read ({exc!r})",
                path=source,
                field=f"nodes[{index}]",
            ) from None
        if name in nodes:  # listed once per partition by some releases
            old = nodes[name]
            partitions = tuple(dict.fromkeys(old.partitions + partitions))
        nodes[name] = Node(name, states, partitions)
    return list(nodes.values())


def parse_reservations(text: str, source: str = "scontrol show reservation") -> list[Reservation]:
    """Reservations from ``scontrol show reservation`` (one-line ``-o`` or the block form).
    scontrol prints times in its own time zone without saying which: the adapter runs it with
    ``TZ=UTC`` and saved output must be taken the same way."""
    if "No reservations" in text:
        return []
    blocks = re.split(r"\n(?=ReservationName=)", text.strip())
    reservations = []
    for block in blocks:
        if not block.strip():
            continue
        fields = dict(token.split("=", 1) for token in block.split() if "=" in token)
        try:
            reservations.append(
                Reservation(
                    name=fields["ReservationName"],
                    start=_utc_time(fields["StartTime"]),
                    end=_utc_time(fields["EndTime"]),
                    nodes=tuple(expand_hostlist(fields.get("Nodes", ""))),
                    flags=tuple(f for f in fields.get("Flags", "").split(",") if f),
                )
            )
        except (KeyError, ValueError) as exc:
            raise InputError(
                f"reservation cannot be read ({exc!r}): {block[:80]}", path=source
            ) from None
    return reservations


def _utc_time(text: str) -> float:
    return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S")))


def expand_hostlist(expression: str) -> list[str]:
    """``c[1-3,5],d7`` -> ``c1 c2 c3 c5 d7``; ``(null)`` and empty -> none."""
    if expression in ("", "(null)"):
        return []
    names = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", expression):
        match = re.fullmatch(r"(.*)\[([^\]]*)\](.*)", part)
        if match is None:
            names.append(part)
            continue
        prefix, ranges, suffix = match.groups()
        for item in ranges.split(","):
            low, _, high = item.partition("-")
            width = len(low)
            for number in range(int(low), int(high or low) + 1):
                names.append(f"{prefix}{number:0{width}d}{suffix}")
    return names


def version_of(document: Mapping[str, Any]) -> str:
    release = (document.get("meta") or {}).get("Slurm", {}).get("release")
    return f"Slurm {release}" if release else "Slurm"


# --- the live cluster ------------------------------------------------------------------------


class SlurmCluster:
    """A live Slurm cluster, through its commands (``SLURM_CONF`` picks the cluster)."""

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
        now = (before + time.time()) / 2
        return ClusterState(
            now=now,
            jobs=parse_squeue(squeue),
            nodes=parse_sinfo(sinfo),
            reservations=parse_reservations(reservations),
            source="slurm",
            manager=version_of(squeue),
        )

    def pending_ids(self) -> set[int]:
        """Jobs pending right now (read again just before writing)."""
        jobs = parse_squeue(_json(self._run("squeue", "--json").stdout, "squeue --json"))
        return {j.job_id for j in jobs if j.pending}

    def set_priorities(self, priorities: Sequence[tuple[int, int, int]]) -> list[Write]:
        if not priorities:
            return []
        self.check()
        still_pending = self.pending_ids()
        todo = [p for p in priorities if p[0] in still_pending]
        gone = [
            Write(j, old, new, NOT_PENDING) for j, old, new in priorities if j not in still_pending
        ]
        with ThreadPoolExecutor(self.parallel_writes) as pool:
            outcomes = list(pool.map(self._write_one, todo))
        writes = [Write(j, old, new, o) for (j, old, new), o in zip(todo, outcomes, strict=True)]
        failed = [w for w in writes if w.outcome.startswith("controller")]
        if failed:
            # all or nothing: undo this tick's writes, then report
            undo = [(w.job_id, w.new, w.old) for w in writes if w.outcome == WRITTEN]
            with ThreadPoolExecutor(self.parallel_writes) as pool:
                list(pool.map(self._write_one, undo))
            raise ControllerError(
                f"the Slurm controller stopped answering while priorities were written "
                f"({failed[0].outcome}); the {len(undo)} writes made were undone"
            )
        return gone + writes

    def _write_one(self, item: tuple[int, int, int]) -> str:
        job, _, new = item
        try:
            done = self._run("scontrol", "update", f"JobId={job}", f"Priority={new}", check=False)
        except ControllerError as exc:
            return f"controller: {exc}"
        if done.returncode == 0:
            return WRITTEN
        text = (done.stderr + done.stdout).lower()
        if any(m in text for m in _VANISHED):
            return VANISHED
        if any(m in text for m in _NOT_PENDING):
            return NOT_PENDING
        if any(m in text for m in _UNREACHABLE):
            return f"controller: {text.strip()}"
        return f"error: {text.strip()}"

    def release(self, job_ids: Sequence[int]) -> None:
        # an admin-set priority is pinned; hold + release hands the job back to Slurm
        for chunk in _chunks(job_ids):
            ids = ",".join(map(str, chunk))
            self._run("scontrol", "hold", ids, check=False)
            self._run("scontrol", "release", ids, check=False)

    def hold(self, job_ids: Sequence[int]) -> None:
        for chunk in _chunks(job_ids):
            self._run("scontrol", "hold", ",".join(map(str, chunk)), check=False)

    def unhold(self, job_ids: Sequence[int]) -> None:
        for chunk in _chunks(job_ids):
            self._run("scontrol", "release", ",".join(map(str, chunk)), check=False)


def _chunks(ids: Sequence[int], size: int = 200) -> list[Sequence[int]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def _json(text: str, source: str) -> dict[str, Any]:
    try:
        document = json.loads(text)
    except ValueError as exc:
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
    reservation``): the advisor plans them but writes nothing. ``now`` defaults to the latest
    time the files mention (a submission or a start)."""

    name = "slurm-snapshot"

    def __init__(
        self,
        squeue: str | os.PathLike[str],
        sinfo: str | os.PathLike[str],
        reservations: str | os.PathLike[str] | None = None,
        now: float | None = None,
    ) -> None:
        self.paths = (os.fspath(squeue), os.fspath(sinfo))
        self.reservations = None if reservations is None else os.fspath(reservations)
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
            try:
                with open(self.reservations, encoding="utf-8") as f:
                    reservations = parse_reservations(f.read(), self.reservations)
            except OSError as exc:
                raise InputError(
                    f"cannot read file: {exc.strerror or exc}", path=self.reservations
                ) from None
        now = self.now
        if now is None:
            times = [j.submit for j in jobs] + [j.start for j in jobs if j.start]
            now = max(times, default=time.time())
        return ClusterState(
            now=now,
            jobs=jobs,
            nodes=nodes,
            reservations=reservations,
            source=f"{squeue_path} + {sinfo_path}",
            manager=version_of(squeue),
        )

    def set_priorities(self, priorities: Sequence[tuple[int, int, int]]) -> list[Write]:
        raise InputError("a saved snapshot cannot be changed: --apply needs --slurm")

    def release(self, job_ids: Sequence[int]) -> None:
        raise InputError("a saved snapshot cannot be changed: --release needs --slurm")

    def hold(self, job_ids: Sequence[int]) -> None:
        raise InputError("a saved snapshot cannot be changed")

    def unhold(self, job_ids: Sequence[int]) -> None:
        raise InputError("a saved snapshot cannot be changed")


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    except ValueError as exc:
        raise InputError(f"not JSON: {exc}", path=path) from None
    if not isinstance(document, dict):
        raise InputError("not a JSON object", path=path)
    return document
