"""Peak memory and output sizes of whole `hpcsched` runs on year-long inputs (issue 14).

    python benchmarks/memory.py [--traces DIR] [--smoke]

Each run is a separate `hpcsched` process; its peak RSS is the kernel's (wait4), and the sizes
are those of the files it wrote. The target is a peak RSS under 500 MB for any run on a
bundled trace, whatever the options (`--decision-log full` too: the logs are written to disk in
batches while the run goes); the generated 1,000,000-job workload is shown against it too.

1. Full SDSC-BLUE (243,306 jobs in the file) under SNF-ICON on AOBA-1152, one processor per
   node and --procs-per-node auto (the most decisions: about 746,000).
2. An M/M/k workload of 1,000,000 single-node jobs on AOBA-64 (`hpcsched generate mmk`), under
   FCFS+EASY with the platform's power model and under SNF-ICON.
3. MARS-CW (50 iterations, 1 tree) on the first 3,000 jobs of the SNF-ICON paper's SDSC-BLUE
   slice: the look-ahead's own log, compact and full.

--smoke: a generated 20,000-job M/M/k workload and a 300-job Markovian one (no traces needed).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_MB = 500.0


def hpcsched(*args: str) -> list[str]:
    return [sys.executable, "-m", "hpcsched", *args]


def measure(command: list[str]) -> tuple[float, float]:
    """(peak RSS in MB, wall seconds) of one process; fails loudly if it fails."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        stderr = process.stderr.read().decode() if process.stderr else ""
        sys.exit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr[-3000:]}")
    return usage.ru_maxrss / 1024, seconds


def size_mb(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:,.1f}" if path.is_file() else "-"


def run_case(label: str, trace: Path, policy: str, options: list[str], work: Path) -> float:
    out = work / f"run-{abs(hash((label, tuple(options)))):x}"
    rss, seconds = measure(
        hpcsched("simulate", str(trace), "--policy", policy, "--out", str(out), "--force", *options)
    )
    full = "--decision-log" in options and "full" in options
    verdict = "ok" if rss < TARGET_MB else "OVER"
    print(
        f"| {label} | {'full' if full else 'compact'} | {seconds:.1f} | {rss:,.0f} | "
        f"{size_mb(out / 'decisions.parquet')} | {size_mb(out / 'jobs.parquet')} | "
        f"{size_mb(out / 'timeline.parquet')} | {verdict} |",
        flush=True,
    )
    return rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces")
    parser.add_argument("--smoke", action="store_true", help="small generated inputs (CI)")
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"target: peak RSS < {TARGET_MB:.0f} MB for any run on a bundled trace\n")
    print(
        "| run | decision log | wall s | peak RSS MB | decisions.parquet MB | jobs.parquet MB "
        "| timeline.parquet MB | |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|")
    worst = 0.0  # runs on bundled traces
    generated = 0.0
    with tempfile.TemporaryDirectory(prefix="hpcsched-memory-") as tmp:
        work = Path(tmp)
        full = ["--decision-log", "full"]
        mmk_jobs = 20_000 if args.smoke else 1_000_000
        mmk = work / f"mmk-{mmk_jobs}.swf.gz"
        rss, seconds = measure(
            hpcsched(
                "generate", "mmk", str(mmk), "--servers", "64", "--load", "0.9",
                "--jobs", str(mmk_jobs), "--seed", "1",
            )
        )  # fmt: skip
        print(f"| generate mmk {mmk_jobs:,} jobs | - | {seconds:.1f} | {rss:,.0f} | - | - | - | |")
        generated = max(generated, rss)
        aoba64 = ["--platform", "AOBA-64"]
        name = f"M/M/k {mmk_jobs:,} jobs, AOBA-64"
        for policy, label in (("fcfs", "FCFS+EASY"), ("snf-icon", "SNF-ICON")):
            rss = run_case(f"{name}, {label}", mmk, policy, aoba64, work)
            generated = max(generated, rss)
        rss = run_case(f"{name}, SNF-ICON", mmk, "snf-icon", aoba64 + full, work)
        generated = max(generated, rss)
        if args.smoke:
            markovian = work / "markovian-300.json.gz"
            measure(hpcsched("generate", "markovian", str(markovian), "--jobs", "300"))
            search = ["--iterations", "10", "--trees", "1"]
            for options in ([], full):
                run_case("Markovian 300, MARS-CW", markovian, "mars-cw", search + options, work)
                run_case("Markovian 300, SNF-ICON", markovian, "snf-icon", aoba64 + options, work)
        else:
            blue = args.traces / "pwa" / "SDSC-BLUE-2000-4.2-cln.swf.gz"
            if not blue.is_file():
                sys.exit(f"{blue} not found (give --traces DIR)")
            aoba = ["--platform", "AOBA-1152"]
            auto = ["--procs-per-node", "auto"]
            for label, options in (
                ("SDSC-BLUE full, SNF-ICON, AOBA-1152", aoba),
                ("SDSC-BLUE full, SNF-ICON, AOBA-1152, procs-per-node auto", aoba + auto),
                ("SDSC-BLUE full, SNF-ICON, AOBA-1152, procs-per-node auto", aoba + auto + full),
            ):
                worst = max(worst, run_case(label, blue, "snf-icon", options, work))
            paper = args.traces / "snf-icon-paper" / "SDSC-BLUE-2000-4.2-cln-0-3000.json.gz"
            search = ["--iterations", "50", "--trees", "1"]
            for options in ([], full):
                label = "SDSC-BLUE 3,000 jobs, MARS-CW, 1152 nodes"
                rss = run_case(
                    label, paper, "mars-cw", ["--nodes", "1152", *search, *options], work
                )
                worst = max(worst, rss)
    if worst:
        print(
            f"\nlargest peak RSS on a bundled trace: {worst:,.0f} MB "
            f"({'under' if worst < TARGET_MB else 'OVER'} the {TARGET_MB:.0f} MB target)"
        )
    print(f"largest peak RSS on the generated workload: {generated:,.0f} MB")
    print(f"(benchmark took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
