"""Text from users and their files is printed as it is: never read as rich markup or emoji codes.

A path, a token or a message holding ``[/x]`` used to crash the command with a traceback (rich
read it as a closing tag) and ``[ray]`` vanished from ``pip install 'hpcsched[ray]'``.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from tests.conftest import run_cli as run

from hpcsched.cli import _console as console_module
from hpcsched.cli._console import err_console
from hpcsched.exceptions import InputError

GOOD = "1 0 5 10 2 -1 -1 2 20 -1 1 3 1 -1 1 1 -1 -1\n"
HOSTILE = "[/x][bold]:smile:"


def hostile_path(folder, suffix):
    """FOLDER/[/x]:smile:[bold]SUFFIX: the "/" makes "[" a folder of its own."""
    (folder / "[").mkdir(parents=True)
    return folder / "[" / f"x]:smile:[bold]{suffix}"


def test_a_hostile_trace_path_and_out_folder_are_printed_literally(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    trace = hostile_path(tmp_path, ".swf")
    trace.write_text("; MaxProcs: 4\n" + GOOD)
    out = hostile_path(Path("runs"), "")
    code, stdout, err = run(["simulate", trace, "--out", out], capsys)
    assert code == 0, err
    assert trace.name in stdout  # the title
    assert str(out) in stdout  # the results row
    assert (out / "summary.json").exists()


def test_a_hostile_token_in_an_error_message_is_printed_literally(tmp_path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text(GOOD.replace(" 5 10 ", f" 5 {HOSTILE} ", 1))
    code, _, err = run(["simulate", trace], capsys)
    assert code == 2
    assert HOSTILE in err
    assert "Traceback" not in err


def test_a_hostile_warning_is_printed_literally(tmp_path, capsys):
    # requested time unknown: the reader warns; the note of the header is user text too
    trace = hostile_path(tmp_path, ".swf")
    trace.write_text("; MaxProcs: 4\n" + "1 0 5 10 2 -1 -1 2 -1 -1 1 3 1 -1 1 1 -1 -1\n")
    code, stdout, err = run(["inspect", trace], capsys)
    assert code == 0, err
    assert "[/x]" in stdout


def test_square_brackets_in_our_own_messages_survive(capsys):
    with err_console.capture() as captured:
        err_console.print(InputError("install it: pip install 'hpcsched[ray]'"))
    assert "hpcsched[ray]" in captured.get()


@pytest.mark.parametrize("title", [HOSTILE, "{task.fields[x]} {0}"])
def test_progress_titles_are_neither_markup_nor_format_strings(title, monkeypatch):
    # the bars draw only on a terminal: give them one that writes to a buffer
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=200, markup=False, emoji=False)
    monkeypatch.setattr(console_module, "err_console", terminal)
    with console_module.runs_progress(title, transient=False) as update:
        update(1, 2, HOSTILE)
    bar = console_module.LazyProgress(10.0, title, delay=0.0)
    bar(5.0, 1, 1)
    bar.close()
    text = screen.getvalue()
    assert text.count(title) >= 2  # both bars, the title as given
    assert HOSTILE in text
