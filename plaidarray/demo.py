"""``plaidarray demo``: trace NumPy-style code, show its HLO, time compile vs cached call."""

from __future__ import annotations

import time

import numpy as np


def _softplus_layer(xp, x, w, b):
    """A small NumPy-style function: a dense layer with a softplus and a row mean."""
    y = xp.matmul(x, w) + b
    y = xp.log1p(xp.exp(-xp.abs(y))) + xp.maximum(y, 0.0)
    return xp.mean(y, axis=1)


def run() -> None:
    import plaidarray as xp
    from plaidarray.hlo import Module
    from plaidarray.hlo.passes import run_hlo_passes
    from plaidarray.trace.to_hlo import PendingGraph

    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((256, 64), (64, 32), (32,)))

    traced = _softplus_layer(xp, xp.asarray(x), xp.asarray(w), xp.asarray(b))
    comp = PendingGraph([traced._node]).computation()
    print("Traced HLO (after the HLO passes):\n")
    print(Module("softplus_layer", run_hlo_passes(comp)).to_text())

    before = xp.cache_info()
    start = time.perf_counter()
    first = np.asarray(traced)
    t_first = time.perf_counter() - start
    after_first = xp.cache_info()

    again = _softplus_layer(xp, xp.asarray(x), xp.asarray(w), xp.asarray(b))
    start = time.perf_counter()
    second = np.asarray(again)
    t_second = time.perf_counter() - start
    after_second = xp.cache_info()

    expected = _softplus_layer(np, x, w, b)
    print(f"first call : {t_first * 1e3:8.2f} ms  (compiles: {after_first.compiles - before.compiles})")
    print(f"second call: {t_second * 1e3:8.2f} ms  (compiles: {after_second.compiles - after_first.compiles}, "
          f"cache hits: {after_second.hits - after_first.hits})")
    print(f"matches NumPy: {np.allclose(first, expected, rtol=1e-4, atol=1e-5)} "
          f"(max abs diff {np.max(np.abs(first - expected)):.2e}); second == first: {np.array_equal(first, second)}")
