"""Experiment workflow speed (issue 5): `hpcsched reproduce snf-icon` end to end.

    python benchmarks/experiments.py [--traces DIR] [--mars]

Runs the SNF-ICON reproduction (42 runs, results table, HTML report with its plots) in a fresh
folder on the local process pool, then the same with one process as the baseline measured in
the same run, and prints both times and their ratio (target: under 2 minutes on this machine).
A resumed run (everything complete, only the report redrawn) is timed too. With --mars, also
the MARS reproduction on the process pool.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from hpcsched.reproduce import reproduce_mars, reproduce_snf_icon

REPO = Path(__file__).resolve().parents[1]


def timed(call, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    value = call(*args, **kwargs)
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces")
    parser.add_argument("--mars", action="store_true", help="also time reproduce mars")
    parser.add_argument("--smoke", action="store_true", help="the process pool only (CI)")
    args = parser.parse_args()
    if not (args.traces / "snf-icon-paper").is_dir():
        sys.exit(f"{args.traces}/snf-icon-paper not found (give --traces DIR)")
    cores = os.cpu_count()
    with tempfile.TemporaryDirectory() as tmp:
        pool, done = timed(reproduce_snf_icon, args.traces, Path(tmp, "pool"))
        runs = done.outcome.ran
        if args.smoke:
            print(f"reproduce snf-icon ({runs} runs + report), {cores} cores: {pool:.1f} s")
            return
        alone, _ = timed(reproduce_snf_icon, args.traces, Path(tmp, "one"), processes=1)
        resumed, _ = timed(reproduce_snf_icon, args.traces, Path(tmp, "pool"))
        print(f"reproduce snf-icon ({runs} runs + report), {cores} cores:")
        print(f"  process pool     {pool:6.1f} s   (target < 120 s)")
        print(f"  one process      {alone:6.1f} s   (baseline)  -> pool is {alone / pool:.2f}x")
        print(f"  resumed (report) {resumed:6.1f} s")
        if args.mars:
            seconds, _ = timed(reproduce_mars, args.traces, Path(tmp, "mars"))
            print(f"reproduce mars (14 runs, 200 iterations x 2 trees): {seconds:.1f} s")


if __name__ == "__main__":
    main()
