"""Operands compiled to readers and writers of typed NumPy values.

A reader turns an operand into values of the instruction's type for the selected threads; a
writer stores values into a register. Both follow PTX's rules for registers wider or narrower
than the type (truncate; extend with the sign for ``.s`` types, zeros otherwise), so the
instruction handlers only see values of the type they asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .context import Context, Selection
from .errors import SimulatorError
from .memory import WINDOWS
from .ptx import Address, Immediate, Negated, Operand, Register, Sink, Symbol, parse_integer
from .scalars import BITS, TYPES, ScalarType, resize_bits

Reader = Callable[[Context, Selection], Any]
Writer = Callable[[Context, Selection, Any], None]

SPECIAL_REGISTERS = {
    *(f"%{name}.{axis}" for name in ("tid", "ntid", "ctaid", "nctaid") for axis in "xyz"),
    "%laneid", "%warpid", "%nwarpid", "%lanemask_eq", "%lanemask_lt", "%lanemask_le", "%lanemask_gt",
    "%lanemask_ge",
}
_U32 = TYPES["u32"]


def immediate(text: str, ty: ScalarType) -> Any:
    """A literal as a NumPy scalar of ``ty`` (``0f``/``0d`` literals are raw float bits)."""
    body = text.lstrip("-")
    negative = text.startswith("-")
    if body[:2] in ("0f", "0F", "0d", "0D"):
        raw = int(body[2:], 16)
        width = 4 if body[1] in "fF" else 8
        value = np.array(raw, BITS[width]).view(np.float32 if width == 4 else np.float64)[()]
        value = -value if negative else value
        if not ty.is_float:  # raw bits for a .b/.u/.s operand of the literal's width
            if ty.size != width:
                raise ValueError(f"{width}-byte float literal {text} for a .{ty.name} operand")
            return np.asarray(value).view(ty.dtype)[()]
        return np.asarray(value).astype(ty.dtype)[()]
    if ty.is_float:
        return np.asarray(-float(body) if negative else float(body)).astype(ty.dtype)[()]
    if ty.kind == "pred":
        return np.bool_(int(body, 0) != 0)
    bits = parse_integer(text) % (1 << ty.width)
    return np.array(bits, np.uint64).astype(ty.bits).view(ty.dtype)[()]


class OperandCompiler:
    """Compiles the operands of one function: register names are qualified by the function
    (PTX registers are function-local), symbols resolve to (space, address) pairs."""

    def __init__(self, function: str, registers: dict[str, ScalarType], symbols: dict[str, tuple[str, int]]):
        self.function, self.registers, self.symbols = function, registers, symbols

    def key(self, register: Register) -> str:
        if register.name in SPECIAL_REGISTERS:
            return register.name
        if register.name not in self.registers:
            raise SimulatorError(f"register {register.name} is not declared")
        return f"{self.function}:{register.name}"

    def register_type(self, register: Register) -> ScalarType:
        return _U32 if register.name in SPECIAL_REGISTERS else self.registers[register.name]

    def symbol(self, symbol: Symbol) -> tuple[str, int]:
        for name in (f"{self.function}:{symbol.name}", symbol.name):
            if name in self.symbols:
                space, address = self.symbols[name]
                return space, address + symbol.offset
        raise SimulatorError(f"unknown symbol {symbol.name}")

    def reader(self, operand: Operand, ty: ScalarType) -> Reader:
        if isinstance(operand, Negated):
            inner = self.reader(operand.register, ty)
            return lambda ctx, sel: ~inner(ctx, sel)
        if isinstance(operand, Immediate):
            value = immediate(operand.text, ty)
            return lambda ctx, sel: value
        if isinstance(operand, Symbol):
            _, address = self.symbol(operand)
            value = np.array(address % (1 << ty.width), np.uint64).astype(ty.bits).view(ty.dtype)[()]
            return lambda ctx, sel: value
        if not isinstance(operand, Register):
            raise SimulatorError(f"operand {operand} cannot be read as .{ty.name}")
        key, stored = self.key(operand), self.register_type(operand)
        if ty.kind == "pred" or stored.kind == "pred":
            if ty.kind != stored.kind:
                raise SimulatorError(f"{operand.name} is .{stored.name}, read as .{ty.name}")
            return lambda ctx, sel: ctx.registers[key][sel]
        source = self._file(key)
        if stored.size == ty.size:
            dtype = ty.dtype
            return lambda ctx, sel: source(ctx)[sel].view(dtype)
        if ty.size < stored.size:
            bits, dtype = ty.bits, ty.dtype
            return lambda ctx, sel: source(ctx)[sel].astype(bits).view(dtype)
        return lambda ctx, sel: resize_bits(source(ctx)[sel], stored, ty.size).view(ty.dtype)

    def _file(self, key: str) -> Callable[[Context], np.ndarray]:
        if key in SPECIAL_REGISTERS:
            name = key
            return lambda ctx: ctx.special[name]
        return lambda ctx: ctx.registers[key]

    def writer(self, operand: Operand, ty: ScalarType) -> Writer:
        if isinstance(operand, Sink):
            return lambda ctx, sel, value: None
        if not isinstance(operand, Register) or operand.name in SPECIAL_REGISTERS:
            raise SimulatorError(f"operand {operand} is not a writable register")
        key, stored = self.key(operand), self.register_type(operand)
        if (ty.kind == "pred") != (stored.kind == "pred"):
            raise SimulatorError(f"{operand.name} is .{stored.name}, written as .{ty.name}")
        if ty.kind == "pred":
            def write_predicate(ctx: Context, sel: Selection, value: Any) -> None:
                ctx.registers[key][sel] = value
            return write_predicate
        dtype, size = ty.dtype, stored.size

        def write(ctx: Context, sel: Selection, value: Any) -> None:
            bits = np.asarray(value, dtype).view(ty.bits)
            ctx.registers[key][sel] = resize_bits(bits, ty, size)
        return write

    def address(self, operand: Operand, space: str) -> Reader:
        """Reader of the u64 address an ``[...]`` operand names in ``space`` (a symbol in a
        generic access means its generic address, as in PTX)."""
        if not isinstance(operand, Address):
            raise SimulatorError(f"expected an address operand, found {operand}")
        offset = np.uint64(operand.offset % (1 << 64))
        base = operand.base
        if base is None:
            return lambda ctx, sel: np.full(ctx.count(sel), offset, np.uint64)
        if isinstance(base, Symbol):
            symbol_space, address = self.symbol(base)
            if space == "generic":
                address += WINDOWS.get(symbol_space, 0)
            elif symbol_space != space:
                raise SimulatorError(f"{base.name} is a .{symbol_space} symbol, used in a .{space} access")
            constant = np.uint64(address) + offset
            return lambda ctx, sel: np.full(ctx.count(sel), constant, np.uint64)
        stored = self.register_type(base)
        read = self.reader(base, TYPES["u64"] if stored.size == 8 else TYPES["u32"])
        return lambda ctx, sel: np.asarray(read(ctx, sel)).astype(np.uint64) + offset
