"""The layers import one way: api -> trace -> backend -> codegen -> hlo (docs/architecture.md),
and hlo/ holds semantics only: it imports neither xDSL nor LLVM. Read from the sources'
import statements (those inside functions included), so a lazy import cannot hide a
dependency that points up."""

from __future__ import annotations

import ast

import pytest
from jit_helpers import REPO

PACKAGE = REPO / "plaidarray"

#: For each layer, the layers above it, which it must not import.
FORBIDDEN = {
    "hlo": ("api", "trace", "backend", "codegen"),
    "codegen": ("api", "trace", "backend"),
    "backend": ("api", "trace"),
    "trace": ("api",),
}


#: For each layer, the packages outside plaidarray it must not import: the op
#: definitions are shape rules and NumPy references; lowering them is codegen's.
FORBIDDEN_PACKAGES = {"hlo": ("xdsl", "llvmlite")}


def _imported_modules(source: str, module: tuple[str, ...]) -> set[tuple[str, ...]]:
    """The modules that ``source``, the module named by the parts ``module``, imports,
    relatively or absolutely, as tuples of name parts."""
    modules = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = list(module[:-node.level])
                modules.add((*base, *(node.module.split(".") if node.module else [])))
            else:
                modules.add(tuple((node.module or "").split(".")))
        elif isinstance(node, ast.Import):
            modules.update(tuple(alias.name.split(".")) for alias in node.names)
    return modules


def _imported_layers(source: str, module: tuple[str, ...]) -> set[str]:
    """The plaidarray subpackages that ``source`` (the module ``module``) imports."""
    return {m[1] for m in _imported_modules(source, module) if m[0] == "plaidarray" and len(m) > 1}


def _sources(layer: str):
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        yield str(path.relative_to(PACKAGE)), path.read_text(), path.relative_to(PACKAGE.parent).with_suffix("").parts


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_it(layer):
    wrong = {path: sorted(_imported_layers(source, module) & set(FORBIDDEN[layer]))
             for path, source, module in _sources(layer)}
    assert {path: up for path, up in wrong.items() if up} == {}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN_PACKAGES))
def test_a_layer_never_imports_the_packages_forbidden_to_it(layer):
    wrong = {path: sorted({m[0] for m in _imported_modules(source, module)} & set(FORBIDDEN_PACKAGES[layer]))
             for path, source, module in _sources(layer)}
    assert {path: found for path, found in wrong.items() if found} == {}


def test_the_import_reader_sees_every_form_of_import():
    """The check above can fail: imports inside functions, relative at any depth, and
    absolute ones are all found."""
    source = ("import numpy\nfrom . import node\nfrom ..backend import registry\n"
              "def f():\n    from ..api.creation import asarray\n    import plaidarray.hlo.ir\n")
    assert _imported_layers(source, ("plaidarray", "trace", "x")) == {"trace", "backend", "api", "hlo"}
    assert ("numpy",) in _imported_modules(source, ("plaidarray", "trace", "x"))
