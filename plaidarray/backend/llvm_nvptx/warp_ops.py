"""What a group of threads works with in the PTX of ``warp_reductions.py``: its special
registers, barriers, shuffles, and shared and private memory, as LLVM's NVPTX intrinsics
and address spaces."""

from __future__ import annotations

from llvmlite import ir

from ..llvm.emitter import INDEX, FunctionEmitter

WARP = 32
I32 = ir.IntType(32)
_EVERY_LANE = ir.Constant(I32, 0xFFFFFFFF)
#: The lane range a shuffle reads within (``c`` of ``shfl.sync``: the whole warp).
_CLAMP = ir.Constant(I32, 0x1F)
_FLOAT_BITS = {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}


def special(e: FunctionEmitter, register: str) -> ir.Value:
    """PTX's special register ``register`` (``laneid``, ``tid.x``, ``ctaid.x``...)."""
    return e.builder.zext(e.intrinsic(f"llvm.nvvm.read.ptx.sreg.{register}", I32, []), INDEX)


def thread_index(e: FunctionEmitter) -> ir.Value:
    """The thread's index in its group (a warp, or the CUDA block)."""
    if e.lanes == WARP:
        return special(e, "laneid")
    return e.builder.urem(special(e, "tid.x"), ir.Constant(INDEX, e.lanes))


def sync(e: FunctionEmitter) -> None:
    """The group's barrier: a warp sync, or the CUDA block's."""
    if e.lanes == WARP:
        e.intrinsic("llvm.nvvm.bar.warp.sync", ir.VoidType(), [_EVERY_LANE])
    else:
        e.intrinsic("llvm.nvvm.barrier0", ir.VoidType(), [])


def is_zero(e: FunctionEmitter, value: ir.Value) -> ir.Value:
    """Whether the index ``value`` is 0 (thread 0, lane 0)."""
    return e.builder.icmp_unsigned("==", value, ir.Constant(INDEX, 0))


def shared_array(e: FunctionEmitter, ty: ir.Type, count: int) -> ir.GlobalVariable:
    """``count`` values of ``ty`` in the CUDA block's shared memory."""
    name = f"plaidarray.shared.{sum(1 for g in e.module.global_values if g.name.startswith('plaidarray.shared.'))}"
    memory = ir.GlobalVariable(e.module, ir.ArrayType(ty, count), name, addrspace=3)
    memory.linkage = "internal"
    memory.initializer = ir.Constant(ir.ArrayType(ty, count), ir.Undefined)
    return memory


def shared_at(e: FunctionEmitter, memory: ir.GlobalVariable, index: ir.Value) -> ir.Value:
    """The address of value ``index`` of shared ``memory``."""
    return e.builder.gep(memory, [ir.Constant(INDEX, 0), index], inbounds=True)


def shuffle(e: FunctionEmitter, kind: str, value: ir.Value, lane: int) -> ir.Value:
    """``shfl.sync.<kind>`` of ``value`` of any width, 32 bits at a time."""
    b = e.builder
    ty = value.type
    bits = ty.width if isinstance(ty, ir.IntType) else _FLOAT_BITS[type(ty)]
    word = ir.IntType(max(bits, 32))
    whole = b.bitcast(value, ir.IntType(bits)) if not isinstance(ty, ir.IntType) else value
    whole = b.zext(whole, word) if bits < 32 else whole
    parts = []
    for shift in range(0, word.width, 32):
        part = b.trunc(b.lshr(whole, ir.Constant(word, shift)) if shift else whole, I32) if word.width > 32 else whole
        parts.append(e.intrinsic(f"llvm.nvvm.shfl.sync.{kind}.i32", I32,
                                 [_EVERY_LANE, part, ir.Constant(I32, lane), _CLAMP]))
    result: ir.Value = parts[0]
    if word.width > 32:
        result = b.zext(parts[0], word)
        for k, part in enumerate(parts[1:], 1):
            result = b.or_(result, b.shl(b.zext(part, word), ir.Constant(word, 32 * k)))
    result = b.trunc(result, ir.IntType(bits)) if bits < 32 else result
    return b.bitcast(result, ty) if not isinstance(ty, ir.IntType) else result


def private(e: FunctionEmitter, ty: ir.Type, count: int) -> ir.Value:
    """``count`` values of ``ty`` of the lane's own, in the entry block (kept in registers)."""
    b = e.builder
    current = b.block
    b.position_at_start(e.function.entry_basic_block)
    slots = b.alloca(ty, size=ir.Constant(INDEX, count))
    b.position_at_end(current)
    return slots
