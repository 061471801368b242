"""Help at 80 columns (issue 27, point 2): every command's and subcommand's help, piped into a
narrow terminal, wraps its text instead of cutting it (rich cuts a word wider than its column
with an ellipsis), and no line is wider than the terminal."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

COMMANDS = [
    [],
    ["simulate"],
    ["compare"],
    ["sweep"],
    ["reproduce"],
    ["reproduce", "mars"],
    ["reproduce", "snf-icon"],
    ["generate"],
    ["generate", "markovian"],
    ["inspect"],
    ["policies"],
    ["advise"],
]


def _help(command: list[str], columns: int) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "hpcsched", *command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": str(columns), "TERM": "dumb"},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "hpcsched")
def test_help_wraps_at_80_columns_and_cuts_nothing(command):
    text = _help(command, 80)
    assert "…" not in text, text
    assert max(len(line) for line in text.splitlines()) <= 80
    # what the cut texts were: whole in the narrow help too
    if command == ["simulate"]:
        flat = " ".join(text.replace("│", " ").split())
        assert "utilization=2, energy=1'" in flat
        assert "'fcfs, wfp3:256, sjf, lrf:all'" in flat
        assert "wfp3:256, unicef:256, fcfs)" in flat


def test_the_help_shows_the_bases_the_search_uses_by_default():
    import typing

    from hpcsched import SearchSpec
    from hpcsched.cli._options import SearchOptions

    hints = typing.get_type_hints(SearchOptions, include_extras=True)
    shown = hints["bases"].__metadata__[0].help
    default = shown.split("(default ", 1)[1].rstrip(").")
    assert [b.strip() for b in default.split(",")] == SearchSpec().bases.split(",")
