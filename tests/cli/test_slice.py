"""``simulate --slice`` and ``compare --slice`` (issue 27, point 5): part of a trace, as a
sweep file's ``slice``, by the same code (``experiment.slice_workload``)."""

from __future__ import annotations

import json

import pytest
from tests.conftest import run_cli as run


@pytest.fixture
def trace(tmp_path, capsys):
    path = tmp_path / "m.json"
    assert run(["generate", "markovian", path, "--jobs", "200", "--seed", "3"], capsys)[0] == 0
    return path


def test_simulate_replays_the_slice_and_its_summary_records_it(
    tmp_path, trace, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["simulate", trace, "--slice", "50:150"], capsys)
    assert code == 0, err
    run_dir = tmp_path / "runs" / "m-jobs50-150-fcfs"  # the default name tells slices apart
    assert "m.json[50:150]" in out and str(run_dir.relative_to(tmp_path)) in out
    info = json.loads((run_dir / "summary.json").read_text())
    assert info["inputs"]["trace"].endswith("m.json[50:150]")
    assert info["workload"]["jobs"] == 100
    assert info["workload"]["time_origin"] > 0  # its clock restarts at job 50's submission
    # to the end, and from the start
    assert run(["simulate", trace, "--slice", "150:", "--out", "a"], capsys)[0] == 0
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["workload"]["jobs"] == 50
    assert run(["simulate", trace, "--slice", ":20", "--out", "b"], capsys)[0] == 0
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["workload"]["jobs"] == 20


def test_compare_replays_the_same_slice_as_simulate(tmp_path, trace, capsys):
    alone = tmp_path / "alone"
    assert (
        run(["simulate", trace, "--policy", "sjf", "--slice", "20:120", "--out", alone], capsys)[0]
        == 0
    )
    together = tmp_path / "cmp"
    code, _, err = run(
        ["compare", trace, "--policy", "fcfs", "--policy", "sjf", "--slice", "20:120",
         "--processes", "1", "--out", together],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    one = json.loads((alone / "summary.json").read_text())
    other = json.loads((together / "sjf-easy" / "summary.json").read_text())
    assert other["inputs"]["trace"] == one["inputs"]["trace"]
    assert other["wait"] == one["wait"]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("abc", "give FIRST:END job indices (e.g. 0:3000, 12000: or :3000), not 'abc'"),
        ("100", "give FIRST:END job indices (e.g. 0:3000, 12000: or :3000), not '100'"),
        ("1.5:3", "give FIRST:END job indices (e.g. 0:3000, 12000: or :3000), not '1.5:3'"),
        ("-3:4", "FIRST must be 0 or more and END larger than FIRST, not '-3:4'"),
        ("10:10", "FIRST must be 0 or more and END larger than FIRST, not '10:10'"),
        ("150:300", "the slice [150:300] of {trace} ends past its last job (it has 200 jobs, "
         "0 to 199)"),
        ("300:", "the slice [300:] of {trace} is empty (it has 200 jobs)"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_a_bad_slice_is_one_line_naming_the_option(tmp_path, trace, capsys, command, value, says):
    args = [command, trace, f"--slice={value}", "--out", tmp_path / "out"]
    if command == "compare":
        args += ["--policy", "fcfs", "--processes", "1"]
    code, out, err = run(args, capsys)
    assert code == 2
    assert err == f"error: --slice: {says.format(trace=trace)}\n"
    assert out == ""
    assert not (tmp_path / "out").exists()
