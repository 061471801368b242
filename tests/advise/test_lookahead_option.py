"""The advisor plans with either MARS look-ahead (a saved snapshot: no cluster needed)."""

from __future__ import annotations

from pathlib import Path

from hpcsched.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
SNAPSHOT = [str(FIXTURES / "squeue-mixed.json"), str(FIXTURES / "sinfo-mixed.json")]


def test_the_rollout_look_ahead_plans_a_snapshot(capsys, tmp_path):
    args = ["advise", "--from-json", *SNAPSHOT, "--log", str(tmp_path / "log.jsonl")]
    args += ["--policy", "mars-wb", "--iterations", "20", "--trees", "1"]
    assert main([*args, "--lookahead", "rollout"]) == 0
    rollout = capsys.readouterr().out
    assert main([*args, "--lookahead", "tree"]) == 0
    tree = capsys.readouterr().out
    # the tick's line names the look-ahead that decided (words may wrap at the terminal edge)
    assert "MARS-WB (rollout) decided" in " ".join(rollout.split())
    assert "MARS-WB decided" in " ".join(tree.split())


def test_an_unknown_look_ahead_is_a_usage_error(capsys, tmp_path):
    code = main(
        ["advise", "--from-json", *SNAPSHOT, "--log", str(tmp_path / "log.jsonl"),
         "--lookahead", "sideways"]
    )  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 2 and "--lookahead" in err and "sideways" in err
