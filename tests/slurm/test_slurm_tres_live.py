"""``--policy slurm`` on shared nodes against the real Slurm (issue 41, "against the real thing"):
a mixed workload run on the cons_tres test cluster (scripts/slurm-cluster.sh start BASE
--accounting --tres: Slurm 22.05.8, select/cons_tres with CR_Core_Memory, nodes c1-c4 of 8
CPUs, 8000 MB and 2 fake GPUs, multifactor priority with fair-share over acct_a (u1, u2) and
acct_b (u3), sched/backfill) is captured as a site would capture it (``sacct -X --json``, which
keeps whether memory was asked per CPU or per node, beside ``sacct -X --parsable2``; ``sacctmgr
dump``, the cluster's slurm.conf) and its JSON record replayed with ``hpcsched simulate RECORD
--policy slurm --slurm-conf slurm.conf --slurm-accounts ci.dump``, with FCFS+EASY, and as it is
(``--policy recorded``).

The workload: ``benchmarks/slurm_tres_replay.py``'s draw, 40 jobs (seed 42): 17 CPU jobs of 1
to 8 tasks with --mem-per-cpu or --mem, 6 memory-heavy jobs (4000 to 7000 MB), 10 GPU jobs
(--gres=gpu:1 or 2, 1 or 2 tasks), 3 --exclusive and 4 ``-N 2`` jobs, of u1, u2 and u3; limits
of 1 to 4 minutes, runs of 2 to 20 s, submitted over 58 s at least a second apart (the first
just after one of Slurm's priority recalculations), about 80 s of queue in all, 65 to 80 pairs
of jobs sharing a node at some time. Placement is measured as the share of jobs on their
recorded node set, and as the pairs of jobs that ran at the same time on a common node in the
record that the simulation also put together ("pairs kept"), and the other way round ("pairs
found"); order as in tests/slurm/test_slurm_replay_live.py.

The bounds come from the real cluster's own spread, measured on 2026-12-05 (this 2-core VM,
Slurm 22.05.8, ``python benchmarks/slurm_tres_replay.py``: eight runs of the workload, each on a
fresh cluster, five of them on a quiet machine, three while other work loaded it, the first run
of this test among them; BENCHMARKS.md, "Slurm on shared nodes against the real cluster").
Between the 28 pairs of runs, 0.425 to 0.850 of the jobs were at the same place in the order of
starts (mean 0.611), the rank correlation of starts was 0.968 to 1.000 (0.988), the mean start
difference 0.5 to 2.7 s (1.59 s), 0.25 to 1.00 of the jobs on the same nodes (0.538), 0.32 to
0.98 of the pairs kept (0.621): the runs fall into families that agree within and not across, as
sub-second races (an end a few milliseconds before a scheduling pass or after it, a node still
completing) are decided one way or the other. A simulation as close to the record as Slurm is to
itself, on a typical pair, puts at least 0.6 of the jobs at their place, with a rank correlation
of 0.985 and a mean start error of at most 1.6 s, and at least 0.5 of the jobs on their nodes
and 0.6 of the pairs kept and found. Replaying the eight records, --policy slurm gave 0.350 to
0.575 of the jobs at their place (mean 0.441), rank correlation 0.912 to 0.987 (0.958), mean
start error 1.95 to 3.65 s (2.62 s), 0.25 to 0.55 of the jobs on their nodes (0.431), 0.41 to
0.69 of the pairs kept (0.558), 0.30 to 0.65 found (0.530); FCFS+EASY 0.425, 0.956, 2.92 s,
0.403, 0.530, 0.489 (means). Each record replays as it is with no conflict (node by node,
resource by resource). The first test holds the honest bounds and is expected to fail until the
simulation meets them (xfail, not strict); the second holds what it meets, with a margin (at
least 0.3 of the jobs at their place, rank correlation 0.88, mean start error 4.5 s, 0.2 of the
jobs on their nodes and 0.35 of the pairs kept: about as far as the farthest two real runs are
from each other); the third the record's conflicts (none). Its first run here gave 0.475, 0.968,
2.9 s, 0.25 and 0.41 (a real run unlike the five before it).

Where the simulation departs (docs/semantics.md, "Slurm's scheduler on shared nodes";
BENCHMARKS.md): (1) the record's whole seconds: Slurm's backfill cycle, its main passes and the
ends of jobs fall in a fixed order within each second (in one run, cycles at .13 s and the ends
of the jobs they started at .16 s), which decides what a start sees; the simulation sees an end
and a start of the same second together, ends first. Fed each job's start and end from
slurmctld.log to the millisecond, the placement rule alone puts 0.45 to 1.0 of the jobs on their
recorded nodes; fed the record's own whole-second starts, 0.35 to 0.95. (2) A node whose job
ended a few milliseconds earlier is still completing (its epilog has not reported), and Slurm's
main pass passes over it; neither sacct nor slurmctld.log records when it reports. (sacct's text
reads ``-n2 --mem=7000`` and ``-n2 --mem-per-cpu=3500`` alike; its JSON, replayed here since
2026-12-05's third session, tells them apart: five more records then gave --policy slurm 0.415,
0.961, 2.38 s, 0.490, 0.531 (means), real vs real 0.620, 0.995, 1.21 s, 0.727, 0.780.)

Takes about 4 minutes, up to one of them waiting for a recalculation.
"""

from __future__ import annotations

import os
import shutil

import pytest
from benchmarks.slurm_tres_replay import ClusterError, compare_run, run_real, workload

JOBS = workload(40, 42, gap=1.0)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def replay(tmp_path_factory) -> dict[str, object]:
    """The workload run on a fresh cons_tres cluster, captured, and replayed: each policy's
    agreement with the record and the record's conflicts (benchmarks/slurm_tres_replay.py's
    compare_run)."""
    if shutil.which("slurmdbd") is None or shutil.which("mariadbd") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install the accounting cluster (.ci/run does)")
        pytest.skip("no slurmdbd/MariaDB: scripts/slurm-cluster.sh install-accounting")
    folder = tmp_path_factory.mktemp("tres")
    try:
        capture = run_real(JOBS, folder / "run", wait=600)
    except ClusterError as exc:
        pytest.fail(str(exc))
    return compare_run(capture, folder / "replays")


def measured(replay: dict[str, object]) -> str:
    return f"--policy slurm {replay['slurm agreement']}, FCFS+EASY {replay['fcfs agreement']}"


@pytest.mark.xfail(
    strict=False,
    reason="measured 2026-12-05 on eight records: 0.350-0.575 of the jobs at their place (bound "
    "0.6), start rank correlation 0.912-0.987 (0.985), mean start error 1.95-3.65 s (1.6 s), "
    "0.25-0.55 of the jobs on their recorded nodes (0.5), 0.41-0.69 of the pairs kept (0.6): "
    "events within one second that the record's whole seconds do not order, and nodes still "
    "completing for milliseconds after a job (five more JSON records, 2026-12-05: 0.325-0.450, "
    "0.925-0.991, 1.78-3.55 s, 0.375-0.575, 0.463-0.649)",
)
def test_the_simulation_places_and_orders_the_jobs_as_slurm_does_within_its_spread(replay):
    slurm = replay["slurm agreement"]
    assert isinstance(slurm, dict)
    assert slurm["same place in the order of starts"] >= 0.6, measured(replay)
    assert slurm["start rank correlation"] >= 0.985, measured(replay)
    assert slurm["mean start error (s)"] <= 1.6, measured(replay)
    assert slurm["same nodes"] >= 0.5, measured(replay)
    assert slurm["pairs kept"] >= 0.6, measured(replay)
    assert slurm["pairs found"] >= 0.6, measured(replay)


def test_what_the_simulation_meets_on_shared_nodes(replay):
    slurm = replay["slurm agreement"]
    assert isinstance(slurm, dict)
    assert slurm["same place in the order of starts"] >= 0.3, measured(replay)
    assert slurm["start rank correlation"] >= 0.88, measured(replay)
    assert slurm["mean start error (s)"] <= 4.5, measured(replay)
    assert slurm["same nodes"] >= 0.2, measured(replay)
    assert slurm["pairs kept"] >= 0.35, measured(replay)


def test_the_record_replays_as_it_is_without_a_conflict(replay):
    conflicts = replay["conflicts"]
    assert isinstance(conflicts, dict)
    assert conflicts["replayed"] == len(JOBS), conflicts
    # checked node by node, by CPUs, memory, GPUs and exclusive holds
    assert conflicts["checked per node"] == 1, conflicts
    kinds = {k: v for k, v in conflicts.items() if k not in ("replayed", "checked per node")}
    assert set(kinds.values()) == {0}, conflicts
