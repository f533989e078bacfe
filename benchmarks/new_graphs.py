"""New graphs of ops met before: what a script pays for a read of an expression it never read,
made of ops whose kernels it has run at these sizes already.

One process (its own empty ``PLAIDARRAY_CACHE_DIR``): random expressions of ``--ops``
elementwise ops (unary functions, a scale or shift by a Python float, sums, products,
differences and maxima) over four float64 vectors of 50 elements (two arrays and two rows
of a matrix), each reduced by two sums and read once, so that every graph is new. A warm-up
of other expressions first loads every op's kernel and meets every size; then ``--repeat``
batches of 100 new expressions are timed. Prints the microseconds per recorded op of each
batch and their least: recording, the graph's assembly (``trace/baseline.py``,
``llvm_cpu/call_by_call.py``), its run and its read, divided by the ops drawn (an op no sum
reads is recorded but not run).

    python -m benchmarks.new_graphs [--ops 12] [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _expression(xp: Any, rng: random.Random, inputs: list, n_ops: int) -> Any:
    """A random expression of ``n_ops`` ops over ``inputs``, its last two values summed."""
    unary: list[Callable[[Any], Any]] = [xp.sin, xp.exp, xp.abs, xp.tanh, lambda v: v * 2.0, lambda v: v + 1.0,
                                         lambda v: -v]
    binary: list[Callable[[Any, Any], Any]] = [lambda u, v: u + v, lambda u, v: u * v, lambda u, v: u - v,
                                               xp.maximum]
    values = list(inputs)
    for _ in range(n_ops):
        if rng.random() < 0.4:
            values.append(rng.choice(unary)(rng.choice(values)))
        else:
            values.append(rng.choice(binary)(rng.choice(values), rng.choice(values)))
    return xp.sum(values[-1]) + xp.sum(values[-2])


def _batch(xp: Any, inputs: list, first_seed: int, count: int, n_ops: int) -> float:
    """Microseconds per op of ``count`` new expressions, each read once."""
    start = time.perf_counter()
    for seed in range(first_seed, first_seed + count):
        float(_expression(xp, random.Random(seed), inputs, n_ops))
    return (time.perf_counter() - start) / (count * (n_ops + 3)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.new_graphs", description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=12, help="ops drawn per expression (default 12)")
    parser.add_argument("--repeat", type=int, default=9, help="timed batches of 100 expressions (default 9)")
    args = parser.parse_args()
    os.environ.setdefault("PLAIDARRAY_CACHE_DIR", tempfile.mkdtemp(prefix="plaidarray-new-graphs-"))
    import plaidarray as xp

    rng = np.random.default_rng(0)
    m = xp.asarray(rng.standard_normal((6, 50)))
    inputs = [xp.asarray(rng.standard_normal(50)), xp.asarray(rng.standard_normal(50)), m[1], m[3]]
    _batch(xp, inputs, 10**6, 60, args.ops)  # every op's kernel loaded, every size met
    per_op = [_batch(xp, inputs, k * 1000, 100, args.ops) for k in range(args.repeat)]
    print("us per op of new graphs:", " ".join(f"{t:.2f}" for t in per_op), f"least {min(per_op):.2f}")


if __name__ == "__main__":
    main()
