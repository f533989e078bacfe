"""Generated code has no undefined behaviour.

The programs of ``ub_programs.py`` (division by zero, INT_MIN / -1, out-of-range shifts,
float -> int conversion of NaN and infinities, out-of-range gathers and windows, ...)
are undefined in C and LLVM; plaidarray defines them and guards the generated code. If
a guard were missing, LLVM's optimiser would be free to exploit the undefined
behaviour, and -O3 would compute something else than -O0. So each program runs in a
fresh process at ``PLAIDARRAY_OPT_LEVEL=0`` and at ``3``: the results must agree bit for
bit, and agree with the reference backend (NumPy evaluating each op's definition).
"""

from __future__ import annotations

import numpy as np
import pytest

import ub_programs
from jit_helpers import REPO, finish_child, start_child
from plaidarray.backend.llvm_cpu import host
from plaidarray.backend.llvm_cpu.compiler import CpuCompiler

LEVELS = (0, 3)

_CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
import numpy as np
import ub_programs
from plaidarray.backend import registry
np.savez({out!r}, **ub_programs.run_all())
print(json.dumps({{"target": registry.current().compiler.target}}))
"""

#: Programs computed by the vector math library, whose polynomials differ from the C
#: library (NumPy) by a few ulps; everything else must match the reference exactly.
_APPROXIMATE = {"float32 vector math": 4e-6, "float64 vector math": 1e-14}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, isolated_cache_dir):
    """Each level's results and compiler target, computed by two processes at once."""
    out = tmp_path_factory.mktemp("ub")
    children = {level: start_child(_CHILD.format(tests=str(REPO / "tests"), out=str(out / f"O{level}.npz")),
                                   isolated_cache_dir, PLAIDARRAY_OPT_LEVEL=str(level))
                for level in LEVELS}
    results = {}
    for level, child in children.items():
        target = finish_child(child, timeout=600)["target"]
        with np.load(out / f"O{level}.npz") as data:
            results[level] = (target, {name: data[name] for name in data.files})
    return results


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _differences(expected: dict[str, np.ndarray], got: dict[str, np.ndarray], approximate=None) -> list[str]:
    approximate = approximate or {}
    out = []
    assert expected.keys() == got.keys()
    for name, want in expected.items():
        have = got[name]
        if name in approximate:
            try:
                np.testing.assert_allclose(have, want, rtol=approximate[name], atol=0, equal_nan=True, strict=True)
            except AssertionError as exc:
                out.append(f"{name}: {exc}")
        elif not _same_bits(want, have):
            wrong = np.argwhere(~((want == have) | ((want != want) & (have != have))))
            out.append(f"{name}: {len(wrong)} elements differ, first at {wrong[:3].tolist()}")
    return out


def test_the_level_reaches_the_compiler(compiled):
    for level in LEVELS:
        assert compiled[level][0].endswith(f"/O{level}")


def test_minus_O0_and_minus_O3_compute_the_same_bits(compiled):
    (_, o0), (_, o3) = compiled[0], compiled[3]
    assert len(o0) >= 100
    differences = _differences(o0, o3)
    assert not differences, "\n".join(differences)


def test_compiled_code_computes_the_reference_definitions(compiled):
    from plaidarray.backend import registry

    registry.set_backend("reference")
    try:
        reference = ub_programs.run_all()
    finally:
        registry.set_backend(None)
    differences = _differences(reference, compiled[3][1], _APPROXIMATE)
    assert not differences, "\n".join(differences)


def test_the_level_is_part_of_both_cache_keys():
    # The executable cache keys on the compiler's target, and so does the disk cache.
    assert CpuCompiler(opt_level=0).target != CpuCompiler(opt_level=3).target
    assert CpuCompiler(opt_level=0).target.endswith("/O0")


@pytest.mark.parametrize("value", ["fast", "4", "-1", "O2"])
def test_a_bad_level_is_a_clear_error(monkeypatch, value):
    monkeypatch.setenv("PLAIDARRAY_OPT_LEVEL", value)
    with pytest.raises(ValueError, match=f"PLAIDARRAY_OPT_LEVEL must be one of 0, 1, 2, 3, got '{value}'"):
        host.opt_level()
    with pytest.raises(ValueError, match="PLAIDARRAY_OPT_LEVEL"):
        assert CpuCompiler().target
