"""The llvm-nvptx compiler's stages: HLO to PTX, as a declared list of named stages run by
``backend/pipeline.py``: the stages every LLVM backend shares (``llvm/lowering.py``), then
its own.

    check-shape-generic -> expand -> hlo-passes -> bind-constants -> fuse -> group-kernels
      -> to-linalg -> convert-linalg-to-loops -> fuse-parallel-loops -> contract-temporaries
      -> to-llvm-ir -> ptx-codegen -> load

ptx-codegen links the module's kernels (and libdevice, where they call it) into one LLVM
module and writes its PTX through LLVM's NVPTX back end; load makes the executable, whose
runtime loads the PTX at its first run. Under ``PLAIDARRAY_DUMP`` the stages write what
llvm-cpu's do, and the PTX (``ptx``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...hlo import Module
from ..llvm.codegen import generate_assembly
from ..llvm.lowering import CHECK, HLO, LOWER, Lowering
from ..llvm.target import Target
from ..pipeline import Stage, dump_timings, run_stages
from . import lowerings, toolkit  # noqa: F401  (lowerings: registers the platform's own)
from .executable import GpuExecutable, Step
from .platform import PLATFORM
from .renderer import RENDERER
from .runtime import GpuRuntime
from .targets import gpu


@dataclass
class Compilation(Lowering):
    """A compile for a GPU: the shared stages' fields, the runtime the executable runs
    on, the PTX, its optimised LLVM IR and the executable (set by load)."""

    platform = PLATFORM
    renderer = RENDERER

    target: Target = field(default_factory=gpu, kw_only=True)
    runtime: GpuRuntime | None = field(default=None, kw_only=True)
    ptx: str = ""
    optimised: str = ""
    executable: GpuExecutable = field(init=False)


#: A function the linked module declares but no one defines (``declare ... @name(``).
_DECLARED = re.compile(r'^declare [^@]*@"?([^"(]+)"?\(', re.MULTILINE)


def _ptx_codegen(c: Compilation) -> None:
    if not c.sources:  # nothing to compute (empty results): the run allocates them
        return
    texts = list({s.key: s.ir for s in c.sources}.values())
    symbols = {s.symbol for s in c.sources}
    bitcode = []
    if any("__nv_" in text for text in texts):
        path = toolkit.libdevice()
        if path is None:
            raise NotImplementedError(f"llvm-nvptx: kernels call libdevice, which is not installed: "
                                      f"{toolkit.INSTALL_HINT}")
        bitcode.append(path.read_bytes())
    c.ptx, c.optimised = generate_assembly(texts, c.target, c.level, symbols, bitcode)
    missing = sorted(name for name in _DECLARED.findall(c.optimised) if not name.startswith("llvm."))
    if missing:
        raise NotImplementedError(f"llvm-nvptx: no GPU code for {', '.join(missing)}")


def _load(c: Compilation) -> None:
    assert c.runtime is not None, "llvm-nvptx: a compile for a runtime"
    steps = [Step(s.symbol, s.buffers, s.segment, s.lanes, s.runs) for s in c.sources]
    c.executable = GpuExecutable(c.ptx, steps, c.n_params, c.constants, c.output_slots,
                                 [o.shape for o in c.outputs], [t.shape for t in c.temps] + c.scratch, c.runtime)


STAGES: tuple[Stage[Compilation], ...] = (
    CHECK,
    *HLO,
    *LOWER,
    Stage("ptx-codegen", _ptx_codegen, lambda c: c.ptx, "ptx"),
    Stage("load", _load),
)


def compile_module(module: Module, name: str, level: int, target: Target, runtime: GpuRuntime) -> GpuExecutable:
    """The executable of ``module`` for ``target``, run on ``runtime``."""
    c = Compilation(name, module.entry, module.donated, level, f"{target}/O{level}", module.n_symbols,
                    target=target, runtime=runtime, shares_groups=False)
    run_stages(STAGES, c, name, c.timings)
    dump_timings(name, c.timings)
    return c.executable
