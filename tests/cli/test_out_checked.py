"""``--out`` and ``--report`` are checked before anything runs (issue 11).

An output folder that cannot be written used to be found only after the run (a 34 s run, then
exit 2; hours for MARS), and a path through a file was an "internal error". Now: exit 2, one
line naming the path, and the simulation never starts.
"""

from __future__ import annotations

import importlib
import os

import pytest
from tests.conftest import run_cli as run


@pytest.fixture
def trace(tmp_path, capsys):
    path = tmp_path / "m.json"
    assert run(["generate", "markovian", path, "--jobs", "100", "--seed", "3"], capsys)[0] == 0
    return path


@pytest.fixture
def started(monkeypatch):
    """Records every run that starts (simulate, compare, sweep), then runs it."""
    calls = []

    def spy(module_name, name):
        module = importlib.import_module(module_name)
        real = getattr(module, name)

        def recorded(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, recorded)

    spy("hpcsched.run", "simulate")  # the command imports it when it runs
    spy("hpcsched.comparison", "run_configs")
    spy("hpcsched.sweep", "run_configs")
    return calls


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not a folder")
    return path


def refused(code, err, *names):
    """Exit 2, one line on stderr naming every path, no traceback, no internal error."""
    text = " ".join(err.split())
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    for name in names:
        assert str(name) in text, (name, err)


def test_simulate_checks_out_before_running(tmp_path, trace, a_file, started, capsys):
    code, _, err = run(["simulate", trace, "--out", a_file / "run"], capsys)
    refused(code, err, a_file / "run", a_file)

    busy = tmp_path / "thesis"  # an existing folder that is not a run directory
    busy.mkdir()
    (busy / "chapter1.tex").write_text("x")
    code, _, err = run(["simulate", trace, "--out", busy], capsys)
    refused(code, err, busy, "--out")
    assert (busy / "chapter1.tex").exists()
    assert started == []  # found before the run, not after it

    # missing folders are created, as documented
    code, _, err = run(["simulate", trace, "--out", tmp_path / "a" / "b" / "run"], capsys)
    assert code == 0 and (tmp_path / "a" / "b" / "run" / "summary.json").is_file(), err


def test_compare_checks_out_and_report_before_running(tmp_path, trace, a_file, started, capsys):
    policies = ["--policy", "fcfs", "--policy", "sjf"]
    code, _, err = run(["compare", trace, *policies, "--out", a_file / "cmp"], capsys)
    refused(code, err, a_file / "cmp")
    code, _, err = run(
        ["compare", trace, *policies, "--out", tmp_path / "cmp", "--report", a_file / "r.html"],
        capsys,
    )
    refused(code, err, a_file / "r.html", "--report")
    (tmp_path / "cmp" / "report.html").mkdir(parents=True)  # the report's name is a folder
    code, _, err = run(["compare", trace, *policies, "--out", tmp_path / "cmp"], capsys)
    refused(code, err, tmp_path / "cmp" / "report.html", "--report")
    (tmp_path / "cmp" / "sjf-easy").mkdir()  # a policy's run directory is someone's folder
    (tmp_path / "cmp" / "sjf-easy" / "data.csv").write_text("x")
    code, _, err = run(
        ["compare", trace, *policies, "--out", tmp_path / "cmp", "--report", tmp_path / "r.html"],
        capsys,
    )
    refused(code, err, tmp_path / "cmp" / "sjf-easy")
    assert started == []
    assert sorted(os.listdir(tmp_path / "cmp")) == ["report.html", "sjf-easy"]


def test_sweep_checks_out_before_running(tmp_path, a_file, started, capsys):
    config = tmp_path / "s.toml"
    config.write_text(
        f'[sweep]\nout = "{a_file / "res"}"\n[[workloads]]\ngenerate = "mmk"\njobs = 60\n'
        'servers = 4\n[[policies]]\nname = "fcfs"\n'
    )
    code, _, err = run(["sweep", config], capsys)
    refused(code, err, a_file / "res", a_file)
    code, _, err = run(["sweep", config, "--out", a_file], capsys)
    refused(code, err, a_file)
    assert started == []


def test_read_only_folders_are_refused_before_running(
    tmp_path, trace, started, capsys, monkeypatch
):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        if os.geteuid() == 0:
            # root may write a read-only folder (CI runs as root): it is not refused...
            code, _, err = run(["simulate", trace, "--out", locked / "root"], capsys)
            assert code == 0, err
            assert (locked / "root" / "summary.json").is_file()
            started.clear()
            # ...but a read-only file system stops root too: emulated, as the kernel answers
            real = os.access

            def access(path, mode, **kwargs):
                inside = os.path.abspath(path).startswith(str(locked))
                return False if inside and mode & os.W_OK else real(path, mode, **kwargs)

            monkeypatch.setattr(os, "access", access)
        code, _, err = run(["simulate", trace, "--out", locked / "run"], capsys)
        refused(code, err, locked / "run", "not writable")
        code, _, err = run(["compare", trace, "--policy", "fcfs", "--out", locked / "c"], capsys)
        refused(code, err, locked / "c")
    finally:
        locked.chmod(0o755)
    assert started == []
