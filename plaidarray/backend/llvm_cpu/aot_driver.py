"""The C entry of an exported library (``aot.py``): ``int <name>_run(const void *const
*inputs, void *const *outputs)``, in LLVM IR, doing what ``CpuExecutable.run`` does in
the JIT without the Python around it.

It fills the buffer table (the caller's inputs, the constants, which live in the
library's read-only data, the caller's outputs, temporaries from ``malloc``), calls each
kernel on its own buffers over its whole range (one thread), and copies the results
that are an input passed through or an output named twice. The library routines kernels
import (BLAS, LAPACK) come from ``<name>_routines``, which the program fills (the
artifact's header names each): the library has no undefined symbol of BLAS, so it links
whichever implementation the program chooses. Return codes: 0 done, 1 a temporary
could not be allocated, 2 a routine the program did not provide.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from llvmlite import ir

from . import kernel_abi
from ..llvm.kernel_source import KernelSource

I1, I32, INDEX = ir.IntType(1), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()

#: ``<name>_run``'s return codes.
DONE, NO_MEMORY, NO_ROUTINE = 0, 1, 2


def driver_ir(name: str, n_inputs: int, fixed: Sequence[np.ndarray], output_bytes: Sequence[int],
              slots: Sequence[tuple[str, int]], result_bytes: Sequence[int], temp_bytes: Sequence[int],
              sources: Sequence[KernelSource]) -> tuple[str, list[str]]:
    """The entry's module and the routines it imports, in ``<name>_routines``' order. The
    table is the caller's ``n_inputs`` inputs, the ``fixed`` arrays (constants), the
    outputs (``output_bytes`` each), the temporaries (``temp_bytes``); ``slots`` says
    what each result is, ``("param", k)`` or ``("out", i)``, and ``result_bytes`` its size."""
    module = ir.Module(name=name)
    routines = list(dict.fromkeys(routine for s in sources for routine in s.imports))
    table_type = ir.ArrayType(PTR, max(len(routines), 1))
    routine_table = ir.GlobalVariable(module, table_type, f"{name}_routines")
    routine_table.initializer = ir.Constant(table_type, None)
    constants = [_constant(module, f"{name}.constant.{k}", array) for k, array in enumerate(fixed)]

    run = ir.Function(module, ir.FunctionType(I32, [PTR, PTR]), f"{name}_run")
    inputs, outputs = run.args
    b = ir.IRBuilder(run.append_basic_block("entry"))
    n_params = n_inputs + len(fixed)
    out_base, temp_base = n_params, n_params + len(output_bytes)
    table = b.alloca(PTR, size=ir.Constant(INDEX, max(temp_base + len(temp_bytes), 1)))

    def entry(pointers: ir.Value, i: int) -> ir.Value:
        return b.gep(pointers, [ir.Constant(INDEX, i)], inbounds=True, source_etype=PTR)

    routine_pointers = [b.load(b.gep(routine_table, [ir.Constant(INDEX, 0), ir.Constant(INDEX, r)], inbounds=True,
                                      source_etype=table_type), typ=PTR) for r in range(len(routines))]
    for pointer in routine_pointers:
        given = b.block
        with b.if_then(b.icmp_unsigned("==", pointer, ir.Constant(PTR, None)), likely=False):
            b.ret(ir.Constant(I32, NO_ROUTINE))
        assert b.block is not given
    for i in range(n_inputs):
        b.store(b.load(entry(inputs, i), typ=PTR), entry(table, i))
    for k, constant in enumerate(constants):
        b.store(constant, entry(table, n_inputs + k))
    first_result: dict[int, int] = {}
    for r, (kind, i) in enumerate(slots):
        if kind == "out":
            first_result.setdefault(i, r)
    for i in range(len(output_bytes)):
        b.store(b.load(entry(outputs, first_result[i]), typ=PTR), entry(table, out_base + i))

    malloc = ir.Function(module, ir.FunctionType(PTR, [INDEX]), "malloc")
    free = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), "free")
    temps = [b.call(malloc, [ir.Constant(INDEX, max(n, 1))]) for n in temp_bytes]
    if temps:
        failed = ir.Constant(I1, 0)
        for t in temps:
            failed = b.or_(failed, b.icmp_unsigned("==", t, ir.Constant(PTR, None)))
        with b.if_then(failed, likely=False):
            for t in temps:
                b.call(free, [t])
            b.ret(ir.Constant(I32, NO_MEMORY))
    for j, t in enumerate(temps):
        b.store(t, entry(table, temp_base + j))

    kernels: dict[str, ir.Function] = {}
    for source in sources:
        kernel = kernels.get(source.symbol) or ir.Function(module, kernel_abi.llvm_type(), source.symbol)
        kernels[source.symbol] = kernel
        own = b.alloca(PTR, size=ir.Constant(INDEX, max(len(source.buffers), 1)))
        for j, index in enumerate(source.buffers):
            b.store(b.load(entry(table, index), typ=PTR), entry(own, j))
        imports = b.alloca(PTR, size=ir.Constant(INDEX, max(len(source.imports), 1)))
        for j, routine in enumerate(source.imports):
            b.store(routine_pointers[routines.index(routine)], entry(imports, j))
        extent = ir.Constant(INDEX, cast(int, source.segment.extent))  # static: nothing is exported shape-generic
        b.call(kernel, [own, ir.Constant(PTR, None), ir.Constant(INDEX, 0), extent, imports])

    memcpy = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, PTR, INDEX, I1]), "llvm.memcpy.p0.p0.i64")
    for r, (kind, i) in enumerate(slots):
        if kind == "out" and first_result[i] == r:
            continue
        source_pointer = b.load(entry(table, i if kind == "param" else out_base + i), typ=PTR)
        b.call(memcpy, [b.load(entry(outputs, r), typ=PTR), source_pointer, ir.Constant(INDEX, result_bytes[r]),
                        ir.Constant(I1, 0)])
    for t in temps:
        b.call(free, [t])
    b.ret(ir.Constant(I32, DONE))
    return str(module), routines


def _constant(module: ir.Module, name: str, array: np.ndarray) -> ir.GlobalVariable:
    """``array``'s bytes as private read-only data, aligned for any vector load."""
    data = np.ascontiguousarray(array).tobytes() or b"\0"
    value_type = ir.ArrayType(ir.IntType(8), len(data))
    constant = ir.GlobalVariable(module, value_type, name)
    constant.linkage = "private"
    constant.global_constant = True
    constant.initializer = ir.Constant(value_type, bytearray(data))
    constant.align = 64
    return constant
