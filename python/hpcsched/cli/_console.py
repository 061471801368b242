"""Consoles and small display helpers shared by the commands."""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

if TYPE_CHECKING:
    from hpcsched.sweep import SweepProgress

# User text (trace paths, job names, tokens from input files) is printed literally: no rich
# markup, emoji codes or highlighting is ever interpreted. Style is given with ``style=``.
console = Console(markup=False, emoji=False, highlight=False)
err_console = Console(stderr=True, markup=False, emoji=False, highlight=False)


def labelled(label: str, style: str, text: object) -> Text:
    """``label`` in ``style``, then ``text`` as it is (e.g. a red "error:" and a message)."""
    return Text.assemble((label, style), " ", str(text))


def hours(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 3600:.2f} h"


def percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


@contextmanager
def runs_progress(title: str, *, transient: bool = True) -> Iterator[SweepProgress]:
    """A progress bar over runs (compare, sweep, reproduce) on stderr, when it is a terminal."""
    with Progress(
        TextColumn("{task.description}", markup=False),  # the title is not a format string
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[note]}", markup=False),
        TimeElapsedColumn(),
        console=err_console,
        transient=transient,
        disable=not err_console.is_terminal,
    ) as progress:
        task = progress.add_task(title, total=None, note="")

        def update(done: int, total: int, label: str = "", failed: int = 0) -> None:
            note = f"{failed} failed · {label}" if failed else label
            progress.update(task, completed=done, total=total, note=note[:60])

        yield update


class LazyProgress:
    """A progress bar on stderr that appears only once a run has lasted `delay` seconds, so
    fast runs print nothing. It shows the simulated date (wall clock when the trace says when it
    started, else the day of the trace) and scheduling decisions per second."""

    def __init__(
        self,
        total: float,
        description: str,
        *,
        unix_start: float | None = None,
        delay: float = 1.0,
    ) -> None:
        self.total = max(total, 1.0)
        self.description = description
        self.unix_start = unix_start
        self.delay = delay
        self.started = time.perf_counter()
        self.progress: Progress | None = None
        self.task = None

    def _date(self, now: float) -> str:
        if self.unix_start is None:
            return f"day {now / 86400.0:.1f}"
        moment = datetime.datetime.fromtimestamp(self.unix_start + now, tz=datetime.UTC)
        return moment.strftime("%Y-%m-%d %H:%M UTC")

    def __call__(self, now: float, submitted: int, invocations: int = 0) -> None:
        elapsed = time.perf_counter() - self.started
        if self.progress is None:
            if elapsed < self.delay or not err_console.is_terminal:
                return
            self.progress = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                TextColumn(
                    "{task.fields[date]}, {task.fields[jobs]:,} jobs submitted, "
                    "{task.fields[rate]:,.0f} decisions/s",
                    markup=False,
                ),
                TimeElapsedColumn(),
                console=err_console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(
                self.description, total=self.total, date="", jobs=0, rate=0.0
            )
        self.progress.update(
            self.task,
            completed=min(now, self.total),
            date=self._date(now),
            jobs=submitted,
            rate=invocations / elapsed if elapsed > 0 else 0.0,
        )

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
