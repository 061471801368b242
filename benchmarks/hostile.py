"""Hostile-input benchmark (issue 11): bounded work whatever the time scale, early refusal of
gzip bombs.

Each measurement is a fresh process, timed from outside (interpreter start and imports
included) with its peak RSS:

- ``hpcsched simulate`` from the command line (progress display on) against the same run from
  the API (``hpcsched.simulate(..., out=...)`` in a script), on jobs all submitted at t=0
  (which once made the command line step through simulated time second by second) and on
  jobs running 30 days;
- ``hpcsched inspect`` on gzip bombs (a 1 MB file expanding to 1 GB of NUL bytes, of newlines)
  against ``hpcsched inspect`` on a one-job trace: the extra cost of refusing the bomb;
- ``hpcsched simulate`` of 500 jobs under a calendar of ``--windows`` heavily overlapping
  downtime windows (each takes one node for 200,000 s, starts drawn over the trace) against
  as many disjoint ones (issue 25: the cost must be near-linear in the windows, the
  overlapping calendar within 3x the disjoint one).

    python benchmarks/hostile.py [--jobs 3000] [--bomb-gb 1] [--windows 3000] [--repeat 3]
        [--smoke]
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

API_RUN = textwrap.dedent(
    """
    import sys
    import hpcsched
    hpcsched.simulate(sys.argv[1], out=sys.argv[2])
    """
)


def timed(command: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of one fresh process (its own rusage, by
    wait4: RUSAGE_CHILDREN would give the largest child so far)."""
    started = time.perf_counter()
    child = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "80"},
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_maxrss / 1024, child.returncode


def best(command: list[str], repeat: int) -> tuple[float, float, int]:
    runs = [timed(command) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2]


def write_jobs(path: Path, jobs: int, *, run_days: float | None) -> None:
    rng = random.Random(11)
    lines = ["; MaxProcs: 64"]
    for i in range(jobs):
        run = run_days * 86400 if run_days else rng.randint(60, 36000)
        procs = rng.randint(1, 16)
        lines.append(f"{i + 1} 0 -1 {run} {procs} -1 -1 {procs} {run} -1 1 1 1 -1 1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")


def write_bomb(path: Path, byte: bytes, gigabytes: float) -> None:
    member = gzip.compress(byte * (16 << 20), compresslevel=9, mtime=0)
    path.write_bytes(member * max(1, int(gigabytes * 64)))


def write_calendars(folder: Path, windows: int) -> tuple[Path, Path]:
    """(overlapping, disjoint) calendars of `windows` one-node windows, half of them
    scheduled."""
    rng = random.Random(5)
    overlapping, disjoint = folder / "overlapping.txt", folder / "disjoint.txt"
    lines = []
    for i in range(windows):
        start = rng.uniform(0, 400_000)
        lines.append(f"{start:.0f} {start + 200_000:.0f} {'S' if i % 2 else 'U'} 1")
    overlapping.write_text("\n".join(lines) + "\n")
    disjoint.write_text(
        "".join(f"{i * 300} {i * 300 + 100} {'S' if i % 2 else 'U'} 1\n" for i in range(windows))
    )
    return overlapping, disjoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--bomb-gb", type=float, default=1.0)
    parser.add_argument("--windows", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="small inputs, one repeat (CI)")
    args = parser.parse_args()
    if args.smoke:
        args.jobs, args.bomb_gb, args.windows, args.repeat = 300, 0.0625, 200, 1
    cli = [sys.executable, "-m", "hpcsched"]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("\n| workload | command line s | API s | ratio | CLI peak MiB |")
        print("|---|---:|---:|---:|---:|")
        for name, run_days, jobs in (
            (f"{args.jobs} jobs at t=0", None, args.jobs),
            ("100 jobs at t=0 running 30 days", 30.0, 100),
        ):
            trace = folder / "t.swf"
            write_jobs(trace, jobs, run_days=run_days)
            api = best(
                [sys.executable, "-c", API_RUN, str(trace), str(folder / "api")], args.repeat
            )
            command = [*cli, "simulate", str(trace), "--out", str(folder / "cli")]
            # --out over an existing run directory: give each repeat a fresh one
            wall = []
            for i in range(args.repeat):
                command[-1] = str(folder / f"cli{i}-{len(name)}")
                wall.append(timed(command))
            seconds = min(w[0] for w in wall)
            assert all(w[2] == 0 for w in wall) and api[2] == 0
            peak = max(w[1] for w in wall)
            ratio = seconds / api[0]
            print(f"| {name} | {seconds:.2f} | {api[0]:.2f} | {ratio:.2f}x | {peak:.0f} |")

        one = folder / "one.swf"
        write_jobs(one, 1, run_days=None)
        base = best([*cli, "inspect", str(one)], args.repeat)
        reference = f"{base[0]:.2f} s, {base[1]:.0f} MiB"
        print(f"\n| input | exit | wall s | peak MiB | vs one-job inspect ({reference}) |")
        print("|---|---:|---:|---:|---:|")
        for name, byte in (
            ("nul.swf.gz", b"\0"),
            ("nul.json.gz", b"\0"),
            ("newlines.swf.gz", b"\n"),
            ("spaces.json.gz", b" "),
        ):
            bomb = folder / name
            write_bomb(bomb, byte, args.bomb_gb)
            seconds, peak, code = best([*cli, "inspect", str(bomb)], args.repeat)
            assert code == 2, f"{name}: exit {code}"
            size = bomb.stat().st_size
            label = f"{name} ({size / 1e6:.1f} MB, {args.bomb_gb:g} GB inflated)"
            extra = f"{seconds - base[0]:+.2f} s, {peak - base[1]:+.0f} MiB"
            print(f"| {label} | {code} | {seconds:.2f} | {peak:.0f} | {extra} |")

        workload = folder / "w500.json"
        subprocess.run(
            [*cli, "generate", "markovian", str(workload), "--jobs", "500"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        overlapping, disjoint = write_calendars(folder, args.windows)
        print(f"\n| 500 jobs, {args.windows} downtime windows | wall s | peak MiB |")
        print("|---|---:|---:|")
        times = {}
        for name, calendar in (("disjoint", disjoint), ("overlapping", overlapping)):
            out = folder / f"run-{name}"
            seconds, peak, code = best(
                [
                    *cli,
                    "simulate",
                    str(workload),
                    "--downtime",
                    str(calendar),
                    "--out",
                    str(out),
                    "--force",
                ],
                args.repeat,
            )
            assert code == 0, f"{name} calendar: exit {code}"
            times[name] = seconds
            print(f"| {name} | {seconds:.2f} | {peak:.0f} |")
        print(
            f"\noverlapping / disjoint: {times['overlapping'] / times['disjoint']:.2f}x "
            "(target: within 3x)"
        )


if __name__ == "__main__":
    main()
