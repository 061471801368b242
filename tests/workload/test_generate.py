"""Generated workloads and the Batsim/SWF writers."""

from __future__ import annotations

import gzip
import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from hpcsched.exceptions import OptionError
from hpcsched.workload.batsim import read_batsim_file
from hpcsched.workload.generate import (
    markovian,
    mmk,
    truncated_geometric_mean,
    write_batsim,
    write_swf,
)
from hpcsched.workload.model import JOB_COLUMNS, Workload

MARKOVIAN = "generated-markovian-3000.json.gz"


# ---------------------------------------------------------------------------------------------
# Markovian


def test_markovian_reproduces_the_bundled_file_exactly(traces_dir):
    raw = json.loads(gzip.decompress((traces_dir / "snf-icon-paper" / MARKOVIAN).read_bytes()))
    w = markovian()
    assert w.nodes == raw["nb_res"] == 64
    assert len(w) == len(raw["jobs"]) == 3000
    jobs = raw["jobs"]
    assert w.jobs["job_id"].tolist() == [j["job_id"] for j in jobs] == list(range(1, 3001))
    assert w.jobs["nodes"].tolist() == [j["res"] for j in jobs]
    # bit-for-bit equality of every float
    assert w.time_origin == jobs[0]["subtime"]
    assert (w.jobs["submit"].to_numpy() + w.time_origin).tolist() == [j["subtime"] for j in jobs]
    assert w.jobs["run_time"].tolist() == [j["runtime"] for j in jobs]
    assert w.jobs["requested_time"].tolist() == [j["reqtime"] for j in jobs]


def test_markovian_written_back_is_the_bundled_file(traces_dir, tmp_path):
    out = tmp_path / "m.json.gz"
    write_batsim(markovian(), out)
    bundled = gzip.decompress((traces_dir / "snf-icon-paper" / MARKOVIAN).read_bytes())
    assert gzip.decompress(out.read_bytes()) == bundled


def test_markovian_draw_recipe_by_hand():
    # the documented recipe, spelled out independently of the implementation
    rng = np.random.default_rng(7)
    sizes = np.minimum(rng.geometric(0.5, 50), 4)
    k = np.arange(1, 5)
    pmf = 0.5 * 0.5 ** (k - 1)  # 1/2, 1/4, 1/8, 1/16
    e_size = (k * pmf).sum() / pmf.sum()  # (1/2 + 2/4 + 3/8 + 4/16) / (15/16) = 26/15
    assert e_size == pytest.approx(26 / 15, rel=1e-15)
    gaps = rng.exponential(e_size * 100.0 / (4 * 0.5), 50)
    runs = rng.exponential(100.0, 50)
    reqs = rng.exponential(120.0, 50)
    w = markovian(n_jobs=50, nodes=4, mean_runtime=100.0, target_util=0.5, p=0.5, seed=7)
    arrivals = np.cumsum(gaps)
    assert w.time_origin == arrivals[0] == gaps[0]
    np.testing.assert_allclose(w.jobs["submit"], arrivals - arrivals[0], rtol=0, atol=1e-12)
    assert w.jobs["nodes"].tolist() == sizes.tolist()
    assert w.jobs["run_time"].tolist() == runs.tolist()
    assert w.jobs["requested_time"].tolist() == reqs.tolist()
    assert w.header["mean_interarrival"] == pytest.approx(26 / 15 * 100.0 / 2.0)


def test_truncated_geometric_mean():
    assert truncated_geometric_mean(0.5, 2) == pytest.approx(4 / 3, rel=1e-15)  # (.5+.5)/.75
    assert truncated_geometric_mean(1.0, 10) == 1.0
    assert truncated_geometric_mean(0.35, 1000) == pytest.approx(1 / 0.35, rel=1e-14)
    # the paper's mean interarrival, 803.5714 s
    mean = truncated_geometric_mean(0.35, 64) * 7200.0 / (64 * 0.40)
    assert mean == pytest.approx(803.5714, abs=1e-4)
    assert markovian(n_jobs=1).header["mean_interarrival"] == mean


def test_markovian_shape_and_determinism():
    a = markovian(n_jobs=500, nodes=8, seed=1)
    b = markovian(n_jobs=500, nodes=8, seed=1)
    c = markovian(n_jobs=500, nodes=8, seed=2)
    assert a.jobs.equals(b.jobs)
    assert not a.jobs.equals(c.jobs)
    assert a.jobs["nodes"].between(1, 8).all()
    assert (a.jobs["nodes"] == 8).any()  # P(G >= 8) = 0.65**7, about 5%: some clip at 8
    assert a.jobs["submit"].iloc[0] == 0.0
    assert a.jobs["submit"].is_monotonic_increasing
    assert a.jobs["requested_known"].all()
    assert (a.jobs["user"] == 0).all()
    assert a.format == "generated"
    assert a.source.startswith("markovian(n_jobs=500, nodes=8")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_jobs": 0},
        {"nodes": 0},
        {"nodes": 2.5},
        {"mean_runtime": 0},
        {"target_util": -0.1},
        {"p": 0},
        {"p": 1.5},
        {"mean_runtime": float("nan")},
    ],
)
def test_markovian_bad_arguments(kwargs):
    with pytest.raises(OptionError):
        markovian(**kwargs)


# ---------------------------------------------------------------------------------------------
# M/M/k


def test_mmk_statistics():
    w = mmk(100_000, servers=8, load=0.7, mean_runtime=3600.0, seed=3)
    assert w.nodes == 8 and len(w) == 100_000
    assert (w.jobs["nodes"] == 1).all()
    assert w.jobs["requested_time"].equals(w.jobs["run_time"])
    gaps = np.diff(w.jobs["submit"].to_numpy())
    # mean interarrival 3600 / (0.7 * 8) = 642.857 s; the standard error over 1e5 draws is 0.3%
    assert gaps.mean() == pytest.approx(3600 / 5.6, rel=0.02)
    assert w.jobs["run_time"].mean() == pytest.approx(3600.0, rel=0.02)
    # exponential: the standard deviation equals the mean
    assert gaps.std() == pytest.approx(3600 / 5.6, rel=0.03)
    assert w.warnings == []


def test_mmk_is_exponential():
    stats = pytest.importorskip("scipy.stats")
    w = mmk(20_000, servers=4, load=0.5, mean_runtime=100.0, seed=11)
    gaps = np.diff(w.jobs["submit"].to_numpy())
    assert stats.kstest(gaps, "expon", args=(0, 50.0)).pvalue > 1e-3
    assert stats.kstest(w.jobs["run_time"], "expon", args=(0, 100.0)).pvalue > 1e-3


def test_mmk_draw_order_by_hand():
    rng = np.random.default_rng(5)
    gaps = rng.exponential(10.0 / (0.5 * 2), 20)
    runs = rng.exponential(10.0, 20)
    w = mmk(20, servers=2, load=0.5, mean_runtime=10.0, seed=5)
    assert w.time_origin == gaps[0]
    assert w.jobs["run_time"].tolist() == runs.tolist()
    np.testing.assert_allclose(np.diff(w.jobs["submit"]), gaps[1:], rtol=1e-12)


def test_mmk_unstable_load_warns_and_bad_arguments_raise():
    assert "unstable" in mmk(10, servers=2, load=1.0).warnings[0]
    for kwargs in ({"load": 0}, {"servers": 0}, {"n_jobs": 0}, {"mean_runtime": -1}):
        args = {"n_jobs": 10, "servers": 2, "load": 0.5, **kwargs}
        with pytest.raises(OptionError):
            mmk(**args)


# ---------------------------------------------------------------------------------------------
# writers


def hand_workload() -> Workload:
    jobs = pd.DataFrame(
        {
            "job_id": [10, 11, 12],
            "submit": [0.0, 2.5, 7.0],
            "run_time": [100.0, 20.4, 0.0],
            "requested_time": [200.0, 20.4, 0.2],
            "nodes": [4, 1, 2],
            "user": [3, -1, 3],
            "requested_known": [True, False, True],
        }
    ).astype(JOB_COLUMNS)
    return Workload(jobs=jobs, nodes=8, source="hand", format="memory", time_origin=1000.0)


def test_write_batsim_content(tmp_path):
    out = tmp_path / "w.json"
    write_batsim(hand_workload(), out)
    doc = json.loads(out.read_text())
    assert doc["nb_res"] == 8
    assert doc["jobs"] == [
        {"job_id": 10, "res": 4, "subtime": 1000, "reqtime": 200, "runtime": 100,
         "profile": "100", "user_id": 3},
        {"job_id": 11, "res": 1, "subtime": 1002.5, "reqtime": 20.4, "runtime": 20.4,
         "profile": "100"},
        {"job_id": 12, "res": 2, "subtime": 1007, "reqtime": 0.2, "runtime": 0,
         "profile": "100", "user_id": 3},
    ]  # fmt: skip
    assert set(doc["profiles"]) == {"100"}
    assert [p.name for p in tmp_path.iterdir()] == ["w.json"]  # no temporary left behind


@pytest.mark.parametrize("write", [write_batsim, write_swf])
@pytest.mark.parametrize("value", [1e300, float("inf"), float("nan"), -2e11])
def test_writers_refuse_times_no_reader_takes_back(tmp_path, write, value):
    # SWF wrote -9223372036854775808 for 1e300, JSON an elided number ("3717...")
    w = hand_workload()
    w.jobs.loc[1, "run_time"] = value
    with pytest.raises(ValueError, match="cannot write run_time values beyond 1e\\+11 s"):
        write(w, tmp_path / "w.swf")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "name", ["DAS2-fs1-0-3000.json.gz", "SDSC-BLUE-2000-4.2-cln-0-3000.json.gz"]
)
def test_real_batsim_round_trip(traces_dir, tmp_path, name):
    source = traces_dir / "snf-icon-paper" / name
    w = read_batsim_file(source)
    out = tmp_path / name
    write_batsim(w, out)
    back = read_batsim_file(out)
    assert back.jobs.equals(w.jobs)
    assert (back.nodes, back.time_origin) == (w.nodes, w.time_origin)
    original = json.loads(gzip.decompress(source.read_bytes()))
    written = json.loads(gzip.decompress(out.read_bytes()))
    assert written["jobs"] == original["jobs"]


def test_generated_round_trip_through_batsim(tmp_path):
    w = mmk(1000, servers=4, load=0.8, seed=9)
    write_batsim(w, tmp_path / "m.json.gz")
    back = read_batsim_file(tmp_path / "m.json.gz")
    assert back.jobs.equals(w.jobs)
    assert back.time_origin == w.time_origin
    assert back.nodes == 4


def test_write_swf_content(tmp_path):
    out = tmp_path / "w.swf"
    write_swf(hand_workload(), out)
    lines = out.read_text().splitlines()
    header = [line for line in lines if line.startswith(";")]
    body = [line for line in lines if not line.startswith(";")]
    assert "; MaxNodes: 8" in header and "; MaxProcs: 8" in header
    assert "; MaxJobs: 3" in header
    assert "; Note: times rounded to whole seconds" in header
    assert lines[: len(header)] == header  # header first
    assert [" ".join(line.split()) for line in body] == [
        "10 1000 -1 100 4 -1 -1 4 200 -1 1 3 -1 -1 -1 -1 -1 -1",
        # 1002.5 rounds half up; 20.4 -> 20; the requested time was unknown -> -1
        "11 1003 -1 20 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1",
        # a known request of 0.2 s is written as 1 s, never 0 (which means unknown)
        "12 1007 -1 0 2 -1 -1 2 1 -1 1 3 -1 -1 -1 -1 -1 -1",
    ]
    assert all(len(line.split()) == 18 for line in body)


def test_write_swf_integral_times_and_procs_per_node(tmp_path):
    w = hand_workload()
    w.jobs = w.jobs.iloc[[0]].reset_index(drop=True)
    w.procs_per_node = 8
    w.header = {"UnixStartTime": 1_000_000_000, "TimeZoneString": "Europe/Stockholm"}
    out = tmp_path / "w.swf.gz"
    write_swf(w, out)
    text = gzip.decompress(out.read_bytes()).decode()
    assert "rounded" not in text
    assert "; UnixStartTime: 1000000000" in text
    assert "; TimeZoneString: Europe/Stockholm" in text
    assert "; MaxNodes: 8\n; MaxProcs: 64\n" in text
    last = text.splitlines()[-1]
    assert last.startswith("10 1000 -1 100 32 -1 -1 32 200 ")


def test_swf_round_trip(tmp_path):
    pytest.importorskip("hpcsched._core", reason="the compiled engine is needed to read SWF")
    from hpcsched.workload.swf import read_swf

    w = mmk(200, servers=4, load=0.8, seed=2)
    jobs = w.jobs.copy()
    for column in ("submit", "run_time"):
        jobs[column] = np.floor(jobs[column] + 0.5)  # SWF holds whole seconds
    jobs["requested_time"] = jobs["run_time"].clip(lower=1.0)
    w = Workload(jobs=jobs, nodes=4, time_origin=float(np.floor(w.time_origin + 0.5)))
    out = tmp_path / "m.swf.gz"
    write_swf(w, out)
    back = read_swf(out)
    assert back.nodes == 4
    assert back.time_origin == w.time_origin
    columns = list(JOB_COLUMNS)
    # SWF replays ties in (submit, id) order; ids increase with submission here
    pd.testing.assert_frame_equal(back.jobs[columns], w.jobs[columns], check_dtype=False)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("KTH-SP2-1996-2.1-cln.swf.gz", {}), ("lublin_256.swf.gz", {})],
)
def test_real_swf_round_trip(traces_dir, tmp_path, name, kwargs):
    pytest.importorskip("hpcsched._core", reason="the compiled engine is needed to read SWF")
    from hpcsched.workload.swf import read_swf

    w = read_swf(traces_dir / "pwa" / name, **kwargs)
    write_swf(w, tmp_path / "back.swf")
    back = read_swf(tmp_path / "back.swf", **kwargs)
    columns = [*JOB_COLUMNS, "procs", "requested_known"]
    pd.testing.assert_frame_equal(back.jobs[columns], w.jobs[columns])
    assert (back.nodes, back.time_origin) == (w.nodes, w.time_origin)
    assert back.header.get("UnixStartTime") == w.header.get("UnixStartTime")
    assert "rounded" not in (tmp_path / "back.swf").read_text()[:2000]


# ---------------------------------------------------------------------------------------------
# parameters that would draw times the engine cannot represent


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["markovian", "--mean-runtime", "1e300"], "--mean-runtime"),
        (["markovian", "--target-util", "1e-300"], "--target-util"),
        (["mmk", "--load", "1e-300"], "--load"),
        (["mmk", "--load", "1e-8"], "--load"),  # finite, but past 1e11 s after 100 jobs
        # gaps of about 1e307 s: their sum overflows
        (["mmk", "--servers", "1", "--mean-runtime", "1e9", "--load", "1e-298"], "--load"),
    ],
)
@pytest.mark.parametrize("name", ["w.json", "w.swf.gz"])
def test_generators_refuse_unrepresentable_times_and_write_nothing(
    tmp_path, capsys, args, option, name
):
    from hpcsched.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nor a numpy overflow warning on the way
        code = main(["generate", args[0], str(tmp_path / name), "--jobs", "100", *args[1:]])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"error: {option}: ") and "past the 1e+11 s" in err
    assert list(tmp_path.iterdir()) == []  # not even a staging file


MAX_NODES = 2**24  # _core.MAX_NODES, kept literal: a bound of the test, not of the code
#: every float (a third of them any float at all, nan and negatives included), the odd ones often
odd_floats = st.one_of(
    st.floats(),
    st.sampled_from([1e-300, 5e-324, 1e-8, 1e8, 1e10, 1e11, 1e300, 1.0, -0.0]),
)
any_positive = st.one_of(st.floats(min_value=0.0, exclude_min=True), odd_floats)
any_share = st.one_of(st.floats(min_value=0.0, max_value=1.0, exclude_min=True), odd_floats)
#: job counts and sizes small enough to write quickly (their bounds are tested above), seeds
#: past both bounds
any_jobs = st.integers(1, 60)
any_seed = st.integers(-1, 2**64)
suffixes = st.sampled_from([".json", ".swf", ".json.gz", ".swf.gz"])


def written_and_read_back(tmp_path_factory, make, suffix, n_jobs, nodes):
    """Generates, writes and reads back with the project's reader; or the generator refuses
    with an OptionError and nothing is written."""
    from hpcsched.workload import load_workload

    folder = tmp_path_factory.mktemp("gen")
    path = folder / f"w{suffix}"
    try:
        workload = make()
    except OptionError as exc:
        assert len(str(exc)) < 600
        event(f"refused: {exc.option}")
        return
    event("written")
    write = write_batsim if ".json" in suffix else write_swf
    write(workload, path)
    back = load_workload(path)
    assert len(back) == len(workload) == n_jobs
    assert back.nodes == nodes
    assert [p.name for p in folder.iterdir()] == [path.name]


GENERATOR_SETTINGS = settings(
    max_examples=int(os.environ.get("HPCSCHED_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@GENERATOR_SETTINGS
@given(
    n_jobs=any_jobs,
    nodes=st.integers(1, 5000),  # E[size] costs O(nodes): 2.4 s at MAX_NODES
    mean_runtime=any_positive,
    target_util=any_share,
    p=any_share,
    seed=any_seed,
    suffix=suffixes,
)
def test_every_markovian_file_reads_back(
    tmp_path_factory, n_jobs, nodes, mean_runtime, target_util, p, seed, suffix
):
    written_and_read_back(
        tmp_path_factory,
        lambda: markovian(n_jobs, nodes, mean_runtime, target_util, p, seed),
        suffix,
        n_jobs,
        nodes,
    )


@GENERATOR_SETTINGS
@given(
    n_jobs=any_jobs,
    servers=st.one_of(st.integers(1, 5000), st.just(MAX_NODES)),
    load=any_positive,
    mean_runtime=any_positive,
    seed=any_seed,
    suffix=suffixes,
)
def test_every_mmk_file_reads_back(
    tmp_path_factory, n_jobs, servers, load, mean_runtime, seed, suffix
):
    written_and_read_back(
        tmp_path_factory,
        lambda: mmk(n_jobs, servers, load, mean_runtime, seed),
        suffix,
        n_jobs,
        servers,
    )
