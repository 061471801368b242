"""The progress line of a long run (issue 27, point 2): at 80 columns it keeps what a user
reads it for (done fraction, simulated date, jobs, decision rate, elapsed time) and its bar,
whole; a wide terminal adds the run's name."""

from __future__ import annotations

import io
import re
import time

import pytest
from rich.console import Console

from hpcsched.cli import _console


def _line(monkeypatch, width: int) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    monkeypatch.setattr(_console, "err_console", console)
    day = 86400.0
    progress = _console.LazyProgress(
        30 * day, "MARS-CW on ALCF-Theta-2022.swf.gz", unix_start=1640995200.0, delay=0.0
    )
    progress.started = time.perf_counter() - 10.0  # ten seconds in: a rate of thousands/s
    progress(12.3 * day, 123_456, 45_678)
    assert progress.progress is not None
    progress.progress.refresh()
    progress.close()
    frames = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue()).replace("\r", "\n")
    return [line for line in frames.split("\n") if line.strip()][-1].rstrip()


@pytest.mark.parametrize("width", [80, 100])
def test_the_progress_line_fits_a_narrow_terminal_with_its_essentials(monkeypatch, width):
    line = _line(monkeypatch, width)
    assert len(line) <= width
    assert "…" not in line
    assert "━" in line  # the bar
    for part in ("41%", "2022-01-13 07:12", "123,456 jobs", "4,568 decisions/s"):
        assert part in line, line
    assert re.search(r"\d:\d\d:\d\d$", line), line  # the time elapsed


def test_a_wide_terminal_also_names_the_run(monkeypatch):
    line = _line(monkeypatch, 160)
    assert line.startswith("MARS-CW on ALCF-Theta-2022.swf.gz")
    assert "2022-01-13 07:12 UTC, 123,456 jobs submitted, 4,568 decisions/s" in line
