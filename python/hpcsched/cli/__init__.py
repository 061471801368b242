"""The ``hpcsched`` command: a typer app with one error boundary.

User errors (``HpcschedError``, bad options) print one line on stderr and exit 2; anything else
is a bug: exit 1 with a traceback (the full one with ``--debug``).
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from typing import Annotated, Any

import typer
import typer.main

from hpcsched.cli import (
    advise,
    compare,
    generate,
    inspect,
    policies,
    reproduce,
    simulate,
    sweep,
)
from hpcsched.cli._console import (
    Terminated,
    err_console,
    interrupted,
    interruption_said,
    labelled,
)
from hpcsched.cli._usage import usage_line
from hpcsched.exceptions import HpcschedError, bounded

_UsageError: type[Exception]
try:  # recent typer vendors click: its usage errors derive from typer.TyperException
    from typer import TyperException as _UsageError
except ImportError:  # older typer runs on click itself
    from click.exceptions import ClickException as _UsageError  # type: ignore[assignment,unused-ignore]

app = typer.Typer(
    name="hpcsched",
    help="Simulate HPC batch-job scheduling: replay workloads under queue policies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # docstrings wrap as paragraphs, not at their line breaks
)


def _show_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"hpcsched {version('hpcsched')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_show_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Simulate HPC batch-job scheduling: replay workloads under queue policies."""


app.command("simulate")(simulate.simulate)
app.command("compare")(compare.compare)
app.command("sweep")(sweep.sweep)
app.command("advise")(advise.advise)
app.command("inspect")(inspect.inspect)
app.command("policies")(policies.policies)
app.add_typer(generate.app, name="generate")
app.add_typer(reproduce.app, name="reproduce")


#: What an option's value is, shown in help instead of the Python type (``<str>``).
METAVARS = {
    "policy": "NAME",
    "backfill": "easy|none",
    "overrun": "continue|kill",
    "format": "swf|json|sacct",
    "procs_per_node": "K|auto",
    "platform": "PRESET|FILE",
    "downtime": "FILE",
    "out": "DIR",
    "report": "FILE.html",
    "data": "DIR",
    "reward": "cw|cu|wb|TERMS|FILE",
    "actions": "paper|LIST",
    "runtime_model": "requested|history|running",
    "arrivals": "none|recent",
    "rollout": "actions|outcomes|guided",
    "lookahead": "tree|rollout",
    "bases": "LIST",
    "prior": "none|rollout",
    "estimates": "requested|history",
    "ray": "ADDRESS",
    "log": "FILE",
    "reservations": "FILE",
    "target_util": "0..1",
    "load": "0..1",
    "p": "0..1",
}
#: Float options measured in seconds.
SECONDS = ("lead", "budget", "timeout", "window", "horizon", "runtime", "interval", "unlimited")


def _clean_metavars(command: Any) -> None:
    """Readable value names in every command's help: TRACE, --window N, --out DIR, and no
    value at all for flags (typer shows ``<bool>``, ``{trace}``, ``<list[str]>``)."""
    for param in command.params:
        name = param.name or ""
        if param.param_type_name == "argument":
            param.metavar = name.upper()
            if hasattr(param, "_usage_display_name"):  # typer 0.20+: {TRACE}, TRACE <path>
                param._usage_display_name = param.metavar.__str__
                param.display_type_rich = lambda ctx: None
        elif getattr(param, "is_flag", False):
            param.metavar = ""
        elif param.metavar is None:
            # typer's own parameters (0.20 and later) name their Python type; click's, its type
            kind = param.bare_type() if hasattr(param, "bare_type") else param.type.name
            if name in METAVARS:
                param.metavar = METAVARS[name]
            elif kind in ("int", "integer"):
                param.metavar = "N"
            elif kind == "float":
                param.metavar = "SECONDS" if name.endswith(SECONDS) else "X"
            else:
                param.metavar = name.upper()
    # --help itself is made on demand, as a boolean option typer shows as <bool>
    make_help = command.get_help_option

    def help_option(ctx: Any) -> Any:
        option = make_help(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        _clean_metavars(sub)


@functools.cache
def command() -> Any:
    """The click command behind the typer app, with clean metavars."""
    built = typer.main.get_command(app)
    _clean_metavars(built)
    return built


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[list[int]]:
    """While the command runs, SIGTERM raises :class:`Terminated` (once: a second SIGTERM
    ends the process at once, as it would have). Yields the signals received."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received  # signal handlers belong to the main thread
        return

    def handler(number: int, frame: object) -> None:
        received.append(number)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code: a command stopped by Ctrl-C
    exits 130, by SIGTERM 143 (128 + the signal's number), saying so in one line."""
    interruption_said(reset=True)
    with _sigterm_interrupts() as terminated:
        code = _run(list(sys.argv[1:] if argv is None else argv))
    if code != 130:
        return code
    if not interruption_said():  # the commands that keep something say what
        how = "SIGTERM" if terminated else "Ctrl-C"
        interrupted(f"stopped by {how} before the end")
    return 128 + signal.SIGTERM if terminated else 130


def _run(args: list[str]) -> int:
    """Runs the command; the exit code, whatever it raised (130 for an interrupt)."""
    debug = "--debug" in args
    if debug:
        args.remove("--debug")
    try:
        result = command().main(args=args, prog_name="hpcsched", standalone_mode=False)
    except _UsageError as exc:  # usage errors: bad or missing options, one line as any error
        line = usage_line(exc)
        if line is None:  # no arguments: the help
            exc.show(file=sys.stderr)  # type: ignore[attr-defined]  # click's and typer's have it
        else:
            err_console.print(labelled("error:", "bold red", line), soft_wrap=True)
        return int(getattr(exc, "exit_code", 2))
    except (typer.Abort, KeyboardInterrupt):  # typer itself turns the latter into exit 130
        return 130
    except HpcschedError as exc:
        err_console.print(labelled("error:", "bold red", exc), soft_wrap=True)
        return 2
    except MemoryError as exc:  # inputs or options too large for this machine, not a bug
        reason = f" ({bounded(str(exc))})" if str(exc) else ""
        err_console.print(
            labelled(
                "error:",
                "bold red",
                f"out of memory{reason}; try a smaller input or fewer runs at once",
            ),
            soft_wrap=True,
        )
        return 2
    except Exception:
        if debug:
            traceback.print_exc()
        else:
            exc_value = sys.exc_info()[1]
            err_console.print(
                labelled(
                    "internal error",
                    "bold red",
                    f"({type(exc_value).__name__}: {bounded(str(exc_value))}); "
                    "this is a bug in hpcsched. Rerun with --debug for the traceback.",
                ),
                soft_wrap=True,
            )
        return 1
    return result if isinstance(result, int) else 0


__all__ = ["Terminated", "app", "main"]
