"""The GPU tier's fixtures."""

from __future__ import annotations

import pytest

from plaidarray.backend import devices
from plaidarray.backend.llvm_nvptx import devices as gpu_devices


@pytest.fixture
def cuda(monkeypatch):
    """The ``cuda`` platform as two simulated GPUs, for this test alone."""
    monkeypatch.setattr(gpu_devices.config, "get",
                        lambda name, _get=gpu_devices.config.get: 2 if name == "PLAIDARRAY_SIMULATED_GPUS" else _get(name))
    made = tuple(gpu_devices.cuda_devices())
    monkeypatch.setitem(devices._provided, "cuda", made)
    for d in made:
        monkeypatch.setitem(devices._BY_NAME, d.name, d)
        monkeypatch.setitem(devices._BY_NAME, f"{d.platform}:{d.index}", d)
    return made
