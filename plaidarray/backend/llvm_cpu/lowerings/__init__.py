"""llvm-cpu's own lowerings, registered under ``PLATFORM`` in
``plaidarray.codegen.lowering``: what calls BLAS (``dot``), LAPACK (``custom_call``),
and the C math library (``elementwise``). Every other
op takes its target-neutral lowering (``plaidarray.codegen.lowerings``)."""

from . import custom_call, dot, elementwise  # noqa: F401
from ..platform import PLATFORM

__all__ = ["PLATFORM"]
