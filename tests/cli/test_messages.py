"""What errors and output say (issue 25, points 9 and 13): every error's reason is cut to 600
characters in one place, whoever built it; errors name the option or file at fault; text from
inputs never reaches the terminal as control characters."""

from __future__ import annotations

import pickle

import pytest
from tests.conftest import workload_from

import hpcsched
from hpcsched.exceptions import (
    MAX_REASON_CHARS,
    DecisionError,
    HpcschedError,
    InputError,
    OptionError,
)
from hpcsched.protocol import Decision


class Huge:
    name = "huge"

    def decide(self, view):
        return Decision(order=list(range(1_000_000)))


def test_a_million_entry_decision_gives_a_bounded_message():
    # the engine names the refused decision with its repr: 7.9 MB, once printed on one line
    with pytest.raises(DecisionError) as error:
        hpcsched.simulate(workload_from([(0, 10, 10, 1)], nodes=1), Huge())
    text = str(error.value)
    assert text.startswith("huge at t=0: there is no job index 1; decision: Decision(")
    assert text.endswith("power_on=(), power_off=(), nodes=None)")  # cut in the middle
    assert len(text) <= MAX_REASON_CHARS + 5


@pytest.mark.parametrize(
    "error",
    [
        OptionError("x" * 10**6, option="--window"),
        InputError("x" * 10**6, path="t.swf", line=3, field="4 (run time)"),
        DecisionError("x" * 10**6),
        HpcschedError("x" * 10**6),
    ],
)
def test_every_error_is_bounded_where_it_is_built(error):
    where = str(error).partition("xxx")[0]
    assert len(str(error)) == len(where) + MAX_REASON_CHARS + 5  # " ... " in the middle
    assert len(error.reason) == MAX_REASON_CHARS + 5


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (InputError("bad", path="t.swf", line=3, field="4"), "t.swf, line 3, field 4: bad"),
        (OptionError("bad", option="--nodes"), "--nodes: bad"),
        (DecisionError("bad"), "bad"),
    ],
)
def test_an_error_from_a_worker_process_reads_as_it_was_raised(error, text):
    # compare and sweep get errors back pickled; an input error used to come back as
    # "<input>: t.swf, line 3, field 4: bad"
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert str(back) == str(error) == text
    assert back.__dict__ == error.__dict__


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.json"
    hpcsched.workload.generate.write_batsim(hpcsched.workload.generate.mmk(20, 2, 0.8), path)
    return path


def run(args, capsys):
    from hpcsched.cli import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("actions", "says"),
    [(",", "the action set is empty"), ("fcfs,nope", 'unknown heuristic "nope"')],
)
@pytest.mark.parametrize("policy", ["mars", "random"])
def test_a_bad_action_set_names_the_option(trace, capsys, policy, actions, says):
    # it used to be found at run time, as "error: <input>: the action set is empty"
    code, _, err = run(["simulate", trace, "--policy", policy, "--actions", actions], capsys)
    assert code == 2
    assert err.startswith(f"error: --actions: {says}")


@pytest.mark.parametrize(
    ("args", "missing"),
    [
        (["--power", "ipm"], "the power manager ipm (FCFS +EASY + IPM)"),
        (["--policy", "sjf", "--power", "icon"], "the power manager icon (SJF +EASY + ICON)"),
        (["--policy", "snf-icon"], "the power manager icon (SNF-ICON)"),
    ],
)
def test_a_power_manager_without_a_platform_says_what_is_missing(trace, capsys, args, missing):
    # it used to say "fcfs switches nodes on and off", blaming the queue policy
    code, _, err = run(["simulate", trace, *args], capsys)
    assert code == 2
    assert err.startswith(f"error: --platform: {missing} switches nodes on and off")
    assert "needs a platform with a power model, but no platform was given" in err


def test_a_platform_without_a_power_model_is_named(trace, tmp_path, capsys):
    platform = tmp_path / "plain.toml"
    platform.write_text('name = "plain"\nnodes = 2\n')
    code, _, err = run(["simulate", trace, "--power", "ipm", "--platform", platform], capsys)
    assert code == 2
    assert "but platform 'plain' has no power model" in err


#: what a hostile name may hold: clear the screen, set the window title, ring, a C1 CSI; and
#: how it is printed (rich itself drops the bell, backspace and carriage return)
CONTROL = "\x1b[2J\x1b]0;owned\x07\x9b31m\x7f"
ESCAPED = "\\x1b[2J\\x1b]0;owned\\x9b31m\\x7f"


def test_control_characters_in_a_trace_name_are_printed_escaped(tmp_path, capsys):
    trace = tmp_path / f"evil{CONTROL}.json"
    hpcsched.workload.generate.write_batsim(hpcsched.workload.generate.mmk(20, 2, 0.8), trace)
    code, out, err = run(["simulate", trace, "--out", tmp_path / "run"], capsys)
    assert code == 0, err
    assert f"evil{ESCAPED}.json" in out  # the table's title
    assert not set(out + err) & {"\x1b", "\x07", "\x9b", "\x7f"}


def test_control_characters_in_a_policy_and_its_message_are_printed_escaped(
    trace, tmp_path, capsys
):
    (tmp_path / "evil.py").write_text(
        "class Evil:\n"
        f"    name = {('evil' + CONTROL)!r}\n"
        f"    def decide(self, view):\n        raise ValueError({CONTROL!r})\n"
    )
    code, _, err = run(["simulate", trace, "--policy", f"python:{tmp_path}/evil.py:Evil"], capsys)
    assert code == 2
    assert err.startswith(f"error: evil{ESCAPED} at t=0: decide raised ValueError: {ESCAPED}")
    assert not set(err) & {"\x1b", "\x07", "\x9b", "\x7f"}


def test_our_own_styles_and_newlines_survive_on_a_terminal():
    from rich.text import Text

    from hpcsched.cli._console import _LiteralConsole

    terminal = _LiteralConsole(
        force_terminal=True, color_system="standard", width=80, highlight=False
    )
    with terminal.capture() as captured:
        terminal.print(Text("red", style="red"), f"two\tlines\n{CONTROL}")
    text = captured.get()
    assert "\x1b[31mred\x1b[0m" in text  # rich's own escape sequence, kept
    assert f"\n{ESCAPED}" in text and "\x07" not in text
