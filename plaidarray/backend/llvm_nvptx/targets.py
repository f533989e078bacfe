"""The GPUs llvm-nvptx generates code for: NVIDIA architectures as LLVM's NVPTX back end
names them, each with the PTX version its code is written in (XLA's GPU compiler picks
both from the device's compute capability; here, from the device or the setting).

A target is the shared :class:`~..llvm.target.Target`: the triple ``nvptx64-nvidia-cuda``,
the architecture as its CPU, the PTX version as its feature, libdevice as its math
library (``__nv_`` names, linked into each module, ``libdevice.py``). Kernels call no C
library, so the complex ABI is never used; a thread's stack is its local memory, so
temporaries kept there stay small.
"""

from __future__ import annotations

from ..llvm.target import ComplexAbi, Target

TRIPLE = "nvptx64-nvidia-cuda"

#: The architectures code is generated for, with the PTX version of their code: the
#: lowest that supports them in the LLVM llvmlite 0.50 bundles (Ampere: 7.0; Hopper: 7.8).
ARCHITECTURES = {"sm_80": "+ptx75", "sm_86": "+ptx75", "sm_89": "+ptx78", "sm_90": "+ptx80"}

#: The architecture when neither a device nor the setting names one: A100 and later run it.
DEFAULT_ARCHITECTURE = "sm_80"

_NO_C_ABI = ComplexAbi(single=("pair", "struct"), double=("pair", "struct"))


def gpu(architecture: str = DEFAULT_ARCHITECTURE) -> Target:
    """The target of an NVIDIA architecture (``sm_80``, ``sm_90``...)."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"llvm-nvptx: architecture must be one of {sorted(ARCHITECTURES)}, got {architecture!r}")
    return Target(architecture, TRIPLE, architecture, ARCHITECTURES[architecture], vector_bits=128,
                  complex=_NO_C_ABI, code_model="small", stack_slice_bytes=4 * 1024,
                  math_prefix="__nv_")
