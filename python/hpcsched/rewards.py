"""Reward weights of the look-ahead: the named terms and presets as the engine defines them,
and :func:`parse_reward`, which reads weights from a preset, ``term=weight`` pairs, a TOML file
or a dict."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Mapping

from hpcsched import _core
from hpcsched._io import read_toml
from hpcsched.exceptions import HpcschedError, InputError, OptionError, shown, unknown_name

#: The named reward terms, in the order of the weights (the engine's `Reward::TERMS`; see
#: docs/semantics.md, "MARS"): ``wait`` counts the jobs still waiting, ``wait_started`` only
#: the jobs started (the paper's CW); ``utilization`` is over a fixed horizon,
#: ``utilization_since_root`` from the decision to the rollout's end (the paper's CU),
#: ``maintenance_utilization`` up to the next announced maintenance (1 when none is announced).
REWARD_TERMS = tuple(_core.reward_terms())
#: The named rewards, ``{name: {term: weight}}`` (the engine's `Reward::PRESETS`).
REWARD_PRESETS = _core.reward_presets()


def parse_reward(
    spec: str | Mapping[str, object], terms: tuple[str, ...] = REWARD_TERMS
) -> tuple[float, ...]:
    """Reward weights, one per name of ``terms``, from a preset (``cw``, ``cu``, ``wb``,
    ``cu-horizon``, ``cw-paper``, ``cu-paper``), ``"wait=1,utilization=0.5"``, a TOML file
    with a ``[reward]`` table, or a dict. Weights are finite numbers >= 0 whose sum is positive
    and finite (only their proportions count: a sum that overflows would change them)."""
    if isinstance(spec, Mapping):
        return _weights(spec, terms, _option_error)
    if not isinstance(spec, str):
        raise OptionError(
            f"give a preset, term=weight pairs, a TOML file or a dict, not {shown(spec)}",
            option="--reward",
        )
    if spec.strip().lower() in REWARD_PRESETS:
        return _weights(REWARD_PRESETS[spec.strip().lower()], terms, _option_error)
    if spec.endswith(".toml") or os.path.isfile(spec):
        return _reward_file(spec, terms)
    word = spec.strip()
    if "=" not in word and "," not in word and word not in terms:
        raise OptionError(
            unknown_name("reward preset or term", word, [*REWARD_PRESETS, *terms]),
            option="--reward",
        )
    weights: dict[str, object] = {}
    for item in spec.split(","):
        name, sep, value = item.partition("=")
        try:
            weights[name.strip()] = float(value) if sep else 1.0
        except ValueError:
            raise OptionError(
                f"{shown(item.strip())} is not term=weight", option="--reward"
            ) from None
    return _weights(weights, terms, _option_error)


def _option_error(reason: str, term: str | None) -> HpcschedError:
    return OptionError(reason, option="--reward")


def _reward_file(path: str, terms: tuple[str, ...]) -> tuple[float, ...]:
    """The weights of a reward file: one ``[reward]`` table of ``term = number``, nothing else
    (as the platform reader, an unknown key is an error naming it, never ignored)."""
    document = read_toml(path)
    unknown = sorted(set(document) - {"reward"})
    if unknown:
        raise InputError(
            f"unknown key {shown(unknown[0])} (a reward file holds one [reward] table)",
            path=path,
            field=unknown[0],
        )
    table = document.get("reward")
    if not isinstance(table, dict):
        raise InputError(
            "missing table [reward] (the weights, e.g. wait = 1)", path=path, field="reward"
        )

    def error(reason: str, term: str | None) -> HpcschedError:
        return InputError(reason, path=path, field="reward" if term is None else f"reward.{term}")

    return _weights(table, terms, error)


def _weights(
    weights: Mapping[str, object],
    terms: tuple[str, ...],
    error: Callable[[str, str | None], HpcschedError],
) -> tuple[float, ...]:
    """The checked weights in the order of ``terms``; ``error(reason, term)`` makes the error
    (naming the option, or the file and key)."""
    checked: dict[str, float] = {}
    for term, value in weights.items():
        if term not in terms:
            raise error(unknown_name("reward term", term, terms), term)
        # a bool or a string is not a weight (TOML's `wait = true`, `wait = "1"`)
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not (math.isfinite(value) and float(value) >= 0)
        ):
            raise error(
                f"the weight of {term} must be a finite number >= 0, not {shown(value)}", term
            )
        checked[term] = float(value)
    values = tuple(checked.get(term, 0.0) for term in terms)
    total = sum(values)
    if total <= 0:
        raise error("weights must be >= 0 with a positive sum", None)
    if not math.isfinite(total):
        raise error(
            f"the weights' sum overflows ({total}); scale them down (only their proportions count)",
            None,
        )
    return values


__all__ = ["REWARD_PRESETS", "REWARD_TERMS", "parse_reward"]
