"""The llvm-cpu executable (XLA's ``Executable``): native code for one HLO module and the
buffers around a call. The code is one function ``void f(ptr buffers, i64 segment, i64
start, i64 stop)`` over a table of the buffers' handles (``transfer.handle``): parameters,
bound constants, outputs, temporaries (including the scratch buffers of nested
computations); ``segment`` < 0 runs everything, otherwise one loop nest over part of its
range, which is how large nests run on several threads (``parallel.py``)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np

from ... import config
from ...hlo.shape import Shape
from .. import memory, transfer
from ..buffer_pool import POOL
from ..executable import Executable
from ..transfer import allocator
from . import jit, parallel, tiering
from .llvm_emitter import Segment


class CpuExecutable(Executable):
    """Native code for one HLO module, plus the buffers it needs around the call."""

    def __init__(self, code: jit.LoadedCode, n_params: int, constants: list[np.ndarray],
                 output_slots: list[tuple[str, int]], output_shapes: list[Shape], temp_shapes: list[Shape],
                 n_args: int, segments: list[Segment]) -> None:
        self._code = code
        self._function = _ENTRY(code.address)
        self._address = code.address
        #: For first-tier code (``tiering.py``): how its full code is made.
        self.upgrade: tiering.Upgrade | None = None
        #: First-tier code replaced by full code: a run on another thread may still be in
        #: it, so it lives as long as the executable.
        self._retired: jit.LoadedCode | None = None
        self._table = ctypes.c_void_p * n_args
        #: Address tables not in use: a call takes one (list.pop and append are atomic, so
        #: threads running this executable at once never share one) and refills it, which
        #: costs a quarter of making a new one.
        self._tables: list[ctypes.Array] = []
        self._segments = segments if parallel.worth_splitting(segments) else None
        #: Whether the function does anything: one whose results are its parameters has no
        #: code and is not called (an in-place update has code and no output buffers).
        self._has_code = bool(segments)
        self._n_params = n_params
        self._constants = constants
        self._constant_handles = [transfer.handle(c) for c in constants]
        self._output_slots = output_slots
        #: Whether the results are the output buffers in order (no parameter returned as
        #: it is, no output twice): then ``run`` returns them as they are.
        self._results_are_outputs = output_slots == [("out", i) for i in range(len(output_shapes))]
        self.returns_parameters = any(kind == "param" for kind, _ in output_slots)
        self._output_allocators = [allocator(s.dims, s.dtype) for s in output_shapes]
        #: The allocator of the one output most executables have (a list comprehension
        #: over one allocator costs 0.2 us more than a call).
        self._single_output = self._output_allocators[0] if len(output_shapes) == 1 else None
        self._temp_allocators = [allocator(s.dims, s.dtype) for s in temp_shapes]
        #: Sets of temporaries not in use, when they are small (``KEPT_TEMP_BYTES``): a run
        #: takes one, as it takes a table, and gives it back. Temporaries are scratch,
        #: written before they are read, so reusing them is what allocating them was;
        #: allocating them is a tenth of a small run (an FFT's two, 0.4 us of 4).
        temp_bytes = sum(s.size * s.dtype.itemsize for s in temp_shapes)
        self._spare_temps: list[list[np.ndarray]] | None = \
            [] if temp_shapes and temp_bytes <= KEPT_TEMP_BYTES else None
        #: Bytes a run allocates, known now so a run that cannot fit fails before it starts.
        buffers = [*output_shapes, *temp_shapes]
        self._nbytes = sum(s.size * s.dtype.itemsize for s in buffers)
        self._largest = max(buffers, key=lambda s: s.size * s.dtype.itemsize, default=None)
        self._checks_memory = self._nbytes >= memory.CHECK_ABOVE_BYTES

    def install_full_code(self, code: jit.LoadedCode) -> None:
        """Switch from first-tier code to ``code`` (the background thread of ``tiering``);
        a run reads ``_function`` once, so it runs one code or the other."""
        self._retired, self._code = self._code, code
        self._function = _ENTRY(code.address)
        self._address = code.address
        self.upgrade = None

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        if self.upgrade is not None:
            tiering.count_run(self)
        if self._checks_memory:
            assert self._largest is not None  # a run that allocates bytes has a largest buffer
            memory.check_fits(self._nbytes, POOL.free_bytes, self._largest)
        single = self._single_output
        outs = [single()] if single is not None else [new() for new in self._output_allocators]
        spare = self._spare_temps
        if spare is None:
            temps = [new() for new in self._temp_allocators] if self._temp_allocators else _NO_TEMPS
        else:
            try:
                temps = spare.pop() if spare else [new() for new in self._temp_allocators]
            except IndexError:  # another thread took the last set between the test and the pop
                temps = [new() for new in self._temp_allocators]
        if self._segments is None and _call_in_c is not None:
            if self._has_code:
                _call_in_c(self._address, buffers, self._constant_handles, outs, temps)
        else:
            handle = transfer.handle
            try:
                table = self._tables.pop()
            except IndexError:
                table = self._table()
            table[:] = [*map(handle, buffers), *self._constant_handles, *map(handle, outs), *map(handle, temps)]
            if self._segments is not None:
                parallel.run(self._function, [table], self._segments)
            elif self._has_code:
                self._function(table, *_RUN_ALL)
            self._tables.append(table)
        if spare is not None:
            spare.append(temps)
        if self._results_are_outputs:
            return outs
        return [buffers[i] if kind == "param" else outs[i] for kind, i in self._output_slots]


#: Temporaries of at most this many bytes in all are kept by their executable between runs.
KEPT_TEMP_BYTES = 64 << 10

#: The temporaries of an executable without any (never written: a run only reads the list).
_NO_TEMPS: list[np.ndarray] = []

#: The entry's C type: the table of buffer addresses, then (segment, start, stop).
_ENTRY = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)

def _c_call() -> Callable[..., None] | None:
    """``_entry.call`` (the entry called from C) when it is built, the table holds array
    objects' addresses (``transfer.DATA_POINTER_OFFSET`` known) and ``PLAIDARRAY_PURE_PYTHON``
    does not switch it off; else None, and runs go through ctypes."""
    if transfer.DATA_POINTER_OFFSET is None or config.get("PLAIDARRAY_PURE_PYTHON") == "1":
        return None
    try:
        from . import _entry
    except ImportError:
        return None
    return _entry.call


_call_in_c = _c_call()

#: The entry's (segment, start, stop) for running everything, converted once.
_RUN_ALL = (ctypes.c_int64(-1), ctypes.c_int64(0), ctypes.c_int64(0))
