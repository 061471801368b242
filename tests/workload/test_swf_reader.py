"""The SWF reader: every rule of DESIGN §3.1."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from hpcsched.exceptions import InputError, OptionError
from hpcsched.workload import load_workload
from hpcsched.workload.swf import read_swf


def line(job_id, submit, run, alloc, req_procs, req_time, *, user=3, wait=5, extra=""):
    fields = [
        job_id,
        submit,
        wait,
        run,
        alloc,
        -1,
        -1,
        req_procs,
        req_time,
        -1,
        1,
        user,
        1,
        -1,
        1,
        1,
        -1,
        -1,
    ]
    return " ".join(str(f) for f in fields) + extra + "\n"


def write(tmp_path, text, name="t.swf"):
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_header_with_text_after_the_number_and_unsorted_submits(tmp_path):
    text = (
        "; Version: 2.2\n; MaxNodes: 338 (batch partition)\n; MaxProcs: 338\n"
        "; UnixStartTime: 1000\n; Note: first\n; Note: second\n"
        + line(3, 50, 10, 4, 4, 20)
        + line(1, 20, 10, 4, 4, 20)
        + line(2, 20, 10, 4, 4, 20)
    )
    w = load_workload(write(tmp_path, text))
    assert w.nodes == 338
    assert w.header["Note"] == "first\nsecond"
    # (submit, id) order; time 0 at the first submission; wall clock kept.
    assert w.jobs["job_id"].tolist() == [1, 2, 3]
    assert w.jobs["submit"].tolist() == [0.0, 0.0, 30.0]
    assert w.time_origin == 20.0
    assert w.unix_start_time == 1020.0


def test_no_header_machine_is_the_largest_job_and_extra_columns_are_ignored(tmp_path):
    text = line(1, 0, 10, 7, -1, 20, extra=" 99 98") + line(2, 5, 10, 3, 3, 20)
    w = load_workload(write(tmp_path, text))
    assert w.nodes == 7
    # requested processors -1: the allocated ones are the size
    assert w.jobs["nodes"].tolist() == [7, 3]


def test_skips_are_counted_by_reason(tmp_path):
    text = "; MaxProcs: 8\n" + "".join(
        [
            line(1, 0, 10, 2, 2, 20),
            line(2, 1, -1, 2, 2, 20),  # unknown run time
            line(3, 2, 10, 0, -1, 20),  # size 0
            line(4, 3, 10, 9, 9, 20),  # larger than the machine
            line(5, 4, 30, 2, 2, -1),  # unknown requested time: estimate = run time
        ]
    )
    w = load_workload(write(tmp_path, text))
    assert w.skipped == {
        "unknown run time": 1,
        "non-positive size": 1,
        "larger than machine": 1,
        "malformed line": 0,
    }
    assert w.jobs["job_id"].tolist() == [1, 5]
    assert w.jobs["requested_time"].tolist() == [20.0, 30.0]
    assert w.jobs["requested_known"].tolist() == [True, False]
    assert any("no requested time" in warning for warning in w.warnings)


def test_strict_turns_oversized_jobs_into_an_error_naming_the_line(tmp_path):
    text = "; MaxProcs: 8\n" + line(1, 0, 10, 2, 2, 20) + line(4, 3, 10, 9, 9, 20)
    with pytest.raises(InputError) as info:
        load_workload(write(tmp_path, text), strict=True)
    assert info.value.line == 3
    assert "more than the machine" in str(info.value)


def test_procs_per_node_converts_with_ceiling_and_auto_reads_the_header(tmp_path):
    text = "; MaxNodes: 4\n; MaxProcs: 32\n" + line(1, 0, 10, 9, 9, 20) + line(2, 1, 10, 8, 8, 20)
    w = load_workload(write(tmp_path, text), procs_per_node="auto")
    assert w.procs_per_node == 8
    assert w.nodes == 4
    assert w.jobs["nodes"].tolist() == [2, 1]
    # procs are nodes by default: MaxProcs is the machine
    assert load_workload(write(tmp_path, text)).nodes == 32
    # --nodes wins over the header
    assert load_workload(write(tmp_path, text), nodes=100).nodes == 100


def test_auto_without_header_is_an_option_error(tmp_path):
    with pytest.raises(OptionError, match="MaxProcs and MaxNodes"):
        load_workload(write(tmp_path, line(1, 0, 10, 2, 2, 20)), procs_per_node="auto")


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ("1 0 5 abc 2 -1 -1 2 20 -1 1 3 1 -1 1 1 -1 -1\n", "line 2, field 4 (run time)"),
        ("1 0 5 10 2 -1 -1 2\n", "line 2"),
        ("1 0 5 10 2 -1 -1 2 2O -1 1 3 1 -1 1 1 -1 -1\n", "line 2, field 9 (requested time)"),
    ],
)
def test_malformed_lines_name_file_line_and_field(tmp_path, bad, where):
    path = write(tmp_path, line(1, 0, 10, 2, 2, 20) + bad)
    with pytest.raises(InputError) as info:
        load_workload(path)
    assert str(info.value).startswith(f"{path}, {where}")


def test_lenient_skips_and_counts_malformed_lines(tmp_path):
    text = line(1, 0, 10, 2, 2, 20) + "garbage\n" + line(2, 1, 10, 2, 2, 20)
    w = load_workload(write(tmp_path, text), lenient=True)
    assert len(w) == 2
    assert w.skipped["malformed line"] == 1


def test_gzip_and_plain_read_the_same(tmp_path):
    text = "; MaxProcs: 4\n" + line(1, 0, 10, 2, 2, 20) + line(2, 7, 11.5, 1, 1, 20)
    plain = load_workload(write(tmp_path, text))
    packed = load_workload(write(tmp_path, text, "t.swf.gz"))
    assert plain.jobs.equals(packed.jobs)
    assert plain.jobs["run_time"].tolist() == [10.0, 11.5]


def test_the_recorded_wait_is_kept_in_replay_order_and_nan_when_unknown(tmp_path):
    text = (
        line(3, 50, 10, 4, 4, 20, wait=0)
        + line(1, 20, 10, 4, 4, 20, wait=120)
        + line(2, 20, 10, 4, 4, 20, wait=-1)
        + line(4, 60, 10, 4, 4, 20, wait=-2)  # any negative wait is unknown
        + line(5, 70, -1, 4, 4, 20, wait=9)  # unknown run time: skipped, wait and all
        + line(6, 80, 10, 4, 4, 20, wait=7.5)
    )
    w = load_workload(write(tmp_path, text))
    assert w.jobs["job_id"].tolist() == [1, 2, 3, 4, 6]
    wait = w.jobs["recorded_wait"]
    assert wait.dtype == np.float64
    assert wait.isna().tolist() == [False, True, False, True, False]
    assert wait.dropna().tolist() == [120.0, 0.0, 7.5]
    assert list(w.jobs.columns)[-1] == "recorded_wait"  # last, after what the site recorded
    assert list(w.jobs.columns)[-6:-1] == ["status", "group", "queue", "partition", "line"]


def test_queue_and_partition_names_in_the_forms_real_headers_write(tmp_path):
    header = (
        "; Queues: these are actually LoadLeveler classes\n"  # not a name line
        "; MaxQueues: 24\n"
        "; Queue:  1 DSI      \n"  # CTC
        "; Queue:  0  interactive    \n"  # SDSC-BLUE
        "; Queue:  2  [fque:1]    \n"  # HPC2N: a colon in the name
        ";         Queue: 3 - All jobs submitted to same (and only) queue\n"  # DAS2
        "; Queue:  4  \n"  # Curie: a number without a name
        "; Queue:  1 other\n"  # a number named twice: the first name stays
        "; MaxPartitions: 33\n"
        "; Partition:  7  test,batch\n"
        "; Partition: 13  -1\n"  # a name that looks like a number, no "- " before it
        "; Partition: 18  z+i5U=:\n"
    )
    w = load_workload(write(tmp_path, header + line(1, 0, 10, 2, 2, 20)))
    assert w.queue_names == {
        1: "DSI",
        0: "interactive",
        2: "[fque:1]",
        3: "All jobs submitted to same (and only) queue",
    }
    assert w.partition_names == {7: "test,batch", 13: "-1", 18: "z+i5U=:"}
    assert w.header["MaxQueues"] == 24


def test_the_jobs_the_archive_removed_are_summed_from_the_header_comments(tmp_path):
    header = (
        ";\n;       The filters used to produce it were\n"
        ";         user=2 (305178 jobs removed)\n"
        ";  submit<=2012-02-03 00:00:00 (272392 jobs removed)\n"
        ";         job<=1 (1 job removed)\n"
        ";\n"
    )
    w = load_workload(write(tmp_path, header + line(1, 0, 10, 2, 2, 20)))
    assert w.removed_by_archive == 305178 + 272392 + 1
    plain = load_workload(write(tmp_path, "; Note: no filter\n" + line(1, 0, 10, 2, 2, 20)))
    assert plain.removed_by_archive is None
    assert plain.queue_names == {} and plain.partition_names == {}


@pytest.mark.parametrize(
    ("name", "removed"),
    [
        # the figures of each header's "(N jobs removed)" lines, added by hand
        ("KTH-SP2-1996-2.1-cln", 14),
        ("CTC-SP2-1996-3.1-cln", 2080),
        ("HPC2N-2002-2.2-cln", 305178 + 12333 + 6984 + 5),
        ("SDSC-BLUE-2000-4.2-cln", 477 + 1468 + 5181 + 8),
        ("CEA-Curie-2011-2.1-cln", 272392 + 28878 + 118014 + 37905 + 3123),
        ("DAS2-fs1-2003-1", None),
        ("ALCF-Theta-2022", None),
        ("lublin_256", None),
    ],
)
def test_removed_by_archive_on_the_real_traces(traces_dir, name, removed):
    w = read_swf(traces_dir / "pwa" / f"{name}.swf.gz")
    assert w.removed_by_archive == removed


def test_real_trace_names_and_waits(traces_dir):
    ctc = read_swf(traces_dir / "pwa" / "CTC-SP2-1996-3.1-cln.swf.gz")
    assert ctc.queue_names == {1: "DSI", 2: "astro", 3: "piofs", 4: "informix"}
    assert ctc.jobs["recorded_wait"].notna().all()
    curie = read_swf(traces_dir / "pwa" / "CEA-Curie-2011-2.1-cln.swf.gz")
    assert curie.queue_names == {}  # "; Queue:  1  " names nothing
    assert len(curie.partition_names) == 33 and curie.partition_names[7] == "test,batch"
    lublin = read_swf(traces_dir / "pwa" / "lublin_256.swf.gz")
    assert lublin.jobs["recorded_wait"].isna().all()  # a model's trace: no wait recorded


def test_real_trace_counts(traces_dir):
    w = load_workload(traces_dir / "pwa" / "SDSC-BLUE-2000-4.2-cln.swf.gz", procs_per_node="auto")
    assert w.nodes == 144
    assert len(w) + sum(w.skipped.values()) == 243_306
    assert w.skipped["unknown run time"] > 0
    assert np.all(np.diff(w.jobs["submit"].to_numpy()) >= 0)
    ctc = load_workload(traces_dir / "pwa" / "CTC-SP2-1996-3.1-cln.swf.gz")
    assert ctc.nodes == 338
