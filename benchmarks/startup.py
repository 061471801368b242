"""Start-up and whole-process benchmark (issue 14): what a user waits for at the prompt.

Each measurement is a fresh process, timed from outside (wall clock, best of ``--repeat``):

- ``hpcsched --help`` and ``hpcsched simulate --help`` against ``python -c pass`` (the floor of
  any Python command);
- the whole ``hpcsched simulate TRACE --policy fcfs`` (interpreter start, imports, load,
  simulate, write the run directory) against the whole pure-Python baseline process
  (``benchmarks/python_baseline.py TRACE``: interpreter start, load, replay; it writes
  nothing), same trace, same run.

    python benchmarks/startup.py [--traces DIR] [--repeat 5] [--smoke]

``--smoke`` times one repeat on a generated 3000-job workload (CI: it must run, not be fast).
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACE = "HPC2N-2002-2.2-cln.swf.gz"


def wall(command: list[str], repeat: int) -> float:
    """Best wall-clock seconds of ``command`` over ``repeat`` fresh processes."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=REPO)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces" / "pwa")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one repeat, a generated workload")
    args = parser.parse_args()
    repeat = 1 if args.smoke else args.repeat
    python = sys.executable
    hpcsched = [python, "-m", "hpcsched"]
    print(
        f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )

    floor = wall([python, "-c", "pass"], repeat)
    rows = [
        ("python -c pass", floor),
        ("python -c 'import hpcsched'", wall([python, "-c", "import hpcsched"], repeat)),
        ("hpcsched --help", wall([*hpcsched, "--help"], repeat)),
        ("hpcsched simulate --help", wall([*hpcsched, "simulate", "--help"], repeat)),
    ]
    print(f"\n{'start-up':<32} {'wall s':>8} {'vs python -c pass':>18}")
    for label, seconds in rows:
        print(f"{label:<32} {seconds:>8.3f} {seconds / floor:>17.1f}x")

    with tempfile.TemporaryDirectory() as tmp:
        trace = args.traces / TRACE
        if args.smoke or not trace.is_file():
            if not args.smoke:
                print(f"\n{trace} not found: a generated workload instead (give --traces DIR)")
            trace = Path(tmp) / "markovian.swf"
            subprocess.run([*hpcsched, "generate", "markovian", str(trace)], check=True)
        ours = wall([*hpcsched, "simulate", str(trace), "--out", f"{tmp}/run", "--force"], repeat)
        # the least any command-line run imports: typer (the CLI) and numpy (the engine's
        # columns); no trace read, nothing simulated or written
        floor_run = wall([python, "-c", "import numpy, typer"], repeat)
        baseline = wall(
            [python, str(REPO / "benchmarks" / "python_baseline.py"), str(trace)], repeat
        )
    print(f"\n{'whole process, ' + trace.name:<48} {'wall s':>8} {'vs baseline':>12}")
    ours_label = "hpcsched simulate --policy fcfs (writes its run)"
    print(f"{ours_label:<48} {ours:>8.3f} {baseline / ours:>11.1f}x")
    print(f"{'pure-Python baseline FCFS+EASY (writes nothing)':<48} {baseline:>8.3f} {1.0:>11.1f}x")
    floor_label = "python -c 'import numpy, typer' (a floor)"
    print(f"{floor_label:<48} {floor_run:>8.3f} {baseline / floor_run:>11.1f}x")
    print(
        f"\nno command-line run can beat the baseline by more than {baseline / floor_run:.1f}x "
        "(its floor: the interpreter, typer and numpy)"
    )


if __name__ == "__main__":
    main()
