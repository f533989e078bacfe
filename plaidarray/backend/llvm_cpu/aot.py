"""Ahead-of-time compilation for an LLVM target (XLA's ``compile_ahead_of_time``, as
tfcompile uses it): an HLO module to one object file for a target (``target.py``).

The JIT's stages run as far as each kernel's LLVM IR (``stages.FRONT`` and ``LOWER``),
for the export's target; then the kernels, the C entry that calls them
(``aot_driver.py``) and a copy of each vector math function they call (``vector_math``)
are linked into one module, every definition but the entry and its routine table made
internal (two libraries linked into one program share no symbol), and generated at O3
for the target. Nothing here touches the JIT's caches: an export compiles what it
exports, for a machine that may not be this one.
"""

from __future__ import annotations

import dataclasses
import keyword
import math
from collections.abc import Sequence

import numpy as np

from ...hlo import Module
from ..executable import AotArtifact, AotOptions, ExportError
from ..pipeline import run_stages
from . import cpu_features, jit, math_library, vector_math
from .aot_driver import driver_ir
from .stages import FRONT, LOWER, Compilation
from ..llvm.target import Target
from .targets import PLATFORMS, host

#: The optimisation level of exported code.
LEVEL = 3


def target_for(options: AotOptions) -> Target:
    """The target ``options`` ask for, with their CPU and features, for the small code
    model (a shared library's). The host's default features are the ones a loader can
    check (``cpu_features.verifiable``)."""
    if options.target == "host":
        base = host()
        features = options.features
        if features is None:
            machine = cpu_features.machine_features()
            features = base.features if machine is None else cpu_features.verifiable(base.features, machine)
        return dataclasses.replace(base, cpu=options.cpu or base.cpu, features=features, code_model="small")
    named = PLATFORMS.get(options.target)
    if named is None:
        raise ExportError(f"no export target {options.target!r}: choose 'host' or one of {', '.join(PLATFORMS)}")
    return dataclasses.replace(named, cpu=options.cpu or named.cpu,
                               features=named.features if options.features is None else options.features)


def compile_ahead_of_time(module: Module, constants: Sequence[np.ndarray], options: AotOptions) -> AotArtifact:
    """The object code of ``module`` for ``options`` (see ``Compiler.compile_ahead_of_time``)."""
    name = options.name
    if not name.isidentifier() or not name.isascii() or keyword.iskeyword(name):
        raise ExportError(f"export name {name!r} is not a C identifier")
    if module.n_symbols:
        raise ExportError("an exported function has the sizes of its example arguments; run-time sizes are not "
                          "exported")
    target = target_for(options)
    c = Compilation(name, module.entry, frozenset(), LEVEL, f"aot/{target.triple}", target=target,
                    shares_groups=False)
    try:
        run_stages(FRONT, c, name, c.timings)
        run_stages(LOWER, c, name, c.timings)
    except NotImplementedError as error:
        raise ExportError(f"cannot export {name}: {error}") from error
    params = c.comp.parameters
    fixed = [*constants, *c.constants]
    if len(params) != options.inputs + len(fixed):
        raise ExportError(f"{name}: {len(params)} parameters, but {options.inputs} inputs and {len(fixed)} constants")
    results = [params[k].shape if kind == "param" else c.outputs[k].shape for kind, k in c.output_slots]
    driver, routines = driver_ir(
        name, options.inputs, fixed, [_bytes(o.shape) for o in c.outputs], c.output_slots,
        [_bytes(r) for r in results], [_bytes(t.shape) for t in c.temps] + [_bytes(s) for s in c.scratch],
        c.sources)
    kernels = list({s.key: s.ir for s in c.sources}.values())
    libraries = sorted({symbol for text in kernels for symbol in math_library.called_by(text)})
    texts = [driver, *kernels, *(vector_math.library_ir(symbol, target.vector_bits)[0] for symbol in libraries)]
    try:
        code, needed = jit.generate_library(texts, target, LEVEL, [f"{name}_run", f"{name}_routines"])
    except RuntimeError as error:  # LLVM cannot generate code for this CPU or these features
        raise ExportError(f"cannot export {name} for {target.triple} ({target.cpu}): {error}") from error
    return AotArtifact(code, target.triple, target.cpu, target.features, tuple(needed), tuple(routines))


def _bytes(shape) -> int:
    return math.prod(shape.dims) * shape.dtype.itemsize
