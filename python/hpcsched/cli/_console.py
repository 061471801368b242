"""Consoles and small display helpers shared by the commands."""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from hpcsched.sweep import SweepProgress

#: Control characters (C0 but newline and tab, DEL, C1) and how they are printed: escaped,
#: ``\x1b``, so that a trace, platform or policy name cannot drive the terminal.
_ESCAPED = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if chr(c) not in "\n\t"}


class _LiteralConsole(Console):
    """A console whose output holds no control character it did not put there itself.

    The one place every printed text passes (tables, messages, progress bars): each text
    segment is escaped as it is written out, after rich's own styles and cursor moves, which
    are not text, were laid out."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else segment._replace(text=segment.text.translate(_ESCAPED))
            for segment in buffer
        )


# User text (trace paths, job names, tokens from input files) is printed literally: no rich
# markup, emoji codes or highlighting is ever interpreted, and control characters are escaped.
# Style is given with ``style=``.
console = _LiteralConsole(markup=False, emoji=False, highlight=False)
err_console = _LiteralConsole(stderr=True, markup=False, emoji=False, highlight=False)


def labelled(label: str, style: str, text: object) -> Text:
    """``label`` in ``style``, then ``text`` as it is (e.g. a red "error:" and a message)."""
    return Text.assemble((label, style), " ", str(text))


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises KeyboardInterrupt: a command stopped by either
    cleans up the same way (no staging folder left, finished runs kept) and says so. (Here,
    beside ``interrupted``, so that a command can tell which stopped it; ``hpcsched.cli``
    raises it and exports it.)"""


#: Whether the command has said what its interruption left (``interrupted``); main says it
#: otherwise.
_interruption_said = False


def interrupted(text: str) -> None:
    """The one line a command prints when Ctrl-C or SIGTERM stops it: what it kept, and how to
    go on."""
    global _interruption_said
    err_console.print(labelled("interrupted:", "bold yellow", text), soft_wrap=True)
    _interruption_said = True


def interruption_said(reset: bool = False) -> bool:
    """Whether ``interrupted`` was called (since the last reset)."""
    global _interruption_said
    said = _interruption_said
    if reset:
        _interruption_said = False
    return said


def _numeric(text: str) -> bool:
    """A cell that reads as a number (``1,234.5``, ``12.0%``, ``-``, ``3.1 h``)."""
    stripped = text.replace(",", "").replace("%", "").removesuffix(" h").strip()
    if stripped in ("", "-"):
        return True
    try:
        float(stripped)
    except ValueError:
        return False
    return True


def kept_whole(table: Table) -> Table:
    """Makes ``table`` readable at any width: number columns never shrink below their widest
    cell (a cut number reads as another number), text columns fold onto more lines instead of
    ending in an ellipsis."""
    for column in table.columns:
        cells = [c.plain if isinstance(c, Text) else str(c) for c in column.cells]
        if cells and all(_numeric(c) for c in cells):
            header = column.header.plain if isinstance(column.header, Text) else column.header
            words = str(header).split() or [""]
            column.min_width = max(len(c) for c in [*cells, *words])
        else:
            column.overflow = "fold"
    return table


#: Width a table needs beyond its cells: a border and a space either side of each column.
def _table_width(widths: list[int]) -> int:
    return sum(widths) + 3 * len(widths) + 1


def _heading_width(heading: str) -> int:
    """Headings wrap at spaces: their longest word is the least they need."""
    return max(len(word) for word in heading.split())


def _table(
    labels: list[tuple[str, list[str]]],
    label_widths: list[int],
    metrics: list[tuple[str, list[str]]],
    widths: list[int],
    rows: range,
    **options: Any,
) -> Table:
    """The ``rows`` of the label and metric columns at fixed widths (labels fold, numbers are
    right-aligned)."""
    view = Table(title_justify="left", **options)
    for (heading, _), w in zip(labels, label_widths, strict=True):
        view.add_column(heading, overflow="fold", width=w)
    for (heading, _), w in zip(metrics, widths, strict=True):
        view.add_column(heading, justify="right", width=w)
    for row in rows:
        view.add_row(*(cells[row] for _, cells in labels), *(c[row] for _, c in metrics))
    return view


def fitted_tables(
    title: str,
    labels: list[tuple[str, list[str]]],
    metrics: list[tuple[str, list[str]]],
    width: int,
) -> list[RenderableType]:
    """One table, or as many as it takes to fit ``width`` columns: each repeats the label
    columns and takes the next metric columns that fit (numbers are never cut, headings wrap;
    labels fold into half the width only when the whole table would not fit otherwise).
    When the labels would take more than half the width, the rows are stacked under their
    first label instead (a heading line per run of equal values, as ``workload: DAS2-fs1``),
    so that no label is cut mid-word; a label still wider than its share folds."""

    def need(heading: str, cells: list[str]) -> int:
        return max([_heading_width(heading), *(len(c) for c in cells)])

    rows = len(labels[0][1]) if labels else 0
    groups: list[tuple[str, range]] = []
    stacked_heading = ""
    natural = [min(need(h, cells), 40) for h, cells in labels]
    if len(labels) >= 2 and _table_width(natural) > width // 2:
        stacked_heading, values = labels[0]
        start = 0
        for row in range(1, rows + 1):
            if row == rows or values[row] != values[start]:
                groups.append((values[start], range(start, row)))
                start = row
        if len(groups) == rows:  # no two rows share it: stacking would not save a line
            groups = []
        else:
            labels = labels[1:]

    def table_width(widths: list[int]) -> int:
        # stacked tables have no borders, two spaces between columns
        return sum(widths) + 2 * (len(widths) - 1) if groups else _table_width(widths)

    label_widths = [min(need(h, cells), 40) for h, cells in labels]
    everything = [*label_widths, *(need(h, c) for h, c in metrics)]
    if labels and table_width(label_widths) > width // 2 and table_width(everything) > width:
        # labels fold into half the width, leaving the rest to the numbers
        budget = width // 2 - 3 * len(labels)
        while sum(label_widths) > budget and max(label_widths) > 8:  # the widest folds first
            label_widths[label_widths.index(max(label_widths))] -= 1
    chunks: list[list[tuple[str, list[str]]]] = []
    for metric in metrics:
        current = chunks[-1] if chunks else None
        widths = [*label_widths, *(need(h, c) for h, c in current or []), need(*metric)]
        if current is not None and table_width(widths) <= width:
            current.append(metric)
        else:
            chunks.append([metric])
    views: list[RenderableType] = []
    for number, chunk in enumerate(chunks or [[]]):
        part = f" ({number + 1}/{len(chunks)})" if len(chunks) > 1 else ""
        # fixed widths (rich's own shrinking may crop a table): each number column its widest
        # cell or heading word, then room permitting its whole heading
        widths = [need(h, c) for h, c in chunk]
        spare = width - table_width([*label_widths, *widths])
        for k, (heading, cells) in enumerate(chunk):
            grow = max(min(spare, max(len(heading), *(len(c) for c in cells)) - widths[k]), 0)
            widths[k] += grow
            spare -= grow

        if not groups:
            views.append(
                _table(labels, label_widths, chunk, widths, range(rows), title=title + part)
            )
            continue
        views.append(Text(title + part, style="italic"))
        for k, (value, rows_of) in enumerate(groups):
            views.append(
                _table(
                    labels,
                    label_widths,
                    chunk,
                    widths,
                    rows_of,
                    title=f"{stacked_heading}: {value}",
                    title_style="bold",
                    show_header=k == 0,
                    box=box.SIMPLE_HEAD,
                    show_edge=False,
                    pad_edge=False,
                    collapse_padding=True,
                )
            )
    return views


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


#: A terminal at least this wide gets the long progress line (the run's name, a full bar).
WIDE_PROGRESS = 120


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
        self.task: TaskID | None = None
        #: The simulated time of the last report (None before the first).
        self.now: float | None = None

    def _date(self, now: float, short: bool = False) -> str:
        if self.unix_start is None:
            return f"day {now / 86400.0:.1f}"
        moment = datetime.datetime.fromtimestamp(self.unix_start + now, tz=datetime.UTC)
        return moment.strftime("%Y-%m-%d %H:%M" if short else "%Y-%m-%d %H:%M UTC")

    def _columns(self, width: int) -> list[ProgressColumn]:
        """The line's parts for a terminal of ``width`` columns: the done fraction, the
        simulated date and the decision rate always; the run's name, the jobs submitted and a
        wide bar when there is room (a narrow terminal would otherwise lose the bar and cut
        the text)."""
        if width >= WIDE_PROGRESS:
            return [
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn(
                    "{task.fields[date]}, {task.fields[jobs]:,} jobs submitted, "
                    "{task.fields[rate]:,.0f} decisions/s",
                    markup=False,
                ),
                TimeElapsedColumn(),
            ]
        return [
            BarColumn(bar_width=10),
            TaskProgressColumn(),
            TextColumn(
                "{task.fields[short_date]}  {task.fields[jobs]:,} jobs  "
                "{task.fields[rate]:,.0f} decisions/s",
                markup=False,
            ),
            TimeElapsedColumn(),
        ]

    def __call__(self, now: float, submitted: int, invocations: int = 0) -> None:
        self.now = now
        elapsed = time.perf_counter() - self.started
        if self.progress is None:
            if elapsed < self.delay or not err_console.is_terminal:
                return
            self.progress = Progress(
                *self._columns(err_console.width),
                console=err_console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(
                self.description, total=self.total, date="", short_date="", jobs=0, rate=0.0
            )
        assert self.task is not None
        self.progress.update(
            self.task,
            completed=min(now, self.total),
            date=self._date(now),
            short_date=self._date(now, short=True),
            jobs=submitted,
            rate=invocations / elapsed if elapsed > 0 else 0.0,
        )

    def reached(self) -> str:
        """How far the run got, for a message: ``41 % of the trace (simulated 2021-03-04 12:00
        UTC)``, or ``the start`` before the first report."""
        if self.now is None:
            return "the start"
        share = 100.0 * min(self.now / self.total, 1.0)
        return f"{share:.0f} % of the trace (simulated {self._date(self.now)})"

    def close(self, keep: bool = False) -> None:
        """Stops the progress line: erased, or with ``keep`` (an interrupted run) left on screen
        as it was last drawn."""
        if self.progress is not None:
            if keep:
                self.progress.live.transient = False
            self.progress.stop()
