"""Killed and interrupted commands, with real processes and real signals (issue 11).

- SIGKILL of ``compare`` or ``sweep`` takes its worker processes and multiprocessing's resource
  tracker with it (they used to run on for many minutes, 230-400 MB each);
- Ctrl-C of ``compare`` stops at once, keeps the finished runs, says so and exits 130;
- a sweep folder is locked: a second sweep on it is refused instead of running everything
  again and deleting the first one's staging folders;
- a killed sweep leaves its folder and results table marked "interrupted";
- a later ``simulate`` removes the staging folder of a killed write of the same run directory,
  and only folders whose writer is provably dead.

Bounds on waiting are liveness checks (generous), not timing assertions.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from tests.conftest import run_cli as run

from hpcsched.sweep import comparable

pytestmark = [
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="finds worker processes in /proc (Linux)"
    ),
    pytest.mark.slow,  # real processes and signals: seconds each
]

#: A Python policy (FCFS with EASY) that, with HPCSCHED_TEST_BUSY set, takes a second per
#: decision, so that a run lasts minutes without using the CPU, and leaves its pid there;
#: without it, it is quick (a resumed run completes).
SLOW_POLICY = """
import os
import time

from hpcsched.protocol import Decision


class Slow:
    name = "slow"

    def decide(self, view):
        mark = os.environ.get("HPCSCHED_TEST_BUSY")
        if mark:  # slow only then
            open(os.path.join(mark, str(os.getpid())), "a").close()
            time.sleep(1.0)
        return Decision(order=())
"""

#: An overloaded M/M/16 queue (load 3): the queue grows without bound and WFP3 sorts all of
#: it at each decision, so this run takes minutes of CPU.
SLOW_WORKLOAD = '[[workloads]]\ngenerate = "mmk"\njobs = 150000\nservers = 16\nload = 3.0\n'
QUICK_WORKLOAD = '[[workloads]]\ngenerate = "mmk"\njobs = 60\nservers = 4\nload = 0.5\n'
POLICY_WFP3 = '[[policies]]\nname = "wfp3"\n'
POLICY_FCFS = '[[policies]]\nname = "fcfs"\n'


def _stat(pid: int) -> tuple[str, int, float] | None:
    """(state, parent pid, CPU seconds) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return fields[0], int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks


def _started(pid: int) -> str:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return text[text.rindex(")") + 2 :].split()[19]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def descendants(root: int) -> set[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            parents[int(entry)] = stat[1]
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def gone(pid: int) -> bool:
    stat = _stat(pid)
    return stat is None or stat[0] in ("Z", "X")  # a zombie has ended: nobody reaped it yet


def wait_for(predicate, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:.0f} s: {what}")
        time.sleep(0.2)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def spawn(tmp_path):
    """Starts ``python -m hpcsched ARGS`` in its own session (as a terminal would run it), with
    Ctrl-C's signal at its default: a suite started in the background of a shell (``tests &``)
    passes SIGINT on ignored, and a command rightly keeps ignoring it then. Whatever of it is
    left at the end of the test is killed, by pid."""
    started: list[subprocess.Popen] = []
    seen: dict[int, str] = {}  # pid -> start time: never kill a pid reused by another

    def start(args, env=None) -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hpcsched", *map(str, args)],
            cwd=tmp_path,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=_default_sigint,
        )
        started.append(proc)
        return proc

    def watch(proc: subprocess.Popen) -> set[int]:
        family = descendants(proc.pid)
        seen.update({pid: _started(pid) for pid in family})
        return family

    start.watch = watch
    yield start
    for proc in started:
        seen.update({pid: _started(pid) for pid in descendants(proc.pid)})
        if proc.poll() is None:
            proc.kill()
    for pid, started_at in seen.items():  # first: one left behind holds the pipes read below
        if not gone(pid) and _started(pid) == started_at:
            os.kill(pid, signal.SIGKILL)
    for proc in started:
        proc.communicate()


@pytest.fixture
def trace(tmp_path, capsys):
    path = tmp_path / "m.json"
    assert run(["generate", "markovian", path, "--jobs", "200", "--seed", "3"], capsys)[0] == 0
    return path


@pytest.fixture
def slow_policy(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text(SLOW_POLICY)
    return f"python:{path}:Slow"


def workers(family: set[int]) -> set[int]:
    return {pid for pid in family if "multiprocessing.spawn" in _cmdline(pid)}


def tracker(family: set[int]) -> set[int]:
    return {pid for pid in family if "resource_tracker" in _cmdline(pid)}


def test_killed_compare_takes_its_workers_and_resource_tracker_with_it(
    tmp_path, trace, slow_policy, spawn
):
    busy = tmp_path / "busy"
    busy.mkdir()
    proc = spawn(
        ["compare", trace, "--policy", slow_policy, "--policy", slow_policy,
         "--processes", "2", "--out", tmp_path / "cmp"],
        env={"HPCSCHED_TEST_BUSY": str(busy)},
    )  # fmt: skip
    wait_for(lambda: len(os.listdir(busy)) == 2, "both workers deciding")
    family = spawn.watch(proc)
    assert {int(pid) for pid in os.listdir(busy)} <= workers(family)
    assert tracker(family), "the resource tracker runs"

    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    left = lambda: {pid for pid in family if not gone(pid)}  # noqa: E731
    wait_for(lambda: not left(), f"workers and tracker end with the driver: {left()} left", 20)


def test_killed_sweep_takes_its_workers_and_resource_tracker_with_it(tmp_path, spawn):
    config = tmp_path / "slow.toml"
    config.write_text(
        '[sweep]\nout = "res"\nprocesses = 2\n'
        + SLOW_WORKLOAD
        + '[[policies]]\nname = "wfp3"\n[[policies]]\nname = "sjf"\n'
    )
    proc = spawn(["sweep", config])

    def busy() -> bool:  # both workers well into their run (past starting and importing)
        running = workers(spawn.watch(proc))
        return len(running) == 2 and all((_stat(p) or ("", 0, 0.0))[2] > 5 for p in running)

    wait_for(busy, "two workers running")
    family = spawn.watch(proc)
    assert tracker(family), "the resource tracker runs"

    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    left = lambda: {pid for pid in family if not gone(pid)}  # noqa: E731
    wait_for(lambda: not left(), f"workers and tracker end with the driver: {left()} left", 20)


@pytest.mark.parametrize(
    ("stop", "code"),
    # Ctrl-C: the whole foreground group gets it; SIGTERM: what kill(1), systemd or a batch
    # system send first, to the main process (128 + 15, as 130 is 128 + 2)
    [(lambda pid: os.killpg(pid, signal.SIGINT), 130),
     (lambda pid: os.kill(pid, signal.SIGTERM), 143)],
    ids=["ctrl-c", "sigterm"],
)  # fmt: skip
def test_a_stopped_compare_keeps_finished_runs_and_says_so(
    tmp_path, trace, slow_policy, spawn, stop, code
):
    out, busy = tmp_path / "cmp", tmp_path / "busy"
    busy.mkdir()
    proc = spawn(
        ["compare", trace, "--policy", "fcfs", "--policy", "sjf", "--policy", slow_policy,
         "--processes", "2", "--out", out],
        env={"HPCSCHED_TEST_BUSY": str(busy)},
    )  # fmt: skip
    finished = [out / "fcfs-easy" / "summary.json", out / "sjf-easy" / "summary.json"]
    wait_for(lambda: all(p.exists() for p in finished), "the two quick runs written")
    wait_for(lambda: len(os.listdir(busy)) == 1, "the slow run under way")
    family = spawn.watch(proc)

    stop(proc.pid)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert stderr.count("\n") == 1
    assert f"interrupted: 2 of 3 runs complete in {out} (kept); no report written" in stderr
    assert "Traceback" not in stderr + stdout and "KeyboardInterrupt" not in stderr + stdout
    assert sorted(os.listdir(out)) == ["fcfs-easy", "sjf-easy"]  # no report, no staging
    left = lambda: {pid for pid in family if not gone(pid)}  # noqa: E731
    wait_for(lambda: not left(), f"workers stopped: {left()} left", 20)


def _interrupt(proc: subprocess.Popen, whole_group: bool) -> tuple[float, str, str]:
    """Ctrl-C to the process group (a terminal's) or SIGINT to the main process alone; the
    seconds until it exited, and its output."""
    sent = time.monotonic()
    if whole_group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    return time.monotonic() - sent, stdout, stderr


def _jobs(folder: Path) -> dict[str, pd.DataFrame]:
    return {p.parent.name: pd.read_parquet(p) for p in sorted(folder.glob("*/jobs.parquet"))}


@pytest.mark.parametrize("whole_group", [True, False], ids=["group", "main-process"])
def test_ctrl_c_of_compare_stops_at_once_and_rerunning_resumes(
    tmp_path, trace, slow_policy, spawn, capsys, whole_group
):
    out, busy = tmp_path / "cmp", tmp_path / "busy"
    busy.mkdir()
    policies = ["--policy", "fcfs", "--policy", "sjf", "--policy", slow_policy]
    proc = spawn(
        ["compare", trace, *policies, "--processes", "2", "--out", out],
        env={"HPCSCHED_TEST_BUSY": str(busy)},
    )
    finished = [out / "fcfs-easy" / "summary.json", out / "sjf-easy" / "summary.json"]
    wait_for(lambda: all(p.exists() for p in finished), "the two quick runs written")
    wait_for(lambda: len(os.listdir(busy)) >= 1, "the slow run under way")
    stamps = [p.stat().st_mtime_ns for p in finished]

    seconds, stdout, stderr = _interrupt(proc, whole_group)
    assert proc.returncode == 130, stderr
    assert seconds < 2.0, f"exited {seconds:.1f} s after the signal"
    assert "2 of 3 runs complete" in stderr and "Run the same command again" in stderr
    assert "Traceback" not in stderr + stdout

    # the same command again (now the slow policy is quick) runs only the missing policy
    code, _, err = run(["compare", trace, *policies, "--out", out], capsys)
    assert code == 0, err
    assert [p.stat().st_mtime_ns for p in finished] == stamps  # kept, not run again
    fresh = tmp_path / "fresh"
    assert run(["compare", trace, *policies, "--out", fresh], capsys)[0] == 0
    resumed, whole = _jobs(out), _jobs(fresh)
    assert list(resumed) == list(whole) and len(whole) == 3
    for name in whole:
        pd.testing.assert_frame_equal(resumed[name], whole[name])


@pytest.mark.parametrize("whole_group", [True, False], ids=["group", "main-process"])
def test_ctrl_c_of_a_sweep_stops_at_once_and_rerunning_resumes(
    tmp_path, spawn, capsys, whole_group
):
    # one process: the quick FCFS run first, then WFP3 on an overloaded queue (seconds)
    grid = (
        '[sweep]\nprocesses = 1\n[[workloads]]\ngenerate = "mmk"\njobs = 20000\n'
        "servers = 16\nload = 3.0\n" + POLICY_FCFS + POLICY_WFP3
    )
    config = tmp_path / "grid.toml"
    config.write_text(grid)
    out = tmp_path / "grid"
    proc = spawn(["sweep", config])
    wait_for(lambda: len(list(out.glob("runs/*/summary.json"))) == 1, "the FCFS run written")
    seconds, stdout, stderr = _interrupt(proc, whole_group)
    assert proc.returncode == 130, stderr
    assert seconds < 2.0, f"exited {seconds:.1f} s after the signal"
    assert "1 of 2 runs complete" in stderr and "Run the same command again" in stderr
    assert "Traceback" not in stderr + stdout

    code, out_text, err = run(["sweep", config], capsys)
    assert code == 0, err
    assert "1 runs done now, 1 already complete" in " ".join(out_text.split())
    reference = tmp_path / "reference.toml"
    reference.write_text(grid.replace("[sweep]\n", '[sweep]\nout = "reference"\n'))
    assert run(["sweep", reference], capsys)[0] == 0
    resumed = pq.read_table(out / "results.parquet").to_pandas()
    whole = pq.read_table(tmp_path / "reference" / "results.parquet").to_pandas()
    pd.testing.assert_frame_equal(
        comparable(resumed).drop(columns="run_dir"), comparable(whole).drop(columns="run_dir")
    )


def test_a_sweep_folder_is_locked_against_a_second_sweep(tmp_path, spawn, capsys):
    slow = tmp_path / "slow.toml"
    slow.write_text('[sweep]\nout = "res"\nprocesses = 1\n' + SLOW_WORKLOAD + POLICY_WFP3)
    first = spawn(["sweep", slow])
    res = tmp_path / "res"
    wait_for(lambda: (res / "runs").is_dir(), "the first sweep started")

    # another sweep file pointed at the same folder
    quick = tmp_path / "quick.toml"
    quick.write_text(QUICK_WORKLOAD + POLICY_FCFS)
    code, _, err = run(["sweep", quick, "--out", res], capsys)
    message = " ".join(err.split())
    assert code == 2, err
    assert f"{res} is in use by another sweep (pid {first.pid})" in message
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not [d for d in os.listdir(res / "runs") if not d.startswith(".")]
    assert first.poll() is None  # the first sweep goes on, untouched


def test_a_killed_sweep_leaves_its_results_marked_interrupted(tmp_path, spawn, capsys):
    config = tmp_path / "s.toml"
    quick = '[sweep]\nout = "res"\nprocesses = 1\n' + QUICK_WORKLOAD + POLICY_FCFS
    config.write_text(quick)
    res = tmp_path / "res"
    assert run(["sweep", config], capsys)[0] == 0
    assert (state_file(res) or {}).get("state") == "complete"
    assert table_state(res).get("state") == "complete"

    # the same folder, a bigger grid; killed in the middle
    config.write_text(quick + SLOW_WORKLOAD + POLICY_WFP3)  # 2 x 2 runs, one of them slow
    proc = spawn(["sweep", config])
    wait_for(lambda: (state_file(res) or {}).get("state") == "running", "the sweep running")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    # nothing says complete any more: the file, the table's metadata and the CLI say so
    assert state_file(res)["state"] == "running" and table_state(res)["state"] == "running"
    from hpcsched.sweep import sweep_status

    status = sweep_status(res)
    assert (status.state, status.complete, status.completed) == ("interrupted", False, 1)
    code, out, _ = run(["sweep", config, "--dry-run"], capsys)
    assert code == 0 and "last sweep there: interrupted, 1 of 4 runs complete" in out

    # the next sweep says what it resumes, and ends complete
    config.write_text(quick)
    code, out, err = run(["sweep", config], capsys)
    assert code == 0 and "was interrupted" in err and "1 already complete" in out
    assert state_file(res)["state"] == "complete" and table_state(res)["state"] == "complete"


def state_file(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "sweep.json").read_text())
    except (OSError, ValueError):
        return None


def table_state(folder: Path) -> dict:
    metadata = pq.read_schema(folder / "results.parquet").metadata or {}
    return json.loads(metadata.get(b"hpcsched.sweep", b"{}"))


#: Writes a run directory like simulate --out, but stops for good after its first file: the
#: staging folder exists and its writer is alive until killed.
STUCK_WRITER = """
import sys, time
import hpcsched.output as output

write = output.write_parquet

def stuck(frame, path, **kwargs):
    write(frame, path, **kwargs)
    open(sys.argv[3], "w").close()
    time.sleep(600)

output.write_parquet = stuck
import hpcsched
hpcsched.simulate(sys.argv[1], "fcfs", out=sys.argv[2])
"""


def test_simulate_removes_the_staging_a_killed_write_left_and_nothing_else(tmp_path, trace, capsys):
    target = tmp_path / "runs" / "t"

    def staging() -> set[Path]:
        return {p for p in target.parent.iterdir() if p.name.startswith(".t.")}

    writers = []
    try:
        for name in ("killed", "alive"):
            flag = tmp_path / name
            writer = subprocess.Popen(
                [sys.executable, "-c", STUCK_WRITER, str(trace), str(target), str(flag)]
            )
            writers.append(writer)
            wait_for(flag.exists, f"the {name} writer's staging folder", 60)
            if name == "killed":
                writer.kill()
                writer.wait()
                killed = staging()
        alive = staging() - killed
        assert len(killed) == 1 and len(alive) == 1, (killed, alive)
        foreign = target.parent / ".t.notours.tmp"  # hidden, .tmp, but not our pattern
        foreign.mkdir()

        code, _, err = run(["simulate", trace, "--out", target], capsys)
        assert code == 0, err
        assert (target / "summary.json").is_file()
        assert staging() == alive | {foreign}  # the dead writer's staging is gone, only it
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()


def test_sweep_start_up_cleans_only_provably_dead_staging_of_its_own_folder(tmp_path, capsys):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    key = "0123456789abcdef"  # a run key's shape, not a run of this grid

    # a folder that is not (yet) a sweep folder: nothing hidden in it is touched
    foreign = tmp_path / "data"
    names = [".photos.tmp", f".{key}.k2j4h5g6.tmp", f".{key}.{dead.pid}.abcdefgh.tmp"]
    for name in names:
        (foreign / "runs" / name).mkdir(parents=True)
        (foreign / "runs" / name / "keep").write_text("x")
    config = tmp_path / "s.toml"
    config.write_text(f'[sweep]\nout = "{foreign}"\n' + QUICK_WORKLOAD + POLICY_WFP3)
    assert run(["sweep", config], capsys)[0] == 0
    assert all((foreign / "runs" / name / "keep").exists() for name in names)

    # now it is a sweep folder: a dead writer's staging goes, a live writer's stays (a pid
    # alive here, or a dead pid whose lock is held, as by a writer on another machine)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        stale = foreign / "runs" / f".{key}.{dead.pid}.abcdefgh.tmp"
        live = foreign / "runs" / f".{key}.{sleeper.pid}.abcdefgh.tmp"
        remote = foreign / "runs" / f".{key}.{dead.pid}.zzzzzzzz.tmp"
        live.mkdir()
        remote.mkdir()
        held = os.open(remote, os.O_RDONLY)
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            assert run(["sweep", config], capsys)[0] == 0
        finally:
            os.close(held)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not stale.exists()
    assert live.exists() and remote.exists()
    assert (foreign / "runs" / ".photos.tmp").exists()


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


@pytest.mark.parametrize(
    "model",
    [[], ["--runtime-model", "history"], ["--lookahead", "rollout", "--runtime-model", "history"]],
    ids=["tree", "sampled trees", "rollout"],
)
def test_ctrl_c_stops_a_search_of_a_hundred_thousand_trees_on_a_bounded_pool(
    tmp_path, spawn, model, capsys
):
    # One decision of 100,000 trees takes many minutes; it used to start a thread per tree
    # and ignore Ctrl-C until it ended. (A busy workload: jobs wait, so there is a search.)
    trace = tmp_path / "busy.json"
    generate = ["generate", "markovian", trace, "--jobs", "300", "--target-util", "0.95"]
    assert run(generate, capsys)[0] == 0
    out = tmp_path / "run"
    proc = spawn(
        ["simulate", trace, "--policy", "mars-cw", "--trees", "100000", *model, "--out", out]
    )
    wait_for(lambda: (s := _stat(proc.pid)) is not None and s[2] > 2.0, "the search under way")
    # the trees share a pool of one thread per core (plus the interpreter's own few)
    assert _threads(proc.pid) <= (os.cpu_count() or 1) + 8
    seconds, stdout, stderr = _interrupt(proc, whole_group=False)
    assert proc.returncode == 130, stderr
    assert seconds < 2.0, f"exited {seconds:.1f} s after the signal"
    assert "Traceback" not in stderr + stdout
    assert not out.exists() and not list(tmp_path.glob(".run*"))


# ---------------------------------------------------------------------------------------------
# SIGTERM stops a command as Ctrl-C does (issue 25, point 13): the staging folder is removed,
# finished runs are kept, one line says so; exit 143 (128 + 15, as 130 is 128 + 2 for SIGINT).
# It used to kill the process outright, leaving hidden staging folders and saying nothing.


def everything_in(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(("number", "code", "how"), [(signal.SIGTERM, 143, "SIGTERM"),
                                                      (signal.SIGINT, 130, "Ctrl-C")])  # fmt: skip
def test_a_signal_stops_simulate_leaving_nothing_and_saying_so(
    tmp_path, trace, slow_policy, spawn, number, code, how
):
    busy = tmp_path / "busy"
    busy.mkdir()
    out = tmp_path / "runs" / "slow"
    proc = spawn(
        ["simulate", trace, "--policy", slow_policy, "--out", out],
        env={"HPCSCHED_TEST_BUSY": str(busy)},
    )
    wait_for(lambda: len(os.listdir(busy)) == 1, "the run under way")
    assert everything_in(out.parent)[0].startswith(".slow.")  # its staging folder
    os.kill(proc.pid, number)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    # one line: how it stopped, how far the run got, and that nothing was written (issue 27)
    assert re.fullmatch(
        rf"interrupted: stopped by {how} at (the start|\d+ % of the trace \(simulated day "
        rf"\d+\.\d\)): nothing written to {re.escape(str(out))}\n",
        stderr,
    ), stderr
    assert stdout == ""
    assert everything_in(out.parent) == []  # no staging folder, no run directory


def test_an_interrupted_simulate_keeps_its_progress_line_on_screen(monkeypatch):
    # The progress line is erased when a run ends, but kept when it is interrupted, so that
    # the user sees how far it got above the "interrupted:" line (issue 27, point 3).
    import io

    from rich.console import Console

    from hpcsched.cli import _console

    screens = {}
    for keep in (False, True):
        screen = io.StringIO()
        monkeypatch.setattr(
            _console, "err_console", Console(file=screen, force_terminal=True, width=120)
        )
        progress = _console.LazyProgress(10 * 86400, "FCFS on t.swf", unix_start=0.0, delay=0)
        progress(4.1 * 86400, 1234, 5000)
        progress.close(keep=keep)
        screens[keep] = screen.getvalue()
        assert progress.reached() == "41 % of the trace (simulated 1970-01-05 02:24 UTC)"
    erase = "\x1b[1A\x1b[2K"  # cursor up, erase the line
    assert screens[False].endswith(erase)
    assert erase not in screens[True] and "1,234 jobs submitted" in screens[True]
    assert _console.LazyProgress(100.0, "x").reached() == "the start"
