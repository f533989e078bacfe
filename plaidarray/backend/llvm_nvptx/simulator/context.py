"""The state one batch of blocks runs in: registers, special registers, symbols and memory.

Instructions are compiled to closures over a ``Context`` and a *selection* of threads: a
``slice(None)`` when every thread of the batch executes (then register reads are views, and a
converged kernel pays no indexing), or an index array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .memory import LaunchMemory
from .scalars import ScalarType

Selection = slice | np.ndarray


class RegisterFile(dict):
    """Register arrays by name, created (zero) on first use: kernels declare far more
    registers than one path touches."""

    def __init__(self, types: dict[str, ScalarType], size: int):
        super().__init__()
        self.types, self.size = types, size

    def __missing__(self, name: str) -> np.ndarray:
        array = np.zeros(self.size, self.types[name].bits)
        self[name] = array
        return array


@dataclass
class Context:
    """One batch: ``size`` threads (whole blocks), their registers, the memory they see, and
    each thread's lane, warp (numbered within the batch) and linear index in its block."""

    size: int
    registers: RegisterFile
    special: dict[str, np.ndarray]
    memory: LaunchMemory
    lane: np.ndarray
    warp: np.ndarray
    linear: np.ndarray
    block_size: int

    def ids(self, selection: Selection) -> np.ndarray:
        """The selected threads' indices as an array."""
        return np.arange(self.size) if isinstance(selection, slice) else selection

    def count(self, selection: Selection) -> int:
        return self.size if isinstance(selection, slice) else len(selection)
