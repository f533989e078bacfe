"""Programs whose C/LLVM versions have undefined behaviour, for ``test_undefined_behaviour.py``.

Integer division and remainder by 0 and INT_MIN / -1, shifts by negative amounts and by
the bit width or more, float -> int conversion of NaN, infinities and huge values,
gathers and dynamic windows at out-of-range positions, integer powers with negative
exponents and overflowing integer arithmetic. plaidarray defines all of them (see
docs/reliability.md); generated code must compute those definitions whatever LLVM's
optimiser does, so each program gives the same bits at -O0 and -O3 and on the
reference backend.

Run as a script (``python ub_programs.py OUT.npz``) it computes every program with the
current backend and optimisation level and saves the results.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

import plaidarray as xp
from plaidarray.api.graph import op

SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float32, np.float64]


def _operands(dtype) -> tuple[np.ndarray, np.ndarray]:
    """Every pairing of edge values: dividends and divisors, shifted values and counts."""
    info = np.iinfo(dtype)
    bits = np.dtype(dtype).itemsize * 8
    edges = sorted({0, 1, 2, 3, 7, bits - 1, bits, bits + 1, 2 * bits, int(info.max), int(info.max) - 1}
                   | ({-1, -2, -bits, -bits - 1, int(info.min), int(info.min) + 1} if info.min else set()))
    a, b = np.meshgrid(np.array(edges, dtype=dtype), np.array(edges, dtype=dtype))
    return a.ravel(), b.ravel()


def _integer_programs(dtype) -> dict[str, xp.Array]:
    a, b = _operands(dtype)
    x, y = xp.asarray(a), xp.asarray(b)
    exponent = xp.astype(y % 9, x.dtype) if np.dtype(dtype).kind == "u" else xp.clip(y, -9, 9)
    return {
        "floor_divide": x // y,
        "remainder": x % y,
        "hlo divide": op("divide", x, y),
        "hlo remainder": op("remainder", x, y),
        "shift left": x << y,
        "shift right": x >> y,
        "hlo shift right logical": op("shift_right_logical", x, y),
        "add, multiply, negate, abs": xp.stack([x + y, x * y, -x, xp.abs(x)]),
        "power": x ** exponent,
        "dynamic windows": _dynamic_windows(dtype),
        "gathers": _gathers(dtype),
    }


def _dynamic_windows(dtype) -> xp.Array:
    """Windows of a (5, 4) array at starts in range and not (clamped, as XLA does)."""
    grid = xp.reshape(xp.arange(20.0), (5, 4))
    info = np.iinfo(dtype)
    starts = sorted({0, 1, 3, 4, 5, 100, int(info.max)} | ({-1, -100, int(info.min)} if info.min else set()))
    windows = []
    for i, j in zip(starts, starts[::-1]):
        row, col = (xp.asarray(np.asarray(v, dtype=dtype)) for v in (i, j))
        window = op("dynamic_slice", grid, row, col, slice_sizes=(2, 3))
        update = op("dynamic_update_slice", grid, -xp.ones((2, 3)), row, col)
        windows.append(xp.concat([xp.reshape(window, (6,)), xp.reshape(update, (20,))]))
    return xp.stack(windows)


def _gathers(dtype) -> xp.Array:
    x = xp.arange(10.0, 17.0)
    info = np.iinfo(dtype)
    positions = np.array(sorted({0, 3, 6, 7, 8, 100, int(info.max)} | ({-1, -7, -8, -100, int(info.min)} if info.min else set())),
                         dtype=dtype)
    p = xp.asarray(positions) + 0  # pending, as a computed index's positions out of range raise before any gather
    grid = xp.reshape(xp.arange(21.0), (3, 7))
    return xp.concat([xp.take(x, p), xp.take_along_axis(x, p, axis=0), x[p],
                      xp.reshape(xp.take(grid, p, axis=1), (-1,)), grid[xp.zeros(p.shape, dtype=p.dtype), p]])


def _float_programs(dtype) -> dict[str, xp.Array]:
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 127.5, 128.0, -129.0,
                         255.5, 256.0, 65535.5, 2.0**31, -2.0**31 - 1, 2.0**32, 2.0**63, -2.0**63, 2.0**64, 1e30,
                         -1e30, np.finfo(dtype).max, -np.finfo(dtype).max, np.finfo(dtype).tiny], dtype=dtype)
    x = xp.asarray(specials)
    programs = {f"to {np.dtype(t).name}": xp.astype(x, t) for t in SIGNED + UNSIGNED}
    programs["to bool"] = xp.astype(x, xp.bool)
    programs["rounding"] = xp.stack([xp.floor(x), xp.ceil(x), xp.round(x), xp.trunc(x)])
    programs["floor_divide and remainder"] = xp.stack([x // xp.flip(x), x % xp.flip(x), x // 0.0, x % -0.0])
    # The vector math library converts floats to ints inside (exponents, quadrants).
    wide = xp.concat([x, xp.linspace(-800.0, 800.0, 1001, dtype=x.dtype)])
    programs["vector math"] = xp.stack([f(wide) for f in (xp.exp, xp.expm1, xp.log, xp.log1p, xp.tanh, xp.sin, xp.cos)])
    return programs


#: Groups of programs by dtype; each group compiles as one module (a jitted function).
GROUPS: dict[str, Callable[[], dict[str, xp.Array]]] = {
    **{np.dtype(t).name: (lambda t=t: _integer_programs(t)) for t in SIGNED + UNSIGNED},
    **{np.dtype(t).name: (lambda t=t: _float_programs(t)) for t in FLOATS},
}


def run_all() -> dict[str, np.ndarray]:
    """Every program's result, named ``"<dtype> <program>"``."""
    return {f"{group} {name}": np.asarray(value)
            for group, programs in GROUPS.items() for name, value in xp.jit(programs)().items()}


if __name__ == "__main__":
    np.savez(sys.argv[1], **run_all())
