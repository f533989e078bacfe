"""Code generation: LLVM IR text -> optimised object code for a target, and the
code generator process that does it out of the main one.

This module imports only llvmlite, the standard library and ``target.py`` (likewise): run
as a script, it is the code generator process of ``codegen_worker.py`` (it starts in well
under 0.1 s and never imports plaidarray). Why a process: llvmlite 0.50 leaks about 80 KB per run of
LLVM's optimisation pipeline (docs/reliability.md, "Memory"), so a program compiling
thousands of signatures would grow without bound; a worker is retired, leak and all,
after a few hundred compiles. In the main process, ``codegen_worker.generate_here``
calls :func:`generate` holding :data:`LLVM_LOCK`; here nothing is locked (LLVM's global
state is not thread-safe, so callers serialise).

Object code is the one product: the compiler loads it into an engine of its own, the
persistent cache stores the same bytes, and both ways of generating it (here or in a
worker) give identical bytes for identical IR, target and level.

The process protocol is a stream of frames on stdin/stdout: a frame is a count of parts
and each part as a length and bytes. The worker says ``ready`` once, then answers each
``generate`` request with ``ok`` and the object code, optimised IR and assembly (the
texts empty unless asked for), or ``error`` and LLVM's message.
"""

from __future__ import annotations

import os
import resource
import signal
import struct
import sys
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import IO

import llvmlite.binding as llvm

if __package__:
    from .target import Target, initialize
else:  # the code generator process, this file run as a script: target.py, found beside it
    import importlib.util  # (not through the import path, where PYTHONSAFEPATH leaves out this directory)

    _spec = importlib.util.spec_from_file_location("target", os.path.join(os.path.dirname(__file__), "target.py"))
    assert _spec is not None and _spec.loader is not None
    _target = sys.modules["target"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_target)
    Target, initialize = _target.Target, _target.initialize  # type: ignore[misc]

#: Serialises all LLVM work in a process (LLVM's global context is not thread-safe): every
#: LLVM backend's code generation here and loading (llvm-cpu's JIT) hold it.
LLVM_LOCK = threading.RLock()

#: The optimisation levels, as in ``clang -O<level>``.
OPT_LEVELS = (0, 1, 2, 3)

_COUNT = struct.Struct("<I")
_LENGTH = struct.Struct("<Q")
_machines: dict[tuple[Target, int], llvm.TargetMachine] = {}


@dataclass(frozen=True)
class Product:
    """A module's object code, with its optimised IR and assembly when asked for."""

    object: bytes
    ir: str = ""
    assembly: str = ""


def new_machine(target: Target, level: int) -> llvm.TargetMachine:
    """A TargetMachine emitting position-independent code, as a shared library's: object
    code goes into a shared object loaded by the platform's loader (``shared_object.py``),
    and into MCJIT. The host's code on x86-64 is for the large code model, whose
    addresses are 64-bit offsets from the GOT: MCJIT maps an object's code and its
    constants apart, and in a long process (a run of SciPy's tests) they ended more than
    2 GB apart, past what the small model's 32-bit PC-relative addresses reach (an
    assertion in LLVM aborted the process; without it, code would read wrong addresses).
    On AArch64 llvmlite's MCJIT keeps an object's sections together; exports, linked by
    the platform's linker, keep the small model, which every target has."""
    if level not in OPT_LEVELS:
        raise ValueError(f"optimisation level must be one of {OPT_LEVELS}, got {level!r}")
    return llvm.Target.from_triple(target.triple).create_target_machine(
        cpu=target.cpu, features=target.features, opt=level, reloc="pic", codemodel=target.code_model)


def machine(target: Target, level: int) -> llvm.TargetMachine:
    """A TargetMachine for optimising and emitting, kept for reuse (never give it to an
    engine: an engine disposes of the machine it is given)."""
    key = (target, level)
    if key not in _machines:
        _machines[key] = new_machine(target, level)
    return _machines[key]


def vectorises(level: int) -> bool:
    """Whether the IR pipeline at ``level`` vectorises: only vectorised code calls the
    vector math library's vector variants (``math_library.py``)."""
    return level > 1


def compile_ir(texts: Sequence[str], target: Target, level: int,
               exported: Collection[str] | None = None, bitcode: Sequence[bytes] = ()) -> llvm.ModuleRef:
    """Parse, verify, link into one module and optimise LLVM IR texts at ``level``, in an
    LLVM context of their own: a context keeps every type and constant ever made in it, so
    modules sharing the global one would never give that memory back. (Kernels generated
    together are one module: one run of the pipeline and of the code generator, one
    object; internal functions they both define are renamed apart by the linker.) Modules
    of ``bitcode`` (a GPU's libdevice) are linked in after them. With ``exported``, every
    other definition becomes internal before the pipeline runs (and is dropped if unused)."""
    context = llvm.create_context()
    module = llvm.parse_assembly(texts[0], context)
    for text in texts[1:]:
        module.link_in(llvm.parse_assembly(text, context))
    for code in bitcode:
        library = llvm.parse_bitcode(code, context)
        library.triple = target.triple
        module.link_in(library)
    if exported is not None:
        for value in (*module.functions, *module.global_variables):
            if not value.is_declaration and value.name not in exported and not value.name.startswith("llvm."):
                value.linkage = llvm.Linkage.internal
    module.triple = target.triple
    module.data_layout = str(machine(target, level).target_data)
    module.verify()
    tuning = llvm.create_pipeline_tuning_options(speed_level=level)
    tuning.loop_vectorization = vectorises(level)
    tuning.slp_vectorization = vectorises(level)
    builder = llvm.create_pass_builder(machine(target, level), tuning)
    builder.getModulePassManager().run(module, builder)
    return module


def generate(texts: str | Sequence[str], target: Target, level: int, listings: bool = False,
             emit_level: int | None = None) -> Product:
    """Object code of LLVM IR texts (linked into one module) optimised at ``level``, and
    with ``listings`` its optimised IR and assembly. ``emit_level`` (default ``level``) is the code generator's
    own level: 0 selects instructions and allocates registers the fast way, in a fifth
    of the time, from the same optimised (vectorised) IR, so the code computes the same
    values, somewhat slower (``tiering.py``)."""
    module = compile_ir([texts] if isinstance(texts, str) else texts, target, level)
    tm = machine(target, level if emit_level is None else emit_level)
    product = Product(tm.emit_object(module), str(module) if listings else "",
                      tm.emit_assembly(module) if listings else "")
    _dispose(module)
    return product


def generate_assembly(texts: Sequence[str], target: Target, level: int, exported: Collection[str],
                      bitcode: Sequence[bytes] = ()) -> tuple[str, str]:
    """The assembly of LLVM IR texts linked into one module with ``bitcode`` and
    optimised at ``level``, defining only ``exported`` outside it, and its optimised IR:
    a GPU's code (PTX: LLVM's NVPTX back end writes no object code; NVIDIA's assembler
    or driver makes it)."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    module = compile_ir(texts, target, level, exported, bitcode)
    assembly, optimised = machine(target, level).emit_assembly(module), str(module)
    _dispose(module)
    return assembly, optimised


def generate_library(texts: Sequence[str], target: Target, level: int,
                     exported: Collection[str]) -> tuple[bytes, list[str]]:
    """Object code of a library: LLVM IR texts linked into one module that defines only
    ``exported`` outside it (so two libraries linked into one program cannot clash), and
    the symbols it needs from elsewhere (the C library's, say), for ``target``, which may
    be any architecture LLVM was built for."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    module = compile_ir(texts, target, level, exported)
    needed = sorted(value.name for value in (*module.functions, *module.global_variables)
                    if value.is_declaration and not value.name.startswith("llvm."))
    code = machine(target, level).emit_object(module)
    _dispose(module)
    return code, needed


def _dispose(module: llvm.ModuleRef) -> None:
    """Free a module of ``compile_ir`` and the LLVM context of its own."""
    context = module._context
    module.close()
    context.close()


def write_frame(stream: IO[bytes], *parts: bytes) -> None:
    stream.write(_COUNT.pack(len(parts)) + b"".join(_LENGTH.pack(len(p)) + p for p in parts))
    stream.flush()


def read_frame(stream: IO[bytes]) -> list[bytes] | None:
    """The next frame's parts, or None at the end of the stream."""
    head = stream.read(_COUNT.size)
    if len(head) < _COUNT.size:
        return None
    parts = []
    for _ in range(_COUNT.unpack(head)[0]):
        size = stream.read(_LENGTH.size)
        if len(size) < _LENGTH.size:
            return None
        (length,) = _LENGTH.unpack(size)
        part = stream.read(length)
        if len(part) < length:
            return None
        parts.append(part)
    return parts


#: The environment variable through which the main process caps a worker's address space.
MAX_BYTES_VARIABLE = "PLAIDARRAY_CODEGEN_MAX_BYTES"


def cap_address_space(cap: int) -> None:
    """Cap this process's address space at ``cap`` bytes, or at the limit it inherited if
    that is lower (``ulimit -v`` on a batch machine): a process may lower its hard limit
    but never raise it, and a lower soft limit was set for a reason."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = min(value for value in (cap, soft, hard) if value != resource.RLIM_INFINITY)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """The code generator process: answer ``generate`` frames until the stream ends
    (the main process closed it, or died). Its address space is capped first, so that
    LLVM running out of it ends this process, not the machine's memory."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the main process
    cap = int(os.environ.get(MAX_BYTES_VARIABLE, "0") or 0)
    if cap:
        cap_address_space(cap)
    initialize()
    write_frame(answers, b"ready")
    while (frame := read_frame(requests)) is not None:
        try:
            _, name, triple, cpu, features, code_model, level, listings, emit_level, *texts = frame
            target = Target.of(name.decode(), triple.decode(), cpu.decode(), features.decode(), code_model.decode())
            product = generate([t.decode() for t in texts], target,
                               int(level), listings == b"1", int(emit_level))
        except (RuntimeError, ValueError) as error:
            write_frame(answers, b"error", str(error).encode())
        else:
            write_frame(answers, b"ok", product.object, product.ir.encode(), product.assembly.encode())


if __name__ == "__main__":
    _answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray output must not corrupt the frames
    try:
        serve(sys.stdin.buffer, _answers)
    except BrokenPipeError:
        # The main process stopped reading: it exited while this worker was starting (a
        # successor starts ahead of need) or died mid-compile. Nothing is left to answer;
        # the unsent frame goes to /dev/null rather than to a traceback at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), _answers.fileno())
