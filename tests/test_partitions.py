"""Runs on platforms with partitions (issue 29): a hand-computed schedule through the whole
pipeline (SWF reader, the site's assignment, the engine, jobs.parquet and the summary), what
does not run on partitions yet refused plainly, and the invariants on CEA Curie with its
preset, checked against the partitions recorded in the trace itself."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.cli import main
from hpcsched.exceptions import DecisionError
from tests.invariants import check_partitions

#: 8 nodes of 4 cores. batch: all of them, the default; debug: nodes 6-7 (inside batch), a
#: higher tier, at most 2 nodes and 600 s.
PLATFORM = """
name = "mini-site"
[[groups]]
name = "cpu"
nodes = 8
cores = 4
[[partitions]]
name = "batch"
nodes = "cpu"
default = true
[[partitions]]
name = "debug"
nodes = "6-7"
priority_tier = 2
max_nodes = 2
max_time = 600
"""

#: Sizes in processors (4 per node). Field 16 names the partition through the header (-1:
#: none recorded, the default); "test,batch" names a partition the site lacks, and batch.
TRACE = """; MaxNodes: 8
; MaxProcs: 32
; Partition: 1 batch
; Partition: 2 debug
; Partition: 3 test,batch
1 0 -1 100 24 -1 -1 24 100 -1 1 1 1 1 1 1 -1 -1
2 1 -1 10 32 -1 -1 32 10 -1 1 1 1 1 1 1 -1 -1
3 2 -1 50 8 -1 -1 8 50 -1 1 1 1 1 1 2 -1 -1
4 3 -1 500 4 -1 -1 4 500 -1 1 1 1 1 1 2 -1 -1
5 4 -1 1000 12 -1 -1 12 2000 -1 1 1 1 1 1 2 -1 -1
6 5 -1 100 4 -1 -1 4 700 -1 1 1 1 1 1 2 -1 -1
7 6 -1 20 4 -1 -1 4 20 -1 1 1 1 1 1 3 -1 -1
8 7 -1 30 4 -1 -1 4 30 -1 1 1 1 1 1 -1 -1 -1
"""


@pytest.fixture
def site_run(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "site.toml").write_text(PLATFORM)
    (tmp_path / "trace.swf").write_text(TRACE)
    return tmp_path / "trace.swf", tmp_path / "site.toml"


def test_a_two_tier_overlapping_site_schedules_as_computed_by_hand(site_run, tmp_path):
    """J1 (6 nodes of batch) takes batch's own nodes 0-5 and leaves debug's free. J2 (all 8)
    is batch's top job. J3 (debug, tier 2) starts at 2 on debug's nodes. At 52 (J3 ends) J4
    (debug, tier 2) is considered before J2 and takes a debug node until 552: J2's shadow
    moves to 552, and J7 (batch, 20 s) backfills at once, J8 (no partition: batch) when J7
    ends at 72. J5 (3 nodes) is larger than debug, J6 (700 s) over its MaxTime: refused at
    submission. J2 starts when J4 ends, at 552."""
    trace, platform = site_run
    out = tmp_path / "run"
    result = hpcsched.simulate(trace, "fcfs", platform=str(platform), out=out)
    jobs = result.jobs
    nan = float("nan")
    np.testing.assert_array_equal(jobs["start"].to_numpy(), [0, 552, 2, 52, nan, nan, 52, 72])
    assert jobs["nodes"].tolist() == [6, 8, 2, 1, 3, 1, 1, 1]  # ceil(procs / 4)
    assert jobs["partition"].astype(object).fillna("-").tolist() == [
        "batch", "batch", "debug", "debug", "-", "-", "batch", "batch"
    ]  # fmt: skip
    assert jobs["rejected"].astype(object).fillna("-").tolist() == [
        "-", "-", "-", "-", "larger_than_partition", "over_max_time", "-", "-"
    ]  # fmt: skip
    assert jobs["start_kind"].astype(object).tolist()[6:] == ["backfill", "backfill"]
    info = result.info
    assert info["jobs"]["rejected"]["total"] == 2
    assert info["jobs"]["rejected"]["by_reason"]["over_max_time"] == 1
    assert info["inputs"]["assignment"]["how"] == {
        "named": 7, "routed": 0, "default": 1, "unknown_name": 0
    }  # fmt: skip
    assert info["inputs"]["assignment"]["unknown_names"] == {"test": 1}
    batch, debug = info["partitions"]["batch"], info["partitions"]["debug"]
    assert (batch["jobs"], debug["jobs"]) == (4, 2)
    assert batch["wait"]["mean"] == pytest.approx((0 + 551 + 46 + 65) / 4)
    assert debug["wait"]["mean"] == pytest.approx((0 + 49) / 2)
    # busy node-seconds of its jobs over its nodes, from 0 to the makespan (562)
    assert batch["utilization"] == pytest.approx((600 + 80 + 20 + 30) / (8 * 562))
    assert debug["utilization"] == pytest.approx((100 + 500) / (2 * 562))
    # what was written is what was computed
    stored = pd.read_parquet(out / "jobs.parquet")
    assert stored["partition"].astype(object).tolist()[:4] == ["batch", "batch", "debug", "debug"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partitions"]["debug"]["jobs"] == 2
    check_partitions(result)


def test_the_site_decides_the_order_not_only_the_sizes(site_run):
    """The same trace as one pool of 8 nodes (sizes in nodes of 4 cores, no partitions, no
    limits): J2 is no longer held behind debug's tier-2 job, and J5 and J6 run."""
    trace, _ = site_run
    pool = hpcsched.simulate(trace, "fcfs", procs_per_node=4)
    assert not pool.jobs["start"].isna().any()
    assert pool.jobs["start"].iloc[1] == 100.0


@pytest.mark.parametrize(
    ("extra", "option", "says"),
    [
        (
            ["--policy", "mars", "--arrivals", "recent"],
            "--arrivals",
            "a look-ahead with future arrivals does not run on partitions",
        ),
        (["--estimates", "history"], "--estimates", "predicted run times does not run on"),
        # (a power manager: this site has no power model, which is said first)
        (["--policy", "snf-icon"], "--platform", "has no power model"),
    ],
)
def test_what_does_not_run_on_partitions_yet_is_refused_plainly(
    site_run, extra, option, says, capsys
):
    trace, platform = site_run
    assert main(["simulate", str(trace), "--platform", str(platform), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {option}: ") and says in err
    assert "Traceback" not in err


def test_maintenance_of_one_partition_as_computed_by_hand(site_run, tmp_path):
    """debug's maintenance from 40 to 60 (announced long before): J3 and J4 (debug) may not
    start before it (they would run into it) and are passed over; batch's jobs ending by 40
    backfill on debug's nodes (J7 at 6, J8 at 7: batch holds them too). When debug comes back
    J3 (tier 2) starts at 60; J4 is debug's top job until J3 ends at 110; J2 (all 8 nodes of
    batch) starts when J4 ends at 610."""
    trace, platform = site_run
    calendar = tmp_path / "down.txt"
    calendar.write_text("40 60 S partition=debug  # debug's maintenance\n")
    result = hpcsched.simulate(trace, "fcfs", platform=str(platform), downtime=calendar)
    nan = float("nan")
    np.testing.assert_array_equal(
        result.jobs["start"].to_numpy(), [0, 610, 60, 110, nan, nan, 6, 7]
    )
    assert result.jobs["partition"].astype(object).fillna("-").tolist() == [
        "batch", "batch", "debug", "debug", "-", "-", "batch", "batch"
    ]  # fmt: skip
    assert len(result.lost) == 0
    check_partitions(result)
    # the summary counts debug's 2 nodes down for 20 s of the 620 s run
    assert result.info["downtime"]["windows"] == 1


def test_an_outage_of_a_node_range_as_computed_by_hand(site_run, tmp_path):
    """Nodes 5-6 down from 30 to 40: node 5 is batch's own, node 6 is debug's (and batch's).
    J1 (batch, nodes 0-5) and J3 (debug, nodes 6-7) are killed and requeued; nodes 0-4 and 7
    stay up. At 30 J3 (tier 2) is the top job, reserved at 40 when node 6 returns: J4 (debug,
    500 s) may not take node 7 before it, nor J1 (6 nodes: it would need node 7); J7 and J8
    (batch, ending by 60) start at once on nodes 0-4. At 40 J3 starts again on 6-7; J4 is
    reserved at 90 (J3's end); J1 starts at 60 when J8 leaves it nodes 0-5; J4 at 90; J2 (all
    8 nodes) when J4 ends at 590."""
    trace, platform = site_run
    calendar = tmp_path / "down.txt"
    calendar.write_text("30 40 U nodes=5-6 PDU of rack 2\n")
    result = hpcsched.simulate(trace, "fcfs", platform=str(platform), downtime=calendar)
    nan = float("nan")
    np.testing.assert_array_equal(
        result.jobs["start"].to_numpy(), [60, 590, 40, 90, nan, nan, 30, 30]
    )
    assert result.jobs["start_kind"].astype(object).tolist()[6:] == ["backfill", "backfill"]
    assert sorted(result.lost["job_index"].tolist()) == [0, 2]  # J1 and J3
    check_partitions(result)
    assert result.info["downtime"]["windows"] == 1


def test_a_node_range_must_be_one_range_within_the_machine(site_run, tmp_path, capsys):
    trace, platform = site_run
    calendar = tmp_path / "down.txt"
    for line, says in [
        ("30 40 U nodes=5-9", "nodes 5-9, the machine has nodes 0-7"),
        ("30 40 U nodes=1-2,5-6", "one range of node indices"),
        ("30 40 U nodes=6-5", "one range of node indices"),
        ("30 40 U 2 nodes=5-6", "takes the place of a node count"),
    ]:
        calendar.write_text(f"# outage\n{line}\n")
        args = ["simulate", str(trace), "--platform", str(platform), "--downtime", str(calendar)]
        assert main(args) == 2, line
        err = capsys.readouterr().err
        assert f"{calendar}, line 2, field nodes" in err and says in err, err
        assert "Traceback" not in err


def test_a_window_naming_an_unknown_partition_names_the_file_and_line(site_run, tmp_path, capsys):
    trace, platform = site_run
    calendar = tmp_path / "down.txt"
    calendar.write_text("# maintenance\n40 60 S partition=debg\n")
    args = ["simulate", str(trace), "--platform", str(platform), "--downtime", str(calendar)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{calendar}, line 2, field partition" in err and "did you mean debug?" in err
    # and on a platform without partitions
    assert main(["simulate", str(trace), "--downtime", str(calendar)]) == 2
    assert "not a partition of the run (no platform)" in capsys.readouterr().err


CURIE = "CEA-Curie-2011-2.1-cln.swf.gz"


def recorded_partition_names(path: Path) -> dict[int, str]:
    """Each job's partition as the trace records it (field 16 through the header's
    ``; Partition:`` lines), by job id, read line by line here, independently of hpcsched's
    reader."""
    names: dict[str, str] = {}
    recorded = {}
    with gzip.open(path, "rt") as lines:
        for line in lines:
            if line.startswith(";"):
                parts = line[1:].split(None, 2)
                if parts and parts[0] == "Partition:" and len(parts) == 3:
                    names[parts[1]] = parts[2].strip()
                continue
            fields = line.split()
            if fields:
                recorded[int(fields[0])] = names.get(fields[15], fields[15])
    return recorded


@pytest.mark.slow
@pytest.mark.parametrize(
    ("policy", "backfill"), [("fcfs", "easy"), ("wfp3", "easy"), ("sjf", "none"), ("snf", None)]
)
def test_curie_with_its_partitions_keeps_every_invariant(traces_dir, policy, backfill):
    """On CEA Curie with its preset: no partition ever holds more nodes than it has, every job
    ran in its candidate partition, and the jobs the trace records in large and hybrid ran on
    the fat and hybrid nodes (standard and every other name: thin, the default)."""
    path = traces_dir / "pwa" / CURIE
    result = hpcsched.simulate(path, policy, backfill=backfill, platform="CEA-Curie")
    check_partitions(result)
    recorded = recorded_partition_names(path)
    expected = [
        name if name in ("large", "hybrid") else "standard"
        for name in (recorded[int(j)] for j in result.jobs["job_id"])
    ]
    ran = result.jobs["partition"].astype(object).tolist()
    assert ran == expected
    assert result.info["jobs"]["rejected"]["total"] == 0


def test_simulate_and_compare_show_each_partition(site_run, tmp_path, capsys):
    """The console summary gives each partition's jobs, waits and utilization and the jobs
    refused; compare adds each run's mean wait per partition, and the report a section: the
    figures of the hand-computed schedule above (batch: 4 jobs, mean wait 165.5 s = 0.05 h;
    debug: 2 jobs, 24.5 s = 0.01 h; 600 node-seconds of debug's 2 x 562)."""
    trace, platform = site_run
    assert main(["simulate", str(trace), "--platform", str(platform), "--out", tmp_path / "s"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "partition batch │ 4 jobs on 8 nodes, wait mean 0.05 h" in out
    assert "partition debug │ 2 jobs on 2 nodes, wait mean 0.01 h" in out
    assert "utilization 53.38%" in out  # 600 / (2 x 562)
    assert "refused at submission │ 2 jobs (larger than partition 1, over max" in out
    args = ["compare", str(trace), "--policy", "fcfs", "--policy", "sjf:1"]
    assert main([*args, "--platform", str(platform), "--out", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "mean wait by partition" in out
    rows = [line.split("│") for line in out.splitlines() if line.startswith("│ FCFS")]
    assert [cell.strip() for cell in rows[-1][1:-1]] == ["FCFS +EASY", "0.05", "0.01"]
    report = (tmp_path / "c" / "report.html").read_text()
    assert "By partition" in report and "165.5" not in report
    row = '<td>debug</td><td class="num">2</td><td class="num">2</td><td class="num">0.01</td>'
    assert row in report  # debug: 2 nodes, 2 jobs, 0.01 h


class QueueOrder:
    """A Python policy: the queue in its order with EASY, keeping what it saw."""

    name = "queue-order"

    def __init__(self) -> None:
        self.seen: dict[float, tuple] = {}

    def decide(self, view):
        from hpcsched.protocol import Decision

        self.seen[view.now] = (view.partitions, view.queue_partitions, tuple(view.queue_id))
        return Decision(order=list(view.queue))


class FirstWaiting:
    """A Python policy naming the first waiting job to start, whether or not it fits."""

    name = "first-waiting"

    def decide(self, view):
        from hpcsched.protocol import Decision

        return Decision(start=list(view.queue[:1]))


def test_a_python_policy_sees_the_partitions_and_runs_on_them(site_run):
    """The queue in its order with EASY, from Python, schedules as the built-in FCFS+EASY
    (the engine scans its order on the partitions); at t=3 it saw batch and debug full (J1 on
    6 of batch's own nodes, J3 on debug's 2), J2 waiting for batch and J4 for debug (J5 and J6
    refused at submission: not in the queue)."""
    trace, platform = site_run
    policy = QueueOrder()
    mine = hpcsched.simulate(trace, policy, platform=str(platform))
    builtin = hpcsched.simulate(trace, "fcfs", platform=str(platform))
    np.testing.assert_array_equal(mine.jobs["start"], builtin.jobs["start"])
    assert mine.jobs["partition"].tolist() == builtin.jobs["partition"].tolist()
    assert policy.seen[3.0] == ((("batch", 8, 0), ("debug", 2, 0)), ((0,), (1,)), (2, 4))


def test_a_python_policy_starting_a_job_that_fits_nowhere_is_told_which(site_run):
    trace, platform = site_run
    with pytest.raises(DecisionError, match="job 2 fits in none of its partitions now"):
        hpcsched.simulate(trace, FirstWaiting(), platform=str(platform))


@pytest.mark.slow
def test_a_python_order_on_curie_schedules_as_the_builtin_fcfs(traces_dir):
    """The general scan (any order, here the queue's, from Python) and FCFS's scan of each
    partition's own waiting jobs agree on 3,000 jobs of Curie with its partitions."""
    from dataclasses import replace

    from hpcsched.workload import load_workload

    workload = load_workload(traces_dir / "pwa" / CURIE)
    workload = replace(workload, jobs=workload.jobs.iloc[:3000].reset_index(drop=True))
    mine = hpcsched.simulate(workload, QueueOrder(), platform="CEA-Curie")
    builtin = hpcsched.simulate(workload, "fcfs", platform="CEA-Curie")
    np.testing.assert_array_equal(mine.jobs["start"], builtin.jobs["start"])
    assert (mine.jobs["partition"] == builtin.jobs["partition"]).all()
    assert builtin.info["jobs"]["start_kinds"]["backfill"] > 0


def test_inspect_tells_where_the_jobs_would_run(site_run, capsys):
    """inspect --platform: each partition's nodes and the jobs whose first candidate it is
    (batch: J1, J2, J7 and J8, the largest 8 nodes; debug: J3 to J6, the largest 3), how they
    were placed and the recorded name no partition matches."""
    trace, platform = site_run
    assert main(["inspect", str(trace), "--platform", str(platform), "--json"]) == 0
    site = json.loads(capsys.readouterr().out)["site"]
    assert site["partitions"]["batch"]["jobs"] == 4
    assert site["partitions"]["batch"]["largest_job_nodes"] == 8
    assert site["partitions"]["debug"]["jobs"] == 4
    assert site["partitions"]["debug"]["largest_job_nodes"] == 3
    assert site["how"]["default"] == 1 and site["unknown_names"] == {"test": 1}
    # a platform without partitions gives the machine (issue 40: as a run takes it)
    assert main(["inspect", str(trace), "--platform", "AOBA-64", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["machine_nodes"], info["platform"]) == (64, "AOBA-64") and "site" not in info


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mars", "random"])
def test_mars_on_curie_with_its_partitions_keeps_every_invariant(traces_dir, name):
    """MARS-CW (a small budget) and Random on 2,000 Curie jobs with the preset: they decided,
    and every invariant of partitions holds, each job in the partition its trace line
    records."""
    from dataclasses import replace

    from hpcsched.workload import load_workload

    path = traces_dir / "pwa" / CURIE
    workload = load_workload(path)
    workload = replace(workload, jobs=workload.jobs.iloc[:2000].reset_index(drop=True))
    spec = hpcsched.PolicySpec(name, search=hpcsched.SearchSpec(iterations=16, trees=2))
    result = hpcsched.simulate(workload, spec, platform="CEA-Curie")
    assert result.info["search"]["searches"] > 0
    check_partitions(result)
    recorded = recorded_partition_names(path)
    expected = [
        name if name in ("large", "hybrid") else "standard"
        for name in (recorded[int(j)] for j in result.jobs["job_id"])
    ]
    assert result.jobs["partition"].astype(object).tolist() == expected


def test_a_learning_agent_runs_on_partitions(site_run):
    """The gym environment on the hand-computed site: an agent always taking the head of the
    queue (with EASY behind it) schedules as the built-in FCFS+EASY there, its reward the
    same mean wait (118.5 s over the six jobs that ran: J5 and J6 are refused), each job in
    its partition."""
    from hpcsched.gym import SchedulingEnv
    from hpcsched.workload import load_workload
    from tests.test_gym import run_episode

    trace, platform = site_run
    env = SchedulingEnv(load_workload(trace), slots=4, reward="wait", platform=str(platform))
    _, info = run_episode(env, seed=0, actions=lambda env: 0)
    assert info["terms"]["wait"] == pytest.approx(1 / (1 + 118.5 / 3600))
    results = env._sim.results()
    np.testing.assert_array_equal(results["start"], [0, 552, 2, 52, np.nan, np.nan, 52, 72])
    assert results["partition"].tolist() == [0, 0, 1, 1, -1, -1, 0, 0]


def test_a_batsim_workload_names_its_jobs_partitions(tmp_path):
    """A Batsim JSON job's ``partition`` names its partitions (several with commas); a job
    naming none goes to the default; a partition that is not a name is an input error naming
    the job. Its ``res`` counts processors here, as the workload's unit (``procs_per_node``
    1): 8, 16 and 4 are 2, 4 and 1 nodes of 4 cores."""
    (tmp_path / "site.toml").write_text(PLATFORM)
    jobs = [
        {"id": 1, "res": 8, "subtime": 0, "runtime": 10, "reqtime": 10, "partition": "debug"},
        {"id": 2, "res": 16, "subtime": 1, "runtime": 10, "reqtime": 10},
        {"id": 3, "res": 4, "subtime": 2, "runtime": 10, "reqtime": 10, "partition": "debug,batch"},
    ]
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 32, "jobs": jobs}))
    result = hpcsched.simulate(tmp_path / "w.json", "fcfs", platform=str(tmp_path / "site.toml"))
    # J1 on debug's 2 nodes; J2 (default: batch) on batch's own; J3 finds debug full at 2,
    # and starts in batch, its second candidate
    assert result.jobs["partition"].astype(object).tolist() == ["debug", "batch", "batch"]
    assert result.jobs["start"].tolist() == [0.0, 1.0, 2.0]
    assert result.jobs["nodes"].tolist() == [2, 4, 1]
    jobs[0]["partition"] = 7
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 32, "jobs": jobs}))
    with pytest.raises(hpcsched.InputError, match="partition must be a name"):
        hpcsched.simulate(tmp_path / "w.json", "fcfs", platform=str(tmp_path / "site.toml"))


def test_the_recorded_schedule_gives_each_partitions_recorded_waits(site_run, tmp_path):
    """With the site's waits recorded (field 3), ``--policy recorded`` on the platform gives
    each partition's recorded mean wait, each job in the partition its line names: batch J1,
    J2, J7 (0, 100, 40 s; J8's unknown), debug J3, J5, J6 (10, 20, 30 s; J4's unknown: the
    record is what ran, so the jobs the engine would refuse count too)."""
    trace, platform = site_run
    waits = ["0", "100", "10", "-1", "20", "30", "40", "-1"]
    lines = trace.read_text().splitlines()
    jobs = [line for line in lines if not line.startswith(";")]
    recorded = [
        " ".join([f[0], f[1], wait, *f[3:]])
        for f, wait in ((line.split(), w) for line, w in zip(jobs, waits, strict=True))
    ]
    trace.write_text("\n".join([*[x for x in lines if x.startswith(";")], *recorded]) + "\n")
    result = hpcsched.simulate(trace, "recorded", platform=str(platform))
    partitions = result.info["partitions"]
    assert partitions["batch"]["jobs"] == 3 and partitions["debug"]["jobs"] == 3
    assert partitions["batch"]["wait"]["mean"] == pytest.approx(140 / 3)
    assert partitions["debug"]["wait"]["mean"] == pytest.approx(20.0)
