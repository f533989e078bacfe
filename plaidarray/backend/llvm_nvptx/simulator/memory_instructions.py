"""Builders for the instructions that touch memory: ``ld``, ``st``, ``atom``, ``red``, and the
address-space conversions ``cvta`` and ``isspacep``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import arithmetic as alu
from .context import Context, Selection
from .errors import SimulatorError
from .instructions import Op, modifiers, opcode
from .memory import WINDOW_SIZE, WINDOWS
from .operands import OperandCompiler
from .ptx import Instruction, Vector
from .scalars import TYPES, ScalarType

SPACES = ("global", "shared", "local", "param", "const")


def _space(flags: set[str]) -> str:
    named = flags & set(SPACES)
    if len(named) > 1:
        raise SimulatorError(f"several state spaces {sorted(named)}")
    flags -= named
    return named.pop() if named else "generic"


def _rows_to_values(rows: np.ndarray, ty: ScalarType) -> np.ndarray:
    return np.ascontiguousarray(rows).view(ty.bits).reshape(-1).view(ty.dtype)


def _values_to_rows(values: Any, ty: ScalarType, count: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(values, ty.dtype), (count,)).copy().view(np.uint8).reshape(count, ty.size)


@opcode("ld", "st")
def _load_store(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    space = _space(m.flags)
    m.require_only(set(), ins)
    ty = m.type
    is_load = ins.opcode[0] == "ld"
    data, address = (ins.operands[0], ins.operands[1]) if is_load else (ins.operands[1], ins.operands[0])
    items = data.items if isinstance(data, Vector) else (data,)
    if len(items) != m.vector:
        raise SimulatorError(f"{ins.text!r}: {m.vector} elements expected")
    where = c.address(address, space)
    width = ty.size * len(items)
    line = ins.line
    if is_load:
        writers = [c.writer(item, ty) for item in items]

        def load(ctx: Context, sel: Selection) -> None:
            rows = ctx.memory.load(space, ctx.ids(sel), where(ctx, sel), width, width, line)
            for k, write in enumerate(writers):
                write(ctx, sel, _rows_to_values(rows[:, k * ty.size:(k + 1) * ty.size], ty))
        return Op("simple", ins.line, ins.text, load)
    if space == "const":
        raise SimulatorError("st.const: the constant space is read-only")
    readers = [c.reader(item, ty) for item in items]

    def store(ctx: Context, sel: Selection) -> None:
        count = ctx.count(sel)
        rows = np.concatenate([_values_to_rows(read(ctx, sel), ty, count) for read in readers], axis=1)
        ctx.memory.store(space, ctx.ids(sel), where(ctx, sel), rows, width, line)
    return Op("simple", ins.line, ins.text, store)


def _atomic_update(operation: str, ty: ScalarType) -> Callable[..., Any]:
    """The new value of an atomic ``operation`` from the old value and the operands."""
    if operation == "add":
        return lambda old, b, c: old + b
    if operation in ("min", "max"):
        if ty.is_float:
            return lambda old, b, c: alu.float_min_max(old, b, operation == "max", False)
        return lambda old, b, c: (np.maximum if operation == "max" else np.minimum)(old, b)
    return {
        "and": lambda old, b, c: old & b, "or": lambda old, b, c: old | b, "xor": lambda old, b, c: old ^ b,
        "exch": lambda old, b, c: np.broadcast_to(b, old.shape),
        "cas": lambda old, b, c: np.where(old == b, c, old),
        "inc": lambda old, b, c: np.where(old >= b, 0, old + 1).astype(ty.dtype),
        "dec": lambda old, b, c: np.where((old == 0) | (old > b), b, old - 1).astype(ty.dtype),
    }[operation]


_ATOMIC_OPERATIONS = {"add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec"}


@opcode("atom", "red")
def _atomic(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    space = _space(m.flags)
    operation = m.flags & _ATOMIC_OPERATIONS
    m.require_only(operation, ins)
    if len(operation) != 1 or space not in ("global", "shared", "generic"):
        raise SimulatorError(f"{ins.text!r}: unsupported atomic")
    name = operation.pop()
    ty = m.type
    if name in ("inc", "dec") and ty.name != "u32" or ty.is_float and name not in ("add", "min", "max", "exch"):
        raise SimulatorError(f"{ins.text!r}: {name} on .{ty.name} is not a PTX atomic")
    returns = ins.opcode[0] == "atom"
    operands = ins.operands[1:] if returns else ins.operands
    where = c.address(operands[0], space)
    sources = [c.reader(op, ty) for op in operands[1:]]
    write = c.writer(ins.operands[0], ty) if returns else None
    update = _atomic_update(name, ty)
    line = ins.line

    def run(ctx: Context, sel: Selection) -> None:
        count = ctx.count(sel)
        values = [np.broadcast_to(np.asarray(read(ctx, sel), ty.dtype), (count,)) for read in sources]
        values += [values[0]] * (2 - len(values))

        def rows(old: np.ndarray, which: np.ndarray) -> np.ndarray:
            new = update(_rows_to_values(old, ty), values[0][which], values[1][which])
            return _values_to_rows(new, ty, len(which))
        old = ctx.memory.atomic(space, ctx.ids(sel), where(ctx, sel), ty.size, line, rows)
        if write is not None:
            write(ctx, sel, _rows_to_values(old, ty))
    return Op("simple", ins.line, ins.text, run)


@opcode("cvta")
def _cvta(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    to = "to" in m.flags
    m.flags.discard("to")
    space = _space(m.flags)
    m.require_only(set(), ins)
    ty = m.type
    if space == "generic":
        raise SimulatorError(f"{ins.text!r}: cvta needs a state space")
    base = np.uint64(WINDOWS.get(space, 0))
    read = c.reader(ins.operands[1], ty)
    write = c.writer(ins.operands[0], ty)

    def run(ctx: Context, sel: Selection) -> None:
        address = np.asarray(read(ctx, sel)).astype(np.uint64)
        if to and space != "global":
            outside = (address < base) | (address >= base + np.uint64(WINDOW_SIZE))
            if outside.any():
                bad = int(np.broadcast_to(address, outside.shape)[np.argmax(outside)])
                raise SimulatorError(f"cvta.to.{space} of 0x{bad:x}, a generic address outside the {space} window")
            address = address - base
        elif space != "global":
            address = address + base
        write(ctx, sel, address.astype(ty.dtype))
    return Op("simple", ins.line, ins.text, run)


@opcode("isspacep")
def _isspacep(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins, skip=1) if any(t in TYPES for t in ins.opcode[1:]) else None
    space = ins.opcode[1]
    if space not in SPACES or m is not None:
        raise SimulatorError(f"{ins.text!r}: unsupported isspacep")
    read = c.reader(ins.operands[1], TYPES["u64"])
    write = c.writer(ins.operands[0], TYPES["pred"])

    def run(ctx: Context, sel: Selection) -> None:
        address = np.asarray(read(ctx, sel))
        windows = [(address >= np.uint64(b)) & (address < np.uint64(b + WINDOW_SIZE)) for b in WINDOWS.values()]
        inside = {name: w for name, w in zip(WINDOWS, windows)}
        write(ctx, sel, inside[space] if space in inside else ~np.logical_or.reduce(windows))
    return Op("simple", ins.line, ins.text, run)
