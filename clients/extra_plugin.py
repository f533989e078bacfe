"""pytest plugin: array-api-extra's tests also run on plaidarray.

array-api-extra's test suite (``tests/`` of its sdist; the wheel ships none) takes its
backends from the enum ``array_api_extra._lib._backends.Backend``: the ``library`` and
``xp`` fixtures of its ``tests/main/conftest.py`` are parametrised over its members.
An Enum cannot gain members, so this plugin replaces it, in memory, by an enum with the
same members and methods plus ``PLAIDARRAY = "plaidarray"`` (test id ``plaidarray``;
``-k plaidarray`` selects it). Load with ``-p extra_plugin`` and this directory on
``PYTHONPATH``: pytest imports plugins before it collects the conftest and test
modules, which are the only importers of ``Backend``. Run ``tests/main``, as the
project's own test task does (``tests/vendoring`` needs a vendored copy).
"""

from __future__ import annotations

import sys
from enum import Enum

from array_api_extra._lib import _backends

NAMESPACE = "plaidarray"


def _with_member(enum: type[Enum], name: str, value: str) -> type[Enum]:
    """A copy of ``enum`` (members, methods, docstring) with one more member."""
    metaclass = type(enum)
    body = metaclass.__prepare__(enum.__name__, (Enum,))
    for member in enum:
        body[member.name] = member.value
    body[name] = value
    for attribute, entry in vars(enum).items():
        if attribute.startswith("_") and attribute not in ("__doc__", "__module__", "__qualname__"):
            continue
        if attribute not in enum.__members__ and attribute not in body:
            body[attribute] = entry
    return metaclass(enum.__name__, (Enum,), body)


def _install() -> None:
    original = _backends.Backend
    if NAMESPACE in {member.value for member in original}:
        return
    replacement = _with_member(original, NAMESPACE.upper(), NAMESPACE)
    for module_name, module in list(sys.modules.items()):
        in_package = module_name == "array_api_extra" or module_name.startswith("array_api_extra.")
        if in_package and getattr(module, "Backend", None) is original:
            module.Backend = replacement


_install()


def pytest_configure(config) -> None:
    """Declare the marker the suite's parallel runner (pytest-run-parallel) would declare.

    The suite runs with ``--strict-markers`` and marks JAX and Dask cases ``thread_unsafe``.
    """
    if not any(line.startswith("thread_unsafe") for line in config.getini("markers")):
        config.addinivalue_line("markers", "thread_unsafe: not run in parallel threads")
