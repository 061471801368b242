"""The papers' headline comparisons, one call each, with their reports.

- :func:`reproduce_snf_icon`: the SNF-ICON paper's six cases (AOBA-64 with DAS2 fs1-fs4 and the
  Markovian workload, AOBA-1152 with SDSC-BLUE) under FCFS/B+IPM, SNF+IPM, SNF-ICON and its
  three ablations, plus the Taurus-64 cases; mean-wait reductions next to the paper's. With
  ``seeds``, transition latencies are drawn (one run per seed) and every figure is a mean with
  its standard deviation over the seeds.
- :func:`reproduce_mars`: MARS-CW and MARS-CU against FCFS, WFP3, SJF, F1 (w=256, EASY; with
  requested and with predicted run times), Slurm's own scheduler (multifactor priority with
  ``MARS_SLURM_SETTINGS``) and the Random baseline, over seeds, on five 4000-job
  slices of three traces (the paper's two ALCF Theta slices and the middle of SDSC-BLUE, CTC
  and HPC2N), each with a maintenance of 8 hours every 6 days announced 48 hours ahead.

Both run as sweeps (resumable, in parallel) and write ``report.html`` beside the runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from hpcsched import _core, plots
from hpcsched.exceptions import InputError, OptionError
from hpcsched.experiment import RunConfig, WorkloadSpec
from hpcsched.plots.catalog import reading_of
from hpcsched.policies import POWER_POLICIES, PolicySpec, PowerSpec, SearchSpec
from hpcsched.report import Report
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
#: The MARS evaluation's traces: the paper's two Theta slices, and for three traces with real
#: queueing the 4000 jobs from the middle of the trace (a rule fixed before looking at results).
MARS_TRACES: tuple[tuple[str, str, tuple[int, ...] | None], ...] = (
    ("ALCF Theta", THETA, (0, 12000)),
    ("SDSC-BLUE", "SDSC-BLUE-2000-4.2-cln.swf.gz", None),
    ("CTC", "CTC-SP2-1996-3.1-cln.swf.gz", None),
    ("HPC2N", "HPC2N-2002-2.2-cln.swf.gz", None),
)
SLICE_JOBS = 4000
#: 8 hours of maintenance every 6 days (the first on day 3 of the slice), announced 48 h ahead.
MAINTENANCE = {"first": 3 * 86400.0, "every": 6 * 86400.0, "length": 8 * 3600.0}
ANNOUNCE_LEAD = 48 * 3600.0
MARS_BASELINES = [("fcfs", None), ("wfp3", 256), ("sjf", 256), ("f1", 256)]
#: Slurm's scheduler as a site would run it, for the "Slurm" row (``--policy slurm``): the
#: slice's machine as one partition of one-CPU nodes (the trace's processors), multifactor
#: priority with age (saturating after 7 days), fair-share (Fair Tree, usage halving every 7
#: days, recomputed every 5 min) and job size weights, users and accounts from the trace's
#: user and group fields, and Slurm's default backfill parameters (bf_interval 30 s, bf_window
#: 1 day, bf_resolution 60 s, bf_max_job_test 500).
MARS_SLURM_SETTINGS = """\
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageEnforce=associations,limits,qos
SchedulerType=sched/backfill
PriorityType=priority/multifactor
PriorityDecayHalfLife=7-0
PriorityCalcPeriod=5
PriorityMaxAge=7-0
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=1000
"""
#: The row of the Slurm baseline in the summary.
SLURM_ROW = "Slurm"
#: MARS with the rollout look-ahead (each outcome followed by six heuristics), run beside the
#: paper's tree search: rewards CW, CU, and wait with bounded slowdown.
ROLLOUT_POLICIES = ("mars-cw", "mars-cu", "mars-wb")
#: The rollout look-ahead's settings where they differ from the search defaults (50 counted
#: cycles, gamma 0.99): MARS-CW looks 100 cycles ahead, nearly undiscounted, so the wait of the
#: short jobs it would leave behind is seen (chosen on the five slices, checked on seven
#: held-out ones; it did not help MARS-CU or MARS-WB; drawing the running jobs' ends,
#: `runtime_model="running"`, passed on seeds 1-3 but not on seeds 4-6: BENCHMARKS.md, issue 12).
ROLLOUT_SETTINGS: dict[str, dict[str, Any]] = {"mars-cw": {"depth": 100, "gamma": 0.999}}
#: What the verdicts are computed on (seed means), with the direction that is better.
MARS_METRICS = {
    "wait_mean": "lower",
    "wait_median_waited": "lower",
    "wait_p95": "lower",
    "wait_max": "lower",
    "bsld_mean": "lower",
    "utilization": "higher",
    "utilization_before_maintenance": "higher",
}


@dataclass
class Reproduction:
    """What a reproduction produced: its results table, the report, and the sweep outcome."""

    table: pd.DataFrame
    report: str
    outcome: SweepOutcome


def data_folder(data: str | os.PathLike[str] | None) -> Path:
    """The data folder: the one given, else ``$HPCSCHED_DATA``, else ``../shared/traces``;
    an error naming where it came from when it is not a folder (rather than every file
    missing from it)."""
    source: str | None
    if data:
        chosen, source = data, "--data"
    elif os.environ.get("HPCSCHED_DATA"):
        chosen, source = os.environ["HPCSCHED_DATA"], "$HPCSCHED_DATA"
    else:
        chosen, source = DEFAULT_DATA, None
    folder = Path(chosen)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        if source is None:
            raise OptionError(
                f"the default data folder {str(folder)!r} {what} "
                "(give --data DIR or set $HPCSCHED_DATA)"
            )
        raise OptionError(f"the folder {str(folder)!r} {what}", option=source)
    return folder


def _find(data: Path, name: str, subfolders: tuple[str, ...]) -> Path | None:
    for folder in ("", *subfolders):
        path = data / folder / name
        if path.is_file():
            return path
    return None


def snf_icon_grid() -> list[tuple[str, str, str]]:
    """(case, platform, policy) of each run of the SNF-ICON reproduction, in report order: every
    policy on the paper's cases, the first three on the Taurus cases."""
    cases = [(name, platform) for name, platform, *_ in SNF_ICON_CASES] + TAURUS_CASES
    return [
        (name, platform, policy)
        for name, platform in cases
        for policy in SNF_ICON_POLICIES
        if not platform.startswith("Taurus") or policy in SNF_ICON_POLICIES[:3]
    ]


def snf_icon_run_count(seeds: int | None = None) -> int:
    """How many runs ``reproduce snf-icon [--seeds N]`` makes (the README and docs quote it;
    tests/test_doc_figures.py checks them against this)."""
    return len(snf_icon_grid()) * (seeds or 1)


def mars_run_count(seeds: int = 3) -> int:
    """How many runs ``reproduce mars --seeds N`` makes: one per policy of ``mars_policies``
    on each slice (the README and docs quote it; tests/test_doc_figures.py checks them)."""
    slices = sum(1 if given is None else len(given) for _, _, given in MARS_TRACES)
    return slices * len(mars_policies(seeds=seeds))


def snf_icon_runs(data: Path, seeds: int | None = None) -> list[RunConfig]:
    """The runs of the SNF-ICON reproduction, in report order; with ``seeds``, each run once
    per transition seed 1..seeds (latencies drawn from Normal(mean, std))."""
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
    for name, platform, policy in snf_icon_grid():
        if not seeds:
            runs.append(
                RunConfig(workload=files[name], policy=PolicySpec(policy), platform=platform)
            )
            continue
        for seed in range(1, seeds + 1):
            spec = PolicySpec(policy, power=PowerSpec(sample_transitions=seed))
            runs.append(
                RunConfig(
                    workload=files[name],
                    policy=spec,
                    platform=platform,
                    parameters={"seed": seed},
                )
            )
    return runs


@dataclass(frozen=True)
class MarsSlice:
    """One slice of the MARS evaluation: jobs [start, stop) of a trace and its calendar."""

    title: str
    path: Path
    start: int
    stop: int

    @property
    def label(self) -> str:
        return f"{self.title} {self.start}-{self.stop - 1}"


def mars_slices(data: Path) -> list[MarsSlice]:
    """The slices of the MARS evaluation, from the traces in ``data``."""
    from hpcsched.workload import load_workload

    slices, missing = [], []
    for title, name, given in MARS_TRACES:
        path = _find(data, name, ("pwa",))
        if path is None:
            missing.append(name)
            continue
        starts = given if given is not None else (len(load_workload(path)) // 2,)
        slices += [MarsSlice(title, path, s, s + SLICE_JOBS) for s in starts]
    if missing:
        raise InputError(
            f"missing {', '.join(missing)}: Parallel Workloads Archive logs ({PWA}); put them "
            f"in {data}/pwa/ or give --data DIR",
            path=str(data),
        )
    return slices


def write_maintenance(slice_: MarsSlice, folder: Path) -> Path:
    """The slice's maintenance calendar (trace clock), written to ``folder``: 8 hours every 6
    days from day 3, until 30 days after its last submission."""
    from hpcsched._io import atomic_write_bytes
    from hpcsched.experiment import WorkloadSpec

    workload = WorkloadSpec(path=str(slice_.path), start=slice_.start, stop=slice_.stop).load()
    origin, span = workload.time_origin, workload.last_submit + 30 * 86400.0
    lines = [f"# {slice_.label}: {MAINTENANCE['length'] / 3600:g} h every 6 days"]
    t = MAINTENANCE["first"]
    while t < span:
        lines.append(f"{origin + t:.0f} {origin + t + MAINTENANCE['length']:.0f} S - maintenance")
        t += MAINTENANCE["every"]
    path = folder / f"{slice_.label.replace(' ', '-')}.txt"
    atomic_write_bytes(path, ("\n".join(lines) + "\n").encode())
    return path


def write_slurm_conf(slice_: MarsSlice, nodes: int, folder: Path) -> Path:
    """The slice's site for the Slurm row, written to ``folder``: ``nodes`` one-CPU nodes in
    one partition, with ``MARS_SLURM_SETTINGS``."""
    from hpcsched._io import atomic_write_bytes

    text = (
        f"# {slice_.label}: the trace's machine, Slurm's multifactor settings\n"
        f"NodeName=n[1-{nodes}] CPUs=1\n"
        "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n" + MARS_SLURM_SETTINGS
    )
    path = folder / f"{slice_.label.replace(' ', '-')}.conf"
    atomic_write_bytes(path, text.encode())
    return path


def mars_runs(
    data: Path,
    out: Path,
    *,
    iterations: int = 200,
    trees: int = 2,
    seeds: int = 3,
    search: dict[str, Any] | None = None,
    slices: int | None = None,
) -> list[RunConfig]:
    """The runs of the MARS evaluation, slice by slice: each of ``mars_policies`` once."""
    policies = mars_policies(iterations, trees, seeds, search)
    return [
        run
        for slice_ in mars_slices(data)[:slices]
        for run in slice_runs(slice_, out / "calendars", policies)
    ]


def mars_policies(
    iterations: int = 200,
    trees: int = 2,
    seeds: int = 3,
    search: dict[str, Any] | None = None,
) -> list[tuple[PolicySpec, dict[str, object]]]:
    """The policies of the MARS evaluation, with their parameters: each baseline once (with
    requested and with predicted run times), Slurm once (on the slice's site: ``slice_runs``),
    then per seed Random, MARS-CW and MARS-CU (tree search) and the ``ROLLOUT_POLICIES``
    (rollout look-ahead)."""
    policies: list[tuple[PolicySpec, dict[str, object]]] = [
        (PolicySpec(name, window, estimates=estimates), {})
        for estimates in ("requested", "history")
        for name, window in MARS_BASELINES
    ]
    policies.append((PolicySpec("slurm"), {}))
    for seed in range(1, seeds + 1):
        spec = SearchSpec(iterations=iterations, trees=trees, seed=seed, **(search or {}))
        policies += [
            (PolicySpec(name, search=spec), {"seed": seed})
            for name in ("random", "mars-cw", "mars-cu")
        ]
        policies += rollout_policies(spec, seed)
    return policies


def rollout_policies(spec: SearchSpec, seed: int) -> list[tuple[PolicySpec, dict[str, object]]]:
    """The ``ROLLOUT_POLICIES`` with the rollout look-ahead (and their ``ROLLOUT_SETTINGS``) on
    the budget and seed of ``spec``."""
    return [
        (
            PolicySpec(
                name,
                search=replace(spec, lookahead="rollout", **ROLLOUT_SETTINGS.get(name, {})),
            ),
            {"seed": seed},
        )
        for name in ROLLOUT_POLICIES
    ]


def slice_runs(
    slice_: MarsSlice, calendars: Path, policies: list[tuple[PolicySpec, dict[str, object]]]
) -> list[RunConfig]:
    """One run per (policy, parameters) on a slice of the MARS evaluation, with its
    maintenance calendar (written to ``calendars``) announced ``ANNOUNCE_LEAD`` ahead; Slurm
    runs on the slice's site (``write_slurm_conf``, written there too)."""
    calendar = str(write_maintenance(slice_, calendars))
    workload = WorkloadSpec(
        path=str(slice_.path), start=slice_.start, stop=slice_.stop, name=slice_.label
    )
    site = None
    if any(policy.name == "slurm" for policy, _ in policies):
        site = str(write_slurm_conf(slice_, workload.load().nodes, calendars))
    return [
        RunConfig(
            workload=workload,
            policy=policy,
            platform=site if policy.name == "slurm" else None,
            downtime=calendar,
            announce_lead=ANNOUNCE_LEAD,
            parameters=parameters,
        )
        for policy, parameters in policies
    ]


def mars_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per slice and policy: the mean and standard deviation over seeds of each metric
    (``<metric>`` and ``<metric>_std``), and the number of seeds."""
    grouped = table.groupby(["workload", "policy"], sort=False)
    means = grouped[list(MARS_METRICS)].mean()
    stds = grouped[list(MARS_METRICS)].std(ddof=0).add_suffix("_std")
    counts = grouped.size().rename("seeds")
    return pd.concat([means, stds, counts], axis=1).reset_index()


def reproduce_snf_icon(
    data: str | os.PathLike[str] | None,
    out: str | os.PathLike[str],
    *,
    seeds: int | None = None,
    processes: int | None = None,
    progress: SweepProgress | None = None,
) -> Reproduction:
    """Runs the SNF-ICON comparison and writes ``out/report.html``. With ``seeds``,
    transition latencies are drawn with seeds 1..seeds and the figures are means over them."""
    folder = data_folder(data)
    runs = snf_icon_runs(folder, seeds)
    outcome = _run(runs, out, processes, progress)
    table = outcome.table
    report = Report(
        "SNF-ICON reproduction", subtitle=f"SNF-ICON paper cases, workloads from {folder}"
    )
    transitions = (
        f"transition latencies drawn from Normal(mean, std), one run per seed 1..{seeds}; "
        "figures are means with their standard deviation over the seeds"
        if seeds
        else "mean transition latencies"
    )
    report.paragraph(
        "Each case replays the paper's workload on its platform under FCFS/B+IPM, SNF+IPM, "
        "SNF-ICON and its ablations (ng: no gate, nf: no fallback), with the paper's Table I "
        f"parameters: idle timeout {_core.DEFAULT_IDLE_TIMEOUT:.0f} s, alpha 5000, beta 1, "
        f"screen window 2 h; {transitions}."
    )
    summary = seed_summary(table)
    report.heading("SNF-ICON against FCFS/B+IPM")
    report.table(
        pd.DataFrame({"criterion": list(snf_icon_verdicts(summary))}),
        caption="The paper's claim checked in each case: SNF-ICON's mean wait below "
        "FCFS/B+IPM's (means over the seeds).",
    )
    report.heading("Mean-wait reduction of SNF-ICON")
    report.table(
        _reductions(summary),
        caption="Reduction of the mean wait by SNF-ICON against each IPM baseline, next to the "
        "paper's Table III figures.",
    )
    report.heading("Every case and policy")
    report.table(
        pd.DataFrame(
            {
                "workload": summary["workload"],
                "platform": summary["platform"],
                "policy": summary["policy"],
                "mean wait (s)": _spread(summary, "wait_mean", "{:,.0f}"),
                "max wait (s)": _spread(summary, "wait_max", "{:,.0f}"),
                "wasted (MWh)": _spread(summary, "energy_wasted_mwh", "{:,.2f}"),
                "ICON mode (%)": (100 * summary["icon_share"]).map(
                    lambda x: "-" if pd.isna(x) else f"{x:.1f}"
                ),
            }
        ),
        caption="Wasted energy: everything not spent computing (idle, switching, sleeping)."
        + (f" Mean ± standard deviation over {seeds} seeds." if seeds else ""),
    )
    aoba = summary[summary["platform"].str.startswith("AOBA")]
    report.heading("Waiting time against wasted energy")
    report.figure(
        plots.wait_energy_pareto(aoba, group="workload"),
        "Mean wait against wasted energy per case (AOBA platforms): lower left is better on "
        "both; the line joins the policies no other beats on both (the empirical Pareto "
        "frontier).",
    )
    shown = table[(table["workload"] == SHOWCASE) & (table["platform"] == "AOBA-64")]
    if seeds:
        shown = shown[shown["seed"] == 1]
    showcase = _load(out, shown)
    report.heading(f"In detail: {SHOWCASE} on AOBA-64")
    for heading, draw in plots.applicable_plots(showcase):
        report.figure(draw(), reading_of(heading))
    path = report.write(Path(out) / "report.html")
    return Reproduction(table, path, outcome)


def reproduce_mars(
    data: str | os.PathLike[str] | None,
    out: str | os.PathLike[str],
    *,
    iterations: int = 200,
    trees: int = 2,
    seeds: int = 3,
    processes: int | None = None,
    progress: SweepProgress | None = None,
    slices: int | None = None,
) -> Reproduction:
    """Runs the MARS evaluation and writes ``out/report.html`` (``slices``: only the first
    ones, for a quick check)."""
    folder = data_folder(data)
    runs = mars_runs(
        folder, Path(out), iterations=iterations, trees=trees, seeds=seeds, slices=slices
    )
    outcome = _run(runs, out, processes, progress)
    table = outcome.table
    summary = mars_summary(table)
    verdicts = mars_verdicts(summary)
    report = Report("MARS evaluation", subtitle=f"Parallel Workloads Archive traces from {folder}")
    report.paragraph(
        f"Five slices of {SLICE_JOBS} jobs: the MARS paper's two ALCF Theta 2022 slices and the "
        "jobs from the middle of SDSC-BLUE, CTC and HPC2N, each with a maintenance of 8 hours "
        "every 6 days announced 48 hours ahead. MARS: "
        f"{iterations} iterations per tree, {trees} trees, depth 50, gamma 0.99, 161 actions "
        f"(17 heuristics x windows, EASY), seeds 1 to {seeds}. The (rollout) rows value each "
        "outcome of a decision by following it with six heuristics (F1, F2, SJF, WFP3, UNICEF "
        "w=256 and FCFS, EASY) to the same depth (MARS-CW (rollout): depth 100, gamma 0.999) "
        "and take the best. Rewards: CW the mean wait "
        "(jobs still waiting included), CU the utilization up to an announced maintenance "
        "(weight 3) with the mean wait, WB the mean wait and the mean bounded slowdown. "
        "Baselines sort the first 256 "
        "jobs of the queue (FCFS the whole queue) and backfill with EASY on requested run "
        "times, or on predicted ones (Tsafrir et al. 2007). Slurm: Slurm 22.05's main and "
        "backfill schedulers (--policy slurm) with multifactor priority as a site would set it "
        "(PriorityWeightAge 1000 with PriorityMaxAge 7 days, PriorityWeightFairshare 10000 by "
        "Fair Tree with usage halving every 7 days and recomputed every 5 min, "
        "PriorityWeightJobSize 1000; users and accounts from the trace's user and group "
        "fields; Slurm's default backfill parameters). Figures are means over the seeds "
        "(with their standard deviation); waits in hours."
    )
    report.heading("Verdicts")
    report.table(
        verdicts,
        caption="Each criterion on each slice, from the seed means; PASS overall when "
        "it holds on at least 4 of the 5 slices.",
    )
    for label, rows in summary.groupby("workload", sort=False):
        report.heading(str(label))
        report.table(_summary_table(rows), caption="Mean ± standard deviation over seeds.")
    path = report.write(Path(out) / "report.html")
    return Reproduction(table, path, outcome)


def seed_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One row per case and policy: the metrics' means over the seeds, with ``<metric>_std``
    (their standard deviation, 0 for a single run) and ``seeds`` (how many runs)."""
    # total energy too: the Pareto plot scales its energy axis by it
    metrics = ["wait_mean", "wait_max", "energy_wasted_mwh", "energy_total_mwh", "icon_share"]
    keys = ["workload", "platform", "policy", "policy_name"]
    grouped = table.groupby(keys, sort=False, dropna=False)[metrics]
    means = grouped.mean()
    spread = grouped.std(ddof=1).fillna(0.0).add_suffix("_std")
    counts = grouped.size().rename("seeds")
    return pd.concat([means, spread, counts], axis=1).reset_index()


def snf_icon_verdicts(summary: pd.DataFrame) -> dict[str, bool]:
    """The paper's claim in each case: SNF-ICON's mean wait below FCFS/B+IPM's (means over
    the seeds), each with whether it holds."""
    verdicts = {}
    for (name, platform), case in summary.groupby(["workload", "platform"], sort=False):
        by = case.set_index("policy_name")
        if not {"snf-icon", "fcfs-b+ipm"} <= set(by.index):
            continue
        icon, fcfs = by.loc["snf-icon"], by.loc["fcfs-b+ipm"]
        ok = bool(icon["wait_mean"] < fcfs["wait_mean"])
        figures = (
            f"{icon['wait_mean']:,.0f} ± {icon['wait_mean_std']:,.0f} s vs "
            f"{fcfs['wait_mean']:,.0f} ± {fcfs['wait_mean_std']:,.0f} s"
            if icon["seeds"] > 1
            else f"{icon['wait_mean']:,.0f} s vs {fcfs['wait_mean']:,.0f} s"
        )
        text = f"SNF-ICON mean wait below FCFS/B+IPM on {name} ({platform}): {figures}"
        verdicts[f"{'PASS' if ok else 'FAIL'}: {text}"] = ok
    return verdicts


def _spread(summary: pd.DataFrame, metric: str, fmt: str) -> pd.Series:
    """``mean ± std`` (or the value alone for single runs)."""
    return pd.Series(
        [
            fmt.format(m) if n <= 1 else f"{fmt.format(m)} ± {fmt.format(sd)}"
            for m, sd, n in zip(
                summary[metric], summary[f"{metric}_std"], summary["seeds"], strict=True
            )
        ],
        index=summary.index,
    )


#: The MARS rows held to MARS-CW's criteria (the paper's tree search and the rollout look-ahead).
MARS_WAITERS = ("MARS-CW", "MARS-CW (rollout)", "MARS-WB (rollout)")
#: The MARS rows held to MARS-CU's criteria.
MARS_PACKERS = ("MARS-CU", "MARS-CU (rollout)")
#: The baselines every MARS criterion compares with (requested run times).
VERDICT_BASELINES = ("FCFS +EASY", "WFP3 w=256 +EASY", "SJF w=256 +EASY", "F1 w=256 +EASY")


def mars_verdicts(summary: pd.DataFrame) -> pd.DataFrame:
    """The criteria of the MARS evaluation on each slice (from seed means) and overall (on at
    least 4 of 5 slices): MARS-CW (and each MARS row of ``MARS_WAITERS``) waits less and has a
    lower bounded slowdown than every baseline and Random, with a longest wait at most 1.5
    times F1's; MARS-CU (and each row of ``MARS_PACKERS``) keeps the machine busier in the
    48 h before maintenance than every baseline and Random, and waits less than WFP3."""
    rows = []
    for label, group in summary.groupby("workload", sort=False):
        by = group.set_index("policy")
        f1_max = float(by["wait_max"].to_dict()["F1 w=256 +EASY"])
        others = by.loc[[*VERDICT_BASELINES, "Random"]]
        checks: dict[str, Any] = {}  # pandas comparisons: bool or numpy bool
        for name in MARS_WAITERS:
            if name not in by.index:
                continue
            cw = by.loc[name]
            checks |= {
                f"{name} mean wait below every baseline and Random": cw["wait_mean"]
                < others["wait_mean"].min(),
                f"{name} mean bounded slowdown below every baseline and Random": cw["bsld_mean"]
                < others["bsld_mean"].min(),
                f"{name} longest wait at most 1.5 x F1's": cw["wait_max"] <= 1.5 * f1_max,
            }
            if SLURM_ROW in by.index:
                checks[f"{name} mean wait below Slurm's"] = (
                    cw["wait_mean"] < by.loc[SLURM_ROW, "wait_mean"]
                )
        for name in MARS_PACKERS:
            if name not in by.index:
                continue
            cu = by.loc[name]
            checks |= {
                f"{name} utilization before maintenance above every baseline and Random": cu[
                    "utilization_before_maintenance"
                ]
                > others["utilization_before_maintenance"].max(),
                f"{name} mean wait below WFP3's": cu["wait_mean"]
                < by.loc["WFP3 w=256 +EASY", "wait_mean"],
            }
            if SLURM_ROW in by.index:
                checks[f"{name} utilization before maintenance above Slurm's"] = (
                    cu["utilization_before_maintenance"]
                    > by.loc[SLURM_ROW, "utilization_before_maintenance"]
                )
        rows += [
            {"slice": str(label), "criterion": c, "holds": bool(ok)} for c, ok in checks.items()
        ]
    table = pd.DataFrame(rows)
    wide = table.pivot(index="criterion", columns="slice", values="holds")
    wide = wide[list(dict.fromkeys(table["slice"]))]
    slices = wide.shape[1]
    needed = min(4, slices) if slices >= 5 else slices
    wide["overall"] = wide.sum(axis=1) >= needed
    order = list(dict.fromkeys(table["criterion"]))
    return wide.loc[order].map(lambda ok: "PASS" if ok else "FAIL").reset_index()


def _summary_table(rows: pd.DataFrame) -> pd.DataFrame:
    def hours(metric: str) -> pd.Series:
        return rows.apply(
            lambda r: f"{r[metric] / 3600:.2f} ± {r[metric + '_std'] / 3600:.2f}", axis=1
        )

    def plain(metric: str, scale: float = 1.0, digits: int = 1) -> pd.Series:
        return rows.apply(
            lambda r: f"{scale * r[metric]:.{digits}f} ± {scale * r[metric + '_std']:.{digits}f}",
            axis=1,
        )

    return pd.DataFrame(
        {
            "policy": rows["policy"],
            "seeds": rows["seeds"],
            "mean wait": hours("wait_mean"),
            "median of waited": hours("wait_median_waited"),
            "P95 wait": hours("wait_p95"),
            "max wait": hours("wait_max"),
            "bounded slowdown": plain("bsld_mean"),
            "utilization %": plain("utilization", 100),
            "before maintenance %": plain("utilization_before_maintenance", 100),
        }
    )


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
    return {
        str(policy): read_run(Path(out) / str(run_dir))
        for policy, run_dir in zip(rows["policy"], rows["run_dir"], strict=True)
    }


def _reductions(summary: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name, platform, paper_fcfs, paper_snf in SNF_ICON_CASES:
        case = summary[(summary["workload"] == name) & (summary["platform"] == platform)]
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
