"""The worked examples of docs/architecture.md ("Extending plaidarray"), run: a new
elementwise op (its definition, its lowering, its API row, and nothing else), one
lowered differently on one platform, a new HLO pass, and a new backend that reuses the
llvm-cpu code generator and is found through the ``plaidarray.backends`` entry point.
Values against NumPy."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
from xdsl.dialects import arith

import plaidarray as xp
from plaidarray.api.graph import op
from plaidarray.backend import registry
from plaidarray.backend.llvm_cpu.lowerings import PLATFORM
from plaidarray.codegen.fusion import plan_fusion
from plaidarray.codegen.lowering import Elementwise, lowering_for, register_lowering
from plaidarray.hlo import passes
from plaidarray.hlo.ir import Computation, Instruction
from plaidarray.hlo.opdef import OPS
from plaidarray.hlo.ops import elementwise
from plaidarray.hlo.shape import Shape

# --- 1. an op: its definition (semantics), its lowering, its API row ---------------------

# The definition, in hlo/ops/elementwise.py: name, arity, NumPy reference, accepted dtype kinds.
elementwise.define("cube_example", 1, reference=lambda x: x * x * x, kinds="f")
# The lowering, in codegen/lowerings/elementwise.py: the scalar code, for every platform.
register_lowering("cube_example", Elementwise(
    lambda b, args, inst: b.insert(arith.MulfOp(b.insert(arith.MulfOp(args[0], args[0])), args[0]))))


def cube(x: xp.Array) -> xp.Array:
    """The API row: check the argument, record the op."""
    return op("cube_example", x)


def test_a_new_elementwise_op_on_both_backends(backend):
    a = np.linspace(-2.0, 2.0, 11, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(cube(xp.asarray(a)) + 1.0), a * a * a + np.float32(1.0))
    with pytest.raises(TypeError, match="cube_example: operands of dtype int64 are not supported"):
        cube(xp.asarray(np.arange(3)))


def test_a_new_elementwise_op_fuses_like_the_others():
    """Nothing but the three rows above: fusion reads the kind of the lowering, so the
    new op is scalar code inside its consumer's kernel."""
    x = Instruction("parameter", (), {"number": 0, "shape": Shape((5,), np.dtype(np.float32))},
                    Shape((5,), np.dtype(np.float32)))
    cubed = Instruction.make("cube_example", (x,))
    out = Instruction.make("exp", (cubed,))
    assert [k.opcode for k in plan_fusion(Computation("f", [x], [out]), PLATFORM).kernels] == ["exp"]


def test_every_op_lowers_on_llvm_cpu():
    """Definitions (hlo/) and lowerings (codegen/, backend/) are registered apart: no op
    is left without a lowering."""
    missing = []
    for name in OPS:
        try:
            lowering_for(name, PLATFORM)
        except NotImplementedError:
            missing.append(name)
    assert missing == []


# --- 1b. an op one platform lowers its own way (a C library call on llvm-cpu) ------------

elementwise.define("cbrt_example", 1, reference=np.cbrt, kinds="f")
# In backend/llvm_cpu/lowerings/: only llvm-cpu has this lowering.
register_lowering("cbrt_example", Elementwise(lambda b, args, inst: b.libm("cbrt", args, inst.shape.dtype),
                                              expensive=True), PLATFORM)


def test_an_op_lowered_by_one_platform_only(backend):
    a = np.linspace(-8.0, 8.0, 13)
    np.testing.assert_allclose(np.asarray(op("cbrt_example", xp.asarray(a))), np.cbrt(a), rtol=1e-15)
    with pytest.raises(NotImplementedError, match="cbrt_example has no lowering"):
        lowering_for("cbrt_example")  # another platform would register its own


# --- 2. a pass: a named function Computation -> Computation in the pipeline's list ---------

def test_a_new_hlo_pass_runs_in_every_compile(monkeypatch, tmp_path, fused):
    seen: list[int] = []

    def count_instructions(comp: Computation) -> Computation:
        seen.append(len(comp.instructions))
        return comp

    monkeypatch.setattr(passes.pipeline, "HLO_PASSES", [*passes.HLO_PASSES, ("count-instructions", count_instructions)])
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))
    x = xp.asarray(np.arange(23.0))  # a shape no other test compiles
    assert float(xp.sum(xp.sqrt(x))) == pytest.approx(np.sum(np.sqrt(np.arange(23.0))))
    assert seen and seen[-1] >= 3
    assert list(tmp_path.glob(f"*.hlo.{len(passes.HLO_PASSES)}-count-instructions.txt"))


# --- 3. a backend: its compiler reuses the code generator's stages; an entry point finds it --

TOY_BACKEND = '''
"""A toy backend: the llvm-cpu stages at -O1, without the persistent cache, counting compiles."""
from plaidarray.backend.executable import Backend, Compiler
from plaidarray.backend.llvm_cpu.stages import BACK, FRONT, Compilation
from plaidarray.backend.pipeline import run_stages

STAGES = [stage for stage in (*FRONT, *BACK) if stage.name != "store"]


class ToyCompiler(Compiler):
    target = "toy/O1"
    compiles = 0

    def compile(self, module):
        ToyCompiler.compiles += 1
        c = Compilation("toy_" + str(ToyCompiler.compiles), module.entry, module.donated, 1, self.target)
        run_stages(STAGES, c, c.name, c.timings)
        return c.executable


def backend():
    return Backend("toy", priority=-1, compiler=ToyCompiler(), description="the architecture guide's example")
'''


@pytest.fixture
def toy_package(tmp_path, monkeypatch):
    """The toy backend as an installed distribution: a module and its entry point."""
    (tmp_path / "toy_backend.py").write_text(textwrap.dedent(TOY_BACKEND))
    info = tmp_path / "toy_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-backend\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[plaidarray.backends]\ntoy = toy_backend:backend\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("_loaders", "_backends"):  # discover again, with the new distribution
        monkeypatch.setattr(registry, name, {})
    monkeypatch.setattr(registry, "_discovered", False)
    yield
    xp.set_backend(None)
    sys.modules.pop("toy_backend", None)


def test_a_new_backend_found_through_its_entry_point(toy_package, fused):
    assert registry.available()["toy"] == -1
    xp.set_backend("toy")
    toy = sys.modules["toy_backend"].ToyCompiler
    a = np.linspace(0.0, 1.0, 29)
    np.testing.assert_allclose(np.asarray(xp.exp(xp.asarray(a)) * 3.0), np.exp(a) * 3.0, rtol=1e-15)
    assert toy.compiles == 1


def test_a_plugin_computes_only_when_chosen(toy_package, tmp_path, monkeypatch):
    """An installed plugin, even of the highest priority, is found when backends are named
    or listed, and computes only when chosen: the default reads no distribution's metadata."""
    source = tmp_path / "toy_backend.py"
    source.write_text(source.read_text().replace("priority=-1", "priority=1000"))
    searches = []
    entry_points = registry._entry_points
    monkeypatch.setattr(registry, "_entry_points", lambda: searches.append(1) or entry_points())
    monkeypatch.setattr(registry, "_current", None)
    assert registry.current().name == registry.DEFAULT and not searches
    assert registry.available()["toy"] == 1000 and searches == [1]
    monkeypatch.setattr(registry, "_current", None)
    assert registry.current().name == registry.DEFAULT
    xp.set_backend("toy")
    assert registry.current().name == "toy"


def test_the_registry_finds_the_entry_points_importlib_metadata_finds(tmp_path, monkeypatch):
    """``registry._entry_points`` reads only the ``entry_points.txt`` files naming the
    group: the same entry points, in the same order, as ``importlib.metadata`` on a path
    with a distribution naming the group, one naming another group, one without entry
    points, the first again further along (left out, as importlib.metadata leaves it),
    an egg-info directory and a zip archive."""
    import zipfile
    from importlib.metadata import entry_points

    def distribution(directory, folder, name, text):
        info = directory / folder
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        if text is not None:
            (info / "entry_points.txt").write_text(text)

    first, second = tmp_path / "first", tmp_path / "second"
    distribution(first, "alpha_backend-1.0.dist-info", "alpha-backend", "[plaidarray.backends]\nalpha = a:b\n")
    distribution(first, "other-1.0.dist-info", "other", "[console_scripts]\nx = plaidarray.backends:y\n")
    distribution(first, "plain-1.0.dist-info", "plain", None)
    distribution(second, "Alpha.Backend-2.0.dist-info", "Alpha.Backend", "[plaidarray.backends]\nshadowed = a:c\n")
    distribution(second, "beta.egg-info", "beta", "[plaidarray.backends]\nbeta = b:c\n")
    archive = tmp_path / "gamma.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("gamma-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: gamma\nVersion: 1.0\n")
        z.writestr("gamma-1.0.dist-info/entry_points.txt", "[plaidarray.backends]\ngamma = g:h\n")
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second), str(archive)])
    found = [(ep.name, ep.value) for ep in registry._entry_points()]
    assert found == [(ep.name, ep.value) for ep in entry_points(group=registry.GROUP)]
    assert found == [("alpha", "a:b"), ("beta", "b:c"), ("gamma", "g:h")]
