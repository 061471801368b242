"""The ``hpcsched`` command: a typer app with one error boundary.

User errors (``HpcschedError``, bad options) print one line on stderr and exit 2; anything else
is a bug: exit 1 with a traceback (the full one with ``--debug``).
"""

from __future__ import annotations

import sys
import traceback

import typer

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
from hpcsched.cli._console import err_console, labelled
from hpcsched.exceptions import HpcschedError

try:  # recent typer vendors click: its usage errors derive from typer.TyperException
    from typer import TyperException as _UsageError
except ImportError:  # older typer runs on click itself
    from click.exceptions import ClickException as _UsageError

app = typer.Typer(
    name="hpcsched",
    help="Simulate HPC batch-job scheduling: replay workloads under queue policies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # docstrings wrap as paragraphs, not at their line breaks
)
app.command("simulate")(simulate.simulate)
app.command("compare")(compare.compare)
app.command("sweep")(sweep.sweep)
app.command("advise")(advise.advise)
app.command("inspect")(inspect.inspect)
app.command("policies")(policies.policies)
app.add_typer(generate.app, name="generate")
app.add_typer(reproduce.app, name="reproduce")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    if debug:
        args.remove("--debug")
    try:
        result = app(args=args, prog_name="hpcsched", standalone_mode=False)
    except _UsageError as exc:  # usage errors: bad or missing options
        exc.show(file=sys.stderr)
        return int(getattr(exc, "exit_code", 2))
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        return 130
    except HpcschedError as exc:
        err_console.print(labelled("error:", "bold red", exc), soft_wrap=True)
        return 2
    except MemoryError as exc:  # inputs or options too large for this machine, not a bug
        reason = f" ({exc})" if str(exc) else ""
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
            exc_type, exc_value, _ = sys.exc_info()
            err_console.print(
                labelled(
                    "internal error",
                    "bold red",
                    f"({exc_type.__name__}: {exc_value}); "
                    "this is a bug in hpcsched. Rerun with --debug for the traceback.",
                ),
                soft_wrap=True,
            )
        return 1
    return result if isinstance(result, int) else 0


__all__ = ["app", "main"]
