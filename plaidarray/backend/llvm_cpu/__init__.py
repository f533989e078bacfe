"""The default backend: HLO -> fused linalg (xDSL) -> loops -> LLVM IR -> llvmlite JIT."""

from __future__ import annotations

from ..executable import Backend
from . import preload
from .compiler import CpuCompiler

backend = Backend("llvm-cpu", priority=100, compiler=CpuCompiler(),
                  description="compiled code for the host CPU via xDSL linalg and LLVM (llvmlite)")

preload.start(backend.compiler)
