"""What runs say and show (issue 40, points 11, 12, 17, 18 and 19): jobs that never start
counted by reason, inspect on the platform's machine, the Slurm settings and the warnings of a
run, the agreement with the record per partition and over the span both schedules cover, and
tests that the mutants of the agreement and of the record's downtime conflicts fail. Every
expected figure is computed by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched.site.platform import parse_platform
from hpcsched.workload.model import Workload
from tests.conftest import run_cli

NAN = float("nan")

#: 4 nodes of 1 core. batch (the default): every node, at most 3 nodes and 100 s; pair: nodes
#: 0-1, at least 2 nodes; gone: nodes 2-3, DOWN; closed: node 3, draining.
HOLD_SITE = """
name = "hold-site"
over_limits = "hold"
[[groups]]
name = "cpu"
nodes = 4
cores = 1
[[partitions]]
name = "batch"
nodes = "0-3"
default = true
max_nodes = 3
max_time = 100
[[partitions]]
name = "pair"
nodes = "0-1"
min_nodes = 2
[[partitions]]
name = "gone"
nodes = "2-3"
state = "down"
[[partitions]]
name = "closed"
nodes = "3"
state = "drain"
"""

#: Field 16 names each job's partition through the header. J1 (batch, 1 node, 1 s) and J6
#: (pair, 2 nodes) run at once. J2 asks 4 nodes of batch (MaxNodes 3), J3 200 s of it
#: (MaxTime 100), J4 1 node of pair (MinNodes 2), J5 names gone (DOWN), J8 closed (draining):
#: none of them can ever start. J7 asks 5 processors of a 4-node machine: skipped by the reader,
#: not replayed.
HOLD_TRACE = """; MaxNodes: 4
; MaxProcs: 4
; Partition: 1 batch
; Partition: 2 pair
; Partition: 3 gone
; Partition: 4 closed
1 0 0 1 1 -1 -1 1 50 -1 1 1 1 1 1 1 -1 -1
2 1 0 10 4 -1 -1 4 50 -1 1 1 1 1 1 1 -1 -1
3 2 0 10 1 -1 -1 1 200 -1 1 1 1 1 1 1 -1 -1
4 3 0 10 1 -1 -1 1 50 -1 1 1 1 1 1 2 -1 -1
5 4 0 10 1 -1 -1 1 50 -1 1 1 1 1 1 3 -1 -1
6 5 0 10 2 -1 -1 2 50 -1 1 1 1 1 1 2 -1 -1
7 6 0 10 5 -1 -1 5 50 -1 1 1 1 1 1 1 -1 -1
8 7 0 10 1 -1 -1 1 50 -1 1 1 1 1 1 4 -1 -1
"""
#: jobs.parquet's held column of the seven jobs replayed (J7 skipped), under "hold".
HELD = ["-", "over_max_nodes", "over_max_time", "under_min_nodes", "partition_down", "-", "drained"]


@pytest.fixture
def hold_site(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "site.toml").write_text(HOLD_SITE)
    (tmp_path / "trace.swf").write_text(HOLD_TRACE)
    return tmp_path / "trace.swf", tmp_path / "site.toml"


def _column(table: pd.DataFrame, name: str) -> list[str]:
    return table[name].astype(object).fillna("-").tolist()


def test_jobs_a_site_holds_for_ever_are_counted_by_reason(hold_site, tmp_path):
    trace, platform = hold_site
    result = hpcsched.simulate(trace, "fcfs", platform=str(platform), out=tmp_path / "run")
    jobs, info = result.jobs, result.info
    np.testing.assert_array_equal(jobs["start"].to_numpy(), [0, NAN, NAN, NAN, NAN, 5, NAN])
    assert _column(jobs, "held") == HELD
    assert info["workload"]["jobs"] == 7 and info["workload"]["skipped_total"] == 1
    assert (info["jobs"]["completed"], info["jobs"]["never_started"]) == (2, 5)
    assert info["jobs"]["never_started_by_reason"] == {
        "refused_at_submission": 0,
        "held_by_partition": 5,
        "no_recorded_start": 0,
        "waiting_at_end": 0,
    }
    assert info["jobs"]["held"] == {
        "total": 5,
        "by_reason": {
            "larger_than_partition": 0,
            "over_max_nodes": 1,
            "under_min_nodes": 1,
            "over_max_time": 1,
            "drained": 1,
            "partition_down": 1,
        },
    }
    # what was written is what was computed
    stored = pd.read_parquet(tmp_path / "run" / "jobs.parquet")
    assert _column(stored, "held") == HELD
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["jobs"]["never_started_by_reason"]["held_by_partition"] == 5


def test_refused_jobs_are_never_started_and_a_down_partition_still_holds(hold_site, tmp_path):
    """The same site with over_limits = "reject": J2, J3, J4 and J8 are refused at submission
    (rejected), J5 (only DOWN partitions accept it) still waits for ever."""
    trace, _ = hold_site
    platform = tmp_path / "reject.toml"
    platform.write_text(HOLD_SITE.replace('over_limits = "hold"', 'over_limits = "reject"'))
    result = hpcsched.simulate(trace, "fcfs", platform=str(platform))
    assert _column(result.jobs, "rejected") == [
        "-", "over_max_nodes", "over_max_time", "under_min_nodes", "-", "-", "drained"
    ]  # fmt: skip
    assert _column(result.jobs, "held") == ["-", "-", "-", "-", "partition_down", "-", "-"]
    assert result.info["jobs"]["never_started_by_reason"] == {
        "refused_at_submission": 4,
        "held_by_partition": 1,
        "no_recorded_start": 0,
        "waiting_at_end": 0,
    }


def test_a_job_no_policy_starts_is_left_waiting_at_the_end():
    """A Python policy that never starts a 2-node job: the run ends with it waiting."""
    from hpcsched.protocol import Decision
    from tests.conftest import workload_from

    class OneNodeJobsOnly:
        name = "one-node jobs only"

        def decide(self, view):
            small = [int(j) for j, n in zip(view.queue, view.queue_nodes, strict=True) if n < 2]
            return Decision(start=small[:1])

    workload = workload_from([(0, 10, 10, 1), (1, 10, 10, 2), (2, 10, 10, 1)], nodes=4)
    result = hpcsched.simulate(workload, OneNodeJobsOnly())
    assert result.jobs["start"].isna().tolist() == [False, True, False]
    assert result.info["jobs"]["never_started_by_reason"]["waiting_at_end"] == 1


def test_the_recorded_schedule_says_jobs_without_a_recorded_start():
    frame = pd.DataFrame(
        {
            "job_id": [1, 2, 3],
            "submit": [0.0, 5.0, 9.0],
            "recorded_wait": [0.0, NAN, NAN],
            "run_time": [10.0, 10.0, 10.0],
            "requested_time": [10.0, 10.0, 10.0],
            "nodes": [1, 1, 1],
            "user": [1, 1, 1],
        }
    )
    result = hpcsched.simulate(Workload(jobs=frame, nodes=2), "recorded")
    assert result.info["jobs"]["never_started_by_reason"]["no_recorded_start"] == 2


def test_simulate_says_how_many_jobs_never_started_and_why(hold_site, tmp_path, capsys):
    trace, platform = hold_site
    code, out, _ = run_cli(
        ["simulate", trace, "--platform", platform, "--out", tmp_path / "s"], capsys
    )
    assert code == 0
    flat = " ".join(out.replace("│", " ").split())
    assert "jobs 7 replayed (2 started, 5 never started), 1 skipped" in flat
    assert (
        "never started 5 held by their partition (over max nodes 1, under min nodes 1, over "
        "max time 1, drained 1, partition down 1); waits and slowdowns are of the 2 jobs that "
        "started" in flat
    )


def test_the_site_screen_is_the_engines_on_random_sites():
    """The jobs the engine records as held are the jobs it never starts under "hold", and
    under "reject" exactly the ones it refuses, by the same reason: random sites of 3
    partitions over 8 nodes, random limits and states, 30 jobs each."""
    rng = np.random.default_rng(40)
    for _ in range(25):
        site, workload = _random_site(rng)
        hold = hpcsched.simulate(workload, "fcfs", platform=parse_platform(site))
        reject = hpcsched.simulate(
            workload, "fcfs", platform=parse_platform(site.replace('"hold"', '"reject"'))
        )
        held = hold.jobs["held"].astype(object)
        limits = held.where(held != "partition_down")
        assert reject.jobs["rejected"].astype(object).fillna("-").tolist() == (
            limits.fillna("-").tolist()
        )
        # every job held never starts; every other job starts (nothing else keeps one waiting)
        assert hold.jobs["start"].isna().tolist() == held.notna().tolist()
        assert hold.info["jobs"]["never_started_by_reason"]["waiting_at_end"] == 0


def _random_site(rng: np.random.Generator) -> tuple[str, Workload]:
    """A platform file's text (over_limits "hold") and 30 jobs naming its partitions."""
    lines = ['name = "random"', 'over_limits = "hold"', "[[groups]]", 'name = "cpu"']
    lines += ["nodes = 8", "cores = 1"]
    for name in ("a", "b", "c"):
        first = int(rng.integers(0, 8))
        last = int(rng.integers(first, 8))
        least = int(rng.integers(1, 4))
        lines += ["[[partitions]]", f'name = "{name}"', f'nodes = "{first}-{last}"']
        lines.append(f"min_nodes = {least}")
        if rng.random() < 0.5:
            lines.append(f"max_nodes = {int(rng.integers(least, 9))}")
        if rng.random() < 0.5:
            lines.append(f"max_time = {int(rng.integers(50, 500))}")
        lines.append(f'state = "{rng.choice(["up", "up", "up", "drain", "down"])}"')
    n = 30
    frame = pd.DataFrame(
        {
            "job_id": np.arange(1, n + 1),
            "submit": np.sort(rng.integers(0, 300, n)).astype(float),
            "run_time": rng.integers(1, 100, n).astype(float),
            "requested_time": rng.integers(10, 600, n).astype(float),
            "nodes": rng.integers(1, 5, n),
            "user": np.ones(n, dtype=np.int64),
            "partition_name": rng.choice(["a", "b", "c", "a,b", "c,a", "b,c,a"], n),
        }
    )
    return "\n".join(lines) + "\n", Workload(jobs=frame, nodes=8)


# --- inspect on the platform's machine (point 12) ---------------------------------------------

#: A trace recorded on 16 nodes: two jobs of 8 processors, 100 s each, submitted at 0 and 100,
#: started at once. Offered load on N nodes: (8 x 100 + 8 x 100) / (N x 100), 1 on the trace's
#: 16 nodes, 0.5 on 32; recorded utilization: 1600 node-seconds over N x 200, 0.25 on 32.
SIXTEEN = """; MaxNodes: 16
; MaxProcs: 16
1 0 0 100 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1
2 100 0 100 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1
"""
#: The same 32-node machine three ways.
MACHINES = {
    "one pool": ("p32.toml", 'name = "p32"\nnodes = 32\n'),
    "partitions": (
        "s32.toml",
        'name = "s32"\n[[groups]]\nname = "cpu"\nnodes = 32\ncores = 1\n'
        '[[partitions]]\nname = "batch"\nnodes = "cpu"\n',
    ),
    "slurm.conf": (
        "site.conf",
        "ClusterName=s32conf\nNodeName=n[1-32] CPUs=1\nPartitionName=batch Nodes=n[1-32] "
        "Default=YES\n",
    ),
}


@pytest.mark.parametrize("kind", list(MACHINES))
def test_inspect_describes_the_trace_on_the_platforms_machine(kind, tmp_path, capsys):
    trace = tmp_path / "sixteen.swf"
    trace.write_text(SIXTEEN)
    name, text = MACHINES[kind]
    (tmp_path / name).write_text(text)
    option = "--slurm-conf" if name.endswith(".conf") else "--platform"
    code, out, err = run_cli(["inspect", trace, option, tmp_path / name, "--json"], capsys)
    assert code == 0, err
    info = json.loads(out)
    assert info["machine_nodes"] == 32
    assert info["offered_load"] == pytest.approx(0.5)
    assert info["recorded"]["utilization"] == pytest.approx(0.25)
    code, out, _ = run_cli(["inspect", trace, option, tmp_path / name], capsys)
    platform = name.removesuffix(".toml") if name.endswith(".toml") else "s32conf"
    assert f"32 nodes (platform {platform})" in " ".join(out.split())


def test_inspect_of_a_sacct_record_on_a_platform_asks_for_nothing(tmp_path, capsys):
    """A sacct record gives no machine size: on a platform, the platform's is the machine, and
    no warning asks for --nodes or a platform."""
    fixture = Path(__file__).parent / "workload" / "fixtures" / "sacct-parsable2.txt"
    platform = tmp_path / "p216.toml"
    platform.write_text(
        'name = "p216"\n[[groups]]\nname = "cpu"\nnodes = 216\ncores = 8\n'
        '[[partitions]]\nname = "debug"\nnodes = "cpu"\n'
    )
    args = ["inspect", fixture, "--format", "sacct", "--platform", platform]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "216 nodes (platform p216)" in " ".join(out.split())
    assert "give --nodes or a platform" not in out + err
    assert "records no machine size" not in out + err


# --- the recorded schedule's downtime conflicts at a window's edges (point 19a) ----------------


def test_a_recorded_run_that_only_touches_a_window_is_not_in_it():
    """A whole-machine window over [100, 200): J1 ends exactly at 100 as it starts, J2 starts
    exactly at 200 as it ends: neither ran in it. J3 ends at 101, one second into it: it did
    (and started with every node up, so it is not over capacity either)."""
    from hpcsched.workload import DowntimeCalendar
    from hpcsched.workload.calendar import Downtime

    frame = pd.DataFrame(
        {
            "job_id": [1, 2, 3],
            "submit": [0.0, 150.0, 1.0],
            "recorded_wait": [0.0, 50.0, 0.0],
            "run_time": [100.0, 10.0, 100.0],
            "requested_time": [100.0, 10.0, 100.0],
            "nodes": [1, 1, 1],
            "user": [1, 1, 1],
        }
    )
    calendar = DowntimeCalendar(
        (Downtime(start=100.0, end=200.0, kind="scheduled"),), announce_lead=0.0
    )
    workload = Workload(jobs=frame, nodes=4)
    record = hpcsched.simulate(workload, "recorded", downtime=calendar).info["record"]
    assert record["conflicts"]["in_downtime"]["examples"] == [3]
    assert record["conflicts"]["over_capacity"]["jobs"] == 0


# --- the agreement's 95th percentiles (point 19b) -------------------------------------------


def test_the_agreements_p95_figures_are_95th_percentiles():
    """21 one-node jobs on 21 nodes, all submitted at 0: FCFS starts each at once; the record
    started job i (0 to 20) at 100 i. The start errors are then 0, 100, ..., 2000: their 95th
    percentile (linear, at rank 0.95 x 20 = 19) is 1900 (the 90th would be 1800), the median
    1000; the simulated waits are all 0, so the P95 wait difference is -1900."""
    n = 21
    frame = pd.DataFrame(
        {
            "job_id": np.arange(1, n + 1),
            "submit": np.zeros(n),
            "recorded_wait": 100.0 * np.arange(n),
            "run_time": np.full(n, 10.0),
            "requested_time": np.full(n, 10.0),
            "nodes": np.ones(n, dtype=np.int64),
            "user": np.ones(n, dtype=np.int64),
        }
    )
    agreement = hpcsched.simulate(Workload(jobs=frame, nodes=n), "fcfs").info["agreement"]
    assert agreement["start_error"]["p95"] == pytest.approx(1900.0)
    assert agreement["start_error"]["median"] == pytest.approx(1000.0)
    assert agreement["wait_p95_difference"] == pytest.approx(-1900.0)


# --- agreement per partition and over the span both schedules cover (point 18) ----------------

#: 4 nodes of 1 core: left (nodes 0-1) and right (nodes 2-3), no node shared.
SPLIT_SITE = """
name = "split"
[[groups]]
name = "cpu"
nodes = 4
cores = 1
[[partitions]]
name = "left"
nodes = "0-1"
default = true
[[partitions]]
name = "right"
nodes = "2-3"
"""
#: FCFS+EASY: J1 takes left whole from 0 to 100, J2 (left) waits for it: starts at 100; J3
#: (right) starts at 20, ends at 30, when J4 (right, 2 nodes) starts. The record: J1 at 0, J2
#: at 60, J3 at 50, J4 at 30. Start errors: left 0 and 40 (mean 20), right 30 and 0 (mean 15);
#: wait differences (simulated - recorded): left 0 and 90 - 50 = 40 (mean 20), right 0 - 30
#: and 0 (mean -15).
SPLIT_TRACE = """; MaxNodes: 4
; MaxProcs: 4
; Partition: 1 left
; Partition: 2 right
1 0 0 100 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1
2 10 50 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1
3 20 30 10 1 -1 -1 1 10 -1 1 1 1 1 1 2 -1 -1
4 30 0 10 2 -1 -1 2 10 -1 1 1 1 1 1 2 -1 -1
"""


@pytest.fixture
def split_site(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "split.toml").write_text(SPLIT_SITE)
    (tmp_path / "split.swf").write_text(SPLIT_TRACE)
    return tmp_path / "split.swf", tmp_path / "split.toml"


def test_the_agreement_is_given_per_partition(split_site):
    trace, platform = split_site
    result = hpcsched.simulate(trace, "fcfs", platform=str(platform))
    assert result.jobs["start"].tolist() == [0.0, 100.0, 20.0, 30.0]
    by_partition = result.info["agreement"]["by_partition"]
    assert by_partition == {
        "left": {
            "jobs": 2,
            "start_error_mean": 20.0,
            "within_1h": 1.0,
            "wait_mean_difference": 20.0,
        },
        "right": {
            "jobs": 2,
            "start_error_mean": 15.0,
            "within_1h": 1.0,
            "wait_mean_difference": -15.0,
        },
    }


def test_the_utilization_difference_is_over_the_span_both_schedules_cover():
    """One node. The record started J1 at 0 and J2 only at 1000 (it ends at 1010); FCFS runs
    them back to back, to 20. Over [0, 20], the span both cover, FCFS keeps the node busy
    20 s of 20, the record 10 s of 20: +0.5. (Each over its own horizon would be 20 / 20 -
    20 / 1010 = +0.98, whatever the policy.)"""
    frame = pd.DataFrame(
        {
            "job_id": [1, 2],
            "submit": [0.0, 0.0],
            "recorded_wait": [0.0, 1000.0],
            "run_time": [10.0, 10.0],
            "requested_time": [10.0, 10.0],
            "nodes": [1, 1],
            "user": [1, 1],
        }
    )
    agreement = hpcsched.simulate(Workload(jobs=frame, nodes=1), "fcfs").info["agreement"]
    assert agreement["utilization_span"] == {"from": 0.0, "to": 20.0}
    assert agreement["utilization_difference"] == pytest.approx(0.5)
    # by size class too (both XL on one node): waits 0 and 10 simulated, 0 and 1000 recorded
    assert agreement["by_class"]["XL"] == {
        "jobs": 2,
        "start_error_mean": 495.0,
        "within_1h": 1.0,
        "wait_mean_difference": -495.0,
    }


def test_a_run_that_starts_no_job_compares_no_utilization(tmp_path):
    """Every job is over its only partition's MaxTime and held: the simulation starts none,
    the record started both. No span both schedules cover (it ends at 0), so no utilization
    difference, rather than one over [0, 0] or a made-up end."""
    platform = tmp_path / "short.toml"
    platform.write_text(
        'name = "short"\nover_limits = "hold"\n[[groups]]\nname = "cpu"\nnodes = 2\n'
        'cores = 1\n[[partitions]]\nname = "p"\nnodes = "0-1"\ndefault = true\n'
        'max_time = "1"\n'
    )
    frame = pd.DataFrame(
        {
            "job_id": [1, 2],
            "submit": [0.0, 0.0],
            "recorded_wait": [0.0, 5.0],
            "run_time": [100.0, 100.0],
            "requested_time": [100.0, 100.0],
            "nodes": [1, 1],
            "user": [1, 1],
        }
    )
    run = hpcsched.simulate(Workload(jobs=frame, nodes=2), "fcfs", platform=str(platform))
    assert run.jobs["start"].isna().all()
    agreement = run.info["agreement"]
    assert agreement["jobs"] == 0
    assert agreement["utilization_span"] == {"from": 0.0, "to": 0.0}
    assert agreement["utilization_difference"] is None


def test_the_utilization_difference_counts_the_attempts_an_outage_killed(tmp_path):
    """One node, an outage over [50, 60]. FCFS starts J1 (100 s) at 0; the outage kills it at
    50 (an attempt of 50 s lost), it runs again 60-160, then J2 (10 s) 160-170. The record
    started them at 200 and 300 (it ends at 310). Over the span both cover, [0, 170], the node
    is up 160 s and the simulated schedule keeps it busy all of them (50 + 100 + 10: the killed
    attempt used the node), the record none: +1.0 (without the lost attempt 110 / 160 - 0)."""
    frame = pd.DataFrame(
        {
            "job_id": [1, 2],
            "submit": [0.0, 0.0],
            "recorded_wait": [200.0, 300.0],
            "run_time": [100.0, 10.0],
            "requested_time": [100.0, 10.0],
            "nodes": [1, 1],
            "user": [1, 1],
        }
    )
    calendar = tmp_path / "down.txt"
    calendar.write_text("50 60 U\n")
    run = hpcsched.simulate(Workload(jobs=frame, nodes=1), "fcfs", downtime=calendar)
    assert run.jobs.set_index("job_id")["start"].to_dict() == {1: 60.0, 2: 160.0}
    agreement = run.info["agreement"]
    assert agreement["utilization_span"] == {"from": 0.0, "to": 170.0}
    assert agreement["utilization_difference"] == pytest.approx(1.0)


def test_the_never_started_text_names_each_reason_with_its_limits():
    """The line simulate, compare and the report print, written by hand for a summary's
    ``jobs`` entry; the terminal leaves the refusals' breakdown to its own line."""
    from hpcsched.run.never_started import never_started_text

    jobs = {
        "never_started": 8,
        "never_started_by_reason": {
            "refused_at_submission": 2,
            "held_by_partition": 4,
            "no_recorded_start": 0,
            "waiting_at_end": 1,
            "a_new_reason": 1,
        },
        "rejected": {"total": 2, "by_reason": {"over_max_time": 2, "too_large": 0}},
        "held": {"total": 4, "by_reason": {"larger_than_partition": 3, "drained": 1}},
    }
    assert never_started_text(jobs) == (
        "2 refused at submission (over max time 2), 4 held by their partition (larger than "
        "partition 3, drained 1), 1 still waiting at the end, 1 a_new_reason"
    )
    assert never_started_text(jobs, refusals=False) == (
        "2 refused at submission, 4 held by their partition (larger than partition 3, drained "
        "1), 1 still waiting at the end, 1 a_new_reason"
    )
    # a breakdown without counts by reason, a summary from before the reasons, none at all
    held_only = {"never_started": 4, "never_started_by_reason": {"held_by_partition": 4}}
    assert never_started_text({**held_only, "held": {"total": 4}}) == "4 held by their partition"
    assert never_started_text({"never_started": 1234}) == "1,234"
    assert never_started_text({"never_started": 0, "never_started_by_reason": {}}) == ""
    assert never_started_text({}) == ""
