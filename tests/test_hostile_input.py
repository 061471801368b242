"""Hostile and odd inputs: no hang, no memory blow-up, no internal error, no silent change of
meaning. Each test stands for a defect of issue 11 and failed before its fix."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import hpcsched
from hpcsched import _core
from hpcsched.cli import main
from hpcsched.exceptions import InputError, OptionError
from hpcsched.workload import Workload, load_workload, read_calendar

#: a job line with the given fields (the rest unknown): id, submit, run time, procs, request
JOB = "{id} {submit} -1 {run} {procs} -1 -1 {procs} {req} -1 1 1 1 -1 1 -1 -1 -1\n"


def swf(path, jobs, header="; MaxProcs: 64\n"):
    path.write_text(header + "".join(JOB.format(**j) for j in jobs))
    return path


def job(i, submit=0, run=100, procs=4, req=200):
    return {"id": i, "submit": submit, "run": run, "procs": procs, "req": req}


def cli(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# --- 1. the progress display never drives the stepping -------------------------------------


class CountingProgress:
    """A progress hook that fails once it has been called more often than the run has event
    times: each call must have processed at least one of them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.calls = 0

    def __call__(self, now: float, submitted: int, invocations: int) -> None:
        self.calls += 1
        if self.calls > self.limit:
            raise AssertionError(f"{self.calls} progress calls for {self.limit} event times")


@pytest.mark.parametrize(
    "jobs",
    [
        [job(i, run=60 + 7 * i, procs=1 + i % 16) for i in range(3000)],  # all at t=0
        [job(i, run=30 * 86400, procs=8, req=30 * 86400) for i in range(100)],  # 30 days each
    ],
    ids=["3000-at-t0", "month-long-jobs"],
)
def test_progress_calls_are_bounded_by_event_times(tmp_path, jobs):
    trace = swf(tmp_path / "t.swf", jobs)
    quiet = hpcsched.simulate(trace)
    event_times = quiet.info["engine"]["event_times"]
    watched = hpcsched.simulate(trace, progress=CountingProgress(event_times + 1))
    pd.testing.assert_frame_equal(watched.jobs, quiet.jobs)


def test_a_maintenance_ten_years_out_costs_no_progress_steps(tmp_path):
    trace = swf(tmp_path / "t.swf", [job(i, submit=10 * i) for i in range(50)])
    calendar = tmp_path / "far.txt"
    ten_years = 10 * 365 * 86400
    calendar.write_text(f"{ten_years} {ten_years + 3600} S\n")
    quiet = hpcsched.simulate(trace, downtime=calendar)
    watched = hpcsched.simulate(
        trace,
        downtime=calendar,
        progress=CountingProgress(quiet.info["engine"]["event_times"] + 1),
    )
    pd.testing.assert_frame_equal(watched.jobs, quiet.jobs)


def test_run_events_is_bounded_work():
    workload = Workload(
        jobs=pd.DataFrame(
            {
                "job_id": np.arange(10),
                "submit": np.arange(10) * 1e9,  # 300 years apart: any time slice would crawl
                "run_time": np.full(10, 5.0),
                "requested_time": np.full(10, 5.0),
                "nodes": np.ones(10, dtype=np.int64),
                "user": np.full(10, -1),
            }
        ),
        nodes=1,
    )
    from hpcsched.run import native_run, new_simulation
    from hpcsched.workload import DowntimeCalendar

    sim = new_simulation(native_run(workload, DowntimeCalendar(), "fcfs"))
    steps = 0
    while sim.run_events(1):
        steps += 1
    assert steps == 19  # 10 submissions and 10 completions are 20 event times; the last ends it
    assert sim.peek() is None


# --- 2. bounded memory, time and messages --------------------------------------------------


def gzip_bomb(path, byte: bytes, gigabytes: float = 1.0):
    """A gzip file of about a thousandth of its decompressed size: members of 16 MiB of
    `byte`, repeated (cheap to build: one member is compressed once)."""
    member = gzip.compress(byte * (16 << 20), compresslevel=9, mtime=0)
    path.write_bytes(member * int(gigabytes * 64))
    return path


PEAK_MEMORY = textwrap.dedent(
    """
    import resource, sys
    import hpcsched
    from hpcsched.workload import load_workload
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        load_workload(sys.argv[1])
    except hpcsched.InputError as exc:
        message = str(exc)
    else:
        message = "read"
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print((after - before) // 1024, len(message), repr(message[:200]))
    """
)


@pytest.mark.parametrize(
    ("name", "byte", "says"),
    [
        ("nul.swf.gz", b"\0", "longer than 64 KiB"),
        ("nul.json.gz", b"\0", "not a JSON workload"),
        ("newlines.swf.gz", b"\n", "decompresses to more than"),
        ("spaces.json.gz", b" ", "decompresses to more than"),
    ],
)
def test_a_gigabyte_gzip_bomb_is_refused_early_within_bounded_memory(tmp_path, name, byte, says):
    bomb = gzip_bomb(tmp_path / name, byte)
    assert bomb.stat().st_size < 2 << 20
    done = subprocess.run(
        [sys.executable, "-c", PEAK_MEMORY, str(bomb)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    grown_mib, length, message = done.stdout.split(maxsplit=2)
    assert says in message
    assert int(length) < 300
    # the reader may inflate up to its cap (64 times 1 MiB here), never the gigabyte
    assert int(grown_mib) < 150, done.stdout


def test_a_ten_megabyte_line_gives_a_short_message(tmp_path, capsys):
    trace = tmp_path / "long.swf"
    trace.write_text("1 0 -1 " + "9" * (10 << 20) + " 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    code, _, err = cli(["simulate", trace], capsys)
    assert code == 2
    assert "line 1" in err and "longer than 64 KiB" in err
    assert len(err) < 300


def test_a_ten_megabyte_token_is_quoted_cut(tmp_path, capsys):
    token = "x" * (10 << 20)
    trace = tmp_path / "token.swf"
    trace.write_text(f"1 0 -1 {token[:60_000]} 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    code, _, err = cli(["simulate", trace], capsys)
    assert code == 2
    assert "field 4 (run time)" in err and "(60000 bytes)" in err
    assert len(err) < 300
    workload = tmp_path / "token.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "res": token}]}))
    code, _, err = cli(["simulate", workload], capsys)
    assert code == 2
    assert "jobs[0].res" in err
    assert len(err) < 300
    calendar = tmp_path / "cal.txt"
    calendar.write_text(f"{token} 10 S\n")
    with pytest.raises(InputError) as caught:
        read_calendar(calendar)
    assert caught.value.field == "start"
    assert len(str(caught.value)) < 300


def test_a_file_named_gz_that_is_not_gzip_says_so(tmp_path):
    for name in ("t.swf.gz", "t.json.gz"):
        path = tmp_path / name
        path.write_text("1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n")
        with pytest.raises(InputError, match=r"named \.gz but not gzip data"):
            load_workload(path)


# --- 9. numbers past the engine's range are input errors -----------------------------------

HUGE = 2**32


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--nodes", HUGE], "--nodes: must be an integer from 1 to 16777216"),
        (["--platform", "PLATFORM"], "field nodes: nodes must be an integer from 1 to"),
    ],
)
def test_machine_sizes_past_the_engine_range_are_option_errors(tmp_path, capsys, args, says):
    trace = swf(tmp_path / "t.swf", [job(1)])
    platform = tmp_path / "huge.toml"
    platform.write_text(f'name = "huge"\nnodes = {HUGE}\n')
    args = [platform if a == "PLATFORM" else a for a in args]
    code, _, err = cli(["simulate", trace, *args], capsys)
    assert code == 2, err
    assert says in err


def test_machine_sizes_past_the_engine_range_in_files_are_input_errors(tmp_path):
    trace = swf(tmp_path / "t.swf", [job(1)], header=f"; MaxProcs: {HUGE}\n")
    with pytest.raises(InputError) as caught:
        load_workload(trace)
    assert caught.value.field == "header MaxProcs"
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": HUGE, "jobs": [{"id": 1, "res": 1, "subtime": 0}]}))
    with pytest.raises(InputError) as caught:
        load_workload(workload)
    assert caught.value.field == "nb_res"
    # a job past the range on a machine within it is a job larger than the machine
    workload.write_text(
        json.dumps(
            {
                "nb_res": 4,
                "jobs": [
                    {"id": 1, "res": HUGE, "subtime": 0, "runtime": 5},
                    {"id": 2, "res": 1, "subtime": 0, "runtime": 5},
                ],
            }
        )
    )
    assert load_workload(workload).skipped == {"larger than machine": 1}


def test_a_window_past_any_queue_is_the_whole_queue(tmp_path):
    trace = swf(tmp_path / "t.swf", [job(i, procs=1 + i % 7) for i in range(200)])
    wide = hpcsched.simulate(trace, "sjf", window=HUGE - 1)
    whole = hpcsched.simulate(trace, "sjf")
    pd.testing.assert_frame_equal(wide.jobs, whole.jobs)


def test_the_engine_refuses_a_machine_past_its_range_as_an_input_error():
    workload = Workload(
        jobs=pd.DataFrame(
            {
                "job_id": [1],
                "submit": [0.0],
                "run_time": [1.0],
                "requested_time": [1.0],
                "nodes": [1],
                "user": [-1],
            }
        ),
        nodes=HUGE,
    )
    with pytest.raises(InputError, match="the engine takes 1 to 16777216"):
        hpcsched.simulate(workload)


# --- 10. a Ctrl-C while numpy loads is an exception, not a Rust panic ----------------------

INTERRUPTED_IMPORT = textwrap.dedent(
    """
    import numpy.lib

    class Interrupted:
        # fetching numpy's C API runs numpy.lib.NumpyVersion: a Ctrl-C arriving then
        # raises KeyboardInterrupt from it
        def __init__(self, *args):
            raise KeyboardInterrupt

    numpy.lib.NumpyVersion = Interrupted
    try:
        import hpcsched._core as core
        core.parse_swf(b"1 0 5 100 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1\\n", "t.swf")
    except KeyboardInterrupt:
        print("interrupted")
    """
)


def test_an_interrupt_while_numpy_loads_is_a_keyboard_interrupt():
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_IMPORT], capture_output=True, text=True, timeout=60
    )
    assert "panicked" not in done.stderr and "PanicException" not in done.stderr, done.stderr
    assert done.stdout.strip() == "interrupted"
    assert done.returncode == 0


# --- 11. no silent change of meaning ---------------------------------------------------------


def test_a_byte_order_mark_keeps_the_header(tmp_path):
    jobs = "".join(JOB.format(**job(i, procs=8)) for i in range(3))
    for lenient in (False, True):
        trace = tmp_path / "bom.swf"
        trace.write_bytes(b"\xef\xbb\xbf; MaxProcs: 128\n" + jobs.encode())
        workload = load_workload(trace, lenient=lenient)
        assert workload.nodes == 128  # not 8, the largest job
        assert workload.skipped["malformed line"] == 0
        gz = tmp_path / "bom.swf.gz"
        gz.write_bytes(gzip.compress(trace.read_bytes()))
        assert load_workload(gz, lenient=lenient).nodes == 128


def test_duplicate_job_ids_are_a_warning_in_both_readers(tmp_path):
    trace = swf(tmp_path / "t.swf", [job(7), job(7, submit=5), job(8, submit=9)])
    workload = load_workload(trace)
    assert len(workload) == 3
    assert any("2 kept jobs share their job id" in w for w in workload.warnings)
    document = {
        "nb_res": 64,
        "jobs": [{"id": 7, "res": 4, "subtime": s, "runtime": 100} for s in (0, 5)],
    }
    (tmp_path / "t.json").write_text(json.dumps(document))
    assert any("share their job id" in w for w in load_workload(tmp_path / "t.json").warnings)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("1e30 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1", "1 (job id)"),
        ("1 1e308 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1", "2 (submit time)"),
        ("1 0 -1 1e300 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1", "4 (run time)"),
    ],
)
def test_numbers_past_the_engine_range_in_an_swf_are_input_errors(tmp_path, line, field):
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 64\n" + line + "\n")
    with pytest.raises(InputError) as caught:
        load_workload(trace)
    assert (caught.value.line, caught.value.field) == (2, field)


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"id": 1e30, "res": 1, "subtime": 0, "runtime": 5}, "jobs[0].id"),
        ({"id": 1, "res": 1, "subtime": 1e308, "runtime": 5}, "jobs[0].subtime"),
        ({"id": 1, "res": 1, "subtime": 0, "runtime": 1e300}, "jobs[0].runtime"),
        ({"id": 1, "res": 1, "subtime": 0, "runtime": 5, "walltime": 1e200}, "jobs[0].walltime"),
    ],
)
def test_numbers_past_the_engine_range_in_json_are_input_errors(tmp_path, entry, field):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": [entry]}))
    with pytest.raises(InputError) as caught:
        load_workload(path)
    assert caught.value.field == field


def test_a_calendar_past_the_engine_range_is_an_input_error(tmp_path):
    calendar = tmp_path / "cal.txt"
    calendar.write_text("0 10 S\n1e307 1.1e307 S\n")
    with pytest.raises(InputError) as caught:
        read_calendar(calendar)
    assert (caught.value.line, caught.value.field) == (2, "start")


def test_a_workload_with_nothing_to_replay_is_an_input_error(tmp_path, capsys):
    trace = swf(tmp_path / "t.swf", [job(1, run=-1), job(2, procs=0)])
    code, _, err = cli(["simulate", trace, "--out", tmp_path / "run"], capsys)
    assert code == 2
    assert "no job to replay: every job was skipped" in err
    assert "unknown run time: 1" in err
    assert not (tmp_path / "run").exists()
    # inspect still shows why
    code, out, _ = cli(["inspect", trace], capsys)
    assert code == 0
    assert "unknown run time" in out
    with pytest.raises(InputError, match="no job to replay"):
        hpcsched.simulate(Workload(jobs=load_workload(trace).jobs, nodes=4, source="empty"), "fcfs")


def test_limits_are_the_engines():
    assert _core.MAX_NODES == 2**24
    assert _core.MAX_TIME == 1e11
    assert _core.inflated_cap(1 << 20) == 64 << 20
    with pytest.raises(OptionError):
        from hpcsched.workload.swf import check_machine_nodes

        check_machine_nodes(2**24 + 1)


def test_inflate_reads_multi_member_gzip_and_refuses_trailing_garbage(tmp_path):
    from hpcsched._io import read_bytes

    path = tmp_path / "m.json.gz"
    path.write_bytes(gzip.compress(b'{"a": ') + gzip.compress(b"1}") + b"\0\0\0")
    assert bytes(read_bytes(path)) == b'{"a": 1}'
    path.write_bytes(gzip.compress(b"{}") + b"junk")
    with pytest.raises(InputError, match="trailing data"):
        read_bytes(path)
    path.write_bytes(gzip.compress(b"{}" * 1000)[:-12])
    with pytest.raises(InputError, match="corrupt gzip data"):
        read_bytes(path)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["simulate", "TRACE", "--window", 2**64], "--window: must be an integer from 1 to"),
        (["generate", "markovian", "OUT.json", "--nodes", HUGE], "from 1 to 16,777,216"),
        (["generate", "markovian", "OUT.json", "--jobs", 2**40], "from 1 to 100,000,000"),
        (["generate", "mmk", "OUT.swf", "--servers", HUGE, "--jobs", 5], "from 1 to 16,777,216"),
    ],
)
def test_integers_past_their_range_are_option_errors(tmp_path, capsys, args, says):
    trace = swf(tmp_path / "t.swf", [job(1)])
    args = [
        trace if a == "TRACE" else tmp_path / a if isinstance(a, str) and "OUT" in a else a
        for a in args
    ]
    code, _, err = cli(args, capsys)
    assert code == 2, err
    assert says in err
    assert not list(tmp_path.glob("OUT*"))


def test_an_output_that_cannot_be_written_is_an_input_error(tmp_path, capsys):
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "file").write_text("")
    for target in (tmp_path / "folder.json", tmp_path / "file" / "x.json"):
        code, _, err = cli(["generate", "markovian", target, "--jobs", 10], capsys)
        assert code == 2, err
        assert "cannot write" in err and str(target) in err
    # missing folders are made, as for run directories
    code, _, err = cli(
        ["generate", "markovian", tmp_path / "a" / "b" / "w.json", "--jobs", 5], capsys
    )
    assert code == 0, err
    assert (tmp_path / "a" / "b" / "w.json").is_file()


def test_simulate_checks_its_out_before_the_run(tmp_path, monkeypatch):
    import hpcsched.run.replay

    trace = swf(tmp_path / "t.swf", [job(1)])
    (tmp_path / "file").write_text("")
    ran = []
    monkeypatch.setattr(hpcsched.run.replay, "_drive", lambda *a: ran.append(a))
    with pytest.raises(OptionError):
        hpcsched.simulate(trace, out=tmp_path / "file" / "run")
    assert ran == []  # refused before the engine ran
