"""Which backends the tests that take a ``backend`` run on: every backend of the registry
(built-in and installed plugins), or those named in ``PLAIDARRAY_TEST_BACKENDS``
(comma-separated), so the API tier runs unchanged on any backend. A backend that is
named but missing, or fails to load (its compiler's package absent), is a skipped
parameter that says why, not an error at collection."""

from __future__ import annotations

import os

import pytest

from plaidarray.backend import registry

#: The environment variable naming the backends to test.
VARIABLE = "PLAIDARRAY_TEST_BACKENDS"


def _param(name: str, known: list[str]):
    if name not in known:
        return pytest.param(name, marks=pytest.mark.skip(reason=f"{VARIABLE} names {name!r}, which is not "
                                                                f"registered (registered: {', '.join(known)})"))
    try:
        registry.get(name)
    except Exception as exc:  # an entry point's import failing is the plugin's to report, here a skip
        return pytest.param(name, marks=pytest.mark.skip(reason=f"backend {name!r} does not load: {exc}"))
    return name


def chosen() -> list:
    """The ``backend`` parameters: names, or skipped params with their reason."""
    known = registry.names()
    wanted = [n.strip() for n in os.environ.get(VARIABLE, "").split(",") if n.strip()] or known
    return [_param(name, known) for name in wanted]


BACKENDS = chosen()
