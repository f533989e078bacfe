"""Shared objects loaded from their bytes (``backend/llvm_cpu/shared_object.py``): each load
is the object it was given, even while others of the same symbols stay loaded, through a
directory of the process's own that is made again if something removes it."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest
from jit_helpers import run_child

from plaidarray.backend.llvm_cpu import jit, shared_object

pytestmark = pytest.mark.skipif(shared_object.linker() is None, reason="needs the system linker (ld)")


def _library(value: int) -> bytes:
    """A shared object whose ``answer`` returns ``value``."""
    ir = f"define i64 @answer() {{\n  ret i64 {value}\n}}\n"
    linked = shared_object.link([jit.generate(ir, 0).object])
    assert linked is not None
    return linked


def _answer(library: shared_object.SharedObject) -> int:
    return ctypes.CFUNCTYPE(ctypes.c_int64)(library.address("answer"))()


def test_each_load_is_its_own_object_while_others_stay_loaded():
    loaded = [shared_object.SharedObject(_library(value)) for value in (1, 2, 3)]
    assert [_answer(library) for library in loaded] == [1, 2, 3]
    loaded[1].close()
    again = shared_object.SharedObject(_library(4))
    assert [_answer(library) for library in (loaded[0], loaded[2], again)] == [1, 3, 4]


def test_a_removed_loading_directory_is_made_again():
    first = shared_object.SharedObject(_library(5))
    directory = shared_object._loading_directory()
    shutil.rmtree(directory)
    second = shared_object.SharedObject(_library(6))
    assert (_answer(first), _answer(second)) == (5, 6)
    assert shared_object._loading_directory() != directory and not any(shared_object._loading_directory().iterdir())


def test_the_loading_directory_is_private_empty_and_gone_at_exit(tmp_path):
    code = """
import json, os, stat
import plaidarray as xp
from plaidarray.backend.llvm_cpu import shared_object
float(xp.sum(xp.ones(3)))
directory = shared_object._loading_directory()
print(json.dumps({"directory": str(directory), "mode": stat.S_IMODE(directory.stat().st_mode),
                  "files": os.listdir(directory)}))
"""
    result = run_child(code, tmp_path)
    assert result["mode"] == 0o700 and result["files"] == []
    assert not Path(result["directory"]).exists()


#: Relocations an x86-64 object resolves with 32-bit PC-relative offsets: where MCJIT
#: maps code and constants more than 2 GB apart, they cannot reach.
_NEAR = ("R_X86_64_PC32", "R_X86_64_PLT32", "R_X86_64_GOTPCREL", "R_X86_64_GOTPCRELX", "R_X86_64_REX_GOTPCRELX")


@pytest.mark.skipif(shutil.which("readelf") is None or not jit.host_target().triple.startswith("x86_64"),
                    reason="reads x86-64 relocations with readelf")
@pytest.mark.parametrize("emit_level", [0, 3])
def test_jit_code_reaches_its_constants_and_calls_at_any_distance(tmp_path, emit_level):
    """The host's code for MCJIT (and the cache's shared objects) is for the large code
    model: no relocation of it may need its target within 2 GB (a long SciPy test run
    aborted in LLVM on one)."""
    ir = """
declare double @exp(double)
define double @f(double %x) {
  %a = fmul double %x, 0x400921FB54442D18
  %b = fadd double %a, 0x3FF8000000000000
  %c = call double @exp(double %b)
  ret double %c
}
"""
    path = tmp_path / "f.o"
    path.write_bytes(jit.generate(ir, 3, emit_level=emit_level).object)
    listing = subprocess.run(["readelf", "-r", str(path)], capture_output=True, text=True, check=True).stdout
    types = {line.split()[2] for line in listing.splitlines() if line.startswith("0")}
    assert types and not types & set(_NEAR), types


LIBRARY_LATER = """
import json, numpy as np, plaidarray as xp
from plaidarray.backend.llvm_cpu import kernels, math_library, object_cache, storing
x = np.linspace(-3.0, 3.0, 5000)
first = np.asarray(xp.exp(xp.asarray(x)) * 2.0)  # generated here: MCJIT runs exp, linked in the background
jit_only = "plaidarray.exp.f64" in math_library._generated and "plaidarray.exp.f64" not in math_library._loaded
storing.drain()
stored = [p.stem for p, _ in object_cache.entries() if p.stem.startswith("library-")]
kernels.finish_upgrades()  # full code is a shared object: its exp must be where the loader finds it
full = np.asarray(xp.exp(xp.asarray(x)) * 2.0)
print(json.dumps({"jit_only": jit_only, "stored": len(stored), "shared": "plaidarray.exp.f64" in math_library._loaded,
                  "same": first.tobytes() == full.tobytes(), "right": bool(np.allclose(full, np.exp(x) * 2.0))}))
"""


def test_a_library_function_generated_here_is_linked_in_the_background_and_shared_when_needed(tmp_path):
    """A vector math function a process generates runs from MCJIT at once and is linked
    and stored on the storing thread; kernels in shared objects (full code here), which
    the platform's loader links, get it linked and opened before they load."""
    result = run_child(LIBRARY_LATER, tmp_path / "cache")
    assert result == {"jit_only": True, "stored": 1, "shared": True, "same": True, "right": True}
    again = run_child(LIBRARY_LATER, tmp_path / "cache")  # loaded from the cache, where it was stored
    assert again == {**result, "jit_only": False}
