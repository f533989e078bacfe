"""Shared fixtures and Hypothesis settings for the differential tests against NumPy.

Profiles: ``ci`` (the default: few, derandomized examples so the suite is fast and
reproducible) and ``thorough`` (200 examples), chosen with ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# A second CPU device (the same memory, arrays on it kept apart: ``backend/devices.py``), so
# tests/api/test_devices.py has one to move arrays to; ``PLAIDARRAY_DEVICE=cpu:1`` runs the
# API tier on it (tools/slow_tests.sh).
os.environ.setdefault("PLAIDARRAY_CPU_DEVICES", "2")

import plaidarray as xp  # noqa: E402
from plaidarray.backend.llvm import storing  # noqa: E402
from plaidarray.backend.llvm_cpu import tiering
from plaidarray.trace import hot  # noqa: E402
from backend_choice import BACKENDS  # noqa: E402
from jit_helpers import isolated_cache_dir  # noqa: E402,F401  (autouse: tests never write the user's compile cache)

# ``backend`` is a function-scoped fixture used by @given tests; its effect (which
# backend runs the graph) is the same for every example, so the health check that
# warns about fixtures not being reset between examples does not apply.
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]

settings.register_profile("ci", max_examples=12, deadline=None, derandomize=True,
                          suppress_health_check=_SUPPRESSED)
settings.register_profile("thorough", max_examples=200, deadline=None, suppress_health_check=_SUPPRESSED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

@pytest.fixture(params=BACKENDS)
def backend(request):
    """Run the test on each backend chosen (``backend_choice.py``: every registered one, the
    compiled backend and the NumPy reference interpreter, unless ``PLAIDARRAY_TEST_BACKENDS``
    names others)."""
    xp.set_backend(request.param)
    try:
        yield request.param
    finally:
        xp.set_backend(None)


@pytest.fixture(autouse=True)
def upgrades_finish_with_their_test():
    """Full code is generated, and compiled kernels stored, on background threads
    (``tiering.py``, ``storing.py``); waiting for both at the end of each test keeps one
    test's compiles out of the next one's counts and its stores out of the next one's cache
    directory (upgrades store what they generate, so the stores are waited for second)."""
    yield
    hot.drain()
    tiering.drain()
    storing.drain()


@pytest.fixture
def fused(monkeypatch):
    """Every graph compiled fused at its first read, in the reading thread, as with
    ``PLAIDARRAY_FUSE_AFTER_MS=0`` (child processes too), without the kernels built at
    installation: for tests of the compiler and of what it compiles (counts, dumps, cache
    entries), which the baseline tier would run op by op."""
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 0.0)
    monkeypatch.setenv("PLAIDARRAY_FUSE_AFTER_MS", "0")
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "0")  # what is compiled is what the test made


@pytest.fixture
def counted_reads():
    """``_graph.read`` configured with counting ``decide``, ``materialize`` and
    ``planned``: the calls that went to Python, by name; configured as before afterwards."""
    from plaidarray.trace import materialize as m

    calls = {"decide": 0, "materialize": 0, "planned": 0}

    def counting(name, fn):
        def counted(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)
        return counted

    m._read_in_c(counting("decide", m.decide), counting("materialize", m.materialize), counting("planned", m.planned))
    try:
        yield calls
    finally:
        m._read_in_c()
