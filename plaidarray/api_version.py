"""Which revision of the Array API standard the namespace follows.

The default is the latest revision the public conformance suite covers. Where
revisions differ in behaviour (2025.12 returns tuples where 2024.12 returned lists),
the chosen revision decides. Choose with ``PLAIDARRAY_API_VERSION`` at import, or
``plaidarray.set_array_api_version``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import config

SUPPORTED = config.API_VERSIONS
LATEST = SUPPORTED[-1]

_current: str = config.get("PLAIDARRAY_API_VERSION")


def current() -> str:
    return _current


def set_array_api_version(version: str) -> None:
    """Follow ``version`` of the standard from now on (also sets ``__array_api_version__``)."""
    global _current
    if version not in SUPPORTED:
        raise ValueError(f"unsupported Array API version {version!r}; supported: {', '.join(SUPPORTED)}")
    _current = version
    import plaidarray

    plaidarray.__array_api_version__ = version


def sequence(items: Iterable[Any]) -> list | tuple:
    """A returned sequence: a tuple from 2025.12 on, a list before."""
    return tuple(items) if _current >= "2025.12" else list(items)
