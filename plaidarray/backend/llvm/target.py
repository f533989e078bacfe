"""What code is generated for: one object carrying all that code generation knows of a
target (XLA's ``AotCompilationOptions`` target triple, with what a triple alone does not say).

Each LLVM backend makes its targets (llvm-cpu: the host for its JIT and the platforms of
exports, ``llvm_cpu/targets.py``). Everything the emitter (``emitter.py``) and the object
code generator (``codegen.py``) would otherwise assume about the machine is here: the LLVM
triple, CPU and features, the widest vector register (the vector math library's variants),
how C passes complex values (``emitter.call_c``), which differs between the ABIs: x86-64's
SysV packs a ``float complex`` into one vector register, AArch64's AAPCS64 passes either
kind as a homogeneous aggregate (an array of two), RISC-V's LP64D as two scalar arguments;
the code model (``codegen.new_machine``): code is position-independent everywhere, for the
small model in exports and for the large one in the JIT on x86-64; the C math library's
names; and how much of a temporary may live on a thread's stack.

Which compiled code a target may reuse is not its business: the persistent cache keys the
host's code by ``llvm_cpu/host.host_id``, read without loading LLVM, so that a cache hit
loads no compiler.

This module imports only llvmlite and the standard library: the code generator process
(``codegen.py`` run as a script) imports it as a top-level module.
"""

from __future__ import annotations

from dataclasses import dataclass

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
class Target:
    """A target for generated code: ``name`` as a user gives it ("host", or a Debian
    multiarch tuple), LLVM's ``triple``, ``cpu`` and ``features``, the widest vector
    register in bits, the C ABI's ``complex`` convention and LLVM's code model."""

    name: str
    triple: str
    cpu: str
    features: str
    vector_bits: int
    complex: ComplexAbi
    code_model: str = "small"
    #: The largest slice of a contracted temporary, in bytes, that code keeps on the stack
    #: of each thread running its loop (``codegen/loop_fusion.py``): pool threads have the
    #: platform's default stack (8 MiB on Linux), which many slices at once must fit.
    stack_slice_bytes: int = 64 * 1024
    #: What the math library's names start with: "" for the C library's, ``__nv_`` for
    #: libdevice's (a GPU's: ``__nv_atan2f``).
    math_prefix: str = ""

    def math_symbol(self, name: str, single: bool) -> str:
        """The math library's function ``name`` in single precision (float32,
        complex64) or double: C99's names (``sinf``, ``sin``; ``csinf``, ``csin``), which
        the C libraries of every platform here and libdevice (after its prefix) follow."""
        return self.math_prefix + (name + "f" if single else name)

    @classmethod
    def of(cls, name: str, triple: str, cpu: str, features: str, code_model: str = "small") -> Target:
        """The target of ``triple`` with ``cpu`` and ``features``: its widest vector
        register read from the features, its complex ABI from the architecture."""
        architecture = triple.split("-", 1)[0]
        if architecture not in COMPLEX_ABIS:
            raise NotImplementedError(f"llvm-cpu: no C ABI for complex values is known for {triple}")
        enabled = features.split(",")
        bits = 512 if "+avx512f" in enabled else 256 if "+avx" in enabled else 128
        return cls(name, triple, cpu, features, bits, COMPLEX_ABIS[architecture], code_model)

    @property
    def architecture(self) -> str:
        return self.triple.split("-", 1)[0]

    def __str__(self) -> str:
        return f"{self.triple}/{self.cpu}"


def initialize() -> None:
    """LLVM's native target, initialised (llvmlite imported here, not with this module:
    asking which devices there are reads the GPU targets' names, and importing llvmlite's
    binding took 25 ms of a process that compiles nothing)."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
