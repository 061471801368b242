"""Batsim / SPARS JSON reader."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from hpcsched.exceptions import InputError, OptionError
from hpcsched.workload.batsim import parse_batsim, read_batsim, read_batsim_file

SNF_FILES = {
    "DAS2-fs1-0-3000.json.gz": 64,
    "DAS2-fs2-0-3000.json.gz": 64,
    "DAS2-fs3-0-3000.json.gz": 64,
    "DAS2-fs4-0-3000.json.gz": 64,
    "SDSC-BLUE-2000-4.2-cln-0-3000.json.gz": 1152,
    "generated-markovian-3000.json.gz": 64,
}


def doc(jobs, nb_res=64, **extra):
    return {"nb_res": nb_res, "jobs": jobs, **extra}


def job(job_id, subtime, res=1, runtime=10, reqtime=20, **extra):
    out = {"job_id": job_id, "res": res, "subtime": subtime, "runtime": runtime}
    if reqtime is not None:
        out["reqtime"] = reqtime
    out.update(extra)
    return out


# ---------------------------------------------------------------------------------------------
# real files


@pytest.mark.parametrize("name", sorted(SNF_FILES))
def test_snf_icon_workloads_load_completely(traces_dir, name):
    path = traces_dir / "snf-icon-paper" / name
    w = read_batsim_file(path)
    raw = json.loads(gzip.decompress(path.read_bytes()))["jobs"]

    assert len(w) == 3000
    assert w.nodes == SNF_FILES[name]
    assert w.skipped == {}
    assert w.warnings == []
    assert w.format == "batsim"
    assert w.source == str(path)
    # these files list jobs in submission order: replay order is file order
    assert w.jobs["job_id"].tolist() == [j["job_id"] for j in raw]
    assert w.time_origin == raw[0]["subtime"]
    np.testing.assert_array_equal(
        w.jobs["submit"].to_numpy() + w.time_origin, [j["subtime"] for j in raw]
    )
    assert w.jobs["nodes"].tolist() == [j["res"] for j in raw]
    assert w.jobs["run_time"].tolist() == [j["runtime"] for j in raw]
    assert w.jobs["requested_time"].tolist() == [j["reqtime"] for j in raw]
    assert w.jobs["user"].tolist() == [j["user_id"] for j in raw]
    assert w.jobs["requested_known"].all()
    assert w.jobs["submit"].iloc[0] == 0.0


def test_first_jobs_of_real_files_by_hand(traces_dir):
    das = read_batsim_file(traces_dir / "snf-icon-paper" / "DAS2-fs1-0-3000.json.gz")
    first = das.jobs.iloc[0]
    assert (first.job_id, first.nodes, first.submit) == (1, 8, 0.0)
    assert (first.requested_time, first.run_time, first.user) == (7200.0, 1924.0, 1)
    assert das.jobs.iloc[1].submit == 1962.0

    sdsc = read_batsim_file(traces_dir / "snf-icon-paper" / "SDSC-BLUE-2000-4.2-cln-0-3000.json.gz")
    first = sdsc.jobs.iloc[0]
    assert (first.job_id, first.nodes, first.run_time, first.requested_time) == (
        9,
        256,
        50866.0,
        64800.0,
    )
    assert sdsc.nodes == 1152

    gen = read_batsim_file(traces_dir / "snf-icon-paper" / "generated-markovian-3000.json.gz")
    assert gen.time_origin == 215.9921037798388
    assert gen.jobs["submit"].iloc[1] == 249.6460712159409 - 215.9921037798388
    assert gen.jobs["run_time"].iloc[0] == 536.9567063892769


# ---------------------------------------------------------------------------------------------
# ordering and time origin


def test_replay_order_is_submit_then_file_order_not_id():
    w = read_batsim(doc([job(5, 10), job(3, 10), job(1, 20), job(2, 5)]), "x.json")
    assert w.jobs["job_id"].tolist() == [2, 5, 3, 1]
    assert w.jobs["submit"].tolist() == [0.0, 5.0, 5.0, 15.0]
    assert w.time_origin == 5.0
    assert list(w.jobs.index) == [0, 1, 2, 3]


def test_float_times_are_kept():
    w = read_batsim(doc([job(1, 0.25, runtime=1.5, reqtime=2.75)]), "x.json")
    assert w.time_origin == 0.25
    row = w.jobs.iloc[0]
    assert (row.submit, row.run_time, row.requested_time) == (0.0, 1.5, 2.75)


def test_time_origin_is_first_kept_submission():
    # the earliest job is skipped (unknown run time): time 0 is the next one
    w = read_batsim(doc([job(1, 100, runtime=-1), job(2, 150), job(3, 170)]), "x.json")
    assert w.time_origin == 150.0
    assert w.jobs["submit"].tolist() == [0.0, 20.0]


def test_dtypes_and_columns():
    w = read_batsim(doc([job(1, 0)]), "x.json")
    assert list(w.jobs.columns) == [
        "job_id",
        "submit",
        "run_time",
        "requested_time",
        "nodes",
        "user",
        "requested_known",
    ]
    assert [str(t) for t in w.jobs.dtypes] == [
        "int64",
        "float64",
        "float64",
        "float64",
        "int64",
        "int64",
        "bool",
    ]


def test_empty_job_list():
    w = read_batsim(doc([]), "x.json")
    assert len(w) == 0
    assert w.nodes == 64
    assert w.time_origin == 0.0
    assert w.skipped == {}


# ---------------------------------------------------------------------------------------------
# skips and estimates


def test_skips_are_counted_by_reason():
    jobs = [
        job(1, 0),
        job(2, 1, runtime=-1),
        job(3, 2, runtime=None),
        {"job_id": 4, "res": 1, "subtime": 3},  # no runtime at all
        job(5, 4, res=0),
        job(6, 5, res=-2),
        job(7, 6, res=65),
        job(8, 7, res=64),
        job(9, 8, res=0, runtime=-1),  # counted once, under the first reason
    ]
    w = read_batsim(doc(jobs), "x.json")
    assert w.jobs["job_id"].tolist() == [1, 8]
    assert w.skipped == {"unknown run time": 4, "non-positive size": 2, "larger than machine": 1}


def test_zero_run_time_is_kept():
    w = read_batsim(doc([job(1, 0, runtime=0)]), "x.json")
    assert len(w) == 1 and w.skipped == {}


def test_strict_raises_on_job_larger_than_machine():
    jobs = [job(1, 0), job(2, 1, res=100)]
    with pytest.raises(InputError) as info:
        read_batsim(doc(jobs), "big.json", strict=True)
    assert info.value.path == "big.json"
    assert info.value.field == "jobs[1].res"
    assert "100" in info.value.reason and "64" in info.value.reason


def test_strict_ignores_jobs_already_skipped_for_unknown_run_time():
    w = read_batsim(doc([job(1, 0), job(2, 1, res=100, runtime=-1)]), "x.json", strict=True)
    assert w.skipped == {"unknown run time": 1}


def test_nodes_override_replaces_nb_res():
    jobs = [job(1, 0, res=100), job(2, 1, res=20)]
    w = read_batsim(doc(jobs), "x.json", nodes=128)
    assert w.nodes == 128 and len(w) == 2
    w = read_batsim(doc(jobs), "x.json", nodes=16)
    assert w.nodes == 16 and len(w) == 0
    assert w.skipped == {"larger than machine": 2}


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_nodes_override(bad):
    with pytest.raises(OptionError):
        read_batsim(doc([job(1, 0)]), "x.json", nodes=bad)


def test_missing_nb_res_uses_largest_job_and_warns():
    w = read_batsim({"jobs": [job(1, 0, res=3), job(2, 0, res=12), job(3, 0, res=7)]}, "x.json")
    assert w.nodes == 12
    assert w.warnings == ["no 'nb_res': the machine size is the largest job (12 nodes)"]
    assert w.header["nb_res"] is None


def test_unknown_requested_time_uses_run_time_and_warns():
    jobs = [
        job(1, 0, runtime=10, reqtime=None),
        job(2, 1, runtime=20, reqtime=0),
        job(3, 2, runtime=30, reqtime=-1),
        job(4, 3, runtime=40, reqtime=50),
        {"id": 5, "res": 1, "subtime": 4, "runtime": 60, "walltime": 70},
        job(6, 5, runtime=80, reqtime=None, walltime=-1),
    ]
    w = read_batsim(doc(jobs), "x.json")
    assert w.jobs["requested_time"].tolist() == [10.0, 20.0, 30.0, 50.0, 70.0, 80.0]
    assert w.jobs["requested_known"].tolist() == [False, False, False, True, True, False]
    assert w.warnings == ["4 jobs have no requested time; their estimate is their run time"]


def test_warning_counts_only_kept_jobs():
    jobs = [job(1, 0, reqtime=None), job(2, 1, reqtime=None, runtime=-1)]
    w = read_batsim(doc(jobs), "x.json")
    assert w.warnings == ["1 jobs have no requested time; their estimate is their run time"]


# ---------------------------------------------------------------------------------------------
# ids, users, header


def test_string_ids_keep_their_numeric_part():
    jobs = [
        {"id": "w0!12", "res": 1, "subtime": 0, "runtime": 1},
        {"id": "job-007", "res": 1, "subtime": 1, "runtime": 1},
        {"id": "abc", "res": 1, "subtime": 2, "runtime": 1},
        {"id": "42", "res": 1, "subtime": 3, "runtime": 1},
        {"id": "w1!x3y", "res": 1, "subtime": 4, "runtime": 1},
        {"job_id": 7.0, "res": 1, "subtime": 5, "runtime": 1},
    ]
    w = read_batsim(doc(jobs), "x.json")
    assert w.jobs["job_id"].tolist() == [12, 7, 2, 42, 3, 7]
    assert "2 kept jobs share their job id with another job" in w.warnings


def test_users():
    jobs = [
        job(1, 0, user_id=5),
        job(2, 1, user="alice"),
        job(3, 2),
        job(4, 3, user="bob"),
        job(5, 4, user="alice"),
        job(6, 5, user_id="3"),
    ]
    w = read_batsim(doc(jobs), "x.json")
    # strings numbered from max numeric id + 1 = 6, in order of first appearance
    assert w.jobs["user"].tolist() == [5, 6, -1, 7, 6, 3]


def test_header_keeps_scalar_top_level_keys():
    w = read_batsim(doc([job(1, 0)], version=2, command="gen", profiles={"1": {}}), "x.json")
    assert w.header == {"nb_res": 64, "version": 2, "command": "gen"}


# ---------------------------------------------------------------------------------------------
# errors


def test_invalid_json_names_the_line():
    text = '{\n  "nb_res": 4,\n  "jobs": [ {"job_id": 1,, } ]\n}'
    with pytest.raises(InputError) as info:
        read_batsim(text, "bad.json")
    assert info.value.path == "bad.json"
    assert info.value.line == 3
    assert "invalid JSON" in str(info.value)


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ([1, 2], None),
        ({"nb_res": 4}, "jobs"),
        ({"nb_res": 4, "jobs": {"a": 1}}, "jobs"),
        ({"nb_res": 4, "jobs": [job(1, 0), 3]}, "jobs[1]"),
        ({"nb_res": 0, "jobs": []}, "nb_res"),
        ({"nb_res": 4.5, "jobs": []}, "nb_res"),
        ({"nb_res": "4", "jobs": []}, "nb_res"),
    ],
)
def test_bad_structure(obj, field):
    with pytest.raises(InputError) as info:
        read_batsim(obj, "s.json")
    assert info.value.field == field
    assert info.value.path == "s.json"


@pytest.mark.parametrize(
    ("bad_job", "field"),
    [
        ({"job_id": 2, "subtime": 0, "runtime": 1}, "jobs[1].res"),
        ({"job_id": 2, "res": 1, "runtime": 1}, "jobs[1].subtime"),
        ({"res": 1, "subtime": 0, "runtime": 1}, "jobs[1].job_id"),
        (job(2, 0, res="8"), "jobs[1].res"),
        (job(2, 0, res=2.5), "jobs[1].res"),
        (job(2, 0, res=True), "jobs[1].res"),
        (job(2, "soon"), "jobs[1].subtime"),
        (job(2, float("nan")), "jobs[1].subtime"),
        (job(2, 0, runtime="long"), "jobs[1].runtime"),
        (job(2, 0, runtime=float("inf")), "jobs[1].runtime"),
        (job(2, 0, reqtime="1h"), "jobs[1].reqtime"),
        ({"job_id": 2, "res": 1, "subtime": 0, "runtime": 1, "walltime": []}, "jobs[1].walltime"),
        (job(2.5, 0), "jobs[1].job_id"),
        (job([2], 0), "jobs[1].job_id"),
        (job(2, 0, user_id=[1]), "jobs[1].user_id"),
    ],
)
def test_bad_job_fields(bad_job, field):
    with pytest.raises(InputError) as info:
        read_batsim(doc([job(1, 0), bad_job]), "j.json")
    assert info.value.field == field
    assert info.value.path == "j.json"
    assert f"field {field}" in str(info.value)


def test_nan_in_json_text_is_an_error():
    text = '{"nb_res": 4, "jobs": [{"job_id": 1, "res": 1, "subtime": NaN, "runtime": 1}]}'
    with pytest.raises(InputError) as info:
        read_batsim(text, "n.json")
    assert info.value.field == "jobs[0].subtime"


# ---------------------------------------------------------------------------------------------
# files and bytes


def test_plain_gzip_and_bytes_agree(tmp_path):
    data = json.dumps(doc([job(1, 5, res=2), job(2, 3, res=4)])).encode()
    plain = tmp_path / "w.json"
    plain.write_bytes(data)
    packed = tmp_path / "w.json.gz"
    packed.write_bytes(gzip.compress(data))
    a = read_batsim_file(plain)
    b = read_batsim_file(str(packed))
    c = parse_batsim(data, "mem")
    d = read_batsim(data.decode(), "mem")
    for w in (b, c, d):
        assert w.jobs.equals(a.jobs)
    assert a.jobs["job_id"].tolist() == [2, 1]
    assert b.source == str(packed)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError) as info:
        read_batsim_file(tmp_path / "nope.json")
    assert info.value.path == str(tmp_path / "nope.json")


def test_corrupt_gzip_is_an_input_error(tmp_path):
    path = tmp_path / "c.json.gz"
    path.write_bytes(gzip.compress(b'{"jobs": []}')[:-6])
    with pytest.raises(InputError):
        read_batsim_file(path)


def test_non_utf8_is_an_input_error():
    with pytest.raises(InputError):
        parse_batsim(b'{"jobs": ["\xff"]}', "u.json")
