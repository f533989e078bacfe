"""A loop whose graphs tests count: a linear simulation recorded and never read inside
its loop, and the sizes of the graphs the baseline tier assembles."""

from __future__ import annotations

import numpy as np


def assembled_sizes(monkeypatch) -> list[int]:
    """The row counts of the graphs the baseline tier assembles from now on (the cache
    emptied first, so that each structure is assembled anew)."""
    import plaidarray as xp
    from plaidarray.trace import baseline

    sizes: list[int] = []
    assemble = baseline.assemble
    monkeypatch.setattr(baseline, "assemble", lambda rows, *args, **kwargs: (sizes.append(len(rows)),
                                                                             assemble(rows, *args, **kwargs))[1])
    xp.clear_cache()
    return sizes


def state_space_readings(steps: int = 25) -> tuple[list, list[float]]:
    """The readings of a 4-state linear simulation of ``steps`` steps, recorded by
    plaidarray and never read, and NumPy's values of them."""
    import plaidarray as xp

    rng = np.random.default_rng(0)
    a, b, c, u = rng.standard_normal((4, 4)) * 0.3, rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(steps)
    state, expected_state = xp.zeros(4), np.zeros(4)
    readings, expected = [], []
    for t in range(steps):
        state = xp.asarray(a) @ state + xp.asarray(b) * float(u[t])
        expected_state = a @ expected_state + b * u[t]
        readings.append(xp.asarray(c) @ state)
        expected.append(float(c @ expected_state))
    return readings, expected
