"""Shared objects loaded from their bytes (``backend/llvm_cpu/shared_object.py``): each load
is the object it was given, even while others of the same symbols stay loaded, through a
directory of the process's own that is made again if something removes it."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from jit_helpers import run_child

from plaidarray.backend.llvm_cpu import targets
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu import shared_object
from plaidarray.backend.llvm_cpu.targets import host

pytestmark = pytest.mark.skipif(shared_object.linker() is None, reason="needs the system linker (ld)")


def _library(value: int) -> bytes:
    """A shared object whose ``answer`` returns ``value``."""
    ir = f"define i64 @answer() {{\n  ret i64 {value}\n}}\n"
    linked = shared_object.link([codegen_worker.generate_here(ir, host(), 0).object])
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


@pytest.mark.skipif(shutil.which("readelf") is None or not targets.host().triple.startswith("x86_64"),
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
    path.write_bytes(codegen_worker.generate_here(ir, host(), 3, emit_level=emit_level).object)
    listing = subprocess.run(["readelf", "-r", str(path)], capture_output=True, text=True, check=True).stdout
    types = {line.split()[2] for line in listing.splitlines() if line.startswith("0")}
    assert types and not types & set(_NEAR), types


LIBRARY_LATER = """
import json, numpy as np, plaidarray as xp
from plaidarray.backend.llvm import object_cache, storing
from plaidarray.backend.llvm_cpu import kernels, math_library
EXP = "plaidarray.exp.f64"
def libraries():
    storing.drain()
    return sorted(p.stem for p, _ in object_cache.entries() if p.stem.startswith("library-"))
x = np.linspace(-3.0, 3.0, 1000)
first = np.asarray(xp.exp(xp.asarray(x)) * 2.0)  # unvectorised first-tier code: the scalar exp
scalar = {"generated": sorted(map(list, math_library._generated)), "loaded": sorted(map(list, math_library._loaded)),
          "stored": len(libraries())}
kernels.finish_upgrades()  # full code is vectorised, in a shared object: exp's variants, where the loader finds them
full = np.asarray(xp.exp(xp.asarray(x)) * 2.0)
print(json.dumps({"scalar": scalar, "loaded": sorted(map(list, math_library._loaded)), "stored": len(libraries()),
                  "same": first.tobytes() == full.tobytes(), "right": bool(np.allclose(full, np.exp(x) * 2.0))}))
"""


def test_first_tier_code_builds_the_scalar_math_function_and_full_code_its_vector_variants(tmp_path):
    """Unvectorised first-tier code calls the scalar function only: a process generates
    that alone (a third of the build), runs it from MCJIT at once and links and stores it
    on the storing thread. Vectorised full code, in a shared object that the platform's
    loader links, gets the library with the vector variants, linked and opened before it
    loads; both compute the same bits. A second process finds the kernel's full code in
    the cache, and the library it calls."""
    result = run_child(LIBRARY_LATER, tmp_path / "cache")
    assert result == {"scalar": {"generated": [["plaidarray.exp.f64", False]], "loaded": [], "stored": 1},
                      "loaded": [["plaidarray.exp.f64", True]], "stored": 2, "same": True, "right": True}
    again = run_child(LIBRARY_LATER, tmp_path / "cache")
    assert again["scalar"] == {"generated": [], "loaded": [["plaidarray.exp.f64", True]], "stored": 2}
    assert again["same"] and again["right"]


def test_a_load_lets_other_python_threads_run():
    """``shared_object.dlopen`` lets go of Python's lock while the loader runs (where
    ``_ctypes.dlopen`` held it): a library whose constructor takes 0.2 s loads on another
    thread while this one's Python keeps running, as the preload thread's loads of SciPy's
    BLAS and LAPACK (OpenBLAS's start, ~6 ms) run beside a script's first steps."""
    ir = """
declare i32 @usleep(i32)
define internal void @slow_start() {
  %r = call i32 @usleep(i32 200000)
  ret void
}
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @slow_start, ptr null }]
define i64 @answer() {
  ret i64 7
}
"""
    data = shared_object.link([codegen_worker.generate_here(ir, host(), 0).object])
    assert data is not None
    loaded: list[shared_object.SharedObject] = []
    done = threading.Event()

    def load() -> None:
        loaded.append(shared_object.SharedObject(data))
        done.set()

    loader = threading.Thread(target=load)
    start = time.perf_counter()
    loader.start()
    ticks = [time.perf_counter()]
    while not done.is_set():
        ticks.append(time.perf_counter())
    loader.join()
    assert time.perf_counter() - start >= 0.2  # the constructor ran
    assert max(b - a for a, b in zip(ticks, ticks[1:])) < 0.1
    assert _answer(loaded[0]) == 7


def test_a_load_that_fails_names_the_loaders_reason(tmp_path):
    missing = tmp_path / "missing.so"
    with pytest.raises(OSError, match="missing.so"):
        shared_object.dlopen(str(missing))
    not_elf = tmp_path / "text.so"
    not_elf.write_text("not a shared object")
    with pytest.raises(OSError, match="text.so"):
        shared_object.dlopen(str(not_elf))
