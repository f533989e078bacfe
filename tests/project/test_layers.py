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


#: The packages under backend/ that are not backends but shared by several, and the
#: modules each holds: a second LLVM backend imports these, never llvm_cpu.
SHARED = {"llvm": {"codegen", "codegen_worker", "emitter", "group_cache", "ir_loops", "kernel_source", "lazy_import", "lowering",
                   "math_functions", "object_cache", "runtime_routines", "sources", "storing", "target"}}


def _packages() -> list[str]:
    return sorted(p.name for p in (PACKAGE / "backend").iterdir() if (p / "__init__.py").exists())


def _backend_packages() -> list[str]:
    """The backends: packages under backend/ but the shared ones (backend/'s own modules and
    those packages are what backends share)."""
    return [name for name in _packages() if name not in SHARED]


def _imported_backends(source: str, module: tuple[str, ...], backends: list[str]) -> set[str]:
    """The backend packages that ``source`` (the module ``module``) imports, ``from .. import
    name`` included."""
    found = set()
    for imported in _imported_modules(source, module):
        if imported[:2] == ("plaidarray", "backend") and len(imported) > 2 and imported[2] in backends:
            found.add(imported[2])
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = (*module[:-node.level], *(node.module.split(".") if node.module else []))
            if base == ("plaidarray", "backend"):
                found.update(alias.name for alias in node.names if alias.name in backends)
    return found


def test_backends_are_siblings_that_never_import_each_other():
    """A backend reaches what all backends share through backend/'s own modules and the
    shared packages, never through another backend's package (a second LLVM backend must
    not import llvm_cpu); a shared package imports no backend."""
    backends = _backend_packages()
    assert {"llvm_cpu", "llvm_nvptx", "reference"} <= set(backends)
    wrong = {}
    for package in _packages():
        for path, source, module in _sources(f"backend/{package}"):
            others = _imported_backends(source, module, backends) - {package}
            if others:
                wrong[path] = sorted(others)
    assert wrong == {}


def test_the_shared_packages_hold_what_they_say():
    """The modules of each shared package are those named in ``SHARED``: a module moved
    into one, or out of it into a backend, is a decision this test records."""
    for package, modules in SHARED.items():
        found = {p.stem for p in (PACKAGE / "backend" / package).glob("*.py") if p.stem != "__init__"}
        assert found == modules, package


def test_the_llvm_backends_use_the_shared_core():
    """llvm-cpu's and llvm-nvptx's compilers run the shared stages and emitter, each with a
    renderer of its own."""
    from plaidarray.backend.llvm import emitter, lowering
    from plaidarray.backend.llvm_cpu import stages as cpu
    from plaidarray.backend.llvm_nvptx import stages as nvptx

    for stages, own in ((cpu, (*cpu.FRONT, *cpu.BACK)), (nvptx, nvptx.STAGES)):
        assert issubclass(stages.Compilation, lowering.Lowering)
        assert isinstance(stages.Compilation.renderer, emitter.Renderer)
        assert {lowering.CHECK, *lowering.HLO, *lowering.LOWER} <= set(own)
    assert cpu.Compilation.renderer is not nvptx.Compilation.renderer


def test_the_backend_import_reader_sees_a_sibling_however_imported():
    module = ("plaidarray", "backend", "llvm_cpu", "x")
    backends = ["llvm_cpu", "reference"]
    for source in ("from ..reference import evaluator", "from .. import reference",
                   "import plaidarray.backend.reference.evaluator", "def f():\n    from ...backend.reference import e\n"):
        assert _imported_backends(source, module, backends) == {"reference"}, source
    assert _imported_backends("from .. import registry\nfrom . import jit", module, backends) == {"llvm_cpu"}
