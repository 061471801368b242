"""``simulate``'s schedule outputs beside the run directory: Batsim's ``jobs.csv``
(``--batsim-jobs``) and a Gantt chart (``--gantt``, over ``--gantt-hours``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hpcsched.exceptions import OptionError
from hpcsched.units import HOUR

if TYPE_CHECKING:
    from hpcsched.run import Result

#: The chart formats ``--gantt`` writes, by file suffix.
GANTT_FORMATS = ("png", "svg", "pdf")

BatsimJobs = Annotated[
    Path | None,
    typer.Option(
        "--batsim-jobs",
        metavar="FILE",
        help="Also write the run as Batsim's jobs.csv, each job on its nodes (for evalys and "
        "the Batsim tools).",
    ),
]
Gantt = Annotated[
    Path | None,
    typer.Option(
        "--gantt",
        metavar="FILE",
        help="Also draw the schedule as a Gantt chart, nodes by time (.png, .svg or .pdf).",
    ),
]
GanttHours = Annotated[
    str | None,
    typer.Option(
        "--gantt-hours",
        metavar="FROM:TO",
        help="The chart's span in hours since the first submission (default: the busiest "
        "day, the 24 h with the most starts).",
    ),
]


@dataclass(frozen=True)
class ScheduleOutputs:
    """What to write beside the run directory, checked before the run."""

    batsim_jobs: Path | None
    gantt: Path | None
    span: tuple[float, float] | None  # seconds of the replay clock; None: the busiest day

    @classmethod
    def checked(
        cls, batsim_jobs: Path | None, gantt: Path | None, hours: str | None
    ) -> ScheduleOutputs:
        """The options as given; an ``OptionError`` for a span without a chart, a malformed
        span or a chart format not written."""
        if hours is not None and gantt is None:
            raise OptionError(
                "a span of the chart needs the chart: add --gantt FILE", option="--gantt-hours"
            )
        if gantt is not None and gantt.suffix.lstrip(".").lower() not in GANTT_FORMATS:
            raise OptionError(
                f"write the chart as {', '.join('.' + f for f in GANTT_FORMATS)}, not "
                f"{gantt.name!r}",
                option="--gantt",
            )
        return cls(batsim_jobs, gantt, None if hours is None else _span(hours))

    def write(self, result: Result) -> list[tuple[str, Path]]:
        """Writes what was asked (each file whole or not at all); (what, path) of each."""
        written: list[tuple[str, Path]] = []
        if self.batsim_jobs is not None:
            from hpcsched.export import write_batsim_jobs

            write_batsim_jobs(result, self.batsim_jobs)
            written.append(("Batsim jobs.csv", self.batsim_jobs))
        if self.gantt is not None:
            import io

            from hpcsched._io import atomic_write_bytes
            from hpcsched.placement import placement
            from hpcsched.plots.gantt import busiest_day, gantt_chart

            placed = placement(result)
            start, end = self.span or busiest_day(placed)
            figure = gantt_chart(result, start=start, end=end, placed=placed)
            buffer = io.BytesIO()
            figure.savefig(buffer, format=self.gantt.suffix.lstrip(".").lower())
            atomic_write_bytes(self.gantt, buffer.getvalue())
            written.append(("Gantt chart", self.gantt))
        return written


def _span(text: str) -> tuple[float, float]:
    first, colon, last = text.partition(":")
    try:
        if not colon:
            raise ValueError(text)
        start, end = float(first) * HOUR, float(last) * HOUR
    except ValueError:
        raise OptionError(
            f"give FROM:TO hours since the first submission (e.g. 24:48), not {text!r}",
            option="--gantt-hours",
        ) from None
    if not (0 <= start < end < float("inf")):
        raise OptionError(
            f"FROM must be 0 or more and TO larger than FROM, not {text!r}",
            option="--gantt-hours",
        )
    return start, end
