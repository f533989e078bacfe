"""The device the API tier's arrays are made on: the default one (``PLAIDARRAY_DEVICE``;
with ``PLAIDARRAY_SIMULATED_GPUS=1 PLAIDARRAY_DEVICE=cuda`` the simulated GPU, docs/gpu.md).
A test of what only the host's devices do (share a caller's NumPy memory, call llvm-cpu's
BLAS) is skipped on another default device, saying why, rather than failing there."""

from __future__ import annotations

import pytest

from plaidarray.backend import devices

#: Whether the default device is one of the host's.
ON_HOST = devices.default().platform == "cpu"


def host_only(what: str) -> pytest.MarkDecorator:
    """Skip where the default device is not the host's: ``what`` the test checks that only
    the host's devices do."""
    return pytest.mark.skipif(not ON_HOST, reason=f"{what}: only the host's devices do, and the default "
                                                  f"device is {devices.default()}")
