"""Policies written in Python: conformance with the built-ins on real traces, the view's
events and timers, power switching, and clear errors for bad decisions."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import hpcsched
from hpcsched.exceptions import DecisionError, OptionError
from hpcsched.protocol import SLEEPING, Decision, View, load_policy
from tests.conftest import REPO_ROOT, small_platform, workload_from

EXAMPLES = REPO_ROOT / "examples" / "policies"
FCFS_EASY = f"python:{EXAMPLES / 'fcfs_easy.py'}:FcfsEasy"
SNF = f"python:{EXAMPLES / 'snf.py'}:SmallestNeedFirst"


@pytest.mark.parametrize("trace", ["KTH-SP2-1996-2.1-cln.swf.gz", "lublin_256.swf.gz"])
@pytest.mark.parametrize(("python", "builtin"), [(FCFS_EASY, "fcfs"), (SNF, "snf")])
def test_python_policies_reproduce_the_built_ins(traces_dir, tmp_path, trace, python, builtin):
    workload = hpcsched.load_workload(traces_dir / "pwa" / trace)
    ours = hpcsched.simulate(workload, python, out=tmp_path / "python")
    theirs = hpcsched.simulate(workload, builtin, out=tmp_path / "builtin")
    pd.testing.assert_frame_equal(ours.jobs, theirs.jobs)  # start kinds included
    assert (tmp_path / "python" / "jobs.parquet").read_bytes() == (
        tmp_path / "builtin" / "jobs.parquet"
    ).read_bytes()
    assert ours.info["inputs"]["policy"]["python"] == python


def test_compare_takes_python_policy_objects():
    workload = workload_from([(0, 10, 10, 1), (1, 5, 5, 2), (2, 1, 1, 1)], nodes=2)

    class Order:
        name = "order"

        def decide(self, view):
            return Decision(order=view.queue)

    comparison = hpcsched.compare(workload, ["fcfs", Order()], processes=1)
    assert list(comparison.results) == ["FCFS +EASY", "order"]
    pd.testing.assert_frame_equal(
        comparison.results["order"].jobs, comparison.results["FCFS +EASY"].jobs
    )


class Recorder:
    """Starts whatever fits in FCFS order and records what each call saw."""

    name = "recorder"

    def __init__(self) -> None:
        self.calls: list[View] = []

    def decide(self, view: View) -> Decision:
        self.calls.append(view)
        free, start = view.free, []
        for job, nodes in zip(view.queue, view.queue_nodes, strict=True):
            if nodes <= free:
                start.append(int(job))
                free -= nodes
        return Decision(start=start)


def test_the_view_reports_every_event_once_since_the_last_call():
    # 2 nodes; C arrives at 30 while nothing waits between 20 and 30
    workload = workload_from([(0, 20, 25, 1), (5, 10, 10, 2), (30, 5, 5, 1)], nodes=2)
    recorder = Recorder()
    result = hpcsched.simulate(workload, recorder)
    assert result.jobs["start"].tolist() == [0.0, 20.0, 30.0]
    calls = [(v.now, v.arrived.tolist(), v.completed.tolist()) for v in recorder.calls]
    # at 0: A arrives; at 5: B arrives (waits: A holds a node); at 20: A ends, B starts;
    # B ends at 30 as C arrives: one call sees both
    assert calls == [(0.0, [0], []), (5.0, [1], []), (20.0, [], [0]), (30.0, [2], [1])]
    v = recorder.calls[1]
    assert (v.free, v.queue.tolist(), v.queue_nodes.tolist()) == (1, [1], [2])
    assert v.running.tolist() == [0] and v.running_estimated_end.tolist() == [25.0]


class WaitUntil:
    """Starts nothing before `t`, asking to be called again then."""

    name = "wait-until"

    def __init__(self, t: float) -> None:
        self.t = t
        self.calls: list[float] = []

    def decide(self, view: View) -> Decision:
        self.calls.append(view.now)
        if view.now < self.t:
            return Decision(timers=[self.t])
        return Decision(order=view.queue)


def test_timers_call_the_policy_again():
    workload = workload_from([(0, 10, 10, 1), (1, 10, 10, 1)], nodes=1)
    policy = WaitUntil(100.0)
    result = hpcsched.simulate(workload, policy)
    assert policy.calls[:3] == [0.0, 1.0, 100.0]
    assert result.jobs["start"].tolist() == [100.0, 110.0]


class SleepWhenIdle:
    """FCFS; switches every idle node off when nothing waits, wakes what the head needs."""

    name = "sleep-when-idle"

    def decide(self, view: View) -> Decision:
        if not len(view.queue):
            return Decision(power_off=view.idle_nodes.tolist())
        need = int(view.queue_nodes[0]) - view.free
        wake = view.sleeping_nodes[: max(need, 0)].tolist()
        return Decision(order=view.queue, power_on=wake)


def test_a_python_policy_switches_nodes_on_a_power_platform():
    platform = small_platform(4, switch_on=50.0, switch_off=40.0)
    workload = workload_from([(0, 100, 100, 2), (1000, 100, 100, 4)], nodes=4)
    result = hpcsched.simulate(workload, SleepWhenIdle(), platform=platform)
    # the second job finds every node asleep: it waits for 4 nodes to switch on (50 s)
    assert result.jobs["start"].tolist() == [0.0, 1050.0]
    assert result.info["energy"]["node_seconds"]["sleeping"] > 0
    assert (result.timeline[["idle", "computing", "sleeping"]].sum(axis=1) <= 4).all()
    assert result.timeline["sleeping"].max() == 4
    assert SLEEPING == 4


class Greedy:
    name = "greedy"

    def __init__(self, decision) -> None:
        self.decision = decision

    def decide(self, view: View):
        return self.decision(view)


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (lambda v: Decision(start=v.queue.tolist()), "needs 2 nodes but only 1 are free"),
        (lambda v: Decision(start=[99]), "there is no job index 99"),
        (lambda v: Decision(start=[0, 0]), "named twice"),
        (lambda v: Decision(start=[0], order=[1]), "not both"),
        (lambda v: Decision(order=v.queue, backfill="maybe"), "backfill must be"),
    ],
)
def test_bad_decisions_name_the_policy_and_the_decision(decision, message):
    workload = workload_from([(0, 10, 10, 1), (0, 10, 10, 2)], nodes=2)
    with pytest.raises(DecisionError) as error:
        hpcsched.simulate(workload, Greedy(decision))
    text = str(error.value)
    assert message in text and "greedy" in text and "Decision(" in text


def test_a_policy_that_returns_something_else_or_raises():
    workload = workload_from([(0, 10, 10, 1)], nodes=1)
    with pytest.raises(DecisionError, match=r"greedy at t=0: decide returned \{'start': \[0\]\}"):
        hpcsched.simulate(workload, Greedy(lambda v: {"start": [0]}))
    with pytest.raises(DecisionError, match="greedy at t=0: decide raised ZeroDivisionError") as e:
        hpcsched.simulate(workload, Greedy(lambda v: 1 / 0))
    assert isinstance(e.value.__cause__, ZeroDivisionError)  # the traceback stays reachable


#: Policies that fail in every way a user's code can (issue 25, points 3 and 8).
FAILING = """
import sys
from hpcsched.protocol import Decision


class Policy:
    def __init__(self):
        self.name = type(self).__name__.lower()


class Exits(Policy):
    def decide(self, view):
        sys.exit(0)


class Recurses(Policy):
    def decide(self, view):
        return self.decide(view)


class Raises(Policy):
    def decide(self, view):
        raise ValueError("no " + "x" * 5000)


class ReturnsNone(Policy):
    def decide(self, view):
        pass


class ReturnsList(Policy):
    def decide(self, view):
        return [0]


class ReturnsText(Policy):
    def decide(self, view):
        return "start all"


class Interrupted(Policy):
    def decide(self, view):
        raise KeyboardInterrupt


class InterruptedReading(Policy):
    # Ctrl-C while the engine reads the decision (an order of the policy's own kind)

    class Order:
        def __len__(self):
            return 1

        def __iter__(self):
            raise KeyboardInterrupt
            yield 0

        def __getitem__(self, i):
            raise KeyboardInterrupt

    def decide(self, view):
        return Decision(order=self.Order())


class Huge(Policy):
    def decide(self, view):
        return Decision(order=list(range(1_000_000)))
"""


@pytest.mark.parametrize(
    ("policy", "says"),
    [
        ("Exits", "exits at t=0: decide raised SystemExit: 0"),
        ("Recurses", "recurses at t=0: decide raised RecursionError: maximum recursion depth"),
        ("Raises", "raises at t=0: decide raised ValueError: no xxx"),
        ("ReturnsNone", "returnsnone at t=0: decide returned None (NoneType), not a"),
        ("ReturnsList", "returnslist at t=0: decide returned [0] (list), not a"),
        ("ReturnsText", "returnstext at t=0: decide returned 'start all' (str), not a"),
        ("Huge", "huge at t=0: job 2 (index 1) is not waiting; decision: Decision("),
    ],
)
def test_a_failing_policy_is_a_user_error_naming_it(tmp_path, capsys, policy, says):
    from hpcsched.cli import main

    trace = tmp_path / "t.json"
    hpcsched.workload.generate.write_batsim(hpcsched.workload.generate.mmk(20, 2, 0.8), trace)
    (tmp_path / "failing.py").write_text(FAILING)
    out = tmp_path / "run"
    code = main(["simulate", str(trace), "--policy", f"python:{tmp_path}/failing.py:{policy}",
                 "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"error: {says}")
    assert "bug in hpcsched" not in err
    assert len(err) < 700  # one line, the reason cut to 600 characters (issue 25, point 9)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["failing.py", "t.json"]  # no run


@pytest.mark.parametrize("name", ["Interrupted", "InterruptedReading"])
def test_ctrl_c_inside_a_policy_stays_an_interrupt(tmp_path, capsys, name):
    from hpcsched.cli import main

    trace = tmp_path / "t.json"
    hpcsched.workload.generate.write_batsim(hpcsched.workload.generate.mmk(20, 2, 0.8), trace)
    (tmp_path / "failing.py").write_text(FAILING)
    policy = f"python:{tmp_path}/failing.py:{name}"
    assert main(["simulate", str(trace), "--policy", policy, "--out", str(tmp_path / "r")]) == 130
    with pytest.raises(KeyboardInterrupt):
        hpcsched.simulate(hpcsched.load_workload(trace), load_policy(policy))


@pytest.mark.slow  # six processes
def test_python_policies_from_the_command_line(tmp_path):
    trace = tmp_path / "t.json"
    hpcsched.workload.generate.write_batsim(hpcsched.workload.generate.mmk(300, 4, 0.8), trace)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hpcsched", *args], capture_output=True, text=True,
            cwd=tmp_path, timeout=120,
        )  # fmt: skip

    done = cli("simulate", str(trace), "--policy", FCFS_EASY, "--out", "py")
    assert done.returncode == 0, done.stderr
    builtin = cli("simulate", str(trace), "--policy", "fcfs", "--out", "builtin")
    assert builtin.returncode == 0
    assert (tmp_path / "py" / "jobs.parquet").read_bytes() == (
        tmp_path / "builtin" / "jobs.parquet"
    ).read_bytes()
    (tmp_path / "mine.py").write_text(
        "from hpcsched.protocol import Decision\n"
        "class Mine:\n    name = 'mine'\n"
        "    def decide(self, view):\n        return Decision(order=view.queue[::-1])\n"
    )
    assert cli("simulate", str(trace), "--policy", "python:mine:Mine").returncode == 0
    for bad, message in [
        ("python:nowhere:X", "cannot import 'nowhere'"),
        ("python:mine:Other", "mine has no 'Other'"),
        ("python:mine", "python:MODULE:CLASS"),
    ]:
        done = cli("simulate", str(trace), "--policy", bad)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_load_policy_refuses_objects_without_decide(tmp_path, monkeypatch):
    (tmp_path / "nodecide.py").write_text("class P:\n    pass\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OptionError, match="no decide"):
        load_policy("python:nodecide:P")


def test_the_view_is_read_only():
    # documented read-only, yet a policy could assign into view.queue (issue 25, point 13)
    seen = []

    class Writer:
        name = "writer"

        def decide(self, view):
            seen.append(view)
            view.queue[0] = 0
            return Decision()

    workload = workload_from([(0, 10, 10, 1), (0, 10, 10, 1)], nodes=1)
    raised = r"writer at t=0: decide raised ValueError: .* read-only"
    with pytest.raises(DecisionError, match=raised):
        hpcsched.simulate(workload, Writer())
    view = seen[0]
    arrays = [name for name, value in view._asdict().items() if hasattr(value, "flags")]
    # 15 of every run, 10 of shared nodes (empty here, read-only too)
    assert len(arrays) == 25 and not any(getattr(view, a).flags.writeable for a in arrays)
    assert isinstance(view.down, tuple) and isinstance(view.announced, tuple)
