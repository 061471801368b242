"""Start-up stays light: help never imports pandas, pyarrow or matplotlib, and simulate never
imports matplotlib (they cost about a second on a loaded machine)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent(
    """
    import sys
    from hpcsched.cli import main
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
    heavy = [m for m in ("pandas", "pyarrow", "matplotlib") if m in sys.modules]
    print(code, ",".join(heavy) or "-")
    """
)

COMMANDS = [
    ["--help"],
    ["simulate", "--help"],
    ["compare", "--help"],
    ["sweep", "--help"],
    ["advise", "--help"],
    ["inspect", "--help"],
    ["policies"],
    ["generate", "markovian", "--help"],
    ["reproduce", "mars", "--help"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_help_imports_no_heavy_library(args):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120
    )
    code, heavy = done.stdout.split()[-2:]
    assert code in ("0", "None"), done.stderr
    assert heavy == "-", f"{' '.join(args)} imported {heavy}"


def test_simulate_imports_no_matplotlib(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n1 0 -1 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "simulate", str(trace), "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    code, heavy = done.stdout.split()[-2:]
    assert code == "0", done.stderr
    assert "matplotlib" not in heavy.split(",")


def test_import_hpcsched_is_light():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, hpcsched; print(','.join(m for m in ('pandas', 'pyarrow', "
            "'matplotlib', 'numpy') if m in sys.modules) or '-')",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip() == "-", done.stdout
