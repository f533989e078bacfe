"""llvm-nvptx's part in emitting kernels (``llvm/emitter.py``'s :class:`Renderer`): how a
kernel is entered on a GPU, and its math.

**Entry.** A kernel keeps the CPU's arguments (``void k(ptr buffers, ptr dims, i64 start,
i64 stop, ptr imports)``, ``llvm_cpu/kernel_abi.py``) as a ``ptx_kernel``: the same
emitted body runs each iteration of its chunkable loop in ``[start, stop)`` on a thread
of its own (a grid-stride loop: thread ``t`` of ``T`` runs ``start + t``, ``start + t +
T``...), as the host runs chunks of it on its threads. An iteration computes each element
as the host's does (the same loop IR, the same partial sums), so results are the host's
bits wherever the operations are. An empty range (a kernel with no chunkable loop, whose
body ignores it, or a loop of no iterations: an empty array's) calls the body once, on
thread 0, with that range, as the host calls it once with ``[0, extent)``.

**Warps.** A kernel whose iterations are reductions runs each iteration on a warp
(``warp_reductions.py``): warp ``w`` of ``W`` runs ``start + w``, ``start + w + W``...,
its lanes sharing the iteration's reductions in the host's order; an empty range runs on
warp 0, or on each block of warps a launch has (a whole-array reduction's runs over the
grid).

**Math.** exp, expm1, log, log1p, tanh, sin and cos are the shared polynomials
(``llvm/math_functions.py``), defined in each module that calls them: the host's bits.
The functions LLVM lowers to library calls (``exp2``, ``log2``, ``log10``, ``pow`` and the
C library's, by the target's ``__nv_`` names) are libdevice's, linked into the module
(``libdevice.py``); sin and cos past ``TRIG_LIMIT`` call libdevice's too.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from xdsl.ir import Operation

from ..llvm.emitter import INDEX, PTR, FunctionEmitter, Renderer, Rule, _store, power
from ..llvm.kernel_source import PLACEHOLDER, Segment
from ..llvm.math_functions import KERNELS, define_scalar
from ..llvm.runtime_routines import runtime_function
from . import warp_reductions
from .warp_ops import WARP

I32 = ir.IntType(32)

#: The thread and block indices a grid-stride loop reads (x only: grids are 1-D).
SPECIAL_REGISTERS = ("tid.x", "ntid.x", "ctaid.x", "nctaid.x")


def _libdevice_function(module: ir.Module, name: str, ty: ir.Type) -> ir.Function:
    """libdevice's ``name`` for ``ty`` (``__nv_sinf``, ``__nv_sin``), declared."""
    symbol = f"__nv_{name}{'f' if ty == ir.FloatType() else ''}"
    return module.globals.get(symbol) or ir.Function(module, ir.FunctionType(ty, [ty]), symbol)


def _shared_math(name: str) -> Rule:
    """The shared polynomial of ``name``, defined in the kernel's module on first use."""
    def emit(e: FunctionEmitter, op):
        x = e.v(op.operands[0])
        symbol = f"plaidarray.{name}.{'f32' if x.type == ir.FloatType() else 'f64'}"
        fn = e.module.globals.get(symbol)
        if fn is None:
            fn = ir.Function(e.module, ir.FunctionType(x.type, [x.type]), symbol)
            fn.linkage = "internal"
            define_scalar(fn, name, x.type, _libdevice_function)
        return e.builder.call(fn, [x])
    return emit


def _libdevice(name: str) -> Rule:
    """A function LLVM's NVPTX back end cannot select, as libdevice's."""
    def emit(e: FunctionEmitter, op):
        args = [e.v(o) for o in op.operands]
        symbol = e.target.math_symbol(name, args[0].type == ir.FloatType())
        return e.builder.call(e.declare(symbol, args[0].type, [a.type for a in args]), args)
    return emit


def _store_once(e: FunctionEmitter, op) -> None:
    """A store of a warp's iteration outside its reductions: made once, by its thread 0."""
    if e.lanes == 1 or op in e.slots:
        _store(e, op)
    else:
        warp_reductions.once(e, op.memref, lambda: _store(e, op))


class NvptxRenderer(Renderer):
    name = "llvm-nvptx"
    rules = {**{f"math.{name}": _shared_math(name) for name in KERNELS},
             **{f"math.{name}": _libdevice(name) for name in ("exp2", "log2", "log10")},
             "math.powf": power(lambda e, t: e.declare(e.target.math_symbol("pow", t == ir.FloatType()), t, [t, t])),
             "memref.store": _store_once}
    #: The host's partial sums (``llvm_cpu/renderer.py``): an accumulation in a thread
    #: adds its terms in the host's order, so a row's sum is the host's bits.
    partials = {32: 64, 64: 32}

    def runtime_function(self, module: ir.Module, name: str) -> ir.Function | None:
        """The shared runtime routines (sorting, a mask's positions, integer powers), each
        run by the one thread of its kernel's call."""
        return runtime_function(module, name)

    def lanes(self, ops: list[Operation], segment: Segment) -> int:
        return warp_reductions.lanes(ops, segment)

    def emit_group_reduction(self, e: FunctionEmitter, loop: Any, lb: ir.Value, ub: ir.Value) -> bool:
        return warp_reductions.emit_reduction(e, loop, lb, ub)

    def emit_entry(self, module: ir.Module, body: ir.Function, n_buffers: int) -> None:
        _emit_entry(module, body, n_buffers, 1)

    def emit_group_entry(self, module: ir.Module, body: ir.Function, n_buffers: int, lanes: int) -> None:
        _emit_entry(module, body, n_buffers, lanes)


def _emit_entry(module: ir.Module, body: ir.Function, n_buffers: int, lanes: int) -> None:
    """The grid-stride loop over the chunkable loop, ``lanes`` threads an iteration."""
    entry = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, PTR, INDEX, INDEX, PTR]), PLACEHOLDER)
    entry.calling_convention = "ptx_kernel"
    table, dims, start, stop, imports = entry.args
    first = entry.append_basic_block("entry")
    head, call, once, called_once, done = (entry.append_basic_block(name)
                                          for name in ("head", "call", "once", "called_once", "done"))
    b = ir.IRBuilder(first)
    pointers = [b.load(b.gep(table, [ir.Constant(INDEX, i)], inbounds=True, source_etype=PTR), typ=PTR)
                for i in range(n_buffers)]
    tid, ntid, ctaid, nctaid = (b.zext(b.call(_special_register(module, r), []), INDEX) for r in SPECIAL_REGISTERS)
    thread = b.add(b.mul(ctaid, ntid), tid)
    stride = b.mul(nctaid, ntid)
    if lanes > 1:
        thread, stride = (b.udiv(x, ir.Constant(INDEX, lanes)) for x in (thread, stride))
    first_index = b.add(start, thread)
    b.cbranch(b.icmp_signed("==", start, stop), once, head)
    b.position_at_end(once)
    if lanes > WARP:  # a block of warps: every block's (the grid's runs, warp_reductions.py)
        b.branch(called_once)
    else:
        b.cbranch(b.icmp_signed("==", thread, ir.Constant(INDEX, 0)), called_once, done)
    b.position_at_end(called_once)
    b.call(body, [*pointers, dims, imports, start, stop])
    b.branch(done)
    b.position_at_end(head)
    i = b.phi(INDEX)
    b.cbranch(b.icmp_signed("<", i, stop), call, done)
    b.position_at_end(call)
    following = b.add(i, ir.Constant(INDEX, 1))
    b.call(body, [*pointers, dims, imports, i, following])
    after = b.add(i, stride)
    b.branch(head)
    i.add_incoming(first_index, first)
    i.add_incoming(after, call)
    b.position_at_end(done)
    b.ret_void()


def _special_register(module: ir.Module, register: str) -> ir.Function:
    name = f"llvm.nvvm.read.ptx.sreg.{register}"
    return module.globals.get(name) or ir.Function(module, ir.FunctionType(I32, []), name)


RENDERER = NvptxRenderer()
