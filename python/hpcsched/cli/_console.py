"""Consoles and small display helpers shared by the commands."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

console = Console()
err_console = Console(stderr=True)


def hours(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 3600:.2f} h"


def percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


class LazyProgress:
    """A progress bar on stderr that appears only once a run has lasted `delay` seconds, so
    fast runs print nothing."""

    def __init__(self, total: float, description: str, delay: float = 1.0) -> None:
        self.total = max(total, 1.0)
        self.description = description
        self.delay = delay
        self.started = time.perf_counter()
        self.progress: Progress | None = None
        self.task = None

    def __call__(self, now: float, submitted: int) -> None:
        if self.progress is None:
            if time.perf_counter() - self.started < self.delay or not err_console.is_terminal:
                return
            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("day {task.fields[day]:.1f}, {task.fields[jobs]} jobs submitted"),
                TimeElapsedColumn(),
                console=err_console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(self.description, total=self.total, day=0.0, jobs=0)
        self.progress.update(
            self.task, completed=min(now, self.total), day=now / 86400.0, jobs=submitted
        )

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
