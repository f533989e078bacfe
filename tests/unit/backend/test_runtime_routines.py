"""The runtime's routines (``backend/llvm/runtime_routines.py``) compiled alone with
llvmlite and called on NumPy buffers: their results against NumPy's, and nothing written
outside the buffers they are given (a guard word after each), which a graph's run would
not show."""

from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from llvmlite import ir

from plaidarray.backend.llvm import runtime_routines

GUARD = -7


def _compiled(routine: str, suffix: str, argtypes: list) -> tuple:
    """The routine ``plaidarray_<routine>_<suffix>`` as a ctypes function (and the engine
    that holds its code)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = ir.Module("routine")
    module.triple = llvm.get_process_triple()
    name = f"plaidarray_{routine}_{suffix}"
    runtime_routines.runtime_function(module, name).linkage = "external"
    parsed = llvm.parse_assembly(str(module))
    parsed.verify()
    machine = llvm.Target.from_default_triple().create_target_machine(opt=2)
    engine = llvm.create_mcjit_compiler(parsed, machine)
    engine.finalize_object()
    return ctypes.CFUNCTYPE(None, *argtypes)(engine.get_function_address(name)), engine


_POSITIONS = _compiled("positions", "b1", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64])


@settings(max_examples=200)
@given(mask=st.lists(st.booleans(), max_size=80), extra=st.integers(-6, 6))
def test_positions_writes_the_first_count_true_indices_and_nothing_past_them(mask, extra):
    a = np.array(mask, dtype=bool)
    true = np.flatnonzero(a)
    count = max(0, len(true) + extra)
    out = np.full(count + 1, GUARD, dtype=np.int64)
    _POSITIONS[0](a.ctypes.data, len(a), out.ctypes.data, count)
    want = np.concatenate([true[:count], np.full(max(0, count - len(true)), len(a))])
    np.testing.assert_array_equal(out[:count], want)
    assert out[count] == GUARD


_EXTREMA = {suffix: _compiled("extremum", suffix, [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                                    ctypes.c_int64, ctypes.c_bool])
            for suffix in ("f64", "f32", "i8", "u64", "b1")}
_TYPES = {"f64": np.float64, "f32": np.float32, "i8": np.int8, "u64": np.uint64, "b1": np.bool_}


@settings(max_examples=100)
@given(data=st.data())
def test_extremum_finds_numpys_argmax_and_argmin_in_a_row(data):
    """A row at an offset in its buffer (either side guarded): lengths past the vector
    lanes, ties, NaN, both zeros and the integer extremes."""
    suffix = data.draw(st.sampled_from(sorted(_EXTREMA)), label="type")
    dtype = np.dtype(_TYPES[suffix])
    if dtype.kind == "f":
        elements = st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan]) | st.floats(width=dtype.itemsize * 8)
    elif dtype.kind == "b":
        elements = st.booleans()
    else:
        info = np.iinfo(dtype)
        elements = st.sampled_from([int(info.min), int(info.max), 0, 1]) | st.integers(int(info.min), int(info.max))
    row = np.array(data.draw(st.lists(elements, max_size=70), label="row"), dtype=dtype)
    offset = data.draw(st.integers(0, 3), label="offset")
    buffer = np.zeros(offset + len(row), dtype=dtype)
    buffer[offset:] = row
    out = np.full(3, GUARD, dtype=np.int64)
    for largest, numpy_fn in ((True, np.argmax), (False, np.argmin)):
        _EXTREMA[suffix][0](buffer.ctypes.data, offset, len(row), out.ctypes.data, 1, largest)
        assert out[1] == (numpy_fn(row) if len(row) else 0)
        assert out[0] == out[2] == GUARD
