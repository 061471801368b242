"""Job size classes (MARS, Fig. 7), relative to the machine size N in nodes.

S: nodes ≤ N/32, M: N/32 < nodes ≤ N/16, L: N/16 < nodes ≤ N/4, XL: nodes > N/4.
Boundaries are compared exactly (``nodes * 32 <= N``, in integers), so on N = 64 nodes
S is 1 to 2 nodes, M 3 to 4, L 5 to 16 and XL 17 to 64; on N = 100, S is 1 to 3 nodes
(N/32 = 3.125).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from hpcsched.exceptions import OptionError

#: the size classes, smallest first
SIZE_CLASSES: tuple[str, ...] = ("S", "M", "L", "XL")


def size_class(nodes: ArrayLike, machine_nodes: int) -> np.ndarray:
    """The size class (``"S"``, ``"M"``, ``"L"`` or ``"XL"``) of each job, as an array of str."""
    if machine_nodes <= 0:
        raise OptionError(f"must be positive, not {machine_nodes}", option="machine_nodes")
    classes: np.ndarray = np.array(SIZE_CLASSES)[size_class_codes(nodes, machine_nodes)]
    return classes


def size_class_codes(nodes: ArrayLike, machine_nodes: int) -> np.ndarray:
    """The index in ``SIZE_CLASSES`` of each job's class (0 = S ... 3 = XL), as int8."""
    if machine_nodes <= 0:
        raise OptionError(f"must be positive, not {machine_nodes}", option="machine_nodes")
    n = np.asarray(nodes, dtype=np.int64)
    codes = np.full(n.shape, 3, dtype=np.int8)
    codes[n * 4 <= machine_nodes] = 2
    codes[n * 16 <= machine_nodes] = 1
    codes[n * 32 <= machine_nodes] = 0
    return codes


__all__ = ["SIZE_CLASSES", "size_class", "size_class_codes"]
