"""Every numeric option is range-checked against what the engine can represent, and every
option a configuration does not use is refused (issue 25, points 8 and 11)."""

from __future__ import annotations

import pytest

import hpcsched
from hpcsched import _core
from hpcsched.sweep import read_sweep
from tests.conftest import run_cli as run
from tests.conftest import workload_from

LINE = "{id} {submit} -1 {run} {procs} -1 -1 {procs} {req} -1 1 3 1 -1 1 1 -1 -1\n"
U32, U64 = 2**32, 2**64


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(
        "; MaxProcs: 64\n"
        + "".join(
            LINE.format(id=i, submit=10 * i, run=500 + 50 * i, procs=1 + i % 5, req=900)
            for i in range(1, 13)
        )
    )
    return path


MARS = ("--policy", "mars", "--iterations", "2", "--trees", "1")
ICON = ("--policy", "snf-icon", "--platform", "AOBA-64")


@pytest.mark.parametrize(
    ("policy", "option", "value", "allowed"),
    [
        (MARS, "--seed", U64, f"from 0 to {U64 - 1}"),
        (MARS, "--iterations", U64, f"from 1 to {U32 - 1}"),
        (MARS, "--iterations", U32, f"from 1 to {U32 - 1}"),
        (MARS, "--depth", U32, f"from 1 to {U32 - 1}"),
        (MARS, "--trees", U32, f"from 1 to {U32 - 1}"),
        (MARS, "--threads", U64, f"from 1 to {U32 - 1}"),
        (MARS, "--time-budget", 1e12, "seconds in (0, 1e+11]"),
        (ICON, "--sample-transitions", U64, f"from 0 to {U64 - 1}"),
        (ICON, "--min-spares", U32, f"from 0 to {U32 - 1}"),
        (ICON, "--max-spares", U32, f"from 0 to {U32 - 1}"),
        (ICON, "--idle-timeout", 1e12, "from 0 to 1e+11"),
        (ICON, "--screen-window", 1e12, "from 0 to 1e+11"),
        (ICON, "--max-horizon", 1e12, "from 0 to 1e+11"),
        (ICON, "--recency-window", 1e12, "from 0 to 1e+11"),
        (("--policy", "snf"), "--max-wait", 1e12, "from 0 to 1e+11"),
        (("--policy", "fcfs"), "--announce-lead", 1e12, "from 0 to 1e+11"),
    ],
)
def test_numbers_past_the_engine_range_name_the_option_and_the_range(
    tmp_path, trace, capsys, policy, option, value, allowed
):
    """These were "internal error (OverflowError)", exit 1 (or, for times, accepted)."""
    code, _, err = run(
        ["simulate", trace, *policy, option, value, "--out", tmp_path / "run"], capsys
    )
    assert code == 2, err
    assert err.startswith(f"error: {option}: must be"), err
    assert allowed in err
    assert not (tmp_path / "run").exists()


def test_the_largest_values_allowed_are_what_the_engine_takes():
    """The bounds are the engine's own: a seed of u64::MAX and u32::MAX spares run."""
    workload = workload_from([(0, 100, 200, 1), (5, 100, 200, 2), (6, 50, 100, 1)], 4)
    search = hpcsched.SearchSpec(iterations=2, trees=1, seed=_core.MAX_SEED, depth=_core.MAX_COUNT)
    result = hpcsched.simulate(workload, hpcsched.PolicySpec("mars", search=search))
    assert result.jobs["end"].notna().all()
    from tests.conftest import small_platform

    power = hpcsched.PowerSpec(
        sample_transitions=_core.MAX_SEED,
        min_spares=_core.MAX_COUNT,
        max_spares=_core.MAX_COUNT,
        screen_max_samples=_core.MAX_COUNT,
        idle_timeout=_core.MAX_TIME,
    )
    result = hpcsched.simulate(
        workload, hpcsched.PolicySpec("snf-icon", power=power), platform=small_platform(4)
    )
    assert result.jobs["end"].notna().all()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("screen_min_samples", U32),
        ("screen_max_samples", U64),
        ("sample_transitions", -1),
        ("sample_transitions", U64),
        ("min_spares", 1.5),
    ],
)
def test_power_counts_past_the_engine_types_are_option_errors(field, value):
    with pytest.raises(hpcsched.OptionError, match="must be an integer from 0 to") as caught:
        hpcsched.PowerSpec(manager="icon", **{field: value})
    assert caught.value.option == "--" + field.replace("_", "-")


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ('name = "mars"\niterations = 2\ntrees = 1\nseed = 18446744073709551616', "seed"),
        ('name = "mars"\niterations = [2, 4294967296]\ntrees = 1', "iterations"),
        ('name = "snf-icon"\nmin_spares = 4294967296', "min_spares"),
        ('name = "snf-icon"\nscreen_max_samples = 4294967296', "screen_max_samples"),
    ],
)
def test_a_sweep_field_past_the_engine_range_is_found_before_any_run(tmp_path, block, field):
    """`seed` in a sweep file was found only at run time (each run failing)."""
    path = tmp_path / "s.toml"
    path.write_text(
        '[sweep]\nplatforms = ["AOBA-64"]\n[[workloads]]\ngenerate = "markovian"\njobs = 20\n'
        f"[[policies]]\n{block}\n"
    )
    with pytest.raises(hpcsched.InputError, match="must be an integer from") as caught:
        read_sweep(path)
    assert (caught.value.path, caught.value.field) == (str(path), f"policies[0].{field}")


# --- point 11: options a configuration does not use are refused ---------------------------


@pytest.mark.parametrize(
    ("unused", "used"),
    [
        ({"lookahead": "rollout", "prior": "rollout"}, {"prior": "rollout"}),
        ({"bases": "fcfs,sjf:256"}, {"bases": "fcfs,sjf:256", "lookahead": "rollout"}),
        ({"bases": "fcfs,sjf:256"}, {"bases": "fcfs,sjf:256", "prior": "rollout"}),
        ({"lookahead": "rollout", "rollout": "guided"}, {"rollout": "guided"}),
        ({"lookahead": "rollout", "exploration": 2.0}, {"exploration": 2.0}),
        ({"guide": "sjf:256"}, {"guide": "sjf:256", "rollout": "guided"}),
        ({"epsilon": 0.5}, {"epsilon": 0.5, "rollout": "guided"}),
        ({"arrival_window": 3600.0}, {"arrival_window": 3600.0, "arrivals": "recent"}),
        ({"arrival_horizon": 3600.0}, {"arrival_horizon": 3600.0, "arrivals": "recent"}),
        ({"horizon": 3600.0}, {"horizon": 3600.0, "reward": (1.0, 0.0, 1.0)}),
    ],
)
def test_a_search_option_the_configuration_does_not_use_is_refused(unused, used):
    """Each was dropped without a word (``--prior rollout`` with the rollout look-ahead even
    changed the run key, not the results); the same value where it is used is taken."""
    option = next(k for k in unused if k != "lookahead" or len(unused) == 1)
    with pytest.raises(hpcsched.OptionError, match="does not use it") as caught:
        hpcsched.SearchSpec(**unused)
    assert caught.value.option == "--" + option.replace("_", "-")
    spec = hpcsched.SearchSpec(**used)
    assert getattr(spec, option) == used[option]


@pytest.mark.parametrize("option", ["actions", "bases", "guide"])
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "the action set is empty"),  # the engine reads it as the paper's set
        ("  ", "the action set is empty"),
        (",", "the action set is empty"),
        (" , ", "the action set is empty"),
        ("fcfs,,sjf:256", "an empty action"),  # the engine skips the empty item
        ("sjf:", "no window after ':'"),  # the engine reads it as sjf (every paper window)
        ("fcfs,sjf: ", "no window after ':'"),
    ],
)
def test_empty_actions_and_windows_are_refused(option, value, message):
    kwargs = {option: value, "lookahead": "rollout"} if option == "bases" else {option: value}
    if option == "guide":
        kwargs["rollout"] = "guided"
    with pytest.raises(hpcsched.OptionError, match=message) as caught:
        hpcsched.SearchSpec(**kwargs)
    assert caught.value.option == f"--{option}"


def test_the_guide_is_one_ordering():
    """The engine follows the first action of the guide only: "sjf" (ten windows) or two
    orderings would drop the rest without a word."""
    for guide in ("sjf", "f1:256,sjf:256"):
        with pytest.raises(hpcsched.OptionError, match="one ordering") as caught:
            hpcsched.SearchSpec(rollout="guided", guide=guide)
        assert caught.value.option == "--guide"
    assert hpcsched.SearchSpec(rollout="guided", guide="sjf:64").guide == "sjf:64"


@pytest.mark.parametrize(
    ("power", "option"),
    [
        ({"manager": "ipm", "alpha": 3.0}, "--alpha"),
        ({"manager": "ipm", "min_spares": 4}, "--min-spares"),
        ({"manager": "ipm", "ks_multiplier": 0.3}, "--ks-multiplier"),
        ({"manager": "icon-ng", "recency_window": 60.0}, "--recency-window"),
        ({"manager": "icon-ngnf", "recency_window": 60.0}, "--recency-window"),
    ],
)
def test_a_power_parameter_the_manager_does_not_use_is_refused(power, option):
    with pytest.raises(hpcsched.OptionError, match="does not use it") as caught:
        hpcsched.PowerSpec(**power)
    assert caught.value.option == option
    # the manager a paper name implies is checked too
    name = {"ipm": "fcfs-b+ipm", "icon-ng": "snf-icon-ng", "icon-ngnf": "snf-icon-ngnf"}
    unset = {k: v for k, v in power.items() if k != "manager"}
    with pytest.raises(hpcsched.OptionError, match="does not use it"):
        hpcsched.PolicySpec(name[power["manager"]], power=hpcsched.PowerSpec(**unset))
    # SNF-ICON takes them
    assert hpcsched.PowerSpec(manager="icon", **unset)


@pytest.mark.parametrize(
    ("low", "high"), [("min_spares", "max_spares"), ("screen_min_samples", "screen_max_samples")]
)
def test_a_minimum_above_its_maximum_is_refused(low, high):
    with pytest.raises(hpcsched.OptionError, match=f"at most {high} \\(2\\), not 5") as caught:
        hpcsched.PowerSpec(manager="icon", **{low: 5, high: 2})
    assert caught.value.option == "--" + low.replace("_", "-")
    assert hpcsched.PowerSpec(manager="icon", **{low: 2, high: 2})


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ([*MARS, "--lookahead", "rollout", "--prior", "rollout"], "--prior"),
        ([*MARS, "--bases", "fcfs,sjf:256"], "--bases"),
        ([*MARS, "--lookahead", "rollout", "--bases", ""], "--bases"),
        ([*MARS, "--lookahead", "rollout", "--rollout", "guided"], "--rollout"),
        ([*MARS, "--actions", ""], "--actions"),
        ([*MARS, "--actions", ","], "--actions"),
        ([*MARS, "--actions", "sjf:"], "--actions"),
        ([*ICON, "--min-spares", "5", "--max-spares", "2"], "--min-spares"),
        (
            ["--policy", "fcfs", "--power", "ipm", "--platform", "AOBA-64", "--alpha", "3"],
            "--alpha",
        ),
        (
            ["--policy", "snf-icon-ng", "--platform", "AOBA-64", "--recency-window", "60"],
            "--recency-window",
        ),
    ],
)
def test_the_command_line_refuses_what_the_configuration_does_not_use(
    tmp_path, trace, capsys, args, named
):
    code, _, err = run(["simulate", trace, *args, "--out", tmp_path / "run"], capsys)
    assert code == 2, err
    assert err.startswith(f"error: {named}:"), err
    assert not (tmp_path / "run").exists()
