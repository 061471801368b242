"""Options declared once: a group's fields are options of every command that takes the group,
and the command gets one instance of it (cli/_options.py)."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer
from typer.testing import CliRunner

from hpcsched.cli import _options as opt
from hpcsched.cli import command


def _leaves(group: type) -> list[str]:
    names = []
    for f in dataclasses.fields(group):
        hint = opt._hints(group)[f.name]
        names += _leaves(hint) if opt._is_group(hint) else [f.name]
    return names


def test_every_command_taking_a_group_has_all_its_options():
    commands = command().commands
    takes = {
        "simulate": (opt.TraceOptions, opt.RunOptions, opt.PolicyOptions),
        "compare": (opt.TraceOptions, opt.RunOptions, opt.PolicyOptions),
        "inspect": (opt.TraceOptions,),
    }
    for name, groups in takes.items():
        params = [p.name for p in commands[name].params]
        for group in groups:
            leaves = _leaves(group)
            # all of them, in the group's order
            assert [p for p in params if p in leaves] == leaves, (name, group.__name__)


@opt.option_group
@dataclasses.dataclass(frozen=True)
class Extra:
    colour: Annotated[str | None, typer.Option(help="A colour.")] = None
    size: Annotated[int, typer.Option(help="A size.")] = 3


def test_a_new_field_reaches_the_command_as_one_instance():
    seen = []

    @opt.command
    def show(name: Annotated[str, typer.Argument()], *, extra: Extra) -> None:
        seen.append((name, extra))

    app = typer.Typer()
    app.command()(show)
    result = CliRunner().invoke(app, ["x", "--colour", "red"])
    assert result.exit_code == 0, result.output
    assert seen == [("x", Extra(colour="red", size=3))]
    assert "--size" in CliRunner().invoke(app, ["--help"]).output


def test_an_option_given_no_policy_takes_is_named():
    options = opt.PolicyOptions(managed=opt.PowerOptions(alpha=3.0))
    from hpcsched.policies import PolicySpec

    try:
        opt.check_used([PolicySpec("fcfs")], options)
    except Exception as exc:  # OptionError
        assert getattr(exc, "option", None) == "--alpha"
    else:
        raise AssertionError("--alpha under fcfs must be refused")
