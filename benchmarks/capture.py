"""Output capture: hashes of every output file of a fixed set of runs, to show that a change
of structure changes no result (issue 26). Not a timing benchmark: it prints how many runs
matched the hashes committed beside it (``capture-hashes.json``) and how long it took.

The runs: FCFS, WFP3, SJF, F1 (EASY) and SNF on every bundled trace; MARS (tree and rollout
look-aheads, rewards cw, cu and wb) under a maintenance calendar; the power capture (the SNF-ICON
paper's eight workload x platform cases under FCFS/B+IPM, SNF+IPM, SNF-ICON and SNF-ICON-NF with
mean transitions and transition seeds 1-3, plus SJF under IPM and SNF-ICON with a starvation
guard per case: 144 runs); a Python policy; a gym episode. Each run writes its run directory;
every file in it is hashed by content (parquet files as their columns' values, summary.json
without wall-clock timings and input paths), so that the hashes do not depend on where or how
fast the run went.

    python benchmarks/capture.py check            # compare with capture-hashes.json
    python benchmarks/capture.py write            # record the current hashes (before a change)
    python benchmarks/capture.py check --smoke    # a small subset (CI), against its own hashes
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import hpcsched
from hpcsched import PolicySpec, PowerSpec, SearchSpec
from hpcsched.experiment import slice_workload

HERE = Path(__file__).resolve().parent
HASHES = HERE / "capture-hashes.json"
TRACES = HERE.parent.parent / "shared" / "traces"
PWA = [
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "CTC-SP2-1996-3.1-cln.swf.gz",
    "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "HPC2N-2002-2.2-cln.swf.gz",
    "DAS2-fs1-2003-1.swf.gz",
    "ALCF-Theta-2022.swf.gz",
    "lublin_256.swf.gz",
    "CEA-Curie-2011-2.1-cln.swf.gz",
]
PAPER = "snf-icon-paper/"
#: The SNF-ICON paper's cases: (workload, platform).
POWER_CASES = [
    ("DAS2-fs1-0-3000.json.gz", "AOBA-64"),
    ("DAS2-fs2-0-3000.json.gz", "AOBA-64"),
    ("DAS2-fs3-0-3000.json.gz", "AOBA-64"),
    ("DAS2-fs4-0-3000.json.gz", "AOBA-64"),
    ("DAS2-fs2-0-3000.json.gz", "Taurus-64"),
    ("generated-markovian-3000.json.gz", "Taurus-64"),
    ("generated-markovian-3000.json.gz", "AOBA-64"),
    ("SDSC-BLUE-2000-4.2-cln-0-3000.json.gz", "AOBA-1152"),
]
HEURISTICS = ("fcfs", "wfp3", "sjf", "f1", "snf")
#: Summary keys that say how fast or where a run went, not what it decided.
VOLATILE = {
    ("timing",),
    ("search", "seconds_per_search"),
    ("inputs", "trace"),
    ("inputs", "downtime"),
    ("inputs", "platform", "source"),
}
#: Parquet columns of wall-clock seconds (a decision's own time).
VOLATILE_COLUMNS = {"seconds"}
#: A maintenance calendar in the clock of the MARS slice (the Theta trace's first 600 jobs).
CALENDAR = "# start end kind nodes\n200000 214400 S -\n400000 403600 U 512\n"

Run = tuple[str, Callable[[Path], None]]


def content_hash(path: Path) -> str:
    """A file's hash by content: parquet as its values, JSON without volatile keys."""
    digest = hashlib.sha256()
    if path.suffix == ".parquet":
        frame = pd.read_parquet(path)
        frame = frame.drop(columns=[c for c in frame.columns if c in VOLATILE_COLUMNS])
        digest.update(
            json.dumps([list(map(str, frame.columns)), list(map(str, frame.dtypes))]).encode()
        )
        digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    elif path.name == "summary.json":
        summary = json.loads(path.read_text())
        for key in VOLATILE:
            node = summary
            for part in key[:-1]:
                node = node.get(part) or {}
            node.pop(key[-1], None)
        digest.update(json.dumps(summary, sort_keys=True).encode())
    else:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def directory_hashes(folder: Path) -> dict[str, str]:
    return {p.name: content_hash(p) for p in sorted(folder.iterdir()) if p.is_file()}


def simulate_into(workload: Any, policy: Any, **options: Any) -> Callable[[Path], None]:
    def run(out: Path) -> None:
        hpcsched.simulate(workload, policy, out=out, **options)

    return run


def heuristic_runs(smoke: bool) -> Iterator[Run]:
    traces = PWA[:2] if smoke else PWA
    for name in traces:
        workload = hpcsched.load_workload(TRACES / "pwa" / name)
        if smoke:
            workload = slice_workload(workload, 0, 2000)
        for policy in HEURISTICS:
            yield f"{name}|{policy}", simulate_into(workload, policy)
    for name in sorted({case for case, _ in POWER_CASES})[: 1 if smoke else None]:
        workload = hpcsched.load_workload(TRACES / PAPER / name)
        for policy in HEURISTICS:
            yield f"{name}|{policy}", simulate_into(workload, policy)


def mars_runs(smoke: bool, folder: Path) -> Iterator[Run]:
    calendar = folder / "maintenance.txt"
    calendar.write_text(CALENDAR)
    workload = slice_workload(
        hpcsched.load_workload(TRACES / "pwa" / "ALCF-Theta-2022.swf.gz"), 0, 200 if smoke else 600
    )
    for lookahead in ("tree", "rollout"):
        for reward in ("mars-cw", "mars-cu", "mars-wb")[: 1 if smoke else None]:
            search = SearchSpec(iterations=20, trees=2, lookahead=lookahead)
            spec = PolicySpec(reward, search=search)
            yield (
                f"theta-600|{reward}|{lookahead}",
                simulate_into(workload, spec, downtime=calendar),
            )


def power_runs(smoke: bool) -> Iterator[Run]:
    cases = POWER_CASES[:1] if smoke else POWER_CASES
    for name, platform in cases:
        nodes = int(platform.rsplit("-", 1)[1])
        workload = hpcsched.load_workload(TRACES / PAPER / name, nodes=nodes)
        for policy in ("fcfs-b+ipm", "snf+ipm", "snf-icon", "snf-icon-nf"):
            for seed in (None, 1, 2, 3):
                spec = PolicySpec(policy, power=PowerSpec(sample_transitions=seed))
                label = f"{name}|{platform}|{policy}|{seed}"
                yield label, simulate_into(workload, spec, platform=platform)
        yield (
            f"{name}|{platform}|sjf+ipm",
            simulate_into(workload, PolicySpec("sjf", power="ipm"), platform=platform),
        )
        yield (
            f"{name}|{platform}|snf-icon|guard",
            simulate_into(workload, PolicySpec("snf-icon", max_wait=172800.0), platform=platform),
        )


def python_policy_run(smoke: bool) -> Iterator[Run]:
    from hpcsched.protocol import Decision

    class ShortestFirst:
        """Orders the queue by requested time (a user's policy), EASY behind it."""

        name = "shortest-first"

        def decide(self, view: Any) -> Decision:
            order = np.argsort(view.queue_requested, kind="stable")
            return Decision(order=view.queue[order])

    workload = slice_workload(
        hpcsched.load_workload(TRACES / "pwa" / "KTH-SP2-1996-2.1-cln.swf.gz"),
        0,
        500 if smoke else 3000,
    )
    yield "kth|python-shortest-first", simulate_into(workload, ShortestFirst())


def gym_run(smoke: bool) -> Iterator[Run]:
    def run(out: Path) -> None:
        from hpcsched.gym import SchedulingEnv

        workload = hpcsched.load_workload(TRACES / "pwa" / "lublin_256.swf.gz")
        env = SchedulingEnv(
            workload, action="mars", episode_jobs=200 if smoke else 1000, reward="bsld"
        )
        rng = np.random.default_rng(7)
        env.reset(seed=7)
        rows = []
        done = False
        while not done:
            action = int(rng.integers(env.action_space.n))
            observation, reward, done, truncated, _ = env.step(action)
            done = done or truncated
            rows.append((action, float(reward), float(observation.sum())))
        out.mkdir()
        frame = pd.DataFrame(rows, columns=["action", "reward", "observation_sum"])
        frame.to_parquet(out / "episode.parquet")

    yield "lublin|gym-mars-random", run


def all_runs(smoke: bool, folder: Path) -> Iterator[Run]:
    yield from heuristic_runs(smoke)
    yield from mars_runs(smoke, folder)
    yield from power_runs(smoke)
    yield from python_policy_run(smoke)
    yield from gym_run(smoke)


def capture(smoke: bool) -> dict[str, dict[str, str]]:
    hashes: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i, (label, run) in enumerate(all_runs(smoke, folder)):
            out = folder / f"run{i}"
            run(out)
            hashes[label] = directory_hashes(out)
            print(f"  {label}: {len(hashes[label])} files", file=sys.stderr, flush=True)
    return hashes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("check", "write"), nargs="?", default="check")
    parser.add_argument("--smoke", action="store_true", help="a small subset (CI)")
    args = parser.parse_args()
    if not TRACES.is_dir():
        sys.exit(f"the capture needs the traces in {TRACES}")
    section = "smoke" if args.smoke else "full"
    started = time.perf_counter()
    hashes = capture(args.smoke)
    seconds = time.perf_counter() - started
    recorded = json.loads(HASHES.read_text()) if HASHES.exists() else {}
    if args.mode == "write":
        recorded[section] = hashes
        HASHES.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(hashes)} runs ({section}) in {HASHES.name} ({seconds:.0f} s)")
        return
    expected = recorded.get(section, {})
    differ = sorted(k for k in expected.keys() | hashes.keys() if expected.get(k) != hashes.get(k))
    files = sum(len(v) for v in hashes.values())
    print(
        f"{len(hashes) - len(differ)} of {len(hashes)} runs ({files} files) identical to "
        f"{HASHES.name} [{section}] ({seconds:.0f} s)"
    )
    for label in differ[:20]:
        print(f"  differs: {label}")
    if differ:
        sys.exit(1)


if __name__ == "__main__":
    main()
