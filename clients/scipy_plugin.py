"""pytest plugin: SciPy's own array-API tests also run on plaidarray.

SciPy (``SCIPY_ARRAY_API=1``) parametrises its array-API tests with the ``xp`` fixture of
its ``conftest.py``, whose backends are a list built when that module is imported
(``xp_available_backends``: numpy, array_api_strict, and torch, cupy, jax.numpy,
dask.array when installed). This plugin imports that conftest first, adds plaidarray to
the list (test id ``plaidarray``; ``-k plaidarray`` selects it) and defines the fixture
again over the longer list. Where a test's markers skip or xfail backends, plaidarray
takes array_api_strict's part in the generic ones (SciPy's "stand-in for unknown
libraries"): ``np_only`` skips it unless array_api_strict is among the exceptions;
markers that name array_api_strict itself (its own limits) do not apply to it. Nothing of SciPy is modified on disk:
pytest finds the conftest already imported and uses it. Load with ``-p scipy_plugin``
and this directory on ``PYTHONPATH``; collect with ``--pyargs scipy.<module>``.

plaidarray is an eager backend to SciPy (``bool(x)`` computes), so ``eager_only`` tests
run on it, and a CPU one, so ``cpu_only`` tests do. SciPy's conftest sets array_api_strict
to the 2024.12 revision of the standard; plaidarray follows the same revision here, so
both are tested against the standard SciPy targets (2025.12's tuple from ``devices()``
breaks SciPy 1.17's ``devices() + [None]``; docs/clients.md).
"""

from __future__ import annotations

import os
import sys

NAMESPACE = "plaidarray"
#: The revision SciPy's conftest gives array_api_strict.
API_VERSION = "2024.12"

if "scipy" in sys.modules and os.environ.get("SCIPY_ARRAY_API") != "1":
    raise RuntimeError("scipy_plugin: set SCIPY_ARRAY_API=1 before starting pytest")
os.environ["SCIPY_ARRAY_API"] = "1"

import pytest  # noqa: E402
import scipy.conftest as scipy_conftest  # noqa: E402 - after SCIPY_ARRAY_API is set

import plaidarray  # noqa: E402

plaidarray.set_array_api_version(API_VERSION)

_backend_reasons = scipy_conftest._backends_kwargs_from_request


def _reasons_with_plaidarray(request: pytest.FixtureRequest, skip_or_xfail: str) -> dict[str, str]:
    """SciPy's {backend: reason} to skip or xfail a test, with plaidarray's: the reason
    of each ``np_only`` marker that does not except array_api_strict (or plaidarray)."""
    reasons = _backend_reasons(request, skip_or_xfail)
    reasons.pop(NAMESPACE, None)
    for marker in request.node.iter_markers(f"{skip_or_xfail}_xp_backends"):
        excepted = set(marker.kwargs.get("exceptions", ())) & {"array_api_strict", NAMESPACE}
        if marker.kwargs.get("np_only", False) and not excepted:
            reasons.setdefault(NAMESPACE, marker.kwargs.get("reason") or "do not run with non-NumPy backends")
    return reasons


if NAMESPACE not in scipy_conftest.xp_known_backends:
    scipy_conftest.xp_known_backends.add(NAMESPACE)
    scipy_conftest._backends_kwargs_from_request = _reasons_with_plaidarray
    scipy_conftest.xp_available_backends.append(
        pytest.param(plaidarray, id=NAMESPACE, marks=pytest.mark.array_api_backends))
    # The fixture took its params when it was defined: define it again over the new list.
    scipy_conftest.xp = pytest.fixture(params=scipy_conftest.xp_available_backends)(scipy_conftest.xp.__wrapped__)
