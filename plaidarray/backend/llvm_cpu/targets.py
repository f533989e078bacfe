"""The CPU targets llvm-cpu generates code for: the host, which the JIT generates for
(:func:`host`), and the platforms an export may name (:data:`PLATFORMS`)."""

from __future__ import annotations

import threading

import llvmlite.binding as llvm

from ..llvm.target import Target, initialize

#: The targets code can be exported for, each with the CPU and features it assumes
#: unless told otherwise: x86-64's baseline (SSE2), AArch64's (NEON), RV64GC.
PLATFORMS = {
    "x86_64-linux-gnu": Target.of("x86_64-linux-gnu", "x86_64-unknown-linux-gnu", "x86-64", ""),
    "aarch64-linux-gnu": Target.of("aarch64-linux-gnu", "aarch64-unknown-linux-gnu", "generic", "+neon"),
    "riscv64-linux-gnu": Target.of("riscv64-linux-gnu", "riscv64-unknown-linux-gnu", "generic-rv64",
                                   "+m,+a,+f,+d,+c"),
}

_host_lock = threading.Lock()
_host: Target | None = None


def host() -> Target:
    """This machine, every feature of its CPU enabled (what the JIT generates for), found
    once per process. On x86-64, code for the large code model (``codegen.new_machine``)."""
    global _host
    with _host_lock:
        if _host is None:
            initialize()
            features = llvm.get_host_cpu_features().flatten()
            if "+avx512f" in features.split(","):
                # LLVM's Intel tunings cap vectors at 256 bits to avoid AVX-512 frequency drops;
                # the polynomial math of vector_math.py runs 1.5-2x faster at 512 bits.
                features += ",-prefer-256-bit"
            triple = llvm.get_process_triple()
            _host = Target.of("host", triple, llvm.get_host_cpu_name(), features,
                              "large" if triple.startswith("x86_64") else "small")
        return _host
