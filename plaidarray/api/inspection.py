"""Inspection (spec chapter "Inspection"): ``__array_namespace_info__``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as dt
from ..api_version import sequence
from ..backend import devices
from ..backend.devices import Device

__all__ = ["__array_namespace_info__"]

_KIND_NAMES = {
    "bool": (dt.bool_,), "signed integer": dt.SIGNED, "unsigned integer": dt.UNSIGNED, "integral": dt.INTEGER,
    "real floating": dt.REAL_FLOATING, "complex floating": dt.COMPLEX, "numeric": dt.NUMERIC,
}


def _check_device(device: Any, where: str) -> None:
    """A ValueError unless ``device`` is None or one of ``devices()`` (all of which take
    every dtype)."""
    devices.resolve(device, where)


class Info:
    """What this namespace supports, for code written against the standard."""

    def capabilities(self) -> dict[str, Any]:
        from .. import capabilities

        return dict(capabilities.CAPABILITIES)

    def default_device(self) -> Device:
        return devices.default()

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        _check_device(device, "default_dtypes")
        return {"real floating": dt.default_float, "complex floating": dt.default_complex,
                "integral": dt.default_int, "indexing": dt.int64}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, np.dtype]:
        _check_device(device, "dtypes")
        if kind is None:
            chosen = dt.ALL
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            chosen = tuple(d for d in dt.ALL if any(self._matches(d, k) for k in kinds))
        return {d.name: d for d in chosen}

    @staticmethod
    def _matches(d: np.dtype, kind: Any) -> bool:
        if isinstance(kind, str):
            if kind not in _KIND_NAMES:
                raise ValueError(f"unknown dtype kind {kind!r}")
            return d in _KIND_NAMES[kind]
        return d == np.dtype(kind)

    def devices(self) -> list[Device] | tuple[Device, ...]:
        return sequence(list(devices.every_device()))


def __array_namespace_info__() -> Info:
    return Info()
