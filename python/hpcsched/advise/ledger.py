"""The decision log and the ledger read back from it: what the advisor changed on the cluster
and has not undone (docs/semantics.md, "Advisor ownership and recovery").

The log is JSON lines, appended (:func:`default_log_path` unless told otherwise); every change
is logged BEFORE it is made (``write`` and ``hold`` entries) and its outcome after (``tick``,
``unhold``, ``release``). :class:`Ledger` replays it: the priorities the advisor wrote (or may
have written) and not since handed back, and the holds it placed (or may have placed) and not
since lifted.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpcsched.advise.adapter import (
    DENIED,
    FAILED,
    HELD,
    LIFTED,
    LOST,
    NOT_HELD,
    NOT_PENDING,
    NOT_TRIED,
    RELEASED,
    STUCK,
    VANISHED,
    WRITTEN,
)
from hpcsched.advise.state import Job
from hpcsched.exceptions import InputError


def default_log_path() -> Path:
    """The advisor's decision log of this user: ``$XDG_STATE_HOME/hpcsched/advise.jsonl``,
    ``~/.local/state/hpcsched/advise.jsonl`` when XDG_STATE_HOME is unset or not absolute
    (the XDG base directory rule). One place whatever the current folder, so ``--release``
    finds what earlier runs wrote."""
    state = os.environ.get("XDG_STATE_HOME", "")
    base = Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "hpcsched" / "advise.jsonl"


class DecisionLog:
    """The JSON-lines log: each entry one ``write`` call on a file opened for appending,
    under an exclusive lock and synced, so two advisors sharing it never interleave lines and
    an entry is in the log whole or not at all."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def exists(self) -> bool:
        return self.path.is_file()

    def prepare(self) -> None:
        """Creates the log's folder and checks the log can be appended to, before anything is
        changed on the cluster."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create the decision log's folder: {exc.strerror or exc}",
                path=str(self.path.parent),
            ) from None
        if not self.path.exists():  # created by the first entry
            if not os.access(self.path.parent, os.W_OK | os.X_OK):
                raise InputError(
                    "cannot create the decision log: its folder is not writable",
                    path=str(self.path),
                )
            return
        try:
            os.close(os.open(self.path, os.O_WRONLY | os.O_APPEND))
        except OSError as exc:
            raise InputError(
                f"cannot write the decision log: {exc.strerror or exc}", path=str(self.path)
            ) from None

    def append(self, entry: dict[str, Any]) -> None:
        data = (json.dumps(entry, default=_plain, allow_nan=False) + "\n").encode()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise InputError(
                f"cannot write the decision log: {exc.strerror or exc}", path=str(self.path)
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def entries(self) -> Iterator[dict[str, Any]]:
        if not self.exists():
            return
        try:
            with open(self.path, encoding="utf-8") as f:
                for line in f:
                    try:
                        entry = json.loads(line)
                    except (ValueError, RecursionError):
                        continue  # a line cut by a crash: the entries before it still count
                    if isinstance(entry, dict):
                        yield entry
        except OSError as exc:
            raise InputError(
                f"cannot read the decision log: {exc.strerror or exc}", path=str(self.path)
            ) from None


#: A job as the log names it: its id and its submit time (Unix s), so that a job id the
#: cluster reuses, or another cluster's job with the same id, is never taken for it. Entries
#: of logs written before submit times were logged have None.
Key = tuple[int, float | None]


@dataclass
class Ledger:
    """What the log says the advisor changed and has not undone."""

    #: per job, every priority the advisor wrote to it (or may have: the write got no answer)
    #: since it last handed the job back to Slurm
    written: dict[Key, set[int]] = field(default_factory=dict)
    #: jobs the advisor held (or may have: logged before the hold), not lifted since
    holds: set[Key] = field(default_factory=set)

    @classmethod
    def replay(cls, log: DecisionLog | None) -> Ledger:
        ledger = cls()
        if log is not None:
            for entry in log.entries():
                ledger.apply(entry)
        return ledger

    @property
    def empty(self) -> bool:
        return not self.written and not self.holds

    def key(self, job: Job) -> Key | None:
        """The log's key of a live job, if the log names it."""
        for key in ((job.job_id, job.submit), (job.job_id, None)):
            if key in self.written or key in self.holds:
                return key
        return None

    def values(self, job: Job) -> set[int]:
        key = self.key(job)
        return self.written.get(key, set()) if key is not None else set()

    def held(self, job: Job) -> bool:
        key = self.key(job)
        return key is not None and key in self.holds

    def _forget(self, key: Key) -> None:
        self.written.pop(key, None)
        self.holds.discard(key)

    def _unwrite(self, key: Key, value: int) -> None:
        values = self.written.get(key)
        if values is not None:
            values.discard(value)
            if not values:
                del self.written[key]

    def apply(self, entry: dict[str, Any]) -> None:
        """Updates the ledger with one log entry (in log order)."""
        event = entry.get("event")
        if event == "write":
            for r in entry.get("jobs", []):
                self.written.setdefault(_key(r), set()).add(int(r["new"]))
        elif event == "hold":
            self.holds.update(_key(r) for r in entry.get("jobs", []))
        elif event == "tick":
            self._tick(entry)
        elif event == "unhold":
            for r in entry.get("jobs", []):
                if r.get("outcome") in (LIFTED, NOT_PENDING, VANISHED):
                    self._forget(_key(r))  # hold + release also ended the advisor's pin
                elif r.get("outcome") == NOT_HELD:
                    self.holds.discard(_key(r))  # never placed: a priority written stays
        elif event == "release":
            self._release(entry)

    def _tick(self, entry: dict[str, Any]) -> None:
        for w in entry.get("writes", []):
            key, new, outcome = _key(w), int(w["new"]), w.get("outcome", "")
            if outcome == WRITTEN:
                self.written.setdefault(key, set()).add(new)
            elif not outcome.startswith(LOST):  # not made (no answer: it may have been)
                self._unwrite(key, new)
        for u in entry.get("undo", []):
            key, outcome = _key(u), u.get("outcome", "")
            if u.get("how") == "restore":
                if outcome == WRITTEN:
                    self._unwrite(key, int(u["new"]))
            elif outcome == RELEASED:
                self._forget(key)
            elif outcome.startswith(STUCK):
                self.written.pop(key, None)  # held by the advisor: lifted at the next tick
            elif not outcome.startswith(LOST):
                self.holds.discard(key)  # no hold placed
        for h in entry.get("holds", []):
            if isinstance(h, int):  # logs before holds were logged with their outcome
                self.holds.add((h, None))
            elif h.get("outcome") != HELD and not h.get("outcome", "").startswith(LOST):
                self.holds.discard(_key(h))
        for job in entry.get("unheld", []):
            if isinstance(job, int):
                self.holds.discard((job, None))

    def _release(self, entry: dict[str, Any]) -> None:
        if "outcomes" not in entry:  # logs before outcomes were logged: ids released
            for job in entry.get("jobs", []):
                self._forget((int(job), None))
            return
        for r in entry["outcomes"]:
            key, outcome = _key(r), r.get("outcome", "")
            if outcome.startswith(STUCK):
                self.written.pop(key, None)
            elif outcome.startswith(LOST):
                pass  # no answer: the hold may be placed, the priority may still be ours
            elif outcome.startswith((FAILED, DENIED)) or outcome == NOT_TRIED:
                self.holds.discard(key)  # no hold placed; the priority is still the advisor's
            else:  # released, or no longer the advisor's (gone, started, changed, held)
                self._forget(key)
        for r in entry.get("dropped", []):
            self.written.pop(_key(r), None)


def _key(record: dict[str, Any]) -> Key:
    submit = record.get("submit")
    return int(record["job_id"]), None if submit is None else float(submit)


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON-able: {value!r}")
