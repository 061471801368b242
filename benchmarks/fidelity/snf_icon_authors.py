"""hpcsched against the SNF-ICON authors' simulator (SPARS-ICON), like for like.

Not run by CI: it needs a clone of the authors' repository (github.com/RakaSP/SPARS-ICON) and
their Python dependencies, and their simulator takes 10 s to 90 min per case.

    # 1. the authors' results, mean transition latencies (their platforms with std = 0)
    python benchmarks/fidelity/snf_icon_authors.py run --spars /tmp/spars-icon --out ref/
    # 2. hpcsched on the same cases, job by job
    python benchmarks/fidelity/snf_icon_authors.py compare --reference ref/

``run`` writes one JSON per case (mean wait, wasted MWh, each job's start); ``compare`` prints
mean wait and wasted energy of both, their relative difference, and how many jobs start at a
different time (with the first such job). Cases: the six paper workloads on AOBA-64 (SDSC-BLUE
on AOBA-1152; DAS2-fs2 and the Markovian workload also on Taurus-64) under FCFS/B+IPM,
SNF+IPM, SNF-ICON and SNF-ICON-NF.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO.parent / "shared" / "traces" / "snf-icon-paper"
POLICIES = ("fcfs-b+ipm", "snf+ipm", "snf-icon", "snf-icon-nf")
CASES = [
    *((f"DAS2-fs{k}-0-3000", "AOBA-64") for k in range(1, 5)),
    ("generated-markovian-3000", "AOBA-64"),
    ("SDSC-BLUE-2000-4.2-cln-0-3000", "AOBA-1152"),
    ("DAS2-fs2-0-3000", "Taurus-64"),
    ("generated-markovian-3000", "Taurus-64"),
]
#: SNF-ICON's Table I, in the authors' configuration keys.
ICON = {
    "alpha": 5000.0, "beta": 1.0, "arrival_rate": None, "service_rate": None,
    "resource_pmf": None, "min_spare_nodes": 1, "max_spare_nodes": None,
    "initial_arrival_rate": 1.0 / 3600.0, "arrival_ema_alpha": 0.2,
    "service_ema_alpha": 0.1, "resource_ema_alpha": 0.1, "runtime_log_sigma_floor": 0.25,
    "max_decision_horizon": 24.0 * 3600.0, "spare_arrival_window": 12.0 * 3600.0,
    "immediate_shutdown_on_stale_completion": True, "respect_timeout": True,
    "markov_fallback_enabled": True, "markov_window_seconds": 2.0 * 3600.0,
    "markov_min_samples": 3, "markov_max_samples": 1000, "markov_cv_tolerance": 0.45,
    "markov_max_lag1_autocorrelation": 0.65, "markov_ks_multiplier": 1.25,
    "markov_require_service_samples": True, "markov_ks_param": 3.0,
    "decision_log_enabled": False, "decision_log_path": None, "timeout": 7200,
}  # fmt: skip


def authors_config(policy: str) -> tuple[str, dict]:
    """The authors' algorithm name and options for one of POLICIES."""
    if policy == "fcfs-b+ipm":
        return "easy_psas", {"timeout": 7200}
    if policy == "snf+ipm":
        return "snf_psas", {"timeout": 7200}
    config = dict(ICON)
    variant = policy.removeprefix("snf-icon")
    if "ng" in variant:
        config["spare_arrival_window"] = None
    if "nf" in variant:
        config["markov_fallback_enabled"] = False
    return "snf_icon", config


def mean_platform(source: Path, target: Path) -> None:
    """The authors' platform file with every transition's standard deviation set to 0."""

    def zero(node):
        if isinstance(node, dict):
            return {k: 0.0 if k == "std" else zero(v) for k, v in node.items()}
        if isinstance(node, list):
            return [zero(v) for v in node]
        return node

    target.write_text(json.dumps(zero(json.loads(source.read_text()))))


def run_one(spars: Path, workload: Path, platform: Path, policy: str, out: Path) -> None:
    sys.path.insert(0, str(spars))
    utils = types.ModuleType("SPARS.Utils")  # the real one imports torch (RL agents only)
    utils.log_output = lambda *a, **k: None
    sys.modules["SPARS.Utils"] = utils
    from SPARS.Simulator.Simulator import Simulator

    algorithm, options = authors_config(policy)
    start = time.time()
    sim = Simulator(
        str(workload), str(platform), 0, algorithm, "continue", False, True, None, None,
        options, False,
    )  # fmt: skip
    sim.start_simulator()
    while sim.is_running:
        sim.advance()
        sim.monitor.flush_state_hist_if_safe()
    log = sim.monitor.jobs_execution_log
    waits = [j["start_time"] - j["subtime"] for j in log]
    energy = sim.monitor.energy.values()
    result = {
        "mean_wait": sum(waits) / len(waits),
        "wasted_mwh": sum(e["energy_waste"] for e in energy) / 3.6e9,
        "seconds": time.time() - start,
        "starts": {str(j["job_id"]): j["start_time"] for j in log},
    }
    out.write_text(json.dumps(result))
    print(f"{out.name}: wait {result['mean_wait']:.2f} s, wasted {result['wasted_mwh']:.4f} MWh")


def run(spars: Path, out: Path) -> None:
    """Every case with the authors' simulator, one child process each (skips existing)."""
    import subprocess

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, platform in CASES:
            workload = Path(tmp) / f"{name}.json"
            if not workload.exists():
                workload.write_bytes(gzip.decompress((PAPER / f"{name}.json.gz").read_bytes()))
            plat = Path(tmp) / f"{platform}.json"
            mean_platform(spars / "platforms" / f"{platform}.json", plat)
            for policy in POLICIES:
                target = out / f"mean_{name}_{platform}_{policy}.json"
                if not target.exists():
                    subprocess.run(
                        [sys.executable, __file__, "one", str(spars), str(workload), str(plat),
                         policy, str(target)],
                        check=True,
                    )  # fmt: skip


def compare(reference: Path) -> None:
    import numpy as np

    import hpcsched

    print("| workload | platform | policy | mean wait s (ours / authors) | diff | wasted MWh "
          "(ours / authors) | diff | jobs starting differently |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name, platform in CASES:
        for policy in POLICIES:
            path = reference / f"mean_{name}_{platform}_{policy}.json"
            if not path.exists():
                continue
            ref = json.loads(path.read_text())
            res = hpcsched.simulate(PAPER / f"{name}.json.gz", policy, platform=platform)
            wait = res.info["wait"]["mean"]
            waste = res.info["energy"]["wasted_mwh"]
            ids = res.jobs["job_id"].astype(str).to_numpy()
            starts = res.jobs["start"].to_numpy() + res.workload.time_origin
            differ = np.abs(starts - np.array([ref["starts"][i] for i in ids])) > 1e-6
            print(
                f"| {name} | {platform} | {policy} | {wait:,.2f} / {ref['mean_wait']:,.2f} | "
                f"{100 * (wait / ref['mean_wait'] - 1):+.2f}% | {waste:.4f} / "
                f"{ref['wasted_mwh']:.4f} | {100 * (waste / ref['wasted_mwh'] - 1):+.2f}% | "
                f"{int(differ.sum())} of {len(ids)} |",
                flush=True,
            )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "one":  # a child of `run`
        spars, workload, platform, policy, out = sys.argv[2:7]
        run_one(Path(spars), Path(workload), Path(platform), policy, Path(out))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="the authors' simulator on every case")
    r.add_argument("--spars", type=Path, required=True, help="a clone of SPARS-ICON")
    r.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare", help="hpcsched against the authors' results")
    c.add_argument("--reference", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "run":
        run(args.spars, args.out)
    else:
        compare(args.reference)


if __name__ == "__main__":
    main()
