"""pytest plugin: scikit-learn's array-API tests also run on plaidarray.

scikit-learn parametrises its array-API tests with the namespaces that
``sklearn.utils._array_api.yield_namespaces`` and
``yield_namespace_device_dtype_combinations`` yield (numpy, array_api_strict, cupy,
torch, ...). This plugin adds ``"plaidarray"`` to both, with the two dtypes
array_api_strict is tested with, so every such test gains a ``plaidarray`` case
(``-k plaidarray`` selects them). The installed package is not modified: the
generators are replaced in memory when pytest loads the plugin (``-p sklearn_plugin``
with this directory on ``PYTHONPATH``), before any test module is collected.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

NAMESPACE = "plaidarray"
# array_api_strict is tested in float64 and float32; plaidarray has one device.
DTYPES = ("float64", "float32")

# scikit-learn refuses array-API dispatch unless SciPy's own support was enabled
# before SciPy was imported.
if "scipy" in sys.modules and os.environ.get("SCIPY_ARRAY_API") != "1":
    raise RuntimeError("sklearn_plugin: set SCIPY_ARRAY_API=1 before starting pytest")
os.environ["SCIPY_ARRAY_API"] = "1"

from sklearn.utils import _array_api  # noqa: E402 - after SCIPY_ARRAY_API is set

_original_namespaces = _array_api.yield_namespaces
_original_combinations = _array_api.yield_namespace_device_dtype_combinations


def yield_namespaces(include_numpy_namespaces: bool = True) -> Iterator[str]:
    """scikit-learn's namespaces, then plaidarray."""
    yield from _original_namespaces(include_numpy_namespaces=include_numpy_namespaces)
    yield NAMESPACE


def yield_namespace_device_dtype_combinations(
    include_numpy_namespaces: bool = True,
) -> Iterator[tuple[str, str | None, str | None]]:
    """scikit-learn's (namespace, device, dtype) cases, then plaidarray's."""
    # The original calls the (replaced) module-level yield_namespaces, which gives
    # plaidarray its catch-all (None, None) case; ours replaces it.
    for combination in _original_combinations(include_numpy_namespaces=include_numpy_namespaces):
        if combination[0] != NAMESPACE:
            yield combination
    for dtype in DTYPES:
        yield NAMESPACE, None, dtype


def _replace_everywhere(original: object, replacement: object) -> None:
    """Rebind every sklearn module's reference to ``original`` (``from ... import`` copies)."""
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "sklearn" or name.startswith("sklearn.")):
            continue
        for attribute, value in list(vars(module).items()):
            if value is original:
                setattr(module, attribute, replacement)


_replace_everywhere(_original_namespaces, yield_namespaces)
_replace_everywhere(_original_combinations, yield_namespace_device_dtype_combinations)
