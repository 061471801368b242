"""What the command line says of Slurm's settings, the jobs that never start and the platform a
run takes (issue 40, points 11, 12, 17 and 18): help that names every policy and trace format,
one option group for the site, Slurm's defaults said when no slurm.conf is given, --backfill
under slurm pointed to slurm.conf, and compare's table and report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.conftest import run_cli

from hpcsched import _core
from hpcsched.cli import command

#: Three jobs on 4 one-core nodes; J2 asks 200 s of batch (MaxTime 2 minutes): held for ever.
TRACE = """; MaxNodes: 4
; MaxProcs: 4
1 0 5 10 1 -1 -1 1 50 -1 1 1 1 1 1 -1 -1 -1
2 1 0 10 2 -1 -1 2 200 -1 1 1 1 1 1 -1 -1 -1
3 2 0 10 4 -1 -1 4 50 -1 1 1 1 1 1 -1 -1 -1
"""
#: The same machine as a site's slurm.conf: EnforcePartLimits=NO (the default) holds J2.
#: PriorityWeightAge without slurmdbd is ignored (Slurm's rule, said among the warnings);
#: PriorityWeightJobSize and bf_window (minutes) differ from Slurm's defaults;
#: PriorityMaxAge=7-0 and bf_interval=30 are Slurm's defaults.
SLURM_CONF = """ClusterName=mini
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightJobSize=500
PriorityMaxAge=7-0
SchedulerParameters=bf_window=2880,bf_interval=30
NodeName=n[1-4] CPUs=1
PartitionName=batch Nodes=n[1-4] Default=YES MaxTime=00:02:00
"""


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "trace.swf").write_text(TRACE)
    (tmp_path / "mini.conf").write_text(SLURM_CONF)
    return tmp_path / "trace.swf", tmp_path / "mini.conf"


def _params(name: str) -> dict[str, object]:
    return {p.name: p for p in command().commands[name].params}


def test_simulate_help_names_every_policy_and_every_trace_format():
    policy = _params("simulate")["policy"].help
    for name in [*_core.policy_names(), "recorded"]:
        assert re.search(rf"(^|[ ,;]){re.escape(name)}[,;) ]", policy), name
    trace = _params("simulate")["trace"].help
    assert "sacct" in trace and ".swf" in trace and ".json" in trace
    conf = _params("simulate")["slurm_conf"].help
    assert "Priority*" in conf and "SchedulerParameters" in conf and "defaults" in conf


def test_inspect_takes_the_site_as_simulate_and_compare_do():
    """--platform and --slurm-conf are declared once (cli/_options.py's SiteOptions): every
    command that takes a site has both, with the same help."""
    simulate = _params("simulate")
    for name in ("inspect", "compare"):
        params = _params(name)
        for option in ("platform", "slurm_conf"):
            assert params[option].help == simulate[option].help, (name, option)


def test_slurm_without_a_slurm_conf_says_it_runs_with_slurms_defaults(site, tmp_path, capsys):
    trace, _ = site
    out = tmp_path / "run"
    code, printed, _ = run_cli(["simulate", trace, "--policy", "slurm", "--out", out], capsys)
    assert code == 0
    said = "no slurm.conf given: --policy slurm runs with Slurm's defaults (every priority weight 0"
    assert said in " ".join(printed.split())
    summary = json.loads((out / "summary.json").read_text())
    assert any(w.startswith(said) for w in summary["warnings"])
    assert summary["inputs"]["slurm"] == {"slurm_conf": None, "differs_from_defaults": {}}


def test_slurm_with_a_slurm_conf_records_what_differs_from_slurms_defaults(site, tmp_path, capsys):
    trace, conf = site
    out = tmp_path / "run"
    args = ["simulate", trace, "--policy", "slurm", "--slurm-conf", conf, "--out", out]
    code, printed, _ = run_cli(args, capsys)
    assert code == 0
    assert "no slurm.conf given" not in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["inputs"]["slurm"] == {
        "slurm_conf": str(conf),
        "differs_from_defaults": {
            "PriorityWeightJobSize": "500",
            "SchedulerParameters": "bf_window=2880",
        },
    }


@pytest.mark.parametrize("backfill", ["none", "easy"])
def test_slurm_with_backfill_points_to_sched_builtin(site, backfill, capsys):
    trace, _ = site
    code, _, err = run_cli(["simulate", trace, "--policy", "slurm", "--backfill", backfill], capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: --backfill: ")
    assert "SchedulerType=sched/builtin" in err and "slurm.conf" in err


def test_compare_and_its_report_say_the_jobs_never_started_and_the_slurm_settings(
    site, tmp_path, capsys
):
    """J2 never starts in either run (held by batch's MaxTime); the Recorded row started the
    three jobs. The report gives the slurm.conf, the settings that differ from Slurm's
    defaults and each warning."""
    trace, conf = site
    report = tmp_path / "r.html"
    args = ["compare", trace, "--policy", "fcfs", "--policy", "slurm", "--slurm-conf", conf]
    code, printed, _ = run_cli([*args, "--out", tmp_path / "c", "--report", report], capsys)
    assert code == 0
    summary = printed.split("never started:", 1)[0]  # the first table
    rows = {
        cells[0]: cells[1:3]
        for line in summary.splitlines()
        if line.startswith("│")
        for cells in [[c.strip() for c in line.strip("│").split("│")]]
    }
    assert rows["Recorded"] == ["3", "0"]  # started, never started
    assert rows["FCFS +EASY"] == ["2", "1"] and rows["Slurm"] == ["2", "1"]
    flat = " ".join(printed.split())
    assert "Slurm: never started: 1 held by their partition (over max time 1)" in flat
    page = " ".join(re.sub(r"<[^>]+>", " ", report.read_text()).split())
    assert f"mini (from {conf}; 4 nodes, 1 partition, without power model)" in page
    assert (
        f"Slurm settings (Slurm) {conf}: PriorityWeightJobSize=500; "
        "SchedulerParameters=bf_window=2880" in page
    )
    assert "Slurm ignores PriorityWeightAge and PriorityWeightFairshare" in page
    assert "Jobs that never started" in page
    assert "1 held by their partition (over max time 1)" in page
