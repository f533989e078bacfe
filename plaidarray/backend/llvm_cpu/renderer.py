"""llvm-cpu's part in emitting kernels (``llvm/emitter.py``'s :class:`Renderer`): the
vectorisable math functions of ``vector_math.py``, the runtime library's routines
(``runtime.py``), BLAS and LAPACK called through a kernel's table of imports
(``blas_lapack.py``), partial sums for the host's vector registers, and the kernel ABI of
``kernel_abi.py``."""

from __future__ import annotations

from llvmlite import ir

from ..llvm.emitter import INDEX, PTR, FunctionEmitter, Renderer, Rule
from ..llvm.kernel_source import PLACEHOLDER
from . import kernel_abi
from .blas_lapack import is_import
from .runtime import runtime_function
from .vector_math import FUNCTIONS as VECTOR_MATH_FUNCTIONS
from .vector_math import math_function


def _vector_math(name: str) -> Rule:
    """exp, log, sin... as the vectorisable functions of vector_math.py, at the target's
    widest vector register."""
    def emit(e: FunctionEmitter, op):
        x = e.v(op.operands[0])
        return e.builder.call(math_function(e.module, name, x.type, e.target.vector_bits), [x])
    return emit


class CpuRenderer(Renderer):
    name = "llvm-cpu"
    rules = {f"math.{name}": _vector_math(name) for name in VECTOR_MATH_FUNCTIONS}
    #: As many partial sums as four AVX-512 registers hold.
    partials = {32: 64, 64: 32}

    def runtime_function(self, module: ir.Module, name: str) -> ir.Function | None:
        return runtime_function(module, name)

    def is_import(self, name: str) -> bool:
        return is_import(name)

    def emit_entry(self, module: ir.Module, body: ir.Function, n_buffers: int) -> None:
        """The kernel (``kernel_abi.py``): reads the data pointers from the table and calls
        the body."""
        entry = ir.Function(module, kernel_abi.llvm_type(), PLACEHOLDER)
        table, dims, start, stop, imports = entry.args
        b = ir.IRBuilder(entry.append_basic_block("entry"))
        pointers = [b.load(b.gep(table, [ir.Constant(INDEX, i)], inbounds=True, source_etype=PTR), typ=PTR)
                    for i in range(n_buffers)]
        b.call(body, [*pointers, dims, imports, start, stop])
        b.ret_void()


RENDERER = CpuRenderer()
