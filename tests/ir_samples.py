"""LLVM IR for the code generator's tests: a small function every optimisation level
vectorises or unrolls differently, and modules of many copies of it, which take a code
generator from a fraction of a second to many seconds."""

from __future__ import annotations

SCALE_IR = """
define void @scale(ptr noalias %x, ptr noalias %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr double, ptr %x, i64 %i
  %v = load double, ptr %p
  %w = fmul double %v, 3.0
  %q = getelementptr double, ptr %y, i64 %i
  store double %w, ptr %q
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""


def scale_copies(copies: int) -> str:
    """A module of ``copies`` renamed copies of ``SCALE_IR`` (about 10 ms of work each at -O3)."""
    return "".join(SCALE_IR.replace("@scale", f"@scale{i}") for i in range(copies))
