"""Slurm's notations as hpcsched reads them (python/hpcsched/site/slurm/text.py): the numbers
of Slurm's JSON output, hostlist errors and durations past the engine's times, each written by
hand from Slurm's documentation (the rest of the notations are tested where they are read:
tests/advise/test_slurm_partitions_reader.py, tests/test_slurm_conf_hardening.py)."""

from __future__ import annotations

import pytest

from hpcsched.site.slurm.text import BeyondTimes, hostlist_names, slurm_duration, slurm_json_number


@pytest.mark.parametrize(
    ("value", "number"),
    [
        (5, 5.0),  # Slurm 22.05 writes a plain number
        (None, None),
        ({"number": 7}, 7.0),  # no "set": a number
        ({"set": True, "infinite": False, "number": 5}, 5.0),  # 23.02 and later
        ({"set": False, "infinite": False, "number": 5}, None),  # not set: no number
        ({"set": True, "infinite": True, "number": 0}, None),  # infinite: no number
        ({"infinite": True}, None),
    ],
)
def test_a_number_of_slurms_json_output(value, number):
    assert slurm_json_number(value) == number


@pytest.mark.parametrize("value", ["x", True, [1]])
def test_anything_else_in_slurms_json_output_is_not_a_number(value):
    with pytest.raises(TypeError, match=f"^not a number: {value!r}$".replace("[", r"\[")):
        slurm_json_number(value)


def test_a_bad_hostlist_quotes_the_expression_and_why():
    with pytest.raises(ValueError, match=r"^bad hostlist 'c\[3-1\]': start > stop$"):
        hostlist_names("c[3-1]")


@pytest.mark.parametrize(
    ("text", "error", "says"),
    [
        ("1h", ValueError, "^not a Slurm duration: '1h'$"),
        ("00:00:1000000000000", BeyondTimes, "^'00:00:1000000000000' is past the engine's times"),
    ],
)
def test_a_duration_that_is_not_one_or_too_long_quotes_itself(text, error, says):
    with pytest.raises(error, match=says):
        slurm_duration(text)
