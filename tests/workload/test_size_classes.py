"""Job size classes (MARS Fig. 7)."""

from __future__ import annotations

import numpy as np
import pytest

from hpcsched.classes import SIZE_CLASSES, size_class
from hpcsched.exceptions import OptionError


def test_boundaries_on_64_nodes():
    # S <= 64/32 = 2, M <= 64/16 = 4, L <= 64/4 = 16, XL above
    got = size_class([1, 2, 3, 4, 5, 16, 17, 64], 64)
    assert got.tolist() == ["S", "S", "M", "M", "L", "L", "XL", "XL"]
    assert isinstance(got, np.ndarray) and got.dtype.kind == "U"


def test_boundaries_on_100_nodes():
    # N/32 = 3.125, N/16 = 6.25, N/4 = 25
    got = size_class(np.array([3, 4, 6, 7, 25, 26]), 100)
    assert got.tolist() == ["S", "M", "M", "L", "L", "XL"]


def test_small_machine_and_empty_input():
    # on 4 nodes nothing is <= 4/32 or <= 4/16: 1-node jobs are L (1 <= 4/4), bigger ones XL
    assert size_class([1, 2, 4], 4).tolist() == ["L", "XL", "XL"]
    assert size_class([], 64).tolist() == []
    assert SIZE_CLASSES == ("S", "M", "L", "XL")


def test_bad_machine_size():
    with pytest.raises(OptionError):
        size_class([1], 0)
