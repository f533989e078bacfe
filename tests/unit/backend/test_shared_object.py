"""Shared objects loaded from their bytes (``backend/llvm_cpu/shared_object.py``): each load
is the object it was given, even while others of the same symbols stay loaded, through a
directory of the process's own that is made again if something removes it."""

from __future__ import annotations

import ctypes
import shutil
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
