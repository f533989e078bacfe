"""llvm-cpu's runtime routines: the shared ones (``llvm/runtime_routines.py``) and its FFT
kernel (``stockham.py``), defined in LLVM IR in each module that calls them."""

from __future__ import annotations

from llvmlite import ir

from ..llvm import runtime_routines
from .stockham import stockham_fft

_ROUTINES = {**runtime_routines.ROUTINES, "fft": stockham_fft}


def runtime_function(module: ir.Module, name: str) -> ir.Function | None:
    """The runtime routine ``plaidarray_<routine>_<type>``, defined in ``module`` on first
    use; None if ``name`` is not a runtime routine."""
    return runtime_routines.runtime_function(module, name, _ROUTINES)
