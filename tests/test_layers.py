"""The layers import one way: api -> trace -> backend -> codegen -> hlo (docs/architecture.md).
Read from the sources' import statements (those inside functions included), so a lazy
import cannot hide a dependency that points up."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "plaidarray"

#: For each layer, the layers above it, which it must not import.
FORBIDDEN = {
    "hlo": ("api", "trace", "codegen"),
    "codegen": ("api", "trace", "backend"),
    "backend": ("api", "trace"),
    "trace": ("api",),
}


def _imported_layers(source: str, module: tuple[str, ...]) -> set[str]:
    """The plaidarray subpackages that ``source``, the module named by the parts
    ``module``, imports, relatively or absolutely."""
    layers = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = list(module[:-node.level])
                target = [*base, *(node.module.split(".") if node.module else [])]
            else:
                target = (node.module or "").split(".")
            if target[:1] == ["plaidarray"] and len(target) > 1:
                layers.add(target[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "plaidarray" and len(parts) > 1:
                    layers.add(parts[1])
    return layers


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_it(layer):
    wrong = {}
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        module = path.relative_to(PACKAGE.parent).with_suffix("").parts
        wrong[str(path.relative_to(PACKAGE))] = sorted(_imported_layers(path.read_text(), module) & set(FORBIDDEN[layer]))
    assert {path: up for path, up in wrong.items() if up} == {}


def test_the_import_reader_sees_every_form_of_import():
    """The check above can fail: imports inside functions, relative at any depth, and
    absolute ones are all found."""
    source = ("import numpy\nfrom . import node\nfrom ..backend import registry\n"
              "def f():\n    from ..api.creation import asarray\n    import plaidarray.hlo.ir\n")
    assert _imported_layers(source, ("plaidarray", "trace", "x")) == {"trace", "backend", "api", "hlo"}
