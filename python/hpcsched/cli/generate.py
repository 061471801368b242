"""``hpcsched generate``: synthetic workloads (Markovian of the SNF-ICON paper, M/M/k)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hpcsched.cli._console import console
from hpcsched.exceptions import OptionError

if TYPE_CHECKING:
    from hpcsched.workload.model import Workload

app = typer.Typer(
    help="Generate synthetic workloads (written as .swf or .json, optionally .gz).",
    no_args_is_help=True,
)


def _write(workload: Workload, out: Path) -> None:
    from hpcsched.workload import generate as gen

    name = out.name.removesuffix(".gz")
    if name.endswith(".json"):
        gen.write_batsim(workload, out)
    elif name.endswith(".swf"):
        gen.write_swf(workload, out)
    else:
        raise OptionError(
            f"{out}: the name must end in .swf or .json (optionally .gz)", option="OUT"
        )
    console.print(f"wrote {len(workload):,} jobs on {workload.nodes} nodes to {out}")


#: The generators' parameter names as the options spell them.
OPTION_NAMES = {"n_jobs": "--jobs"}


def _generated(make: Callable[[], Workload]) -> Workload:
    """``make()``, with a mistake named by the option as typed (``--jobs``, not n_jobs)."""
    try:
        return make()
    except OptionError as exc:
        name = exc.option or ""
        option = OPTION_NAMES.get(name, "--" + name.replace("_", "-"))
        raise OptionError(exc.reason, option=option) from None


@app.command("markovian")
def markovian(
    out: Annotated[Path, typer.Argument(help="Output file (.swf or .json, optionally .gz).")],
    jobs: Annotated[int, typer.Option(help="Number of jobs.")] = 3000,
    nodes: Annotated[int, typer.Option(help="Machine size.")] = 64,
    mean_runtime: Annotated[float, typer.Option(help="Mean run time (s).")] = 7200.0,
    target_util: Annotated[float, typer.Option(help="Target utilization.")] = 0.40,
    p: Annotated[float, typer.Option(help="Geometric size parameter.")] = 0.35,
    seed: Annotated[int, typer.Option(help="Random seed (43 reproduces the paper's file).")] = 43,
) -> None:
    """The SNF-ICON paper's Markovian workload (defaults reproduce the paper's 3000 jobs)."""
    from hpcsched.workload import generate as gen

    _write(_generated(lambda: gen.markovian(jobs, nodes, mean_runtime, target_util, p, seed)), out)


@app.command("mmk")
def mmk(
    out: Annotated[Path, typer.Argument(help="Output file (.swf or .json, optionally .gz).")],
    servers: Annotated[int, typer.Option(help="Nodes (k).")] = 16,
    load: Annotated[float, typer.Option(help="Per-node load rho = lambda/(k mu).")] = 0.8,
    jobs: Annotated[int, typer.Option(help="Number of jobs.")] = 10000,
    mean_runtime: Annotated[float, typer.Option(help="Mean run time (s).")] = 3600.0,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Single-node jobs with exponential interarrivals and run times (M/M/k)."""
    from hpcsched.workload import generate as gen

    _write(_generated(lambda: gen.mmk(jobs, servers, load, mean_runtime, seed)), out)
