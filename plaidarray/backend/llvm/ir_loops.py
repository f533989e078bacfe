"""Counted loops for routines written directly in LLVM IR (runtime.py, stockham.py)."""

from __future__ import annotations

from llvmlite import ir

I64 = ir.IntType(64)
_ONE = ir.Constant(I64, 1)


class Loop:
    """A counted loop ``for i in [start, stop)`` built with phis (no allocas)."""

    def __init__(self, b: ir.IRBuilder, fn: ir.Function, start: ir.Value, stop: ir.Value, name: str) -> None:
        self.b, self.fn = b, fn
        self.pre = b.block
        self.head = fn.append_basic_block(f"{name}.head")
        self.body = fn.append_basic_block(f"{name}.body")
        self.exit = fn.append_basic_block(f"{name}.exit")
        b.branch(self.head)
        b.position_at_end(self.head)
        self.i = b.phi(I64)
        self.i.add_incoming(start, self.pre)
        b.cbranch(b.icmp_signed("<", self.i, stop), self.body, self.exit)
        b.position_at_end(self.body)

    def close(self, step: ir.Value = _ONE) -> None:
        self.i.add_incoming(self.b.add(self.i, step), self.b.block)
        self.b.branch(self.head)
        self.b.position_at_end(self.exit)
