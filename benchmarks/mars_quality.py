"""MARS quality (issue 12): the evaluation of ``hpcsched reproduce mars`` and whether search pays.

1. The evaluation: five 4000-job slices (ALCF Theta's two paper slices, the middle of SDSC-BLUE,
   CTC and HPC2N), a maintenance of 8 hours every 6 days announced 48 hours ahead; MARS-CW and
   MARS-CU against FCFS, WFP3, SJF, F1 (w=256, EASY, with requested and with predicted run
   times) and Random, each search policy over seeds. Prints the seed means (± standard
   deviation) and the verdicts, computed by ``reproduce.mars_verdicts``.
2. ``--search-pays [tree|rollout|rollout-history]``: MARS-CW at 50 and at 1000 iterations per
   tree on every slice, over the same seeds, with the tree search (the paper's forward model),
   or with the evaluation's MARS-CW (rollout) look-ahead on the running jobs' ends drawn from
   the history (iterations then buy sampled futures), or on every run time drawn: the
   seed-averaged mean bounded slowdown must be lower at 1000.
3. ``--held-out``: the rollout look-ahead (MARS-CW, MARS-CU, MARS-WB) against the same
   baselines and Random on seven slices no choice was measured on: two traces outside the evaluation
   (KTH-SP2, DAS2-fs1), Lublin's synthetic 256-node workload, and other stretches of the
   evaluation's traces (Theta from job 6000; SDSC-BLUE, CTC and HPC2N a quarter of the way
   in), with the same maintenance calendars.

    python benchmarks/mars_quality.py [--out DIR] [--iterations 200] [--trees 2] [--seeds 3]
        [--search-pays [tree|rollout|rollout-history]] [--held-out] [--smoke]

Runs are resumable (a sweep under ``--out``); the whole evaluation takes about an hour on a
2-core machine, the search-pays part longer.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from hpcsched.policies import PolicySpec, SearchSpec
from hpcsched.reproduce import (
    MARS_BASELINES,
    MARS_METRICS,
    ROLLOUT_SETTINGS,
    MarsSlice,
    data_folder,
    mars_slices,
    mars_summary,
    mars_verdicts,
    reproduce_mars,
    rollout_policies,
    slice_runs,
)
from hpcsched.sweep import Sweep, run_sweep

REPO = Path(__file__).resolve().parents[1]


def show(summary: pd.DataFrame) -> None:
    for label, rows in summary.groupby("workload", sort=False):
        print(f"\n{label} (mean ± std over seeds; hours)")
        print(
            "| policy | seeds | mean wait | median of waited | P95 | max | bsld | before maint. % |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows.itertuples(index=False):
            row = r._asdict()

            def h(m: str, row: dict = row) -> str:
                return f"{row[m] / 3600:.2f} ± {row[m + '_std'] / 3600:.2f}"

            print(
                f"| {r.policy} | {r.seeds} | {h('wait_mean')} | {h('wait_median_waited')} | "
                f"{h('wait_p95')} | {h('wait_max')} | {r.bsld_mean:.1f} ± {r.bsld_mean_std:.1f} "
                f"| {100 * r.utilization_before_maintenance:.1f} ± "
                f"{100 * r.utilization_before_maintenance_std:.1f} |"
            )


#: The MARS-CW configurations whose budget ``--search-pays`` compares: the tree search with the
#: paper's forward model; the evaluation's rollout look-ahead (100 cycles) with the running
#: jobs' ends drawn from the history (with requested times it has one future, so nothing to
#: buy), where iterations buy sampled futures; and the same with every run time drawn.
SEARCH_PAYS: dict[str, tuple[str, dict[str, Any]]] = {
    "tree": ("the tree search, the paper's forward model", {}),
    "rollout": (
        "the rollout look-ahead (100 cycles), the running jobs' ends drawn from the history",
        {"lookahead": "rollout", **ROLLOUT_SETTINGS["mars-cw"], "runtime_model": "running"},
    ),
    "rollout-history": (
        "the rollout look-ahead (100 cycles), every run time drawn from the history",
        {"lookahead": "rollout", **ROLLOUT_SETTINGS["mars-cw"], "runtime_model": "history"},
    ),
}


def search_pays(
    data: Path, out: Path, trees: int, seeds: int, slices: int | None, config: str
) -> bool:
    """MARS-CW (configuration ``config`` of ``SEARCH_PAYS``) at 50 and 1000 iterations per
    tree on every slice; True if 1000 always wins."""
    title, options = SEARCH_PAYS[config]
    policies: list[tuple[PolicySpec, dict[str, object]]] = [
        (
            PolicySpec(
                "mars-cw",
                search=SearchSpec(iterations=iterations, trees=trees, seed=seed, **options),
            ),
            {"iterations": iterations, "seed": seed},
        )
        for iterations in (50, 1000)
        for seed in range(1, seeds + 1)
    ]
    runs = [
        run
        for slice_ in mars_slices(data)[:slices]
        for run in slice_runs(slice_, out / "calendars", policies)
    ]
    outcome = run_sweep(Sweep(source="<search pays>", out=str(out), runs=runs))
    table = outcome.table
    means = table.groupby(["workload", "iterations"], sort=False)["bsld_mean"].agg(["mean", "std"])
    print(f"\nSearch pays: MARS-CW, {title}: mean bounded slowdown (mean ± std over seeds)")
    print("| slice | 50 iterations | 1000 iterations | lower at 1000 |")
    print("|---|---:|---:|---|")
    ok = True
    for label in dict.fromkeys(table["workload"]):
        low, high = means.loc[(label, 50)], means.loc[(label, 1000)]
        better = bool(high["mean"] < low["mean"])
        ok &= better
        print(
            f"| {label} | {low['mean']:.2f} ± {low['std']:.2f} | "
            f"{high['mean']:.2f} ± {high['std']:.2f} | {'PASS' if better else 'FAIL'} |"
        )
    return ok


#: Slices of the held-out check: (title, file, first job: None = the middle, "quarter" = a
#: quarter of the way in, or a job number).
HELD_OUT: tuple[tuple[str, str, int | str | None], ...] = (
    ("KTH-SP2", "KTH-SP2-1996-2.1-cln.swf.gz", None),
    ("DAS2-fs1", "DAS2-fs1-2003-1.swf.gz", None),
    ("Lublin-256", "lublin_256.swf.gz", None),
    ("ALCF Theta", "ALCF-Theta-2022.swf.gz", 6000),
    ("SDSC-BLUE", "SDSC-BLUE-2000-4.2-cln.swf.gz", "quarter"),
    ("CTC", "CTC-SP2-1996-3.1-cln.swf.gz", "quarter"),
    ("HPC2N", "HPC2N-2002-2.2-cln.swf.gz", "quarter"),
)


def held_out_slices(data: Path, count: int | None) -> list[MarsSlice]:
    from hpcsched.workload import load_workload

    slices = []
    for title, name, where in HELD_OUT[:count]:
        path = data / "pwa" / name
        jobs = len(load_workload(path))
        start = where if isinstance(where, int) else jobs // (4 if where == "quarter" else 2)
        slices.append(MarsSlice(title, path, start, start + 4000))
    return slices


def held_out(
    data: Path, out: Path, iterations: int, trees: int, seeds: int, count: int | None
) -> bool:
    """The rollout look-ahead against the baselines on the held-out slices; True if MARS-WB
    (rollout) meets MARS-CW's criteria overall and MARS-CU (rollout) MARS-CU's."""
    policies: list[tuple[PolicySpec, dict[str, object]]] = [
        (PolicySpec(name, window), {}) for name, window in MARS_BASELINES
    ]
    for seed in range(1, seeds + 1):
        spec = SearchSpec(iterations=iterations, trees=trees, seed=seed)
        policies.append((PolicySpec("random", search=spec), {"seed": seed}))
        policies += rollout_policies(spec, seed)
    runs = [
        run
        for slice_ in held_out_slices(data, count)
        for run in slice_runs(slice_, out / "calendars", policies)
    ]
    outcome = run_sweep(Sweep(source="<held out>", out=str(out), runs=runs))
    summary = mars_summary(outcome.table)
    print("\nHeld-out slices (no choice was measured on them)")
    show(summary)
    verdicts = mars_verdicts(summary)
    print_verdicts(verdicts)
    passed = verdicts.set_index("criterion")["overall"]
    checked = pd.concat([passed.filter(like="MARS-WB"), passed.filter(like="MARS-CU (rollout)")])
    return bool((checked == "PASS").all())


def print_verdicts(verdicts: pd.DataFrame) -> None:
    print("\n| criterion | " + " | ".join(verdicts.columns[1:]) + " |")
    print("|---|" + "---|" * (len(verdicts.columns) - 1))
    for row in verdicts.itertuples(index=False):
        print("| " + " | ".join(map(str, row)) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--traces", type=Path, default=None, help="folder with pwa/ (default ../shared/traces)"
    )
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here (resumable)")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--trees", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--search-pays",
        nargs="?",
        const="tree,rollout",
        default=None,
        help="compare 50 and 1000 iterations: tree, rollout, rollout-history (comma-separated; "
        "default tree,rollout)",
    )
    parser.add_argument("--held-out", action="store_true")
    parser.add_argument("--skip-evaluation", action="store_true", help="only the parts asked for")
    parser.add_argument("--smoke", action="store_true", help="one slice, 2 iterations, 1 seed (CI)")
    args = parser.parse_args()
    search_pays_configs = args.search_pays.split(",") if args.search_pays else []
    unknown = set(search_pays_configs) - set(SEARCH_PAYS)
    if unknown:
        parser.error(f"--search-pays: choose among {', '.join(SEARCH_PAYS)}, not {unknown}")
    data = data_folder(args.traces or REPO.parent / "shared" / "traces")
    slices = None
    if args.smoke:
        args.iterations, args.trees, args.seeds, slices = 2, 1, 1, 1
        args.held_out = True  # the held-out part too, on one slice
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        print(
            f"MARS: {args.iterations} iterations per tree, {args.trees} trees, depth 50, gamma "
            f"0.99, 161 actions, seeds 1-{args.seeds}; metrics {', '.join(MARS_METRICS)}"
        )
        failures = 0
        if not args.skip_evaluation:
            done = reproduce_mars(
                data,
                out / "evaluation",
                iterations=args.iterations,
                trees=args.trees,
                seeds=args.seeds,
                slices=slices,
            )
            summary = mars_summary(done.table)
            show(summary)
            verdicts = mars_verdicts(summary)
            print_verdicts(verdicts)
            failures += int((verdicts["overall"] == "FAIL").sum())
        for config in search_pays_configs:
            folder = out / "search-pays" if config == "tree" else out / f"search-pays-{config}"
            failures += not search_pays(data, folder, args.trees, args.seeds, slices, config)
        if args.held_out:
            failures += not held_out(
                data, out / "held-out", args.iterations, args.trees, args.seeds, slices
            )
    sys.exit(1 if failures and not args.smoke else 0)


if __name__ == "__main__":
    main()
