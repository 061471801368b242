"""The papers' headline comparisons, one call each, with their reports.

- :func:`reproduce_snf_icon`: the SNF-ICON paper's six cases (AOBA-64 with DAS2 fs1-fs4 and the
  Markovian workload, AOBA-1152 with SDSC-BLUE) under FCFS/B+IPM, SNF+IPM, SNF-ICON and its
  three ablations, plus the Taurus-64 cases; mean-wait reductions next to the paper's.
- :func:`reproduce_mars`: MARS-CW and MARS-CU against FCFS, WFP3, SJF, F1 (w=256, EASY) and the
  Random baseline on two 4000-job slices of ALCF Theta 2022, with the search budget of the MARS
  issue (200 iterations per tree, 2 trees, depth 50, gamma 0.99, 161 actions, seed 17).

Both run as sweeps (resumable, in parallel) and write ``report.html`` beside the runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hpcsched import plots
from hpcsched.exceptions import InputError
from hpcsched.experiment import RunConfig, WorkloadSpec
from hpcsched.policies import POWER_POLICIES, PolicySpec, SearchSpec
from hpcsched.report import Report, add_detail_tables, formatted, inputs_of
from hpcsched.run import Result, read_run
from hpcsched.sweep import Sweep, SweepOutcome, SweepProgress, run_sweep

#: Where the data folder is looked for when none is given.
DEFAULT_DATA = Path("..") / "shared" / "traces"
PWA = "https://www.cs.huji.ac.il/labs/parallel/workload/logs.html"

#: (workload file, platform, paper's mean-wait reduction of SNF-ICON vs FCFS/B+IPM and vs
#: SNF+IPM, in %; SNF-ICON paper Table III)
SNF_ICON_CASES = [
    ("DAS2-fs1-0-3000", "AOBA-64", 2.2, 0.2),
    ("DAS2-fs2-0-3000", "AOBA-64", 44.8, 0.1),
    ("DAS2-fs3-0-3000", "AOBA-64", 2.4, 11.3),
    ("DAS2-fs4-0-3000", "AOBA-64", 11.6, 2.9),
    ("generated-markovian-3000", "AOBA-64", 42.4, 26.9),
    ("SDSC-BLUE-2000-4.2-cln-0-3000", "AOBA-1152", 16.4, -0.15),
]
TAURUS_CASES = [("DAS2-fs2-0-3000", "Taurus-64"), ("generated-markovian-3000", "Taurus-64")]
#: Every power manager of the engine (FCFS/B+IPM, SNF+IPM, SNF-ICON and its ablations).
SNF_ICON_POLICIES = POWER_POLICIES
#: The case whose SNF-ICON run the report shows in detail (modes, node states).
SHOWCASE = "generated-markovian-3000"

THETA = "ALCF-Theta-2022.swf.gz"
THETA_SLICES = {"first 4000 jobs": (0, 4000), "jobs 12000-15999": (12000, 16000)}
MARS_BASELINES = [("fcfs", None), ("wfp3", 256), ("sjf", 256), ("f1", 256)]


@dataclass
class Reproduction:
    """What a reproduction produced: its results table, the report, and the sweep outcome."""

    table: pd.DataFrame
    report: str
    outcome: SweepOutcome


def data_folder(data: str | os.PathLike[str] | None) -> Path:
    """The data folder: the one given, else ``$HPCSCHED_DATA``, else ``../shared/traces``."""
    chosen = data or os.environ.get("HPCSCHED_DATA") or DEFAULT_DATA
    return Path(chosen)


def _find(data: Path, name: str, subfolders: tuple[str, ...]) -> Path | None:
    for folder in ("", *subfolders):
        path = data / folder / name
        if path.is_file():
            return path
    return None


def snf_icon_runs(data: Path) -> list[RunConfig]:
    """The runs of the SNF-ICON reproduction, in report order."""
    files: dict[str, WorkloadSpec] = {}
    missing = []
    for name, *_ in SNF_ICON_CASES:
        path = _find(data, f"{name}.json.gz", ("snf-icon-paper",))
        if path is not None:
            files[name] = WorkloadSpec(path=str(path), name=name)
        elif name == "generated-markovian-3000":
            # the generator reproduces the paper's file bit for bit (issue 2)
            files[name] = WorkloadSpec(generator="markovian", name=name)
        else:
            missing.append(f"{name}.json.gz")
    if missing:
        raise InputError(
            f"missing {', '.join(missing)}: the SNF-ICON paper's workloads (Batsim JSON, the "
            "first 3000 jobs of the Parallel Workloads Archive logs DAS2-fs1..fs4-2003-1.swf "
            f"and SDSC-BLUE-2000-4.2-cln.swf, {PWA}); put them in {data}/snf-icon-paper/ or "
            "give --data DIR",
            path=str(data),
        )
    runs = []
    cases = [(name, platform) for name, platform, *_ in SNF_ICON_CASES] + TAURUS_CASES
    for name, platform in cases:
        for policy in SNF_ICON_POLICIES:
            taurus = platform.startswith("Taurus")
            if taurus and policy not in SNF_ICON_POLICIES[:3]:
                continue
            runs.append(
                RunConfig(workload=files[name], policy=PolicySpec(policy), platform=platform)
            )
    return runs


def mars_runs(data: Path, iterations: int = 200, trees: int = 2) -> list[RunConfig]:
    """The runs of the MARS reproduction, slice by slice."""
    path = _find(data, THETA, ("pwa",))
    if path is None:
        raise InputError(
            f"missing {THETA}: the ALCF Theta 2022 log from the Parallel Workloads Archive "
            f"({PWA}); put it in {data}/pwa/ or give --data DIR",
            path=str(data),
        )
    search = SearchSpec(iterations=iterations, trees=trees, seed=17)
    policies = [PolicySpec(name, window) for name, window in MARS_BASELINES] + [
        PolicySpec(name, search=search) for name in ("random", "mars-cw", "mars-cu")
    ]
    return [
        RunConfig(
            workload=WorkloadSpec(path=str(path), start=start, stop=stop, name=f"Theta {title}"),
            policy=policy,
        )
        for title, (start, stop) in THETA_SLICES.items()
        for policy in policies
    ]


def reproduce_snf_icon(
    data: str | os.PathLike[str] | None,
    out: str | os.PathLike[str],
    *,
    processes: int | None = None,
    progress: SweepProgress | None = None,
) -> Reproduction:
    """Runs the SNF-ICON comparison and writes ``out/report.html``."""
    folder = data_folder(data)
    runs = snf_icon_runs(folder)
    outcome = _run(runs, out, processes, progress)
    table = outcome.table
    report = Report(
        "SNF-ICON reproduction", subtitle=f"SNF-ICON paper cases, workloads from {folder}"
    )
    report.paragraph(
        "Each case replays the paper's workload on its platform under FCFS/B+IPM, SNF+IPM, "
        "SNF-ICON and its ablations (ng: no gate, nf: no fallback), with the paper's Table I "
        "parameters: idle timeout 7200 s, alpha 5000, beta 1, screen window 2 h."
    )
    report.heading("Mean-wait reduction of SNF-ICON")
    report.table(
        _reductions(table),
        caption="Reduction of the mean wait by SNF-ICON against each IPM baseline, next to the "
        "paper's Table III figures.",
    )
    report.heading("Every run")
    report.table(
        pd.DataFrame(
            {
                "workload": table["workload"],
                "platform": table["platform"],
                "policy": table["policy"],
                "mean wait (s)": table["wait_mean"].map("{:,.0f}".format),
                "max wait (s)": table["wait_max"].map("{:,.0f}".format),
                "wasted (MWh)": table["energy_wasted_mwh"].map("{:,.2f}".format),
                "ICON mode (%)": (100 * table["icon_share"]).map(
                    lambda x: "-" if pd.isna(x) else f"{x:.1f}"
                ),
            }
        ),
        caption="Wasted energy: everything not spent computing (idle, switching, sleeping).",
    )
    aoba = table[table["platform"].str.startswith("AOBA")]
    report.heading("Waiting time against wasted energy")
    report.figure(
        plots.wait_energy_pareto(aoba, group="workload"),
        "Mean wait against wasted energy per case (AOBA platforms); the line is the "
        "empirical Pareto frontier.",
    )
    showcase = _load(out, table[(table["workload"] == SHOWCASE) & (table["platform"] == "AOBA-64")])
    report.heading(f"In detail: {SHOWCASE} on AOBA-64")
    for heading, draw in plots.applicable_plots(showcase):
        report.figure(draw(), heading)
    path = report.write(Path(out) / "report.html")
    return Reproduction(table, path, outcome)


def reproduce_mars(
    data: str | os.PathLike[str] | None,
    out: str | os.PathLike[str],
    *,
    iterations: int = 200,
    trees: int = 2,
    processes: int | None = None,
    progress: SweepProgress | None = None,
) -> Reproduction:
    """Runs the MARS comparison on the Theta slices and writes ``out/report.html``."""
    folder = data_folder(data)
    runs = mars_runs(folder, iterations, trees)
    outcome = _run(runs, out, processes, progress)
    table = outcome.table
    report = Report("MARS reproduction", subtitle=f"ALCF Theta 2022 from {folder}")
    report.paragraph(
        f"MARS budget: {iterations} iterations per tree, {trees} trees, depth 50, gamma 0.99, "
        "161 actions (17 heuristics x windows, EASY), seed 17. Baselines sort the first 256 "
        "jobs of the queue (FCFS the whole queue) and backfill with EASY. The paper's criteria: "
        "MARS-CW has the lowest median wait; MARS-CU waits less on average than WFP3 without "
        "losing utilization."
    )
    for title in THETA_SLICES:
        label = f"Theta {title}"
        rows = table[table["workload"] == label]
        results = _load(out, rows)
        report.heading(f"ALCF Theta 2022, {title}")
        report.definitions(inputs_of(next(iter(results.values()))))
        report.table(formatted(rows), caption="Waits in hours over all started jobs.")
        report.table(
            pd.DataFrame({"criterion": list(mars_verdicts(rows))}),
            caption="The paper's claims checked on this slice.",
        )
        add_detail_tables(report, results, level=3)
        for heading, draw in plots.applicable_plots(results):
            report.figure(draw(), heading)
    path = report.write(Path(out) / "report.html")
    return Reproduction(table, path, outcome)


def mars_verdicts(rows: pd.DataFrame) -> dict[str, bool]:
    """The MARS paper's claims on one slice, each with whether it holds."""
    by = rows.set_index("policy")
    cw, cu, wfp3 = by.loc["MARS-CW"], by.loc["MARS-CU"], by.loc["WFP3 w=256 +EASY"]
    others = by.drop(index="MARS-CW")
    baselines = by.drop(index=["MARS-CW", "MARS-CU"])
    return {
        f"{'PASS' if ok else 'FAIL'}: {text}": ok
        for text, ok in (
            (
                "MARS-CW has the lowest median wait",
                cw["wait_median"] <= others["wait_median"].min(),
            ),
            ("MARS-CU mean wait < WFP3 mean wait", cu["wait_mean"] < wfp3["wait_mean"]),
            (
                "MARS-CU utilization >= best baseline - 0.5 pt",
                cu["utilization"] >= baselines["utilization"].max() - 0.005,
            ),
        )
    }


def _run(
    runs: list[RunConfig],
    out: str | os.PathLike[str],
    processes: int | None,
    progress: Callable[[int, int, str, int], None] | None,
) -> SweepOutcome:
    sweep = Sweep(source="<reproduce>", out=os.path.abspath(os.fspath(out)), runs=runs)
    outcome = run_sweep(sweep, processes=processes, progress=progress)
    if outcome.failures:
        label, message, _ = outcome.failures[0]
        raise InputError(f"{label}: {message}", path=os.fspath(out))
    return outcome


def _load(out: str | os.PathLike[str], rows: pd.DataFrame) -> dict[str, Result]:
    """The runs of these results rows, opened from their run directories under ``out``."""
    return {row.policy: read_run(Path(out) / row.run_dir) for row in rows.itertuples()}


def _reductions(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name, platform, paper_fcfs, paper_snf in SNF_ICON_CASES:
        case = table[(table["workload"] == name) & (table["platform"] == platform)]
        mean = case.set_index("policy_name")["wait_mean"]
        icon, fcfs, snf = mean["snf-icon"], mean["fcfs-b+ipm"], mean["snf+ipm"]
        rows.append(
            {
                "workload": name,
                "platform": platform,
                "FCFS/B+IPM mean wait (s)": f"{fcfs:,.0f}",
                "SNF+IPM (s)": f"{snf:,.0f}",
                "SNF-ICON (s)": f"{icon:,.0f}",
                "ours vs FCFS/B+IPM (%)": f"{100 * (1 - icon / fcfs):.1f}",
                "paper vs FCFS/B+IPM (%)": f"{paper_fcfs:.1f}",
                "ours vs SNF+IPM (%)": f"{100 * (1 - icon / snf):.1f}",
                "paper vs SNF+IPM (%)": f"{paper_snf:.1f}",
            }
        )
    return pd.DataFrame(rows)
