"""Settings read from ``PLAIDARRAY_*`` environment variables."""

from __future__ import annotations

import os


def count(name: str, default: int) -> int:
    """The non-negative integer the variable ``name`` holds (``default`` when unset or
    empty); anything else is a ValueError naming the variable, not a silent default."""
    configured = os.environ.get(name, "").strip()
    if not configured:
        return default
    try:
        value = int(configured)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {configured!r}")
    return value
