"""What code is generated for: a platform (XLA's ``AotCompilationOptions`` target triple,
with what a triple alone does not say).

The JIT generates for the host (:func:`host`); ahead-of-time export (``aot.py``) for any
platform of :data:`PLATFORMS`. Everything the emitter would otherwise assume about the
machine is here: the LLVM triple, CPU and features, the widest vector register (the
vector math library's variants, ``vector_math.py``), and how C passes complex values
(``llvm_emitter.call_c``), which differs between the ABIs: x86-64's SysV packs a
``float complex`` into one vector register, AArch64's AAPCS64 passes either kind as a
homogeneous aggregate (an array of two), RISC-V's LP64D as two scalar arguments. Code is
position-independent everywhere, for the small code model in exports and for the large
one in the JIT on x86-64 (``codegen.new_machine``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .codegen import Target

#: How one complex argument travels: one ``<2 x T>`` ("vector"), two ``T`` ("pair") or one
#: ``[2 x T]`` ("array"); a result: ``<2 x T>`` ("vector") or ``{T, T}`` ("struct").
ComplexPassing = tuple[str, str]


@dataclass(frozen=True)
class ComplexAbi:
    """How the C library takes and returns ``float complex`` and ``double complex``."""

    single: ComplexPassing
    double: ComplexPassing


#: The C ABIs' conventions for complex values, by architecture (the first part of a triple).
COMPLEX_ABIS = {
    "x86_64": ComplexAbi(single=("vector", "vector"), double=("pair", "struct")),
    "aarch64": ComplexAbi(single=("array", "struct"), double=("array", "struct")),
    "riscv64": ComplexAbi(single=("pair", "struct"), double=("pair", "struct")),
}


@dataclass(frozen=True)
class Platform:
    """A target for generated code: ``name`` as a user gives it (a Debian multiarch
    tuple), LLVM's ``triple``, ``cpu`` and ``features``, the widest vector register in bits,
    and the C ABI's ``complex`` convention."""

    name: str
    triple: str
    cpu: str
    features: str
    vector_bits: int
    complex: ComplexAbi

    @property
    def architecture(self) -> str:
        return self.triple.split("-", 1)[0]

    @property
    def target(self) -> Target:
        """What the code generator needs of it (``codegen.py`` knows nothing else)."""
        return Target(self.triple, self.cpu, self.features)


def _platform(name: str, triple: str, cpu: str, features: str, vector_bits: int) -> Platform:
    return Platform(name, triple, cpu, features, vector_bits, COMPLEX_ABIS[triple.split("-", 1)[0]])


#: The platforms code can be exported for, each with the CPU and features it assumes
#: unless told otherwise: x86-64's baseline (SSE2), AArch64's (NEON), RV64GC.
PLATFORMS = {
    "x86_64-linux-gnu": _platform("x86_64-linux-gnu", "x86_64-unknown-linux-gnu", "x86-64", "", 128),
    "aarch64-linux-gnu": _platform("aarch64-linux-gnu", "aarch64-unknown-linux-gnu", "generic", "+neon", 128),
    "riscv64-linux-gnu": _platform("riscv64-linux-gnu", "riscv64-unknown-linux-gnu", "generic-rv64",
                                   "+m,+a,+f,+d,+c", 128),
}


@functools.cache
def host() -> Platform:
    """This machine, every feature of its CPU enabled (what the JIT generates for)."""
    from .jit import host_target

    target = host_target()
    architecture = target.triple.split("-", 1)[0]
    if architecture not in COMPLEX_ABIS:
        raise NotImplementedError(f"llvm-cpu: no C ABI for complex values is known for {target.triple}")
    features = target.features.split(",")
    bits = 512 if "+avx512f" in features else 256 if "+avx" in features else 128
    return Platform("host", target.triple, target.cpu, target.features, bits, COMPLEX_ABIS[architecture])
