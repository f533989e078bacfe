"""Control and warp-collective instructions: branches, calls, barriers, ``shfl.sync``,
``vote.sync``, ``redux.sync``, ``bar.warp.sync``, ``activemask``, fences.

Builders here return ``Op``s whose kind tells the machine what to do; for warp collectives the
op's ``run`` computes the results once every lane the member mask names has arrived, and the
machine decides when that is (see ``machine.py``). A lane that reads from a lane which is not
taking part (exited, outside the member mask, past the end of the block) raises, because PTX
leaves that value undefined.
"""

from __future__ import annotations


import numpy as np

from .context import Context, Selection
from .errors import SimulatorError
from .instructions import Op, modifiers, opcode
from .operands import OperandCompiler
from .ptx import Group, Immediate, Instruction, Pair, Symbol
from .scalars import TYPES

WARP_SIZE = 32
U32 = TYPES["u32"]


@opcode("bra")
def _bra(ins: Instruction, c: OperandCompiler) -> Op:
    target = ins.operands[0]
    if not isinstance(target, Symbol) or len(ins.opcode) > 2 or ins.opcode[1:] not in ((), ("uni",)):
        raise SimulatorError(f"{ins.text!r}: only direct branches to labels are supported")
    return Op("branch", ins.line, ins.text, extra={"label": target.name})


@opcode("ret", "exit", "trap", "brkpt")
def _leave(ins: Instruction, c: OperandCompiler) -> Op:
    kind = {"ret": "ret", "exit": "exit"}.get(ins.opcode[0], "trap")
    return Op(kind, ins.line, ins.text)


@opcode("call")
def _call(ins: Instruction, c: OperandCompiler) -> Op:
    operands = list(ins.operands)
    groups = [op.items if isinstance(op, Group) else None for op in operands]
    returns = groups[0] if len(operands) == 3 else ()
    callee = operands[1] if len(operands) == 3 else operands[0] if operands else None
    arguments = groups[-1] if len(operands) >= 2 else ()
    if not isinstance(callee, Symbol) or returns is None or arguments is None:
        raise SimulatorError(f"{ins.text!r}: only direct calls are supported")
    return Op("call", ins.line, ins.text, extra={"callee": callee.name, "returns": returns, "arguments": arguments})


@opcode("membar", "fence", "nanosleep")
def _no_effect(ins: Instruction, c: OperandCompiler) -> Op:
    """Fences order nothing here: every access is sequentially consistent, and the race
    detector does not count a fence as synchronisation (see ``races.py``)."""
    return Op("simple", ins.line, ins.text, lambda ctx, sel: None)


@opcode("bar", "barrier")
def _barrier(ins: Instruction, c: OperandCompiler) -> Op:
    mods = set(ins.opcode[1:])
    if "warp" in mods:
        if mods != {"warp", "sync"}:
            raise SimulatorError(f"{ins.text!r}: unsupported warp barrier")
        return Op("warp", ins.line, ins.text, lambda ctx, lanes: None,
                  extra={"mask": c.reader(ins.operands[0], U32), "sync": True})
    if not mods <= {"sync", "aligned"} or "sync" not in mods:
        raise SimulatorError(f"{ins.text!r}: only bar.sync / barrier.sync are supported")
    if len(ins.operands) != 1 or not isinstance(ins.operands[0], Immediate):
        raise SimulatorError(f"{ins.text!r}: barriers with a thread count or a register id are not supported")
    aligned = ins.opcode[0] == "bar" or "aligned" in mods
    return Op("barrier", ins.line, ins.text, extra={"id": int(ins.operands[0].text, 0), "aligned": aligned})


def _lane_table(ctx: Context, lanes: np.ndarray) -> np.ndarray:
    """Position of each thread in ``lanes``, -1 for threads not taking part."""
    position = np.full(ctx.size, -1, np.int64)
    position[lanes] = np.arange(len(lanes))
    return position


def _sources(ctx: Context, lanes: np.ndarray, source_lane: np.ndarray, what: str) -> np.ndarray:
    """Positions in ``lanes`` of each lane's source lane; raises if one is not taking part."""
    position = _lane_table(ctx, lanes)
    linear = ctx.linear[lanes] - ctx.lane[lanes] + source_lane
    exists = linear < ctx.block_size
    thread = np.where(exists, lanes - ctx.lane[lanes] + source_lane, 0)
    found = np.where(exists, position[thread], -1)
    if (found < 0).any():
        i = int(np.argmax(found < 0))
        raise SimulatorError(f"{what}: lane {int(ctx.lane[lanes[i]])} of warp {int(ctx.warp[lanes[i]])} reads lane "
                             f"{int(source_lane[i])}, which is not taking part (exited, outside the member mask "
                             f"or past the end of the block), so its value is undefined")
    return found


_SHUFFLE_SOURCE = {
    "up": lambda lane, b, max_lane, min_lane, seg: (lane - b, lane - b >= max_lane),
    "down": lambda lane, b, max_lane, min_lane, seg: (lane + b, lane + b <= max_lane),
    "bfly": lambda lane, b, max_lane, min_lane, seg: (lane ^ b, (lane ^ b) <= max_lane),
    "idx": lambda lane, b, max_lane, min_lane, seg: (min_lane | (b & ~seg), (min_lane | (b & ~seg)) <= max_lane),
}


@opcode("shfl")
def _shfl(ins: Instruction, c: OperandCompiler) -> Op:
    mods = [m for m in ins.opcode[1:] if m != "sync"]
    if "sync" not in ins.opcode or len(mods) != 2 or mods[0] not in _SHUFFLE_SOURCE or mods[1] != "b32":
        raise SimulatorError(f"{ins.text!r}: only shfl.sync.{{up,down,bfly,idx}}.b32 is supported")
    dest, a, b, cval, mask = ins.operands
    value_type = TYPES["b32"]
    read_a, read_b, read_c = c.reader(a, value_type), c.reader(b, U32), c.reader(cval, U32)
    write = c.writer(dest.first if isinstance(dest, Pair) else dest, value_type)
    write_p = c.writer(dest.second, TYPES["pred"]) if isinstance(dest, Pair) else None
    source_of = _SHUFFLE_SOURCE[mods[0]]

    def run(ctx: Context, selection: Selection) -> None:
        lanes = ctx.ids(selection)
        n = len(lanes)
        lane = ctx.lane[lanes].astype(np.int64)
        b = np.broadcast_to(np.asarray(read_b(ctx, lanes)).astype(np.int64) & 0x1F, (n,))
        cv = np.broadcast_to(np.asarray(read_c(ctx, lanes)).astype(np.int64), (n,))
        clamp, seg = cv & 0x1F, (cv >> 8) & 0x1F
        max_lane, min_lane = (lane & seg) | (clamp & ~seg), lane & seg
        j, valid = source_of(lane, b, max_lane, min_lane, seg)
        j = np.where(valid, j, lane)
        values = np.broadcast_to(np.asarray(read_a(ctx, lanes)), (n,))
        write(ctx, lanes, values[_sources(ctx, lanes, j, ins.text)])
        if write_p is not None:
            write_p(ctx, lanes, valid)
    return Op("warp", ins.line, ins.text, run, extra={"mask": c.reader(mask, U32)})


def _per_warp(ctx: Context, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense warp numbers of ``lanes`` and how many warps there are."""
    warps, dense = np.unique(ctx.warp[lanes], return_inverse=True)
    return dense, np.arange(len(warps))


@opcode("vote")
def _vote(ins: Instruction, c: OperandCompiler) -> Op:
    mods = [m for m in ins.opcode[1:] if m != "sync"]
    mode = mods[0] if mods else ""
    if "sync" not in ins.opcode or mode not in ("all", "any", "uni", "ballot"):
        raise SimulatorError(f"{ins.text!r}: only vote.sync.{{all,any,uni,ballot}} is supported")
    dest, predicate, mask = ins.operands
    read = c.reader(predicate, TYPES["pred"])
    write = c.writer(dest, U32 if mode == "ballot" else TYPES["pred"])

    def run(ctx: Context, selection: Selection) -> None:
        lanes = ctx.ids(selection)
        p = np.broadcast_to(read(ctx, lanes), (len(lanes),))
        dense, warps = _per_warp(ctx, lanes)
        true_count = np.bincount(dense, weights=p, minlength=len(warps))
        total = np.bincount(dense, minlength=len(warps))
        if mode == "ballot":
            bits = np.zeros(len(warps), np.uint64)
            np.bitwise_or.at(bits, dense, p.astype(np.uint64) << ctx.lane[lanes].astype(np.uint64))
            write(ctx, lanes, bits[dense].astype(np.uint32))
            return
        result = {"all": true_count == total, "any": true_count > 0,
                  "uni": (true_count == 0) | (true_count == total)}[mode]
        write(ctx, lanes, result[dense])
    return Op("warp", ins.line, ins.text, run, extra={"mask": c.reader(mask, U32)})


_REDUCTIONS = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
               "xor": np.bitwise_xor}


@opcode("redux")
def _redux(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    operation = m.flags & set(_REDUCTIONS)
    m.require_only(operation | {"sync"}, ins)
    if len(operation) != 1 or m.type.is_float:
        raise SimulatorError(f"{ins.text!r}: unsupported redux")
    reduce, ty = _REDUCTIONS[operation.pop()], m.type
    dest, a, mask = ins.operands
    read, write = c.reader(a, ty), c.writer(dest, ty)

    def run(ctx: Context, selection: Selection) -> None:
        lanes = ctx.ids(selection)
        values = np.broadcast_to(np.asarray(read(ctx, lanes), ty.dtype), (len(lanes),))
        dense, warps = _per_warp(ctx, lanes)
        first = np.zeros(len(warps), np.int64)
        first[dense[::-1]] = np.arange(len(lanes))[::-1]
        totals = values[first].copy()
        rest = np.ones(len(lanes), bool)
        rest[first] = False
        reduce.at(totals, dense[rest], values[rest])
        write(ctx, lanes, totals[dense])
    return Op("warp", ins.line, ins.text, run, extra={"mask": c.reader(mask, U32)})


@opcode("activemask")
def _activemask(ins: Instruction, c: OperandCompiler) -> Op:
    write = c.writer(ins.operands[0], U32)

    def run(ctx: Context, sel: Selection) -> None:
        lanes = ctx.ids(sel)
        dense, warps = _per_warp(ctx, lanes)
        bits = np.zeros(len(warps), np.uint64)
        np.bitwise_or.at(bits, dense, np.uint64(1) << ctx.lane[lanes].astype(np.uint64))
        write(ctx, sel, bits[dense].astype(np.uint32))
    return Op("simple", ins.line, ins.text, run)
